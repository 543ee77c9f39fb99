#!/usr/bin/env bash
# tests/run_blas.sh -- the local GEMM on every BLAS this machine has (make test-blas).
#
#   tests/run_blas.sh [--mpi openmpi|mpich] [--np "1 2"]
#   tests/run_blas.sh --bench [--mpi openmpi] [--np 2] [--out FILE] [--args "--reps 5"]
#
# --bench (make bench-blas) builds bench/blas.c per variant instead (-O2) and
# runs it at the first rank count, appending every variant's table to FILE
# (default: stdout): dt_matmul against the same BLAS's dgemm called directly.
#
# Builds tests/test_ops_kernels.c (the GEMM kernel on every stride layout,
# packing included) and tests/test_ops_matmul.c (the matmul family) once per
# DTENSOR_BLAS variant into build/blas/<variant>/ with the test flags
# (-std=c99 -O1 -Wall -Wextra -Werror -pedantic; each variant also as C++17),
# and runs both at each rank count with DT_TEST_GEMM set to the GEMM the
# build must run, so a build that silently fell back to the loops fails:
#
#   blis            default (no -D), -lblis
#   blis-weak       -DDTENSOR_BLAS_WEAK, -Wl,--no-as-needed -lblis: BLIS
#   blis-weak-O0    the same at -O0 (blis.h is not included: BLIS through its Fortran interface)
#   blis-weak-nolib -DDTENSOR_BLAS_WEAK, linked with -lm only: the loops
#   cblas-openblas  -DDTENSOR_BLAS=cblas, OpenBLAS's cblas.h, -lopenblas
#   f77-openblas    -DDTENSOR_BLAS=f77, -lopenblas
#   cblas-netlib    -DDTENSOR_BLAS=cblas -DDTENSOR_CBLAS_HEADER='<cblas-netlib.h>',
#                   Debian's reference BLAS (libblas-dev, which carries CBLAS)
#   f77-netlib      -DDTENSOR_BLAS=f77, the reference BLAS
#   none            -DDTENSOR_BLAS=none, -lm
#
# plus a program that only redistributes (tests/test_redistribute.c --quick),
# -DDTENSOR_BLAS_WEAK, linked with -lm only: it must link, hold no strong
# reference to a BLIS symbol, and pass. A variant whose BLAS is not installed
# is skipped (named). The last line is "N passed, N failed"; DT_TEST_LOG=file
# appends it as "test-blas: N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 2
MPI=openmpi
NPS="1 2"
BENCH=0
BOUT=/dev/stdout
BARGS=""
while [ $# -gt 0 ]; do
    case "$1" in
    --mpi) shift; MPI=$1 ;;
    --np) shift; NPS=$1 ;;
    --bench) BENCH=1 ;;
    --out) shift; BOUT=$1 ;;
    --args) shift; BARGS=$1 ;;
    *) sed -n '2,4p' "$0"; exit 2 ;;
    esac
    shift
done
CC=mpicc.$MPI
CXX=mpicxx.$MPI
RUN=(mpiexec.$MPI)
CXXDEF=""
if [ "$MPI" = openmpi ]; then RUN+=(--allow-run-as-root --oversubscribe); CXXDEF=-DOMPI_SKIP_MPICXX=1; fi
FLAGS=(-std=c99 -O1 -g -Wall -Wextra -Werror -pedantic -I.)
OB_INC=/usr/include/x86_64-linux-gnu/openblas-pthread
NL_LIB=/usr/lib/x86_64-linux-gnu/blas
export OMP_NUM_THREADS=1 BLIS_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
passed=0
failed=0
skipped=""
pass() { passed=$((passed + 1)); echo "PASS $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# variant NAME EXPECT NEEDS -- DEFINES... -- LIBS...
variant() {
    local name=$1 expect=$2 needs=$3 defs=() libs=() out t np log
    shift 4
    while [ $# -gt 0 ] && [ "$1" != -- ]; do defs+=("$1"); shift; done
    shift
    libs=("$@")
    if [ -n "$needs" ] && [ ! -e "$needs" ]; then skipped="$skipped $name"; echo "SKIP $name ($needs not installed)"; return; fi
    out=build/blas/$name
    mkdir -p "$out"
    if [ $BENCH = 1 ]; then
        [ "$expect" = blis ] && [ "$name" != blis ] && return # the weak builds: same library
        [[ "$expect" = none* ]] && [ "$name" != none ] && return
        if ! "$CC" -std=c99 -O2 -Wall -Wextra -Werror -pedantic -I. "${defs[@]}" bench/blas.c -o "$out/bench_blas" \
            "${libs[@]}" >"$out/bench.build.log" 2>&1; then
            fail "build $name/bench_blas: $out/bench.build.log"; sed -n 1,10p "$out/bench.build.log"; return
        fi
        # the reference BLAS and the loops run about 10x slower: up to n = 1024
        local max=""
        case $name in *netlib|none) max="--max 1024" ;; esac
        echo "## $name: $CC ${defs[*]} bench/blas.c ${libs[*]}" >>"$BOUT"
        # shellcheck disable=SC2086
        if "${RUN[@]}" -n "${NPS%% *}" "./$out/bench_blas" $max $BARGS >>"$BOUT" 2>&1; then
            pass "bench $name"
        else
            fail "bench $name"
        fi
        echo >>"$BOUT"
        return
    fi
    # the two tests' C and C++17 builds side by side (one per core)
    for t in test_ops_kernels test_ops_matmul; do
        rm -f "$out/$t" "$out/$t.cxx.ok"
        "$CC" "${FLAGS[@]}" "${defs[@]}" "tests/$t.c" -o "$out/$t" "${libs[@]}" >"$out/$t.build.log" 2>&1 &
        # shellcheck disable=SC2086
        { "$CXX" -x c++ -std=c++17 -Wall -Wextra -Werror -pedantic -I. $CXXDEF "${defs[@]}" -fsyntax-only "tests/$t.c" \
            >"$out/$t.cxx.log" 2>&1 && : >"$out/$t.cxx.ok"; } &
    done
    wait
    for t in test_ops_kernels test_ops_matmul; do
        if [ ! -x "$out/$t" ]; then
            fail "build $name/$t: $out/$t.build.log"; sed -n 1,10p "$out/$t.build.log"; continue
        fi
        if [ ! -e "$out/$t.cxx.ok" ]; then
            fail "build-c++17 $name/$t: $out/$t.cxx.log"; sed -n 1,10p "$out/$t.cxx.log"
        fi
        for np in $NPS; do
            log=$out/$t.np$np.log
            if DT_TEST_GEMM=$expect timeout 300 "${RUN[@]}" -n "$np" "./$out/$t" --quick >"$log" 2>&1 && grep -q '^PASS' "$log"; then
                pass "$name $t np$np ($expect)"
            else
                fail "$name $t np$np: $log"; grep -m5 'FAIL\|error' "$log"
            fi
        done
    done
}

variant blis blis /usr/include/x86_64-linux-gnu/blis.h -- -- -lblis -lm
variant blis-weak blis /usr/include/x86_64-linux-gnu/blis.h -- -DDTENSOR_BLAS_WEAK -- -Wl,--no-as-needed -lblis -lm
variant blis-weak-O0 blis /usr/include/x86_64-linux-gnu/blis.h -- -DDTENSOR_BLAS_WEAK -O0 -- -Wl,--no-as-needed -lblis -lm
variant blis-weak-nolib "none (no BLAS linked)" "" -- -DDTENSOR_BLAS_WEAK -- -lm
variant cblas-openblas cblas "$OB_INC/cblas.h" -- -DDTENSOR_BLAS=cblas -I"$OB_INC" -- -lopenblas -lm
variant f77-openblas f77 "$OB_INC/cblas.h" -- -DDTENSOR_BLAS=f77 -- -lopenblas -lm
variant cblas-netlib cblas "$NL_LIB/libblas.so" -- -DDTENSOR_BLAS=cblas '-DDTENSOR_CBLAS_HEADER=<cblas-netlib.h>' -- \
    -L"$NL_LIB" -Wl,-rpath,"$NL_LIB" -lblas -lm
variant f77-netlib f77 "$NL_LIB/libblas.so" -- -DDTENSOR_BLAS=f77 -- -L"$NL_LIB" -Wl,-rpath,"$NL_LIB" -lblas -lm
variant none none "" -- -DDTENSOR_BLAS=none -- -lm

if [ $BENCH = 1 ]; then echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; fi

# a program that never multiplies links without any BLAS
out=build/blas/redistribute-nolib
mkdir -p "$out"
if "$CC" "${FLAGS[@]}" -DDTENSOR_BLAS_WEAK tests/test_redistribute.c -o "$out/test_redistribute" -lm >"$out/build.log" 2>&1; then
    if nm "$out/test_redistribute" | grep -q ' U bli_'; then
        fail "redistribute-nolib: strong BLIS references: $(nm "$out/test_redistribute" | grep ' U bli_' | tr '\n' ' ')"
    elif timeout 300 "${RUN[@]}" -n 2 "./$out/test_redistribute" --quick >"$out/np2.log" 2>&1 && grep -q '^PASS' "$out/np2.log"; then
        pass "redistribute-nolib test_redistribute np2 (linked with -lm only)"
    else
        fail "redistribute-nolib np2: $out/np2.log"
    fi
else
    fail "redistribute-nolib: does not link without a BLAS: $out/build.log"; sed -n 1,10p "$out/build.log"
fi

[ -n "$skipped" ] && echo "skipped (BLAS not installed):$skipped"
echo "$passed passed, $failed failed"
[ -n "${DT_TEST_LOG:-}" ] && echo "test-blas: $passed passed, $failed failed" >>"$DT_TEST_LOG"
[ "$failed" -eq 0 ]

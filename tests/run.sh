#!/usr/bin/env bash
# tests/run.sh -- build and run dtensor.h's tests under one MPI.
#
#   tests/run.sh <mpich|openmpi> [--smoke|--quick|--full] [--np "1 2 3 4 6 8"] [--jobs N] [--wrap "valgrind -q --error-exitcode=9"]
#
# Builds every test into build/<mpi>/ with
#   mpicc.<mpi> -std=c99 -O1 -g -Wall -Wextra -Werror -pedantic -I. $CFLAGS
# (test_nompi with gcc -DDTENSOR_NO_MPI and the same flags), checks that the
# test harness and a test compile as C++17 too, runs each multi-rank test at
# each rank count (a 300 s timeout per run) and test_nompi once, and counts
# the PASS/FAIL lines: a run that crashes, times out or exits non-zero
# without a PASS line is a failure, named. The very last line is
#   N passed, N failed
# and the exit status is non-zero if anything failed. DT_TEST_LOG=file
# appends that line (prefixed by the MPI name) to `file`.
#
# --smoke (make test, the README's command: minutes): every test at 1 2 3
# ranks with --quick sizes, the C++17 check on one test only; the default
# (make test-full) is the whole sweep below. --jobs N builds N tests at
# once (default: the number of cores).
# --quick passes --quick to the tests (a smaller sweep). MPICH busy-polls
# when oversubscribed, so with mpich the tests run --quick at 3 ranks and
# more unless --full is given. Logs: build/<mpi>/logs/<test>.np<N>.log.
# DT_TEST_BUILD=dir builds into dir/<mpi> instead of build/<mpi> (two runs
# at once in one checkout must not share it).
set -u
cd "$(dirname "$0")/.." || exit 2

usage() { sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 1 ] || usage
MPI=$1; shift
case "$MPI" in mpich|openmpi) ;; *) usage ;; esac
QUICK=auto
NPS="1 2 3 4 6 8"
WRAP=""
JOBS=$(nproc 2>/dev/null || echo 2)
CXXALL=yes
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) QUICK=yes ;;
    --smoke) QUICK=yes; NPS="1 2 3"; CXXALL=no ;;
    --jobs) shift; JOBS=${1:?--jobs needs a number} ;;
    --full) QUICK=no ;;
    --np) shift; NPS=${1:?--np needs a list} ;;
    --np=*) NPS=${1#--np=} ;;
    --wrap) shift; WRAP=${1:?--wrap needs a command} ;;
    --wrap=*) WRAP=${1#--wrap=} ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown argument $1" >&2; usage ;;
    esac
    shift
done

CC="mpicc.$MPI"
CXX="mpicxx.$MPI"
CXXDEF=""
[ "$MPI" = openmpi ] && CXXDEF="-DOMPI_SKIP_MPICXX=1" # its C++ bindings do not build with -Werror
if [ "$MPI" = openmpi ]; then
    RUN=(mpiexec.openmpi --allow-run-as-root --oversubscribe)
else
    RUN=(mpiexec.mpich)
fi
command -v "$CC" >/dev/null || { echo "run.sh: $CC not found"; echo "0 passed, 1 failed"; exit 1; }
FLAGS=(-std=c99 -O1 -g -Wall -Wextra -Werror -pedantic -I.)
# shellcheck disable=SC2206
EXTRA=(${CFLAGS:-})
OUT=${DT_TEST_BUILD:-build}/$MPI
LOGS=$OUT/logs
mkdir -p "$LOGS"

TESTS="test_mesh test_distribute test_redistribute test_layouts test_scalapack test_badinput test_badinput_ops test_check test_faults test_custom_backend test_bigcount test_rng test_io test_halo test_ghosted test_strided test_strided_ops test_layers test_device"
# the op tests: every file tests/test_ops_*.c
for f in tests/test_ops_*.c; do [ -e "$f" ] && TESTS="$TESTS $(basename "$f" .c)"; done
# DT_TESTS="test_check test_io" runs just those (and skips test_nompi unless named)
ONLY=${DT_TESTS:-}
[ -n "$ONLY" ] && TESTS=${ONLY//test_nompi/}
LIBS=(-lblis -lm)
passed=0
failed=0
failures=()

pass() { passed=$((passed + 1)); echo "$1"; }
fail() { failed=$((failed + 1)); failures+=("$1"); echo "$1"; }

# ---------------------------------------------------------------- build
# JOBS compilers at once; each writes its own log and a .ok marker
build_one() {
    local t=$1
    rm -f "$OUT/$t.ok"
    "$CC" "${FLAGS[@]}" "${EXTRA[@]}" "tests/$t.c" -o "$OUT/$t" "${LIBS[@]}" >"$LOGS/$t.build.log" 2>&1 &&
        : >"$OUT/$t.ok"
}
running=0
for t in $TESTS; do
    if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
    build_one "$t" &
    running=$((running + 1))
done
wait
built=""
for t in $TESTS; do
    if [ -e "$OUT/$t.ok" ]; then
        built="$built $t"
    else
        fail "FAIL build $t ($MPI): see $LOGS/$t.build.log"
        sed -n '1,15p' "$LOGS/$t.build.log"
    fi
done
nompi_ok=0
if [ -n "$ONLY" ] && [[ " $ONLY " != *" test_nompi "* ]]; then
    nompi_ok=0
elif gcc -DDTENSOR_NO_MPI "${FLAGS[@]}" "${EXTRA[@]}" tests/test_nompi.c -o "$OUT/test_nompi" "${LIBS[@]}" >"$LOGS/test_nompi.build.log" 2>&1; then
    nompi_ok=1
else
    fail "FAIL build test_nompi (gcc -DDTENSOR_NO_MPI): see $LOGS/test_nompi.build.log"
    sed -n '1,15p' "$LOGS/test_nompi.build.log"
fi
# the harness and the tests (with the implementation) compile as C++17 too
if command -v "$CXX" >/dev/null; then
    : >"$LOGS/cxx.build.log"
    cxx_ok=1
    cxx_tests=$TESTS
    [ "$CXXALL" = no ] && cxx_tests=${TESTS%% *} # --smoke: the harness and the implementation, once
    for t in $cxx_tests; do
        # shellcheck disable=SC2086
        "$CXX" -x c++ -std=c++17 -Wall -Wextra -Werror -pedantic -I. $CXXDEF -fsyntax-only "tests/$t.c" \
            >>"$LOGS/cxx.build.log" 2>&1 || cxx_ok=0
    done
    g++ -x c++ -DDTENSOR_NO_MPI -std=c++17 -Wall -Wextra -Werror -pedantic -I. -fsyntax-only tests/test_nompi.c \
        >>"$LOGS/cxx.build.log" 2>&1 || cxx_ok=0
    if [ $cxx_ok -eq 1 ]; then
        pass "PASS build-c++17 tests ($MPI)"
    else
        fail "FAIL build-c++17 tests ($MPI): see $LOGS/cxx.build.log"
        sed -n '1,15p' "$LOGS/cxx.build.log"
    fi
fi

# ---------------------------------------------------------------- run
run_one() { # name np log cmd...
    local name=$1 np=$2 log=$3
    shift 3
    local rc line t0 secs
    t0=$(date +%s.%N)
    timeout -k 10 300 "$@" >"$log" 2>&1
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    line=$(grep -E "^(PASS|FAIL) " "$log" | tail -n 1)
    if [ $rc -eq 0 ] && [ "${line%% *}" = PASS ]; then
        pass "$line ($secs s)"
    else
        local why="exit $rc"
        [ $rc -eq 124 ] || [ $rc -eq 137 ] && why="timeout (300 s)"
        [ $rc -gt 128 ] && [ $rc -ne 137 ] && why="killed by signal $((rc - 128)) (exit $rc)"
        if [ "${line%% *}" = FAIL ]; then
            fail "$line [$MPI, $why, $secs s]"
        elif [ "${line%% *}" = PASS ]; then
            fail "FAIL $name np=$np ($MPI): printed PASS but $why (a sanitizer or --wrap report?), $secs s"
        else
            fail "FAIL $name np=$np ($MPI): no PASS line, $why, $secs s"
        fi
        echo "---- last lines of $log"
        grep -v -E "^ *(--------|Primary job|a non-zero exit|mpiexec.* detected|mpiexec.* noticed|Process name|Exit code|the job to be|$)" "$log" |
            tail -n 25 | sed "s/^/  | /"
        echo "----"
    fi
}

for np in $NPS; do
    for t in $built; do
        q=()
        if [ "$QUICK" = yes ] || { [ "$QUICK" = auto ] && [ "$MPI" = mpich ] && [ "$np" -ge 3 ]; }; then q=(--quick); fi
        # shellcheck disable=SC2086
        run_one "${t#test_}" "$np" "$LOGS/$t.np$np.log" "${RUN[@]}" -n "$np" $WRAP "$OUT/$t" "${q[@]}"
    done
done
# the random values must not depend on the Philox generator the CPU gets:
# test_rng again on the narrower ones (AVX2, portable), at the smallest rank
# count of the sweep and at 3
case " $built " in *" test_rng "*)
    for simd in avx2 none; do
        for np in $(echo "$NPS" | tr ' ' '\n' | sort -n | head -n 1) 3; do
            # shellcheck disable=SC2086
            run_one "rng DTENSOR_SIMD=$simd" "$np" "$LOGS/test_rng.$simd.np$np.log" \
                env DTENSOR_SIMD=$simd "${RUN[@]}" -n "$np" $WRAP "$OUT/test_rng" --quick
        done
    done ;;
esac
if [ $nompi_ok -eq 1 ]; then
    # shellcheck disable=SC2086
    run_one nompi 1 "$LOGS/test_nompi.log" $WRAP "$OUT/test_nompi"
fi

if [ $failed -gt 0 ]; then
    echo "failed:"
    for f in "${failures[@]}"; do echo "  $f"; done
fi
summary="$passed passed, $failed failed"
[ -n "${DT_TEST_LOG:-}" ] && echo "$MPI: $summary" >>"$DT_TEST_LOG"
echo "$summary"
[ $failed -eq 0 ]

#!/usr/bin/env bash
# bench/run.sh -- run the benchmarks and write build/bench/*.txt, each file
# starting with the command that made it, the machine and the commit
# (`make bench-publish` copies them into bench/results/, dated).
#
#   bench/run.sh [--mpi mpich|openmpi] [--np 2] [--only "matmul dispatch callgrind rng redistribute halo stencil strided planner planner-callgrind"]
#                [--arch NAME] [--out DIR] [--note TEXT] [--bin DIR] [--nice N] [--args "..."]
#
# matmul        bench_matmul (dt_matmul vs ScaLAPACK and bare BLIS), BLIS's own
#               kernel choice           -> matmul-<mpi>-np<N>.txt
#               and, with --arch NAME (default skx; "" to skip), the same with
#               BLIS forced to that kernel set by build/libblis_arch.so
#                                       -> matmul-<mpi>-np<N>-<arch>.txt
# matmul-arch   only the second of these
# dispatch      bench_dispatch (ns per call) -> dispatch-<mpi>-np<N>.txt
# callgrind     bench_dispatch under callgrind: instructions per call and the
#               kernel's share              -> dispatch-callgrind-<mpi>-np<N>.txt
# rng           bench_rng on one rank (random fills vs Random123's philox4x32,
#               same values), then under callgrind: instructions per element
#               (`make bench-rng` runs only this)  -> rng.txt
# redistribute  bench_redistribute (not by default: minutes;
#               `make bench-redistribute` runs only this) -> <mpi>-np<N>.txt
# halo          bench_halo: dt_halo_exchange and dt_stencil_apply vs a
#               hand-written MPI halo exchange (MPI_Type_vector + Isend/Irecv),
#               every 2-D mesh of the ranks (`make bench-halo` runs only this)
#                                       -> halo-<mpi>-np<N>.txt
# stencil       bench_stencil: a 5-point Jacobi step on the user's ghosted array,
#               dtensor's in-place halo exchange vs hand-written MPI faces
#               (`make bench-stencil` runs only this) -> stencil-<mpi>-np<N>.txt
# strided       bench_strided: a padded array's [S(0)] -> [S(1)] through its
#               strides vs contiguous, staged copies and MPI_Alltoallw
#               (`make bench-strided` runs only this) -> strided-<mpi>-np<N>.txt
# planner       build/bench_planner, no MPI (`make bench-planner`) -> planner.txt
# planner-callgrind  bench/planner_callgrind.sh (`make bench-planner-callgrind`)
#                                       -> planner-callgrind.txt
#
# --out DIR: where the files go (default build/bench; nothing is written into
#           the source tree).
# --bin DIR: take the benchmark binaries from DIR and do not build them.
# --nice N: run the timed benchmarks under `nice -n N` (e.g. -20 as root, on a
#           machine that others share; the files say so).
# --args "...": more arguments for the programs of dispatch, redistribute,
#           halo, stencil, strided, planner and planner-callgrind.
# Every rank runs with BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1 (one core each).
# Run on an idle machine: the script prints the load average into each file.
# Exit status: non-zero if a benchmark failed (a wrong result included).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

MPI=mpich
NP=2
ONLY="matmul dispatch callgrind rng"
ARCH=skx
OUT=build/bench
NOTE=""
BIN=""
NICE=""
ARGS=""
while [ $# -gt 0 ]; do
    case "$1" in
    --mpi) MPI=$2; shift ;;
    --np) NP=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --arch) ARCH=$2; shift ;;
    --out) OUT=$2; shift ;;
    --note) NOTE=$2; shift ;;
    --bin) BIN=$2; shift ;;
    --nice) NICE=$2; shift ;;
    --args) ARGS=$2; shift ;;
    -h|--help) sed -n '2,46p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
case "$MPI" in mpich|openmpi) ;; *) echo "run.sh: --mpi mpich|openmpi" >&2; exit 2 ;; esac

B=${BIN:-build/$MPI}
case "$B" in /*) ;; *) B=./$B ;; esac
RUN=(mpiexec.$MPI)
[ "$MPI" = openmpi ] && RUN+=(--allow-run-as-root --oversubscribe)
TRUN=("${RUN[@]}")          # the timed runs: optionally niced
[ -n "$NICE" ] && TRUN=(nice -n "$NICE" "${RUN[@]}")
export BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1
ENVSTR="BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1"
mkdir -p "$OUT"
# build quietly (the log is shown if the build fails) what --only needs
blog=$(mktemp)
targets=()
case " $ONLY " in *" matmul "*|*" matmul-arch "*) targets+=(build/libblis_arch.so) ;; esac
if [ -z "$BIN" ]; then
    case " $ONLY " in *" matmul "*|*" matmul-arch "*|*" callgrind "*) targets+=("$B/bench_matmul") ;; esac
    case " $ONLY " in *" dispatch "*|*" callgrind "*) targets+=("$B/bench_dispatch") ;; esac
    case " $ONLY " in *" rng "*) targets+=("$B/bench_rng") ;; esac
    case " $ONLY " in *" redistribute "*) targets+=("$B/bench_redistribute") ;; esac
    case " $ONLY " in *" halo "*) targets+=("$B/bench_halo") ;; esac
    case " $ONLY " in *" stencil "*) targets+=("$B/bench_stencil") ;; esac
    case " $ONLY " in *" strided "*) targets+=("$B/bench_strided") ;; esac
    case " $ONLY " in *" planner "*|*" planner-callgrind "*) targets+=(build/bench_planner) ;; esac
fi
if [ ${#targets[@]} -gt 0 ]; then
    make "${targets[@]}" MPI="$MPI" >"$blog" 2>&1 || { cat "$blog"; rm -f "$blog"; exit 1; }
fi
rm -f "$blog"

machine() {
    local cpu
    cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
    echo "# machine: $(getconf _NPROCESSORS_ONLN) cores ($cpu, cpu family $(grep -m1 '^cpu family' /proc/cpuinfo | sed 's/.*: //')), $(. /etc/os-release && echo "$PRETTY_NAME"), $(date -u +%Y-%m-%d)"
    local dirty=""
    git diff --quiet HEAD -- dtensor.h src 2>/dev/null || dirty=" + uncommitted changes"
    echo "# dtensor.h: commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$dirty (sha256 of dtensor.h $(sha256sum < dtensor.h | cut -c1-12))"
    echo "# load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)${NICE:+; run under nice -n $NICE}${NOTE:+; $NOTE}"
}
rc=0

# a callgrind results file: FILE.tmp becomes FILE, a failure line in it sets rc=1, then it is shown
publish_cg() {
    grep -q '^# exit status\|reported a failure' "$1.tmp" && rc=1
    mv "$1.tmp" "$1"
    cat "$1"
}

# one benchmark program into one results file, shown as it runs; at its top
# how it was asked for, the command itself, the machine and the commit:
# family FILE HEADER_LINE COMMAND...
family() {
    local f=$1 head=$2; shift 2
    echo "=== $f"
    {
        echo "$head"
        echo "\$ $ENVSTR $*"
        machine
        "$@" 2>&1 || echo "# exit status $?"
        echo "# load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
    } 2>&1 | tee "$f.tmp"
    grep -q '^# exit status' "$f.tmp" && rc=1
    mv "$f.tmp" "$f"
}

# ---------------------------------------------------------------- matmul
blas_check() {  # how pdgemm reaches BLAS, independently of the bench's dlsym check
    local lib=/usr/lib/x86_64-linux-gnu/libscalapack-$MPI.so
    echo "# --- which BLAS ScaLAPACK uses"
    echo "# ldd $(readlink -f "$lib") | grep blas:"
    ldd "$lib" | grep -E 'blas|blis' | sed 's/^[[:space:]]*/#   /'
    echo "# update-alternatives libblas.so.3-x86_64-linux-gnu: $(update-alternatives --query libblas.so.3-x86_64-linux-gnu 2>/dev/null | sed -n 's/^Value: //p')"
    echo "# the dynamic linker's bindings in the bench (LD_DEBUG=bindings, 1 rank, --quick):"
    LD_DEBUG=bindings LD_DEBUG_OUTPUT=/tmp/dt_bench_ldd.$$ "${RUN[@]}" -n 1 "$B/bench_matmul" --quick --cases 1d --dtype f64 >/dev/null 2>&1
    grep -h -E "normal symbol \`[ds]gemm_'" /tmp/dt_bench_ldd.$$.* 2>/dev/null | grep -i scalapack \
        | sed -E 's/^[[:space:]]*[0-9]+:[[:space:]]*//; s/^/#   /' | sort -u
    rm -f /tmp/dt_bench_ldd.$$.*
}
run_matmul() {  # $1: arch name or ""
    local arch=$1 f pre=()
    if [ -n "$arch" ]; then
        f=$OUT/matmul-$MPI-np$NP-$arch.txt
        pre=(env DT_BLIS_ARCH="$arch" LD_PRELOAD="$PWD/build/libblis_arch.so")
    else
        f=$OUT/matmul-$MPI-np$NP.txt
    fi
    local cmd="$ENVSTR ${pre[*]:+${pre[*]} }${TRUN[*]} -n $NP $B/bench_matmul"
    echo "=== $f"
    {
        echo "\$ bench/run.sh --mpi $MPI --np $NP --only ${arch:+matmul-arch --arch $arch}${arch:-matmul --arch \"\"}   # which runs:"
        echo "\$ $cmd"
        machine
        if [ -n "$arch" ]; then
            echo "# BLIS kernels forced to '$arch' for the whole process (dt_matmul and ScaLAPACK alike) by"
            echo "# bench/blis_arch.c: BLIS 0.9.0 does not know this CPU family and would pick 'generic'"
        fi
        "${pre[@]}" "${TRUN[@]}" -n "$NP" "$B/bench_matmul" 2>&1 || { echo "# exit status $?"; return 1; }
        echo
        echo "# --- small local GEMMs (dt_matmul's built-in loops at m*n*k <= 4096, BLIS above)"
        echo "\$ $ENVSTR ${pre[*]:+${pre[*]} }${TRUN[*]} -n $NP $B/bench_matmul --cases \"s0r local\" --sizes \"16 32 64 128\" --reps 101"
        "${pre[@]}" "${TRUN[@]}" -n "$NP" "$B/bench_matmul" --cases "s0r local" --sizes "16 32 64 128" --reps 101 2>&1 \
            | grep -E '^(case|s0r|local) |agree|FAIL' || { echo "# exit status $?"; return 1; }
        blas_check
        echo "# load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
    } > "$f.tmp" 2>&1
    local st=$?
    mv "$f.tmp" "$f"
    cat "$f"
    return $st
}
case " $ONLY " in *" matmul "*) run_matmul "" || rc=1 ;; esac
case " $ONLY " in *" matmul "*|*" matmul-arch "*) [ -n "$ARCH" ] && { run_matmul "$ARCH" || rc=1; } ;; esac

# ---------------------------------------------------------------- dispatch
# shellcheck disable=SC2086  # --args: split into words on purpose
case " $ONLY " in *" dispatch "*)
    family "$OUT/dispatch-$MPI-np$NP.txt" "\$ bench/run.sh --mpi $MPI --np $NP --only dispatch${ARGS:+ --args \"$ARGS\"}   # which runs:" \
        "${TRUN[@]}" -n "$NP" "$B/bench_dispatch" $ARGS ;;
esac

# ---------------------------------------------------------------- callgrind
# Each op's loop of ITERS calls is one callgrind dump (CALLGRIND_ZERO_STATS
# before, CALLGRIND_DUMP_STATS_AT after), main thread only
# (--separate-threads=yes; MPI's progress threads are not counted).
# Instructions per call = the dump's total Ir / ITERS. The kernel's share:
# bench/callgrind.awk (the cost at the kernel section's source lines, plus
# what they call: BLIS, libm).
case " $ONLY " in *" callgrind "*)
    f=$OUT/dispatch-callgrind-$MPI-np$NP.txt
    ITERS=2000
    cg=$(mktemp -d)
    vg=(valgrind --tool=callgrind --separate-threads=yes --compress-strings=no --compress-pos=no
        "--callgrind-out-file=$cg/cg.%p")
    # the kernel sections: dtensor.h's >>layout "elements by dtype" (the
    # kernels' gathers and scatters), >>kernels, >>gemm and >>philox, up to >>device
    K0=$(grep -n '^/\* ---- elements by dtype' dtensor.h | head -1 | cut -d: -f1)
    K1=$(grep -n '^/\* >>device' dtensor.h | head -1 | cut -d: -f1)
    K0=${K0:-0}; K1=${K1:-0}
    # and >>math's and >>registry's: the element functions the kernels' loops
    # inline (written in >>math, instantiated at the end of >>registry)
    M0=$(grep -n '^/\* >>math' dtensor.h | head -1 | cut -d: -f1)
    M1=$(grep -n '^/\* >>util' dtensor.h | head -1 | cut -d: -f1)
    M0=${M0:-0}; M1=${M1:-0}
    echo "=== $f"
    {
        echo "\$ bench/run.sh --mpi $MPI --np $NP --only callgrind   # which runs:"
        echo "\$ $ENVSTR ${RUN[*]} -n $NP ${vg[*]/$cg/\$TMP} $B/bench_dispatch --callgrind --iters $ITERS --batches 1"
        machine
        echo "# $(valgrind --version); Ir = instructions executed; per call = the op loop's dump total / $ITERS"
        echo "# kernel: Ir at dtensor.h's kernel source lines (>>layout's elements by dtype, >>kernels, >>gemm,"
        echo "#         >>philox; >>math and >>registry's element functions) and"
        echo "#         in what they call (BLIS for mm); dispatch = total - kernel; mallocs: malloc/calloc/realloc/memalign calls per call (BLIS included)"
        echo "# targets: <= 2,000 instructions per call; anchor: about 134,000 instructions per"
        echo "#          DTensor detach in PyTorch (PR #167394)"
        "${RUN[@]}" -n "$NP" "${vg[@]}" "$B/bench_dispatch" --callgrind --iters "$ITERS" --batches 1 \
            > "$cg/stdout" 2> "$cg/stderr" || echo "# exit status $?"
        grep -q 'FAILED' "$cg/stdout" && echo "# the bench reported a failure: $(grep FAILED "$cg/stdout")"
        pids=$(ls "$cg" | sed -n 's/^cg\.\([0-9]*\)-01$/\1/p' | sort -n)
        printf '%-8s %4s %10s %10s %10s %7s %8s\n' "op" "rank" "Ir/call" "dispatch" "kernel" "kernel%" "mallocs"
        for d in "$cg"/cg.*.*-01; do
            [ -e "$d" ] || continue
            name=$(sed -n 's/^desc: Trigger: Client Request: //p' "$d")
            [ -n "$name" ] || continue
            pid=$(basename "$d" | sed 's/^cg\.\([0-9]*\)\..*/\1/')
            r=$(echo "$pids" | grep -n "^$pid\$" | cut -d: -f1)
            read -r _ tot _ kern _ mal < <(awk -v K0="$K0" -v K1="$K1" -v M0="$M0" -v M1="$M1" -v TOP=0 -f bench/callgrind.awk "$d" "$d" | head -1)
            awk -v n="$name" -v r="$((r - 1))" -v t="$tot" -v k="$kern" -v m="$mal" -v it="$ITERS" \
                'BEGIN { printf "%-8s %4d %10.0f %10.0f %10.0f %6.1f%% %8.2f\n", n, r, t/it, (t-k)/it, k/it, t ? 100*k/t : 0, m/it }'
        done | sort -k1,1 -k2,2n
        for op in add_R mm_R; do
            d0=$(grep -l "^desc: Trigger: Client Request: $op\$" "$cg"/cg."$(echo "$pids" | head -1)".*-01 2>/dev/null | head -1)
            [ -n "$d0" ] || continue
            echo "# $op, rank 0: the top functions by self cost, Ir per call (after inlining, -O2 -g)"
            awk -v K0="$K0" -v K1="$K1" -v M0="$M0" -v M1="$M1" -v TOP=14 -f bench/callgrind.awk "$d0" "$d0" | sed -n 's/^self //p' \
                | awk -v it="$ITERS" '{ printf "#   %8.1f  %s\n", $1/it, $2 }'
        done
        echo "# the bench's own output under valgrind (times are not meaningful here):"
        sed 's/^/#   /' "$cg/stdout"

        # dt_matmul's local GEMM vs bare BLIS, exactly: one call each (bench_matmul --callgrind)
        mkdir -p "$cg/mm"
        echo
        echo "# --- dt_matmul vs bare bli_?gemm on the same local blocks: instructions of one call"
        echo "\$ $ENVSTR ${RUN[*]} -n $NP ${vg[*]/$cg/\$TMP\/mm} $B/bench_matmul --callgrind --cases \"s0r local\" --sizes \"64 256\""
        echo "# (bench_matmul --callgrind: after a warm-up, one dt_matmul call and one bli_?gemm call, each its own dump;"
        echo "#  s0r: each rank's [size/$NP, size] x [size, size]; local: [size, size]^2 on a mesh of one rank;"
        echo "#  ratio = bare / dt, the target is >= 0.95; rank 0 shown, rank 1 is alike)"
        "${RUN[@]}" -n "$NP" "${vg[@]/$cg/$cg/mm}" "$B/bench_matmul" --callgrind --cases "s0r local" --sizes "64 256" \
            > "$cg/mm/stdout" 2>&1 || echo "# exit status $?"
        grep -q 'FAILED' "$cg/mm/stdout" && echo "# the bench reported a failure: $(grep FAILED "$cg/mm/stdout")"
        mp=$(ls "$cg/mm" | sed -n 's/^cg\.\([0-9]*\)-01$/\1/p' | sort -n | head -1)
        printf '%-6s %-4s %5s %14s %14s %8s\n' "case" "type" "size" "dt Ir" "bare Ir" "ratio"
        for d in "$cg/mm"/cg."$mp".*-01; do
            [ -e "$d" ] || continue
            echo "$(sed -n 's/^desc: Trigger: Client Request: //p' "$d") $(sed -n 's/^totals: //p' "$d")"
        done | awk '{ split($1, p, "_"); key = p[2] " " p[3] " " p[4]; v[p[1], key] = $2; keys[key] = 1 }
                    END { for (k in keys) { split(k, q, " ");
                          printf "%-6s %-4s %5d %14d %14d %8.4f\n", q[1], q[2], q[3], v["dt", k], v["bare", k],
                                 v["dt", k] ? v["bare", k] / v["dt", k] : 0 } }' | sort -k1,1 -k2,2 -k3,3n
    } > "$f.tmp" 2>&1
    publish_cg "$f"
    rm -rf "$cg"
    ;;
esac

# ---------------------------------------------------------------- rng
# bench_rng on one rank: the timings (and uniform f32 again with dtensor.h's
# narrower Philox generators, DTENSOR_SIMD=avx2 / none), then under callgrind
# one fill of 2^20 elements by each side, each its own dump
# (CALLGRIND_ZERO_STATS before, CALLGRIND_DUMP_STATS_AT after); Ir per
# element = the dump's total / 2^20. Valgrind's CPU has no AVX-512, so the
# library runs its AVX2 generator there; a second callgrind run counts its
# scalar one (DTENSOR_SIMD=none). Ours includes the op's argument checks and
# dispatch (a few hundred instructions a call: nothing at 2^20 elements).
rng_cg_totals() {  # $1: callgrind dir -> lines "ours_uniform_f32 <Ir>"
    local d name
    for d in "$1"/cg.*.*-01; do
        [ -e "$d" ] || continue
        name=$(sed -n 's/^desc: Trigger: Client Request: //p' "$d")
        [ -n "$name" ] && echo "$name $(sed -n 's/^totals: //p' "$d")"
    done
}
case " $ONLY " in *" rng "*)
    f=$OUT/rng.txt
    N=1048576
    cg=$(mktemp -d)
    mkdir -p "$cg/simd" "$cg/scalar"
    vg=(valgrind --tool=callgrind --separate-threads=yes --compress-strings=no --compress-pos=no)
    echo "=== $f"
    {
        echo "\$ make bench-rng MPI=$MPI   # = bench/run.sh --mpi $MPI --only rng, which runs:"
        echo "\$ ${TRUN[*]} -n 1 $B/bench_rng"
        machine
        "${TRUN[@]}" -n 1 "$B/bench_rng" 2>&1 || echo "# exit status $?"
        for simd in avx2 none; do
            echo
            echo "# --- uniform f32 with dtensor.h's generator capped (the values are the same on every path)"
            echo "\$ DTENSOR_SIMD=$simd ${TRUN[*]} -n 1 $B/bench_rng --kinds uniform-f32"
            DTENSOR_SIMD=$simd "${TRUN[@]}" -n 1 "$B/bench_rng" --kinds uniform-f32 2>&1 \
                | grep -E '^(fill|uniform) |CPU:|FAILED|values:' || echo "# exit status $?"
        done
        echo
        echo "# --- instructions per element: one fill of $N elements by each side"
        echo "\$ ${RUN[*]} -n 1 ${vg[*]} --callgrind-out-file=\$TMP/cg.%p $B/bench_rng --callgrind"
        echo "\$ DTENSOR_SIMD=none ${RUN[*]} -n 1 ${vg[*]} --callgrind-out-file=\$TMP2/cg.%p $B/bench_rng --callgrind"
        echo "# $(valgrind --version); Ir = instructions executed; Ir/el = the fill's dump total / $N;"
        echo "# valgrind's CPU has no AVX-512, so ours runs its AVX2 generator there (the timings above: AVX-512)"
        echo "# and, second column, its scalar one (DTENSOR_SIMD=none); ratio = peer / ours (AVX2)"
        "${RUN[@]}" -n 1 "${vg[@]}" "--callgrind-out-file=$cg/simd/cg.%p" "$B/bench_rng" --callgrind \
            > "$cg/simd/stdout" 2> "$cg/simd/stderr" || echo "# exit status $?"
        DTENSOR_SIMD=none "${RUN[@]}" -n 1 "${vg[@]}" "--callgrind-out-file=$cg/scalar/cg.%p" "$B/bench_rng" --callgrind \
            > "$cg/scalar/stdout" 2> "$cg/scalar/stderr" || echo "# exit status $?"
        for v in simd scalar; do
            grep -q 'FAILED' "$cg/$v/stdout" && echo "# the bench reported a failure: $(grep FAILED "$cg/$v/stdout" | head -3)"
        done
        printf '%-10s %-4s %11s %11s %11s %7s\n' "fill" "type" "ours Ir/el" "ours scalar" "peer Ir/el" "ratio"
        { rng_cg_totals "$cg/simd"; rng_cg_totals "$cg/scalar" | sed 's/^ours_/scalar_/'; } \
            | awk -v n="$N" '{ split($1, p, "_"); key = p[2] " " p[3]; v[p[1], key] = $2; keys[key] = 1 }
                   END { m = split("uniform f32,uniform f64,normal f32,bernoulli f32,randint i32", ord, ",");
                         for (i = 1; i <= m; i++) { x = ord[i]; if (!(x in keys)) continue;
                         split(x, q, " "); o = v["ours", x]; e = v["peer", x];
                         printf "%-10s %-4s %11.2f %11.2f %11.2f %7.2f\n", q[1], q[2], o / n,
                                v["scalar", x] / n, e / n, o ? e / o : 0 } }'
        for w in ours_uniform_f32 peer_uniform_f32; do
            d0=$(grep -l "^desc: Trigger: Client Request: $w\$" "$cg"/simd/cg.*.*-01 2>/dev/null | head -1)
            [ -n "$d0" ] || continue
            echo "# $w: the top functions by self cost, Ir per element (after inlining, -O2 -g)"
            awk -v K0=0 -v K1=0 -v TOP=6 -f bench/callgrind.awk "$d0" "$d0" | sed -n 's/^self //p' \
                | awk -v n="$N" '$1 > 0 { printf "#   %8.3f  %s\n", $1/n, $2 }'
        done
        echo "# the bench's own output under valgrind (first run):"
        sed 's/^/#   /' "$cg/simd/stdout"
        echo "# load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
    } > "$f.tmp" 2>&1
    publish_cg "$f"
    rm -rf "$cg"
    ;;
esac


# ---------------------------------------------------------------- redistribute
# shellcheck disable=SC2086
case " $ONLY " in *" redistribute "*)
    family "$OUT/$MPI-np$NP.txt" "\$ make bench-redistribute MPI=$MPI NP=$NP${ARGS:+ BENCHARGS=\"$ARGS\"}   # = bench/run.sh --only redistribute, which runs:" \
        "${TRUN[@]}" -n "$NP" "$B/bench_redistribute" $ARGS ;;
esac

# ---------------------------------------------------------------- halo, stencil, strided
# shellcheck disable=SC2086
for name in halo stencil strided; do
    case " $ONLY " in *" $name "*)
        family "$OUT/$name-$MPI-np$NP.txt" \
            "\$ bench/run.sh --mpi $MPI --np $NP --only $name${NICE:+ --nice $NICE}${ARGS:+ --args \"$ARGS\"}   # (make bench-$name MPI=$MPI: without --nice), which runs:" \
            "${TRUN[@]}" -n "$NP" "$B/bench_$name" $ARGS ;;
    esac
done

# ---------------------------------------------------------------- planner (one process, no MPI)
# shellcheck disable=SC2086
case " $ONLY " in *" planner "*)
    family "$OUT/planner.txt" "\$ bench/run.sh --only planner${NICE:+ --nice $NICE}${ARGS:+ --args \"$ARGS\"}   # = make bench-planner${ARGS:+ PLANNERARGS=\"$ARGS\"}${NICE:+ under nice}, which runs:" \
        ${NICE:+nice -n "$NICE"} ./build/bench_planner $ARGS ;;
esac
# shellcheck disable=SC2086
case " $ONLY " in *" planner-callgrind "*)
    family "$OUT/planner-callgrind.txt" "\$ bench/run.sh --only planner-callgrind${ARGS:+ --args \"$ARGS\"}   # = make bench-planner-callgrind${ARGS:+ PLANNERARGS=\"$ARGS\"}, which runs:" \
        bash bench/planner_callgrind.sh build/bench_planner $ARGS ;;
esac
exit $rc

#!/usr/bin/env bash
# bench/prk_vs.sh -- the Parallel Research Kernels' own MPI1 binaries
# (bench/prk_build.sh: build/prk/MPI/{transpose,stencil,dgemm}) against the
# dtensor.h ports with the same command line and output (bench/prk_port.c:
# build/MPI/prk_port_{transpose,stencil,dgemm}), launch against launch.
# Called by `make bench-prk-real PRK_DIR=...`; runs alone once both are built.
#
#   bash bench/prk_vs.sh [--mpi "mpich openmpi"] [--np "2 3"] [--rounds 3]
#                        [--cases "transpose:10:2000 ..."] [--replica 1|0] [--out FILE]
#
# A case is KERNEL:ITERATIONS:N[:EXTRA...] (colons inside EXTRA become
# spaces); each launch is `PROGRAM ITERATIONS N EXTRA`, PRK's arguments:
#   transpose:10:2000      transpose <# iterations> <matrix order> (PRK's tile size: its default, 32)
#   stencil:20:4000        stencil <# iterations> <array dimension> (RADIUS 2, compiled in on both sides)
#   dgemm:3:1024:32:1      dgemm <# iterations> <order> <outer block size> <local block flag>
# PRK's transpose needs N % ranks == 0: N is rounded up to the next multiple
# of the ranks for that cell (2000 -> 2001 at 3 ranks), the same N for both.
#
# For each MPI, ranks and case: ROUNDS rounds, each a launch of PRK's binary
# then a launch of the port (PRK / port / PRK / port ...), and for transpose
# cases (--replica 1, the default) a launch of the in-tree replica too
# (build/MPI/bench_prk_transpose --n N --iters I --rounds 1: its "prk" side,
# the re-implementation that `make bench-prk` times, at its default tile 64).
# Every launch must print "Solution validates" (the replica: no WRONG
# RESULT) or the script stops with exit 1. Time per iteration: from the
# launch's Rate line (PRK's rule: max over ranks of the timed loop /
# iterations, after one warm-up iteration; the rate has more digits than
# "Avg time (s)"): transpose 16 n^2 bytes, stencil 19 (n-4)^2 flops, dgemm
# 2 n^3 flops per iteration; the replica's "prk ms" / iterations.
#
# Environment of every launch, both sides alike (mk/bench.mk's conventions):
# BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1 (BENCH_ENV); MPICH: mpiexec.mpich and
# LD_PRELOAD=build/libdt_yield.so (YIELD_ENV: ranks yield after 64 idle
# polls; needed at 3 ranks on 2 cores); Open MPI: mpiexec.openmpi
# --allow-run-as-root --oversubscribe (MPIEXEC).
#
# Output: the table (kernel, mpi, ranks, n, PRK median ms, port median ms,
# port / PRK = ratio of the medians, min-max of the per-round port / PRK,
# and replica / PRK for transpose) on stdout and in
# build/bench/prk-real-DATE.txt (headed by the command, the machine, the
# commit, PRK's build.txt), every launch's last lines in
# build/bench/prk-real-DATE.log.
set -euo pipefail
usage() { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
MPIS="mpich openmpi"
NPS="2 3"
ROUNDS=3
CASES="transpose:10:2000 transpose:10:4000 stencil:20:4000 dgemm:3:1024:32:1"
REPLICA=1
OUTF=
while [ $# -gt 0 ]; do
    case "$1" in
        --mpi) MPIS=$2; shift 2;;
        --np) NPS=$2; shift 2;;
        --rounds) ROUNDS=$2; shift 2;;
        --cases) CASES=$2; shift 2;;
        --replica) REPLICA=$2; shift 2;;
        --out) OUTF=$2; shift 2;;
        -h|--help) usage; exit 0;;
        *) echo "prk_vs.sh: unknown argument $1 (--help)" >&2; exit 2;;
    esac
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
STAMP=$(date -u +%Y-%m-%d-%H%M)
mkdir -p build/bench
OUTF=${OUTF:-build/bench/prk-real-$STAMP.txt}
LOG=${OUTF%.txt}.log
: > "$LOG"

for mpi in $MPIS; do
    for k in transpose stencil dgemm; do
        for f in "build/prk/$mpi/$k" "build/$mpi/prk_port_$k"; do
            [ -x "$f" ] || { echo "prk_vs.sh: $f missing: make bench-prk-real PRK_DIR=... builds it" >&2; exit 2; }
        done
    done
    if [ "$REPLICA" = 1 ] && [ ! -x "build/$mpi/bench_prk_transpose" ]; then
        echo "prk_vs.sh: build/$mpi/bench_prk_transpose missing (make build/$mpi/bench_prk_transpose, or --replica 0)" >&2; exit 2
    fi
done
[ -f build/libdt_yield.so ] || { echo "prk_vs.sh: build/libdt_yield.so missing (make build/libdt_yield.so)" >&2; exit 2; }

launcher() { # MPI NP -> the command prefix
    if [ "$1" = mpich ]; then
        echo "env BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1 LD_PRELOAD=$ROOT/build/libdt_yield.so mpiexec.mpich -n $2"
    else
        echo "env BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1 mpiexec.openmpi --allow-run-as-root --oversubscribe -n $2"
    fi
}

# work per iteration in the rate's unit (MB or MFlop)
work() { # KERNEL N
    case "$1" in
        transpose) awk -v n="$2" 'BEGIN { printf "%.17g", 16e-6 * n * n }';;
        stencil) awk -v n="$2" 'BEGIN { printf "%.17g", 19e-6 * (n - 4) * (n - 4) }';;
        dgemm) awk -v n="$2" 'BEGIN { printf "%.17g", 2e-6 * n * n * n }';;
    esac
}

# one launch of a PRK-style program: its time per iteration in ms on stdout
run_prk_style() { # LABEL WORK CMD...
    local label=$1 w=$2 out rate
    shift 2
    if ! out=$("$@" 2>&1); then
        printf '%s\n%s\n' "== $label: FAILED: $*" "$out" >> "$LOG"
        echo "prk_vs.sh: $label failed: $*" >&2; echo "$out" | tail -5 >&2; exit 1
    fi
    printf '%s\n%s\n' "== $label: $*" "$(echo "$out" | tail -3)" >> "$LOG"
    grep -q "^Solution validates" <<<"$out" || { echo "prk_vs.sh: $label did not validate: $*" >&2; echo "$out" | tail -5 >&2; exit 1; }
    rate=$(sed -n 's/^Rate ([^)]*): *\([0-9.eE+-]*\).*/\1/p' <<<"$out" | tail -1)
    [ -n "$rate" ] || { echo "prk_vs.sh: $label: no Rate line: $*" >&2; exit 1; }
    awk -v w="$w" -v r="$rate" 'BEGIN { printf "%.6f", 1e3 * w / r }'
}

run_replica() { # LABEL ITERS CMD...
    local label=$1 it=$2 out line
    shift 2
    if ! out=$("$@" 2>&1); then
        printf '%s\n%s\n' "== $label: FAILED: $*" "$out" >> "$LOG"
        echo "prk_vs.sh: $label failed: $*" >&2; echo "$out" | tail -5 >&2; exit 1
    fi
    printf '%s\n%s\n' "== $label: $*" "$(echo "$out" | tail -1)" >> "$LOG"
    line=$(grep -v '^#' <<<"$out" | grep -E '^ *[0-9]+ ' | head -1)
    if [ -z "$line" ] || grep -q "WRONG" <<<"$line"; then echo "prk_vs.sh: $label: wrong result or no row: $*" >&2; exit 1; fi
    awk -v it="$it" '{ printf "%.6f", $4 / it }' <<<"$line"
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.3f", v[(NR + 1) / 2]; else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

{
    echo "\$ bash bench/prk_vs.sh --mpi \"$MPIS\" --np \"$NPS\" --rounds $ROUNDS --cases \"$CASES\" --replica $REPLICA"
    echo "# $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(getconf _NPROCESSORS_ONLN) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# dtensor.h: commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- dtensor.h bench/prk_port.c 2>/dev/null || echo ' (modified)')"
    for mpi in $MPIS; do sed "s/^# /# $mpi: /" "build/prk/$mpi/build.txt"; done
    echo "# the ports: bench/prk_port.c, mpicc.MPI -std=c99 -O2 -g (mk/bench.mk), -lblis"
    echo "# ms = time per iteration (median over $ROUNDS launches); port/PRK = port median / PRK median;"
    echo "# rounds = min-max of the per-round port/PRK; replica/PRK = bench_prk_transpose's prk side (tile 64) median / PRK median"
    printf '%-9s %-7s %5s %6s %11s %11s %9s %13s %12s\n' kernel mpi ranks n "PRK ms" "port ms" port/PRK rounds replica/PRK
} | tee "$OUTF"

for mpi in $MPIS; do
    for np in $NPS; do
        L=$(launcher "$mpi" "$np")
        for c in $CASES; do
            IFS=: read -r k it n extra <<<"$c"
            extra=${extra//:/ }
            if [ "$k" = transpose ] && [ $((n % np)) -ne 0 ]; then n=$(( (n / np + 1) * np )); fi
            w=$(work "$k" "$n")
            tp=() tq=() tr=() rr=()
            for ((r = 1; r <= ROUNDS; r++)); do
                # shellcheck disable=SC2086
                a=$(run_prk_style "prk $k $mpi np$np n$n round $r" "$w" $L "build/prk/$mpi/$k" "$it" "$n" $extra)
                # shellcheck disable=SC2086
                b=$(run_prk_style "port $k $mpi np$np n$n round $r" "$w" $L "build/$mpi/prk_port_$k" "$it" "$n" $extra)
                tp+=("$a"); tq+=("$b"); tr+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", b / a }')")
                if [ "$k" = transpose ] && [ "$REPLICA" = 1 ]; then
                    # shellcheck disable=SC2086
                    rr+=("$(run_replica "replica $mpi np$np n$n round $r" "$it" $L "build/$mpi/bench_prk_transpose" --n "$n" --iters "$it" --rounds 1)")
                fi
            done
            mp=$(echo "${tp[*]}" | median); mq=$(echo "${tq[*]}" | median)
            lo=$(printf '%s\n' "${tr[@]}" | sort -g | head -1); hi=$(printf '%s\n' "${tr[@]}" | sort -g | tail -1)
            rep=-
            if [ ${#rr[@]} -gt 0 ]; then rep=$(awk -v a="$mp" -v b="$(echo "${rr[*]}" | median)" 'BEGIN { printf "%.2f", b / a }'); fi
            printf '%-9s %-7s %5s %6s %11s %11s %9.2f %13s %12s\n' "$k" "$mpi" "$np" "$n" "$mp" "$mq" \
                "$(awk -v a="$mp" -v b="$mq" 'BEGIN { print b / a }')" \
                "$(printf '%.2f-%.2f' "$lo" "$hi")" "$rep" | tee -a "$OUTF"
        done
    done
done
echo "prk_vs.sh: $OUTF (every launch: $LOG)"

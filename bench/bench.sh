#!/usr/bin/env bash
# bench/bench.sh -- every benchmark against its peer, side by side, in one run:
# the table on stdout, OUT/latest.csv (+ latest.md, the same table in
# Markdown) and one PNG plot per family (gnuplot); OUT is build/bench/harness
# unless --out says otherwise, the raw rows and the log go to OUT/raw/.
# Nothing is written into the source tree: `make bench-publish` copies the
# report into bench/results/, dated and stamped with the commit.
#
#   bench/bench.sh [--quick] [--np 4] [--rounds N] [--out DIR] [--only "FAMILIES"]
#   make bench        (= bench/bench.sh)          make bench-quick (= --quick, < 5 min)
#   make bench-deps   (installs the peers: ScaLAPACK, FFTW-MPI, mpi4py, numpy,
#                      gnuplot from Debian; torch from PyPI into build/pyenv)
#
# Programs (each checks its own results against a closed form and exits
# non-zero on a wrong value; each writes raw rows family,case,size,side,value,unit
# with value = the median of >= 5 timed repetitions after a warm-up):
#   redistribute  bench_redistribute: dt_tensor_redistribute vs the raw MPI
#                 collective for the same bytes (raw-mpi; ragged balanced /
#                 sizes parts vs MPI_Allgatherv / MPI_Alltoallv: raw-mpi-v),
#                 vs pack+alltoall (hand-mpi), and peak memory per rank
#                 (memory, --mem)
#   pdgemr2d      bench_pdgemr2d: row/column/2-D block changes vs ScaLAPACK pdgemr2d,
#                 and block-cyclic ones (block size, grid shape, chunk <->
#                 cyclic: pdgemr2d-cyclic)
#   pdgemm        bench_matmul: dt_matmul vs ScaLAPACK pdgemm (1-D and 2-D meshes)
#   fftw          bench_fftw_transpose: S(0)->S(1) vs fftw_mpi_plan_transpose
#   mpi4py        bench/py/redist_mpi4py.py: the same redistributions in mpi4py+numpy
#   torch         bench/py/torch_dtensor.py: torch DTensor redistribute and the
#                 dispatch time of a + b (gloo, CPU), vs bench_dispatch
#   planner       bench_planner: one process plans for 64..65,536 simulated
#                 ranks through a counting backend (bytes vs lower bound, time)
#
# Ours and the peer alternate inside each C program, repetition by
# repetition. The Python peers are separate processes: the harness
# interleaves them with bench_redistribute (which supplies "ours" for them)
# round by round (--rounds, default 3; quick 2), and the report takes the
# median over rounds. Everything runs under Open MPI at --np ranks (4):
# Debian's FFTW-MPI and mpi4py are built against Open MPI, and Open MPI stays
# usable with more ranks than cores where MPICH busy-polls (README). The
# redistributions and their Python peers also run at 2 ranks, dispatch and
# matmul at 1 rank.
# A peer that is not installed is reported as missing and the run carries on;
# a wrong result or a crash of one of our programs fails the run (exit 1).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

QUICK=0
NP=4
ROUNDS=""
OUT=build/bench/harness
ONLY_ARG=""
ONLY="redistribute pdgemr2d pdgemm fftw mpi4py torch dispatch planner"
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) QUICK=1 ;;
    --np) NP=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --only) ONLY=$2; ONLY_ARG=" --only \"$2\""; shift ;;
    -h|--help) sed -n '2,43p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$ROUNDS" ] || ROUNDS=$([ $QUICK = 1 ] && echo 2 || echo 3)
want() { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }

MPI=openmpi
B=build/$MPI
WORK=$OUT/raw
PY=/usr/bin/python3
TORCHPY=build/pyenv/bin/python
RUN=(env BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1 mpiexec.openmpi --allow-run-as-root --oversubscribe)
RAW=$WORK/raw.csv
LOG=$WORK/log
mkdir -p "$WORK"
: > "$RAW"; : > "$LOG"
FAILED=()
MISSING=()
CRASHED=()
START=$(date +%s)

if [ $QUICK = 1 ]; then
    REDIST=(--max-mib 4 --min-kib 16 --reps 7)
    MEM=(--max-mib 16 --min-kib 1024)
    MATMUL=(--sizes "256 512" --dtype f64 --cases "1d 2d" --reps 5)
    PYARGS=(--quick --min-kib 16 --max-mib 4)
    TORCHARGS=(--quick --min-kib 16 --max-mib 1)
    QARG=(--quick)
else
    REDIST=(--max-mib 64 --min-kib 1 --reps 9)
    MEM=(--max-mib 64 --min-kib 1024)
    MATMUL=(--sizes "512 1024 2048" --dtype f64 --cases "1d 2d" --reps 7)
    PYARGS=(--max-mib 64)
    TORCHARGS=(--max-mib 64)
    QARG=()
fi

say() { echo "$*"; echo "$*" >> "$LOG"; }

# run_prog NAME NP CMD...: run one program, its rows into $RAW prefixed by the
# number of ranks; exit 3 = peer not installed (reported, not a failure). A
# peer (mpi4py, torch) that printed its last line ("# all results correct")
# and then died in its own teardown (torch/gloo: "terminate called without
# an active exception", exit 134) keeps its rows and is reported as crashed;
# any other non-zero exit, and every exit of our programs, is a failure.
run_prog() {
    local name=$1 np=$2; shift 2
    local rows=$WORK/rows.$$.csv out=$WORK/out.$$.txt
    : > "$rows"
    say "# $name, $np rank(s): $*"
    "$@" --csv "$rows" > "$out" 2>&1
    local rc=$?
    cat "$out" >> "$LOG"
    if [ $rc = 3 ]; then
        MISSING+=("$name (see $LOG)")
    elif [ $rc != 0 ] && is_peer "$name" && grep -q '^# all results correct' "$out"; then
        CRASHED+=("$name at $np ranks (exit $rc after its last row)")
        say "#   note: exit $rc after every row and check passed (a crash in its teardown); rows kept"
    elif [ $rc != 0 ]; then
        FAILED+=("$name at $np ranks (exit $rc)")
        say "#   FAILED: exit $rc (see $LOG)"
    fi
    sed "s/^/$np,/" "$rows" >> "$RAW"
    rm -f "$rows" "$out"
}
is_peer() { case "$1" in mpi4py|torch) return 0 ;; esac; return 1; }

# build what we run (the peers' libraries must be installed: make bench-deps)
TARGETS=("$B/bench_redistribute" "$B/bench_dispatch")
want pdgemr2d && TARGETS+=("$B/bench_pdgemr2d")
want pdgemm && TARGETS+=("$B/bench_matmul")
want fftw && TARGETS+=("$B/bench_fftw_transpose")
want planner && TARGETS+=(build/bench_planner)
if ! make -s MPI=$MPI "${TARGETS[@]}" >> "$LOG" 2>&1; then
    echo "bench.sh: building ${TARGETS[*]} failed (make bench-deps installs what they need); see $LOG" >&2
    tail -20 "$LOG" >&2
    exit 1
fi

have_torch() { [ -x "$TORCHPY" ] && "$TORCHPY" -c "import torch" > /dev/null 2>&1; }
have_mpi4py() { "$PY" -c "import mpi4py, numpy" > /dev/null 2>&1; }

# the redistributions and their Python peers at --np ranks and at 2 (one
# rank per core on the 2-core development machine: the timing that measures
# the libraries, not the scheduler; gloo suffers most when oversubscribed)
RNPS="$NP"
[ "$NP" != 2 ] && RNPS="$NP 2"
for round in $(seq 1 "$ROUNDS"); do
    say "# ---- round $round of $ROUNDS"
    for np in $RNPS; do
        if want redistribute || want mpi4py || want torch; then
            run_prog bench_redistribute "$np" "${RUN[@]}" -n "$np" "$B/bench_redistribute" "${REDIST[@]}"
        fi
        if want mpi4py; then
            if have_mpi4py; then
                run_prog mpi4py "$np" "${RUN[@]}" -n "$np" "$PY" bench/py/redist_mpi4py.py "${PYARGS[@]}"
            elif [ "$round$np" = "1$NP" ]; then MISSING+=("mpi4py/numpy for $PY (make bench-deps)"); fi
        fi
        if want torch; then
            if have_torch; then
                run_prog torch "$np" "${RUN[@]}" -n "$np" "$TORCHPY" bench/py/torch_dtensor.py "${TORCHARGS[@]}"
            elif [ "$round$np" = "1$NP" ]; then MISSING+=("torch in $TORCHPY (make bench-deps)"); fi
        fi
        if want torch || want dispatch; then
            run_prog bench_dispatch "$np" "${RUN[@]}" -n "$np" "$B/bench_dispatch" --quick
        fi
    done
    if [ "$round" = 1 ] && { want torch || want dispatch; }; then
        run_prog bench_dispatch 1 "${RUN[@]}" -n 1 "$B/bench_dispatch" --quick
    fi
done

# the C peers interleave inside the program: one run each
if want redistribute; then
    run_prog "bench_redistribute --mem" "$NP" "${RUN[@]}" -n "$NP" "$B/bench_redistribute" "${MEM[@]}" --mem
fi
want pdgemr2d && run_prog bench_pdgemr2d "$NP" "${RUN[@]}" -n "$NP" "$B/bench_pdgemr2d" "${QARG[@]}"
if want pdgemm; then
    for np in "$NP" 1; do run_prog bench_matmul "$np" "${RUN[@]}" -n "$np" "$B/bench_matmul" "${MATMUL[@]}"; done
fi
want fftw && run_prog bench_fftw_transpose "$NP" "${RUN[@]}" -n "$NP" "$B/bench_fftw_transpose" "${QARG[@]}"
want planner && run_prog bench_planner 1 build/bench_planner "${QARG[@]}"

ELAPSED=$(( $(date +%s) - START ))
CMD="bench/bench.sh$([ $QUICK = 1 ] && echo ' --quick') --np $NP --rounds $ROUNDS$ONLY_ARG"
"$PY" bench/report.py --raw "$RAW" --out "$OUT" --cmd "$CMD" --np "$NP" --seconds "$ELAPSED" \
    --missing "$(IFS=';'; echo "${MISSING[*]:-}")" --failed "$(IFS=';'; echo "${FAILED[*]:-}")" \
    --crashed "$(IFS=';'; echo "${CRASHED[*]:-}")"
rc=$?
echo "# log: $LOG   raw rows: $RAW   ($ELAPSED s)"
[ ${#FAILED[@]} = 0 ] && [ $rc = 0 ] || exit 1

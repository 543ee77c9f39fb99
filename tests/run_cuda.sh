#!/usr/bin/env bash
# tests/run_cuda.sh -- run the CUDA tests that `make cuda` built, on a GPU machine.
#
#   tests/run_cuda.sh <mpich|openmpi>        (make test-cuda MPI=... builds, then calls this)
#
# Runs, from build/cuda/ (each one only if its source exists; a source
# whose program is missing is a failure: `make cuda` should have built it):
#   test_cuda_host                     directly (CPU only)
#   test_nccl                          1 rank; with 2+ GPUs also one rank per GPU (at most 4)
#   test_device                        1 rank over NCCL (DT_TEST_BACKEND=nccl), then 2 3 4
#                                      ranks over MPI, staging through the host, on one GPU
#   test_heat2d_cuda                   examples/heat2d_cuda.cu at a small size: 1 rank over
#                                      NCCL (plain, and --graph: steps replayed from a CUDA
#                                      graph), then 1 2 3 4 ranks over MPI on one GPU
#                                      (bitwise against its serial host run)
#   heat2d_cuda                        the example at its full size, 1 rank over NCCL, plain
#                                      and --graph (its ms/step and overlap lines; checksum:
#                                      heat2d.c's at the same size)
#   bench_cuda                         once, at 1 rank ($CUDABENCHARGS)
# A test passes when it exits 0 and its last PASS/FAIL line is PASS; the
# bench when it exits 0. Exit 77 (a test's "no CUDA device, SKIPPED") is a
# FAILURE here: this script is for machines with a GPU. A 300 s timeout per
# run. Logs: build/cuda/logs/. The very last line is
#   N passed, N failed
# and the exit status is non-zero if anything failed; DT_TEST_LOG=file
# appends that line (prefixed "cuda-<mpi>:") to `file`, as tests/run.sh does.
set -u
cd "$(dirname "$0")/.." || exit 2

MPI=${1:-}
case "$MPI" in mpich|openmpi) ;; *) echo "usage: tests/run_cuda.sh <mpich|openmpi>"; exit 2 ;; esac
if [ "$MPI" = openmpi ]; then
    RUN=(mpiexec.openmpi --allow-run-as-root --oversubscribe)
else
    RUN=(mpiexec.mpich)
fi
B=build/cuda
LOGS=$B/logs
mkdir -p "$LOGS"
passed=0
failed=0
failures=()

pass() { passed=$((passed + 1)); echo "$1"; }
fail() { failed=$((failed + 1)); failures+=("$1"); echo "$1"; }

# GPUs visible (0 when nvidia-smi is missing: then only the 1-rank runs)
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
echo "run_cuda: $MPI, $ngpu GPU(s)"

# run_one NAME LOG KIND CMD...: KIND test (needs a PASS line) or bench
run_one() {
    local name=$1 log=$2 kind=$3
    shift 3
    local rc line why
    timeout -k 10 300 "$@" >"$log" 2>&1
    rc=$?
    line=$(grep -E "^(PASS|FAIL) " "$log" | tail -n 1)
    if [ $rc -eq 0 ] && { [ "$kind" = bench ] || [ "${line%% *}" = PASS ]; }; then
        pass "${line:-PASS $name} [$MPI]"
        return
    fi
    why="exit $rc"
    [ $rc -eq 77 ] && why="exit 77: skipped, which is a failure on a GPU machine"
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && why="timeout (300 s)"
    fail "FAIL $name [$MPI, $why]: see $log"
    tail -n 20 "$log" | sed "s/^/  | /"
}

# have SRC PROG: 0 if PROG should run; a built-but-missing program fails
have() {
    [ -e "$1" ] || return 1
    [ -x "$B/$2" ] && return 0
    fail "FAIL $2: $1 exists but $B/$2 was not built (make cuda)"
    return 1
}

if have tests/test_cuda_host.cu test_cuda_host; then
    run_one cuda_host "$LOGS/test_cuda_host.log" test "$B/test_cuda_host"
fi

if have tests/test_cuda.cu test_cuda; then
    run_one cuda_kernels "$LOGS/test_cuda.log" test "$B/test_cuda"
fi

if have tests/test_nccl.cu test_nccl; then
    run_one "nccl np=1" "$LOGS/test_nccl.np1.log" test "${RUN[@]}" -n 1 "$B/test_nccl"
    if [ "$ngpu" -ge 2 ]; then
        np=$((ngpu < 4 ? ngpu : 4))
        run_one "nccl np=$np" "$LOGS/test_nccl.np$np.log" test "${RUN[@]}" -n "$np" "$B/test_nccl"
    fi
fi

if have tests/test_device.c test_device; then
    run_one "device np=1 (nccl)" "$LOGS/test_device.nccl.np1.log" test \
        env DT_TEST_BACKEND=nccl "${RUN[@]}" -n 1 "$B/test_device"
    for np in 2 3 4; do
        run_one "device np=$np ($MPI)" "$LOGS/test_device.np$np.log" test "${RUN[@]}" -n "$np" "$B/test_device"
    done
fi

if have tests/test_heat2d_cuda.cu test_heat2d_cuda; then
    run_one "heat2d_cuda np=1 (nccl)" "$LOGS/test_heat2d_cuda.nccl.np1.log" test \
        "${RUN[@]}" -n 1 "$B/test_heat2d_cuda" --backend nccl
    run_one "heat2d_cuda np=1 (nccl, graph)" "$LOGS/test_heat2d_cuda.graph.np1.log" test \
        "${RUN[@]}" -n 1 "$B/test_heat2d_cuda" --backend nccl --graph
    for np in 1 2 3 4; do
        run_one "heat2d_cuda np=$np ($MPI)" "$LOGS/test_heat2d_cuda.np$np.log" test \
            "${RUN[@]}" -n "$np" "$B/test_heat2d_cuda" --backend mpi
    done
fi

if have examples/heat2d_cuda.cu heat2d_cuda; then
    run_one heat2d_cuda "$LOGS/heat2d_cuda.log" bench "${RUN[@]}" -n 1 "$B/heat2d_cuda" --backend nccl
    tail -n 6 "$LOGS/heat2d_cuda.log"
    run_one "heat2d_cuda --graph" "$LOGS/heat2d_cuda.graph.log" bench "${RUN[@]}" -n 1 "$B/heat2d_cuda" \
        --backend nccl --graph
    tail -n 6 "$LOGS/heat2d_cuda.graph.log"
fi

if have bench/cuda.cu bench_cuda; then
    # shellcheck disable=SC2086
    run_one bench_cuda "$LOGS/bench_cuda.log" bench "${RUN[@]}" -n 1 "$B/bench_cuda" ${CUDABENCHARGS:-}
    tail -n 30 "$LOGS/bench_cuda.log"
fi

if [ $failed -gt 0 ]; then
    echo "failed:"
    for f in "${failures[@]}"; do echo "  $f"; done
fi
summary="$passed passed, $failed failed"
[ -n "${DT_TEST_LOG:-}" ] && echo "cuda-$MPI: $summary" >>"$DT_TEST_LOG"
echo "$summary"
[ $failed -eq 0 ]

#!/usr/bin/env bash
# tests/check.sh -- the pre-submit check (make check): what CI most often
# rejects, in under 10 minutes on 2 cores. Run it before every submission;
# the full .ci/run (about 30 minutes) at the end of a big change.
#
#   bash tests/check.sh [--mpi mpich|openmpi]
#
#   strict   make -j2 strict: the layering rule, C99/C11/C++17/nvcc, -Werror -pedantic
#   readme   make test-readme: the README's first program as pasted; its links
#   lint     make lint: layering, docs references, cppcheck, clang-tidy
#   smoke    make test: every test at 1 2 3 ranks, --quick sizes (and as C++17)
#   asan     make test-asan: the same tests with ASan + UBSan at 1 and 2 ranks, --quick
#   cost     make test-dispatch-cost: a cached dt_add's and dt_relu's instructions
#            per call (callgrind) under the limits in tests/dispatch_callgrind.sh
# Each step's output goes to build/check/STEP.log; a failed step's tail is
# shown. Prints each step's time; the last line is "check: N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 2
MPI=mpich
[ "${1:-}" = --mpi ] && MPI=${2:?--mpi needs mpich or openmpi}
out=build/check
mkdir -p "$out"
p=0; f=0; t_all=$(date +%s)
step() { # NAME CMD...
    local name=$1 t0 rc=0
    shift
    t0=$(date +%s)
    "$@" >"$out/$name.log" 2>&1 || rc=$?
    if [ $rc -eq 0 ]; then
        p=$((p + 1)); printf 'check: ok     %-7s %4ds\n' "$name" "$(( $(date +%s) - t0 ))"
    else
        f=$((f + 1)); printf 'check: FAILED %-7s %4ds (exit %d, %s):\n' "$name" "$(( $(date +%s) - t0 ))" "$rc" "$out/$name.log"
        grep -E 'FAIL|rror|warning' "$out/$name.log" | head -n 30 | sed 's/^/  | /'
        tail -n 5 "$out/$name.log" | sed 's/^/  | /'
    fi
}
step strict make -j2 --no-print-directory strict
step readme make --no-print-directory test-readme
step lint   make --no-print-directory lint
step smoke  make --no-print-directory test MPI="$MPI"
step asan   make --no-print-directory test-asan MPI="$MPI" TESTARGS='--np "1 2" --quick'
step cost   make --no-print-directory test-dispatch-cost MPI="$MPI"
echo "check: $(( $(date +%s) - t_all ))s"
echo "check: $p passed, $f failed"
[ "$f" -eq 0 ]

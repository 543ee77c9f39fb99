#!/usr/bin/env bash
# tests/lint/run.sh -- make lint: the static checks, two at a time (one per
# core; each is one process), each check's output in build/lint/NAME.log,
# shown when it fails (the layering rule, the ctags cross-check of the
# functions it sees, the docs' references, the sections the MAP's traced
# dt_matmul enters (walk.sh), cppcheck and clang-tidy, dtensor.f90's
# generated regions against tests/lint/gen_f90.py's output). Last
# line "lint: N passed, N failed" (also appended to $DT_TEST_LOG when set).
# LINT_TIDY, LINT_CPPCHECK and MPICH_INC come from mk/lint.mk.
set -u
cd "$(dirname "$0")/../.." || exit 2
out=build/lint
mkdir -p "$out"
: "${LINT_TIDY:=clang-tidy}" "${LINT_CPPCHECK:?from mk/lint.mk}" "${MPICH_INC:=}"
checks=(
    "layering|python3 tests/lint/layering.py --report dtensor.h dtensor_cuda.h dtensor_layers.h"
    "ctags|bash tests/lint/ctags_check.sh"
    "public-calls|python3 tests/lint/public_calls.py dtensor.h dtensor_cuda.h"
    "docs|python3 tests/lint/docs.py"
    "walk|bash tests/lint/walk.sh --check"
    "cppcheck-mpi|$LINT_CPPCHECK -DDTENSOR_IMPLEMENTATION dtensor.h"
    "cppcheck-nompi|$LINT_CPPCHECK -DDTENSOR_IMPLEMENTATION -DDTENSOR_NO_MPI dtensor.h"
    "tidy-mpi|$LINT_TIDY --quiet dtensor.h -- -x c -std=c99 -DDTENSOR_IMPLEMENTATION -I. $MPICH_INC"
    "tidy-nompi|$LINT_TIDY --quiet dtensor.h -- -x c -std=c99 -DDTENSOR_IMPLEMENTATION -DDTENSOR_NO_MPI -I."
    "cppcheck-layers|$LINT_CPPCHECK -DDTENSOR_LAYERS_IMPLEMENTATION dtensor_layers.h"
    "tidy-layers|$LINT_TIDY --quiet dtensor_layers.h -- -x c -std=c99 -DDTENSOR_LAYERS_IMPLEMENTATION -I. $MPICH_INC"
    "f90-generated|python3 tests/lint/gen_f90.py --check"
)
# the two long clang-tidy runs first, so that the short ones fill in beside them
order=(7 8 0 1 2 3 4 5 6 9 10 11)
jobs=${LINT_JOBS:-2}
run_check() { # index
    local name=${checks[$1]%%|*} cmd=${checks[$1]#*|}
    rm -f "$out/$name.ok"
    # shellcheck disable=SC2086
    { echo "\$ $cmd"; eval "$cmd"; } >"$out/$name.log" 2>&1 && : >"$out/$name.ok"
}
running=0
for i in "${order[@]}"; do
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
    run_check "$i" &
    running=$((running + 1))
done
wait
p=0; f=0
for c in "${checks[@]}"; do
    name=${c%%|*}
    if [ -e "$out/$name.ok" ]; then
        p=$((p + 1)); echo "lint: ok     $name"
    else
        f=$((f + 1)); echo "lint: FAILED $name ($out/$name.log):"; sed 's/^/  | /' "$out/$name.log" | tail -n 40
    fi
done
echo "lint: $p passed, $f failed"
if [ -n "${DT_TEST_LOG:-}" ]; then echo "lint: $p passed, $f failed" >>"$DT_TEST_LOG"; fi
[ "$f" -eq 0 ]

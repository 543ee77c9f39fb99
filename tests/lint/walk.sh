#!/bin/sh
# tests/lint/walk.sh [--check] [-v] -- the sections one dt_matmul call enters
# (dtensor.h's MAP, "ONE OP, AS IT RUNS"): builds tests/lint/walk.c with
# -finstrument-functions (MPICH, no BLAS, -O0, nothing inlined), runs it on 2
# ranks and maps rank 0's record to sections (walk.py). --check: fail if the
# MAP's "Sections entered" list differs.
set -e
cd "$(dirname "$0")/../.."
d=${TMPDIR:-/tmp}/dt-walk.$$
mkdir -p "$d"
trap 'rm -rf "$d"' EXIT
mpicc.mpich -std=c99 -O0 -g -fno-inline -no-pie -finstrument-functions -DDTENSOR_NO_BLIS -I. \
    tests/lint/walk.c -o "$d/walk" -lm
mpiexec.mpich -n 2 "$d/walk" > "$d/seq"
python3 tests/lint/walk.py "$d/walk" dtensor.h "$d/seq" "$@"

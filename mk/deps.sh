#!/usr/bin/env bash
# mk/deps.sh -- install what dtensor.h's build, tests and CI need (make deps),
# or, with --bench, also the benchmark peers (make bench-deps). Debian 12 /
# Ubuntu, as root; does nothing (quickly) when every package is installed;
# not root: prints the apt-get command to run.
#
#   bash mk/deps.sh [--bench]
set -euo pipefail
pkgs=(
    mpich libmpich-dev openmpi-bin libopenmpi-dev   # both MPIs (mpicc.mpich, mpicc.openmpi)
    gfortran                                        # dtensor.f90 and its tests (mpif90.mpich, mpif90.openmpi)
    libblis-dev libblas-dev                         # the local GEMM; the reference BLAS for make test-blas
    valgrind clang libclang-rt-14-dev               # memcheck; libFuzzer, sanitizers
    clang-tidy cppcheck universal-ctags             # make lint (ctags: tests/lint/ctags_check.sh)
    cmake pkg-config                                # make test-install
    libscalapack-mpich-dev libscalapack-openmpi-dev # the ScaLAPACK example and benchmarks
    librandom123-dev                                # test_rng's and bench_rng's reference Philox
    libfftw3-dev libfftw3-mpi-dev                   # the pencil example's and the harness's FFTW-MPI peer
    python3-numpy python3-mpi4py gnuplot-nox        # test_io's numpy.load check; the harness's peers and plots
)
# OpenBLAS (100 MB, and it becomes the system's libblas.so.3) only for the
# benchmarks; make test-blas skips its variants, by name, without it
[ "${1:-}" = --bench ] && pkgs+=(libopenblas-dev python3-venv)

have=$(dpkg-query -W -f='${Status}\n' "${pkgs[@]}" 2>/dev/null | grep -c 'install ok installed' || true)
if [ "$have" -eq "${#pkgs[@]}" ]; then
    echo "deps: all ${#pkgs[@]} packages installed"
elif [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update && apt-get install -y "${pkgs[@]}"
else
    echo "deps: not root; run:"
    echo "  sudo apt-get update && sudo apt-get install -y ${pkgs[*]}"
    exit 1
fi

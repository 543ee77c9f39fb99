#!/usr/bin/env bash
# tests/test_fortran.sh -- the Fortran module (dtensor.f90) under both MPIs
# (make test-fortran; a phase of .ci/run).
#
#   bash tests/test_fortran.sh [--asan] [mpich] [openmpi]     (default: both)
#
# --asan: instead, test_fortran built with -fsanitize=address,undefined (C
# and Fortran; make build/<mpi>/test_fortran_asan) at 1 and 2 ranks, leak
# checks on with .ci/lsan.supp (MPI's own allocations), as tests/run.sh
# --variant asan runs the C suite.
#
# For each MPI, builds through make (mpif90.<mpi> -std=f2008 -Wall -Werror;
# build/<mpi>/fortran/ holds the module) tests/test_fortran.f90,
# examples/heat2d.f90 and examples/swe_cgrid.f90, linked with the C
# implementation object (test_fortran with tests/fortran_offsets.c too: C's
# side of its layout check), and runs them at 1 2 3 4 6 8 ranks under both
# MPIs (MPICH's ranks preload build/libdt_yield.so, as in tests/run.sh:
# uneven and empty parts), swe_cgrid_f at 1 2 3 4 under both (4: its 2 x 2 mesh, where
# the corner ghosts matter); plus, under MPICH at one rank, test_fortran
# linked with a C build of DT_MAX_DIMS = 16, which must refuse it
# (--expect-mismatch). A run passes when it exits 0 and prints its PASS line
# (heat2d_f: "identical ... yes"). The last line is
# "N passed, N failed" (appended to $DT_TEST_LOG when set, prefixed
# "fortran:"); the exit status is non-zero if anything failed. Logs:
# build/<mpi>/fortran/logs/.
set -u
cd "$(dirname "$0")/.." || exit 2
ASAN=0
if [ "${1:-}" = --asan ]; then ASAN=1; shift; fi
MPIS=${*:-mpich openmpi}
export BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1
pass=0 fail=0

# run NAME LOG PATTERN CMD...: one run, passed if it exits 0 and prints PATTERN
run() {
    local name=$1 log=$2 pat=$3; shift 3
    if timeout 300 "$@" >"$log" 2>&1 </dev/null && grep -q "$pat" "$log"; then
        pass=$((pass + 1)); echo "PASS $name"
    else
        fail=$((fail + 1)); echo "FAIL $name (see $log)"; tail -n 5 "$log" | sed 's/^/    /'
    fi
}

for mpi in $MPIS; do
    case "$mpi" in
    mpich) nps="1 2 3 4 6 8"; runner=(env LD_PRELOAD="$PWD/build/libdt_yield.so" mpiexec.mpich)
           extra=(build/libdt_yield.so build/mpich/test_fortran_dims16) ;;
    openmpi) nps="1 2 3 4 6 8"; runner=(mpiexec.openmpi --allow-run-as-root --oversubscribe); extra=() ;;
    *) echo "test_fortran.sh: unknown MPI $mpi (mpich|openmpi)"; exit 2 ;;
    esac
    logs=build/$mpi/fortran/logs
    mkdir -p "$logs"
    if [ "$ASAN" = 1 ]; then
        if ! make --no-print-directory MPI="$mpi" "build/$mpi/test_fortran_asan" build/libdt_yield.so \
                >"$logs/build-asan.log" 2>&1; then
            fail=$((fail + 1)); echo "FAIL build asan ($mpi; see $logs/build-asan.log)"; tail -n 20 "$logs/build-asan.log"
            continue
        fi
        for np in 1 2; do
            # the shim before the ASan runtime is fine (verify_asan_link_order=0); MPI's
            # frames symbolised (slow unwind) so that .ci/lsan.supp matches them
            run "test_fortran asan $mpi np=$np" "$logs/test_fortran_asan.np$np.log" "^PASS test_fortran" \
                env ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:verify_asan_link_order=0" \
                LSAN_OPTIONS="suppressions=$PWD/.ci/lsan.supp:print_suppressions=0" \
                UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
                "${runner[@]}" -n "$np" "build/$mpi/test_fortran_asan"
        done
        continue
    fi
    if ! make --no-print-directory MPI="$mpi" "build/$mpi/test_fortran" "build/$mpi/heat2d_f" "build/$mpi/swe_cgrid_f" \
            "${extra[@]}" \
            >"$logs/build.log" 2>&1; then
        fail=$((fail + 1)); echo "FAIL build ($mpi; see $logs/build.log)"; tail -n 20 "$logs/build.log"
        continue
    fi
    for np in $nps; do
        run "test_fortran $mpi np=$np" "$logs/test_fortran.np$np.log" "^PASS test_fortran" \
            "${runner[@]}" -n "$np" "build/$mpi/test_fortran"
        run "heat2d_f $mpi np=$np" "$logs/heat2d_f.np$np.log" "identical.*: yes" \
            "${runner[@]}" -n "$np" "build/$mpi/heat2d_f"
    done
    for np in 1 2 3 4; do
        run "swe_cgrid_f $mpi np=$np" "$logs/swe_cgrid_f.np$np.log" "^PASS swe_cgrid_f" \
            "${runner[@]}" -n "$np" "build/$mpi/swe_cgrid_f"
    done
    if [ "$mpi" = mpich ]; then
        run "test_fortran --expect-mismatch $mpi np=1" "$logs/test_fortran_dims16.log" "^PASS test_fortran" \
            "${runner[@]}" -n 1 build/mpich/test_fortran_dims16 --expect-mismatch
    fi
done
echo "$pass passed, $fail failed"
[ -n "${DT_TEST_LOG:-}" ] && echo "fortran: $pass passed, $fail failed" >>"$DT_TEST_LOG"
[ "$fail" -eq 0 ]

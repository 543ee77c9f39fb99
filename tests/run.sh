#!/usr/bin/env bash
# tests/run.sh -- build and run dtensor.h's tests under one MPI.
#
#   tests/run.sh <mpich|openmpi> [--smoke|--quick|--full] [--np "1 2 3 4 6 8"] [--variant asan] [--wrap CMD] [--jobs N] [--no-standin]
#
# Each test describes itself in the TEST block at its top (tests/README.md,
# "The TEST block"): the rank counts it runs at, whether it takes --quick,
# what it needs, whether it links the configuration's implementation
# object, and optional alternative arguments or environments. This script
# builds the tests through `make tests` (build/tests/<mpi>[-<variant>]/,
# -std=c99 -O1 -g -Wall -Wextra -Werror -pedantic, and a C++17 syntax check
# of each), then runs each at each rank count in both its block and --np
# (300 s timeout per run), and counts the PASS/FAIL lines: a run that
# crashes, times out or exits non-zero without a PASS line is a failure,
# named. The last line is "N passed, N failed" (also appended, prefixed by
# the MPI, to $DT_TEST_LOG when set); the exit status is non-zero if anything
# failed. Logs: build/tests/<config>/logs/<test>.np<N>.log.
#
# --smoke: rank counts up to 3, --quick sizes (make test). --quick: --quick
# sizes. --full: full sizes everywhere (the default). --variant asan: built
# with -fsanitize=address,undefined, leak checking on (.ci/lsan.supp).
# --wrap CMD: every rank runs under CMD (valgrind). --no-standin: leave out
# the CUDA tests on the stand-in (standin_*). --jobs N: N builds at
# once and N one-rank runs at once (default: the number of cores).
# DT_TESTS="test_check test_io" runs only those.
# MPICH (ch4:ucx) busy-polls when ranks outnumber cores; its ranks get
# build/libdt_yield.so preloaded (tests/mpich_yield.c), which makes a
# waiting rank yield its core.
set -u
cd "$(dirname "$0")/.." || exit 2

usage() { sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 1 ] || usage
MPI=$1; shift
case "$MPI" in mpich|openmpi) ;; *) usage ;; esac
QUICK=no
NO_STANDIN=no
NPS="1 2 3 4 6 8"
WRAP=""
VARIANT=""
JOBS=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) QUICK=yes ;;
    --smoke) QUICK=yes; NPS="1 2 3" ;;
    --full) QUICK=no ;;
    --jobs) shift; JOBS=${1:?--jobs needs a number} ;;
    --np) shift; NPS=${1:?--np needs a list} ;;
    --np=*) NPS=${1#--np=} ;;
    --variant) shift; VARIANT=${1:?--variant needs a name} ;;
    --no-standin) NO_STANDIN=yes ;;
    --wrap) shift; WRAP=${1:?--wrap needs a command} ;;
    --wrap=*) WRAP=${1#--wrap=} ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown argument $1" >&2; usage ;;
    esac
    shift
done
case "$VARIANT" in ""|asan) ;; *) echo "run.sh: unknown variant $VARIANT (asan)" >&2; exit 2 ;; esac

OUT=build/tests/$MPI${VARIANT:+-$VARIANT}
LOGS=$OUT/logs
mkdir -p "$LOGS"
command -v "mpicc.$MPI" >/dev/null || { echo "run.sh: mpicc.$MPI not found"; echo "0 passed, 1 failed"; exit 1; }
RUN=(mpiexec.$MPI)
[ "$MPI" = openmpi ] && RUN+=(--allow-run-as-root --oversubscribe)
if [ "$VARIANT" = asan ]; then
    # Open MPI's plugins stay loaded (disable_dlclose) so that leak stacks
    # inside them are symbolised and .ci/lsan.supp can match them; the yield
    # shim is preloaded before the ASan runtime (verify_asan_link_order=0)
    export ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:verify_asan_link_order=0"
    export LSAN_OPTIONS="suppressions=$PWD/.ci/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    export OMPI_MCA_mca_base_component_disable_dlclose=1
fi

# the TEST block: spec FILE KEY prints the value of "KEY:" in it
spec() { sed -n '1,/\*\//s/^ *'"$2"': *//p' "$1" | head -n 1; }

# every test: its source and program. A block with "standin:" adds
# standin_NAME, the CUDA build of the source on tests/standin/ (mk/standin.mk)
declare -A SRC BIN
TESTS=""
for f in tests/test_*.c tests/test_*.cu; do
    t=$(basename "${f%.*}")
    if [ "${f##*.}" = c ]; then
        TESTS="$TESTS $t"; SRC[$t]=$f; BIN[$t]=$OUT/$t
    fi
    if [ -n "$(spec "$f" standin)" ] && [ "$NO_STANDIN" = no ]; then
        TESTS="$TESTS standin_$t"; SRC[standin_$t]=$f; BIN[standin_$t]=$OUT/standin/$t
    fi
done
if [ -n "${DT_TESTS:-}" ]; then
    for t in $DT_TESTS; do [ -n "${SRC[$t]:-}" ] || { echo "run.sh: no test $t"; echo "0 passed, 1 failed"; exit 1; }; done
    TESTS=$DT_TESTS
fi
passed=0
failed=0
failures=()
pass() { passed=$((passed + 1)); echo "$1"; }
fail() { failed=$((failed + 1)); failures+=("$1"); echo "$1"; }

# ---------------------------------------------------------------- build
targets=(build/libdt_yield.so)
for t in $TESTS; do
    targets+=("${BIN[$t]}")
    [ -z "$VARIANT" ] && [ "${t#standin_}" = "$t" ] && targets+=("$OUT/cxx/$t.ok")
done
[ -z "$VARIANT" ] && targets+=("$OUT/cxx/dtensor.ok")
make -k -j"$JOBS" --no-print-directory MPI="$MPI" VARIANT="$VARIANT" "${targets[@]}" >"$LOGS/build.log" 2>&1
built=""
for t in $TESTS; do
    b=${BIN[$t]}
    if [ -x "$b" ] && [ "$b" -nt "${SRC[$t]}" ] && [ "$b" -nt dtensor.h ] && [ "$b" -nt dtensor_layers.h ]; then
        built="$built $t"
    else
        fail "FAIL build $t ($MPI${VARIANT:+ $VARIANT}): see $LOGS/$t.build.log"
        sed -n '1,15p' "$LOGS/$t.build.log" 2>/dev/null
    fi
done
if [ -z "$VARIANT" ]; then
    cxx_bad=""
    for t in dtensor $TESTS; do
        [ "${t#standin_}" = "$t" ] || continue
        [ -e "$OUT/cxx/$t.ok" ] || cxx_bad="$cxx_bad $t"
    done
    if [ -z "$cxx_bad" ]; then
        pass "PASS build-c++17 tests ($MPI)"
    else
        fail "FAIL build-c++17 ($MPI):$cxx_bad: see $LOGS/build.log"
        grep -m 15 -E 'error|Error' "$LOGS/build.log"
    fi
fi
[ -e build/libdt_yield.so ] || { fail "FAIL build build/libdt_yield.so: see $LOGS/build.log"; }

# ---------------------------------------------------------------- run
if [ "$MPI" = mpich ]; then export LD_PRELOAD="$PWD/build/libdt_yield.so${LD_PRELOAD:+:$LD_PRELOAD}"; fi
# run_one NAME NP LOG CMD...: one run, its verdict into LOG.verdict
run_one() {
    local name=$1 np=$2 log=$3
    shift 3
    local rc line t0 secs why
    t0=$(date +%s.%N)
    timeout -k 10 300 "$@" >"$log" 2>&1 </dev/null
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    line=$(grep -E "^(PASS|FAIL) " "$log" | tail -n 1)
    if [ $rc -eq 0 ] && [ "${line%% *}" = PASS ]; then
        echo "PASS|$line ($secs s)" >"$log.verdict"
        return
    fi
    why="exit $rc"
    { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && why="timeout (300 s)"
    [ $rc -gt 128 ] && [ $rc -ne 137 ] && why="killed by signal $((rc - 128)) (exit $rc)"
    if [ "${line%% *}" = FAIL ]; then
        line="$line [$MPI, $why, $secs s]"
    elif [ "${line%% *}" = PASS ]; then
        line="FAIL $name np=$np ($MPI): printed PASS but $why (a sanitizer or --wrap report?), $secs s"
    else
        line="FAIL $name np=$np ($MPI): no PASS line, $why, $secs s"
    fi
    {
        echo "FAIL|$line"
        echo "---- last lines of $log"
        grep -v -E "^ *(--------|Primary job|a non-zero exit|mpiexec.* detected|mpiexec.* noticed|Process name|Exit code|the job to be|$)" "$log" |
            tail -n 25 | sed "s/^/  | /"
        echo "----"
    } >"$log.verdict"
}
pending=()
# collect the verdicts of the runs started so far, in the order they started
collect() {
    local v
    wait
    for v in "${pending[@]}"; do
        if [ -s "$v" ] && [ "$(head -c 5 "$v")" = "PASS|" ]; then
            pass "$(sed 's/^PASS|//' "$v")"
        else
            [ -s "$v" ] || echo "FAIL|FAIL ${v%.verdict}: no verdict" >"$v"
            fail "$(head -n 1 "$v" | sed 's/^FAIL|//')"
            tail -n +2 "$v"
        fi
    done
    pending=()
}
# launch NAME NP LOG CMD...: one-rank runs go JOBS at a time, the others alone
running=0
launch() {
    local np=$2 log=$3
    rm -f "$log.verdict"
    if [ "$np" -eq 1 ] && [ "$JOBS" -gt 1 ]; then
        if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
        pending+=("$log.verdict")
        run_one "$@" &
        running=$((running + 1))
    else
        collect; running=0
        pending+=("$log.verdict")
        run_one "$@"
        collect
    fi
}

for np in $NPS; do
    for t in $built; do
        f=${SRC[$t]}
        needs=$(spec "$f" needs)
        case " $(spec "$f" ranks) " in *" $np "*) ;; *) continue ;; esac
        q=()
        [ "$QUICK" = yes ] && [ "$(spec "$f" quick)" = yes ] && q=(--quick)
        if [[ " $needs " == *" nompi "* ]]; then
            # shellcheck disable=SC2086
            launch "${t#test_}" 1 "$LOGS/$t.log" $WRAP "${BIN[$t]}" "${q[@]}"
            continue
        fi
        args=$(spec "$f" args)
        i=0
        while IFS= read -r alt; do
            i=$((i + 1))
            log=$LOGS/$t.np$np.log
            [ -n "$args" ] && log=$LOGS/$t.$i.np$np.log
            # shellcheck disable=SC2086
            launch "${t#test_}" "$np" "$log" "${RUN[@]}" -n "$np" $WRAP "${BIN[$t]}" $alt "${q[@]}"
        done < <(echo "${args:-}" | tr '|' '\n')
    done
done
# "env: A=1 | A=2": the test again, --quick, in each environment, at the
# smallest rank count of the sweep and at 3
lowest=$(echo "$NPS" | tr ' ' '\n' | sort -n | head -n 1)
for t in $built; do
    envs=$(spec "${SRC[$t]}" env)
    [ -n "$envs" ] || continue
    while IFS= read -r e; do
        e=$(echo "$e" | xargs)
        [ -n "$e" ] || continue
        for np in $(echo "$lowest 3" | tr ' ' '\n' | sort -un); do
            # shellcheck disable=SC2086
            launch "${t#test_} $e" "$np" "$LOGS/$t.${e//[^A-Za-z0-9]/_}.np$np.log" env $e "${RUN[@]}" -n "$np" $WRAP "${BIN[$t]}" --quick
        done
    done < <(echo "$envs" | tr '|' '\n')
done
collect

if [ $failed -gt 0 ]; then
    echo "failed:"
    for f in "${failures[@]}"; do echo "  $f"; done
fi
summary="$passed passed, $failed failed"
[ -n "${DT_TEST_LOG:-}" ] && echo "$MPI${VARIANT:+-$VARIANT}: $summary" >>"$DT_TEST_LOG"
echo "$summary"
[ $failed -eq 0 ]

#!/usr/bin/env bash
# tests/fuzz/run.sh -- run each libFuzzer target (built by make fuzz-build)
# for FUZZ_SECONDS (default 60) from its committed corpus tests/fuzz/corpus/<t>/
# (read first: every seed, crashers included, is a regression test), with new
# inputs kept in build/fuzz/work/<t>/ and crash artifacts in build/fuzz/<t>-*.
# Prints per target exec/s and coverage, then "N passed, N failed" (also
# appended to $DT_TEST_LOG when set). The targets run side by side, one per
# core (FUZZ_JOBS). Usage: tests/fuzz/run.sh [target...]
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${FUZZ_SECONDS:-60}
targets=${*:-fuzz_layout fuzz_plan fuzz_npy fuzz_wrap}
pass=0; fail=0
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# fuzz_one TARGET: one target's run; its summary into build/fuzz/TARGET.result
fuzz_one() {
    local t=$1 bin=build/fuzz/$1 corpus=tests/fuzz/corpus/$1 work=build/fuzz/work/$1 log=build/fuzz/$1.log
    local res t0 eps runs cov
    mkdir -p "$work" "$corpus"
    if [ ! -x "$bin" ]; then echo "FAILED $t: $bin not built (make fuzz-build)" >"build/fuzz/$t.result"; return; fi
    t0=$(date +%s)
    if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
            -artifact_prefix="build/fuzz/$t-" "$work" "$corpus" >"$log" 2>&1; then
        res=ok
    else
        res=FAILED
    fi
    eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
    {
        printf '%s %-12s %4ss  %s runs, %s exec/s, %s\n' "$res" "$t" "$(( $(date +%s) - t0 ))" "${runs:-?}" "${eps:-?}" "${cov:-?}"
        if [ "$res" = FAILED ]; then
            grep -m1 -B2 -A12 'FUZZ CHECK FAILED\|ERROR: \(Address\|libFuzzer\|UndefinedBehavior\)\|runtime error' "$log" | head -30
            ls build/fuzz/"$t"-* 2>/dev/null | sed 's/^/  artifact: /'
            echo "  full log: $log"
        fi
    } >"build/fuzz/$t.result"
}
# one target per core at once (each is one process)
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
running=0
mkdir -p build/fuzz
for t in $targets; do
    rm -f "build/fuzz/$t.result"
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
    fuzz_one "$t" &
    running=$((running + 1))
done
wait
for t in $targets; do
    if [ -s "build/fuzz/$t.result" ] && [ "$(head -c 3 "build/fuzz/$t.result")" = "ok " ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
    fi
    cat "build/fuzz/$t.result" 2>/dev/null || echo "FAILED $t: no result"
done
echo "fuzz: $pass passed, $fail failed"
if [ -n "${DT_TEST_LOG:-}" ]; then echo "fuzz: $pass passed, $fail failed" >>"$DT_TEST_LOG"; fi
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# tests/dispatch_callgrind.sh -- the dispatch cost guard (issue 53): the
# instructions of one cached op call on tiny tensors, counted by callgrind
# (machine-independent, unlike times), each against a limit written below,
# so that a change that makes every op's dispatch dearer fails here instead
# of landing silently.
#
#   bash tests/dispatch_callgrind.sh [--mpi mpich|openmpi]   (make test-dispatch-cost)
#
# Runs build/<mpi>/bench_dispatch --callgrind at 1 rank (no mpiexec) under
# valgrind --tool=callgrind twice, with 1,000 and 11,000 calls a case: the
# difference of the two dumps over 10,000 is the count per call, free of
# the loop's fixed cost. Cases (bench/dispatch.c): add_S, dt_add of two [8]
# F32 Shard(0) tensors, *out reused; relu_S, dt_relu of one. Prints one
# line per case and "dispatch-callgrind: N passed, N failed" (also to
# $DT_TEST_LOG when set, as the test phases do); exit 1 above a limit.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
MPI=mpich
[ "${1:-}" = --mpi ] && MPI=${2:?--mpi needs mpich or openmpi}

# Ir per call, measured (gcc 12, -O2, x86-64) + 3 %. Issue 53 asks for
# add_S <= 900: 1,194 at first; 975 without SUMMA's choice on every op's
# path; 857 with a cache hit read in place and the one-pass input check
# (relu_S 702, from 785); 864 / 711 once dt__call_init points a call's
# results at its own arrays.
declare -A LIMIT=([add_S]=883 [relu_S]=723)

BIN=build/$MPI/bench_dispatch
make --no-print-directory MPI="$MPI" "$BIN" >/dev/null || { echo "dispatch-callgrind: cannot build $BIN"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for it in 1000 11000; do
    BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1 valgrind --tool=callgrind --compress-strings=no --compress-pos=no \
        --callgrind-out-file="$tmp/cg.$it.%p" "$BIN" --callgrind --iters "$it" --batches 1 \
        --ops "${!LIMIT[*]}" >"$tmp/out.$it" 2>"$tmp/vg.$it" || {
        echo "dispatch-callgrind: $BIN under callgrind failed:"; tail -5 "$tmp/vg.$it" "$tmp/out.$it"; exit 1; }
done
# one dump per case and run: "<case> <total Ir>"
totals() { # ITERS
    local f
    for f in "$tmp"/cg."$1".*.*; do
        awk '/^desc: Trigger: Client Request: / { sub(/^desc: Trigger: Client Request: /, ""); name = $0 }
             /^(totals|summary):/ { tot = $2 } END { if (name != "") print name, tot }' "$f"
    done
}
p=0; f=0
for name in $(printf '%s\n' "${!LIMIT[@]}" | sort); do
    t1=$(totals 1000 | awk -v n="$name" '$1 == n { print $2 }')
    t2=$(totals 11000 | awk -v n="$name" '$1 == n { print $2 }')
    if [ -z "$t1" ] || [ -z "$t2" ]; then
        f=$((f + 1)); echo "dispatch-callgrind: FAILED $name: no callgrind dump"; continue
    fi
    per=$(( (t2 - t1) / 10000 ))
    if [ "$per" -le "${LIMIT[$name]}" ]; then
        p=$((p + 1)); printf 'dispatch-callgrind: ok     %-7s %5d Ir/call (limit %d)\n' "$name" "$per" "${LIMIT[$name]}"
    else
        f=$((f + 1))
        printf 'dispatch-callgrind: FAILED %-7s %5d Ir/call, above the limit of %d: a cached call got dearer (see\n' \
            "$name" "$per" "${LIMIT[$name]}"
        echo "  bench/run.sh --only callgrind, or callgrind_annotate on bench_dispatch --callgrind --ops $name)"
    fi
done
grep -q FAILED "$tmp/out.11000" && { f=$((f + 1)); echo "dispatch-callgrind: FAILED: bench_dispatch reported a wrong result"; }
echo "dispatch-callgrind: $p passed, $f failed"
[ -n "${DT_TEST_LOG:-}" ] && echo "dispatch-callgrind: $p passed, $f failed" >>"$DT_TEST_LOG"
[ "$f" -eq 0 ]

#!/usr/bin/env bash
# bench/planner_callgrind.sh -- instructions per call of the planner bench's
# timed loops, by callgrind (machine-independent, unlike the times):
#
#   bench/planner_callgrind.sh [BIN] [bench_planner arguments...]
#   e.g. bench/planner_callgrind.sh build/bench_planner --dims 2 --max-ranks 16384
#
# Runs BIN --callgrind under valgrind --tool=callgrind. Every timed loop of the
# middle simulated rank is one dump named "planner <case>|<ranks>|<what>|<iters>"
# (what: plan, call, cached); this prints, per case and size, instructions per
# call of the library: the dump's total minus the counting backend's callbacks
# (the bench's sim_* functions, which loop over their count arrays and write
# the mirrored data: their self cost plus their calls out of sim_*, so that a
# cost callgrind attributes to a helper's self -- memcpy's tail jumps -- is
# subtracted too), divided by iters; and the
# exponent from the previous size: ln(Ir2/Ir1) / ln(ranks2/ranks1) (ranks of
# the mesh, not the ranks involved: for a step along one mesh dim those grow
# more slowly; and where the bytes a rank moves grow faster than the ranks,
# as in a gather of the whole tensor, the data drives the count).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/bench_planner}
shift || true
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
valgrind --tool=callgrind --compress-strings=no --compress-pos=no --callgrind-out-file="$tmp/cg.%p" "$BIN" --callgrind "$@" > "$tmp/out.txt" 2> "$tmp/vg.txt" || {
    tail -20 "$tmp/vg.txt" >&2; exit 1; }
echo "# $(valgrind --version); instructions per call of the library (the counting backend's callbacks subtracted), middle simulated rank"
for f in $(ls "$tmp"/cg.* | sort -V); do
    awk '/^desc: Trigger: Client Request: planner / { sub(/^desc: Trigger: Client Request: planner /, ""); name = $0 }
         /^(totals|summary):/ { tot = $2 }
         /^fn=/ { be = substr($0, 4) ~ /^sim_/ }
         /^cfn=/ { tosim = substr($0, 5) ~ /^sim_/ }
         /^calls=/ { incall = 1; next }
         /^[0-9]/ { if (be && !(incall && tosim)) back += $2; incall = 0 }
         END { if (name != "") print name "|" tot - back }' "$f"
done | awk -F'|' '
    { key = $1 " [" $3 "]"; n = $2 + 0; ir = $5 / $4
      if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
      cnt[key]++; sz[key, cnt[key]] = n; v[key, cnt[key]] = ir }
    END {
      printf "%-58s %7s %14s %6s\n", "case [what]", "ranks", "lib Ir / call", "exp"
      for (k = 1; k <= nk; k++) {
        key = order[k]
        for (i = 1; i <= cnt[key]; i++) {
          e = "-"
          if (i > 1 && v[key, i - 1] > 0 && sz[key, i] != sz[key, i - 1])
            e = sprintf("%.2f", log(v[key, i] / v[key, i - 1]) / log(sz[key, i] / sz[key, i - 1]))
          printf "%-58s %7d %14.0f %6s\n", (i == 1 ? key : ""), sz[key, i], v[key, i], e
        }
      }
    }'

#!/usr/bin/env bash
# tests/readme_snippet.sh -- the README's first program compiles as pasted and runs.
#
# Extracts the first ```c block after the README heading that contains
# "first program" into build/readme/first.c, compiles it with MPICH's mpicc
# (-std=c99 -Wall -Wextra -Werror -pedantic), runs it at 2 ranks and checks
# that it exits 0 and that both ranks print their ": OK" line. Then checks
# that every relative link in README.md, docs/, tests/README.md and
# bench/README.md names a file that exists.
# Run as `make test-readme` (part of CI's strict phase).
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/readme
mkdir -p "$out"
awk 'tolower($0) ~ /^#+ .*first program/ { seen = 1; next }
     seen && !inblk && /^```c[[:space:]]*$/ { inblk = 1; next }
     inblk && /^```/ { exit }
     inblk { print }' README.md > "$out/first.c"
if [ ! -s "$out/first.c" ]; then
    echo "readme_snippet: no \`\`\`c block after a 'first program' heading in README.md" >&2
    exit 1
fi
echo "readme_snippet: $(wc -l < "$out/first.c") lines -> $out/first.c"
mpicc.mpich -std=c99 -Wall -Wextra -Werror -pedantic -I. -o "$out/first" "$out/first.c" -lblis -lm
timeout 120 mpiexec.mpich -n 2 "./$out/first" > "$out/first.log" 2>&1 || {
    echo "readme_snippet: the first program failed (exit $?):" >&2; cat "$out/first.log" >&2; exit 1; }
cat "$out/first.log"
n=$(grep -c '^rank [01]: .*: OK$' "$out/first.log" || true)
if [ "$n" != 2 ] || grep -q WRONG "$out/first.log"; then
    echo "readme_snippet: expected one 'rank N: ...: OK' line from each of 2 ranks" >&2
    exit 1
fi
bad=0
for f in README.md docs/*.md tests/README.md bench/README.md; do
    [ -e "$f" ] || continue
    for t in $(grep -o '](\([^) ]*\))' "$f" | sed 's/^](//; s/)$//; s/#.*//'); do
        case "$t" in ''|*:*) continue ;; esac
        [ -e "$(dirname "$f")/$t" ] || { echo "readme_snippet: $f links to $t, which does not exist" >&2; bad=1; }
    done
done
[ "$bad" = 0 ] || exit 1
echo "readme_snippet: OK (links too)"

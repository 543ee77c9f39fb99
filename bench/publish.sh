#!/usr/bin/env bash
# bench/publish.sh -- copy the reports in build/bench/ into bench/results/,
# each stamped at its top with the date, the commit, the machine and the
# command that made it: a dated report, for when someone means to publish.
# (The benchmarks write only under build/; this is the one step that writes
# into bench/results/. Review with `git diff bench/results`, then commit.)
#
#   bench/publish.sh [--force] [FILE...]     make bench-publish [PUBLISH="FILE..."]
#
# FILE: a report under build/bench/ (build/bench/rng.txt, or rng.txt);
# default: every report there --
#   build/bench/*.txt          bench/run.sh (make bench-results, bench-rng,
#                              bench-halo, bench-planner, ...), make bench-blas
#   build/bench/harness/latest.md, latest.csv, *.png     bench/bench.sh (make bench)
# Each goes to bench/results/<its name>, replacing the one published there.
#
# The stamp: the date (UTC); the commit, `git rev-parse --short HEAD` with
# "-dirty" when tracked files have uncommitted changes (and the commit the
# report itself names, where that differs: a report measured before the last
# commit); the machine, CPU model and cores; the command, the report's first
# "$ " line (bench/run.sh, make bench-blas) or its "- command:" line
# (latest.md; latest.csv and the plots take their latest.md's). It is "# "
# lines atop .txt and .csv files, one "> " line atop .md, a tEXt "Comment"
# chunk in .png (python3).
#
# Refuses (exit 1, nothing copied) when there is nothing to publish, when a
# FILE is not there, or, unless --force, when a report records a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=build/bench
DEST=bench/results
FORCE=0
files=()
while [ $# -gt 0 ]; do
    case "$1" in
    --force) FORCE=1 ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench-publish: unknown option $1" >&2; exit 2 ;;
    *) if [ -f "$1" ]; then files+=("$1")
       elif [ -f "$SRC/$1" ]; then files+=("$SRC/$1")
       else echo "bench-publish: no report $1 (nor $SRC/$1); nothing published" >&2; exit 1; fi ;;
    esac
    shift
done
if [ ${#files[@]} = 0 ]; then
    for f in "$SRC"/*.txt "$SRC"/harness/latest.md "$SRC"/harness/latest.csv "$SRC"/harness/*.png; do
        [ -f "$f" ] && files+=("$f")
    done
fi
if [ ${#files[@]} = 0 ]; then
    echo "bench-publish: nothing to publish: no reports in $SRC/ (make bench, make bench-results," \
         "make bench-rng, bench-halo, bench-planner, ... write them there)" >&2
    exit 1
fi

# the command that made FILE ("" if it does not say), its trailing comment dropped
# shellcheck disable=SC2016  # (the backquotes here and below are Markdown's)
command_of() {
    local f=$1 c=""
    case "$f" in
    *.txt) c=$(sed -n '1,5{/^\$ /{s/^\$ //p;q;}}' "$f") ;;
    *.md) c=$(sed -n 's/^- command: `\(.*\)`.*/\1/p' "$f" | head -1) ;;
    *.csv|*.png) [ -f "$(dirname "$f")/latest.md" ] && c=$(command_of "$(dirname "$f")/latest.md") ;;
    esac
    printf '%s' "$c" | sed 's/[[:space:]]\{1,\}#.*$//'
}
# the commit FILE says it was measured at, "-dirty" if it says so ("" if it does not say)
commit_of() {
    local f=$1
    case "$f" in
    *.txt) sed -n 's/^# dtensor.h: commit \([0-9a-f]\{4,\}\)\( + uncommitted\)\{0,1\}.*/\1\2/p' "$f" | head -1 \
               | sed 's/ + uncommitted/-dirty/' ;;
    *.md) sed -n 's/^- commit: \([0-9a-f]\{4,\}\(-dirty\)\{0,1\}\).*/\1/p' "$f" | head -1 ;;
    *.csv|*.png) [ -f "$(dirname "$f")/latest.md" ] && commit_of "$(dirname "$f")/latest.md" ;;
    esac
}

# check everything before copying anything
bad=()
names=" "
for f in "${files[@]}"; do
    n=$(basename "$f")
    case "$n" in *.txt|*.md|*.csv|*.png) ;; *) bad+=("$f: not a report (.txt, .md, .csv, .png)") ;; esac
    case "$names" in *" $n "*) bad+=("$f: a second report named $n") ;; esac
    names="$names$n "
    case "$n" in *.png) ;; *)
        if [ $FORCE = 0 ] && grep -qE '^# exit status|reported a failure|FAILED' "$f"; then
            bad+=("$f: records a failure (bench/publish.sh --force, or make bench-publish PUBLISH=--force, publishes it anyway)")
        fi ;;
    esac
done
case "$names" in *.png*)
    command -v python3 > /dev/null || bad+=("python3 not found: it stamps the plots") ;;
esac
if [ ${#bad[@]} -gt 0 ]; then
    printf 'bench-publish: %s\n' "${bad[@]}" >&2
    echo "bench-publish: nothing published" >&2
    exit 1
fi

DATE=$(date -u +%Y-%m-%d)
HEAD=$(git rev-parse --short HEAD)
[ -z "$(git status --porcelain --untracked-files=no)" ] || HEAD=$HEAD-dirty
CPU=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
[ -n "$CPU" ] || CPU=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -1)
MACHINE="${CPU:-unknown CPU}, $(getconf _NPROCESSORS_ONLN) cores"

mkdir -p "$DEST"
# shellcheck disable=SC2016
for f in "${files[@]}"; do
    n=$(basename "$f")
    cmd=$(command_of "$f")
    measured=$(commit_of "$f")
    rev=$HEAD
    if [ -n "$measured" ] && [ "${measured%-dirty}" != "${HEAD%-dirty}" ]; then
        rev="$HEAD when published; measured at $measured (the report's own header)"
        echo "bench-publish: note: $f was measured at commit $measured, HEAD is ${HEAD%-dirty}" >&2
    fi
    case " $cmd " in *" --quick "*)
        echo "bench-publish: note: $f is from a --quick run (small sizes, fewer repetitions)" >&2 ;;
    esac
    stamp=("published $DATE by make bench-publish, from $f"
           "commit: $rev"
           "machine: $MACHINE"
           "command: ${cmd:-unknown (the report does not say)}")
    tmp=$DEST/.$n.tmp
    case "$n" in
    *.png)
        python3 - "$f" "$tmp" "$(printf '%s\n' "${stamp[@]}")" <<'EOF'
import struct, sys, zlib
src, dst, text = sys.argv[1:4]
data = open(src, "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("bench-publish: %s is not a PNG" % src)
end = 8 + 12 + struct.unpack(">I", data[8:12])[0]          # after IHDR
body = b"Comment\0" + text.encode("latin-1", "replace")
chunk = struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body))
open(dst, "wb").write(data[:end] + chunk + data[end:])
EOF
        ;;
    *.md) { printf '> %s; %s; %s; command: `%s`\n\n' "${stamp[0]}" "${stamp[1]}" "${stamp[2]}" "${cmd:-unknown}"
            cat "$f"; } > "$tmp" ;;
    *) { printf '# %s\n' "${stamp[@]}"; cat "$f"; } > "$tmp" ;;
    esac
    mv "$tmp" "$DEST/$n"
    echo "$DEST/$n  <-  $f  ($rev)"
done
echo "bench-publish: ${#files[@]} report(s) into $DEST/; review with git diff $DEST, update what bench/README.md quotes from them, then commit"

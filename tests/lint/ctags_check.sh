#!/usr/bin/env bash
# tests/lint/ctags_check.sh -- a plain code browser sees every function: the
# SET of function names Universal Ctags finds in each header
# (ctags -x --c-kinds=f --language-force=C, no -D: none is needed for DT_API,
# DT__HD & co., and a browser has none) must equal the set layering.py finds
# (layering.py --functions). Each name only one side finds is printed with its
# line, as FILE:LINE: NAME: only ctags|layering.py sees a function here. A
# layering.py-only name is usually a definition ctags swallowed: it comes right
# after a file-scope macro use with no ';' (DT__REDUCE(dt_max, ...) then
# `static ... f(...) {`), which ctags reads as an old-style definition named
# after the macro (the ctags-only name, at the macro's line). Functions a macro
# expansion defines are seen by neither; a function defined in two #if
# branches is one name. Last line "ctags: N files, N names compared, N
# differences"; exit 1 on any difference.
#
#   bash tests/lint/ctags_check.sh [FILE ...]   (default dtensor.h dtensor_cuda.h, dtensor_layers.h if there)
set -u
cd "$(dirname "$0")/../.." || exit 2
if ! command -v ctags >/dev/null || ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
    echo "ctags: Universal Ctags not found (Debian: universal-ctags; make deps)"
    exit 1
fi
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    files=(dtensor.h dtensor_cuda.h)
    [ -e dtensor_layers.h ] && files+=(dtensor_layers.h)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
diffs=0 names=0
for f in "${files[@]}"; do
    # "NAME LINE", the first line of each name, sorted by name
    ctags -x --sort=no --c-kinds=f --language-force=C "$f" | awk '!seen[$1]++ {print $1, $3}' | LC_ALL=C sort -k1,1 >"$tmp/ctags" || exit 2
    python3 tests/lint/layering.py --functions "$f" | LC_ALL=C sort -k1,1 >"$tmp/layering" || exit 2
    names=$((names + $(cat "$tmp/ctags" "$tmp/layering" | cut -d' ' -f1 | sort -u | wc -l)))
    out=$(LC_ALL=C join -v1 "$tmp/ctags" "$tmp/layering" | awk -v f="$f" '{print f ":" $2 ": " $1 ": only ctags sees a function here"}'
          LC_ALL=C join -v2 "$tmp/ctags" "$tmp/layering" | awk -v f="$f" '{print f ":" $2 ": " $1 ": only layering.py sees a function here"}')
    if [ -n "$out" ]; then
        printf '%s\n' "$out" | sort -t: -k2,2n
        diffs=$((diffs + $(printf '%s\n' "$out" | wc -l)))
    fi
done
echo "ctags: ${#files[@]} files, $names names compared, $diffs differences"
[ "$diffs" -eq 0 ]

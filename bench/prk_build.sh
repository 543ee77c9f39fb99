#!/usr/bin/env bash
# bench/prk_build.sh -- build the Parallel Research Kernels' own MPI1
# Transpose, Stencil and DGEMM from a ParRes/Kernels checkout, with PRK's own
# build system, once per MPI, out of tree (called by `make bench-prk-real`).
#
#   bash bench/prk_build.sh PRK_DIR MPI [MAKEDEFS]
#
# PRK_DIR: a checkout of https://github.com/ParRes/Kernels (nothing of PRK is
# kept in this repository: `git clone https://github.com/ParRes/Kernels`).
# MPI: mpich or openmpi. MAKEDEFS: which of PRK's common/make.defs.* templates
# becomes common/make.defs (default gcc: -O3 -mtune=native -ffast-math -g3).
#
# Copies PRK_DIR's common/, include/ and MPI1/{Transpose,Stencil,DGEMM}/ into
# build/prk-src/MPI/ (a fresh copy each time: the two MPIs never share an
# object file), writes common/make.defs from the template, runs PRK's
# Makefiles there with MPICC=mpicc.MPI on the command line (the only MPI
# setting PRK's MPI1 Makefiles read: common/MPI.defs compiles and links with
# $(MPICC)) and copies the three programs into build/prk/MPI/. The knobs of
# PRK's own Makefiles keep their defaults (Stencil: RADIUS=2 STAR=1 DOUBLE=1
# LOOPGEN=0; Transpose: SYNCHRONOUS=0; DGEMM: BOFFSET=12; MPI1's DGEMM is
# PRK's own C loops, it links no BLAS). Writes build/prk/MPI/build.txt: the
# PRK commit (when PRK_DIR is a git checkout), the template and the compile
# lines.
set -euo pipefail
usage() { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
[ "${1:-}" = -h ] || [ "${1:-}" = --help ] && { usage; exit 0; }
PRK_DIR=${1:-}
MPI=${2:-}
MAKEDEFS=${3:-gcc}
fail() { echo "prk_build.sh: $*" >&2; exit 2; }
[ -n "$PRK_DIR" ] || fail "PRK_DIR is not set: clone PRK (git clone https://github.com/ParRes/Kernels) and pass its path (make bench-prk-real PRK_DIR=/path/to/Kernels)"
[ -d "$PRK_DIR" ] || fail "PRK_DIR=$PRK_DIR is not a directory (git clone https://github.com/ParRes/Kernels)"
for f in MPI1/Transpose/transpose.c MPI1/Transpose/Makefile MPI1/Stencil/stencil.c MPI1/Stencil/Makefile \
         MPI1/DGEMM/dgemm.c MPI1/DGEMM/Makefile common/MPI.defs common/make.common "common/make.defs.$MAKEDEFS" \
         common/Stencil/loop_gen include/par-res-kern_mpi.h; do
    [ -f "$PRK_DIR/$f" ] || fail "PRK_DIR=$PRK_DIR is not a ParRes/Kernels checkout: no $f (git clone https://github.com/ParRes/Kernels)"
done
case "$MPI" in mpich|openmpi) ;; *) fail "MPI must be mpich or openmpi, not '$MPI'";; esac
command -v "mpicc.$MPI" >/dev/null || fail "mpicc.$MPI not found (make deps: Debian's MPI packages)"

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT/build/prk-src/$MPI
OUT=$ROOT/build/prk/$MPI
rm -rf "$SRC"
mkdir -p "$SRC/MPI1" "$OUT"
cp -R "$PRK_DIR/common" "$PRK_DIR/include" "$SRC/"
for k in Transpose Stencil DGEMM; do cp -R "$PRK_DIR/MPI1/$k" "$SRC/MPI1/"; done
cp "$SRC/common/make.defs.$MAKEDEFS" "$SRC/common/make.defs"
chmod +x "$SRC/common/Stencil/loop_gen"

: > "$OUT/make.log"
commit=$(git -C "$PRK_DIR" rev-parse HEAD 2>/dev/null || echo "unknown (not a git checkout)")
{
    echo "# PRK: $PRK_DIR, commit $commit"
    echo "# common/make.defs = common/make.defs.$MAKEDEFS; make MPICC=mpicc.$MPI ($("mpicc.$MPI" --version | head -1))"
} > "$OUT/build.txt"
for kp in Transpose:transpose Stencil:stencil DGEMM:dgemm; do
    k=${kp%%:*}; p=${kp##*:}
    echo "prk_build.sh: $MPI: PRK's MPI1/$k ($p)"
    make -s -C "$SRC/MPI1/$k" "$p" MPICC="mpicc.$MPI" >>"$OUT/make.log" 2>&1 ||
        { cat "$OUT/make.log" >&2; fail "PRK's make of MPI1/$k failed under $MPI (log above)"; }
    make -n -B -C "$SRC/MPI1/$k" "$p" MPICC="mpicc.$MPI" 2>/dev/null | grep -m1 -- "-c $p.c\|$p.c" | sed "s|^|# $k: |" >> "$OUT/build.txt" || true
    cp "$SRC/MPI1/$k/$p" "$OUT/$p"
done
cat "$OUT/build.txt"

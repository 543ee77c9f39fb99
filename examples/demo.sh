#!/usr/bin/env bash
# examples/demo.sh -- run the examples and print a short report (make demo).
#
#   bash examples/demo.sh [--mpi mpich|openmpi] [--np N] [--bin build/MPI]
#
# Runs each example in DEMOS whose binary exists in --bin (make examples
# builds them; a missing one is reported as skipped) at N ranks, keeps its
# whole output in BIN/demo/NAME.log and prints one or two lines of its key
# result. To add an example: append its name to DEMOS, optionally set
# args_NAME (its arguments, sized so the demo stays near a minute) and
# define summary_NAME (reads the log on stdin, prints the lines); without
# one the last two lines of its output are shown. extra_NAME: more rank
# counts to run it at (each must pass too; logs NAME.npK.log), with
# args_NAME_npK if set. Exit status: non-zero if an example failed.
# args_NAME and summary_NAME are used indirectly (${!var}, "summary_$ex"):
# shellcheck disable=SC2034,SC2317
set -u
cd "$(dirname "$0")/.." || exit 2
MPI=mpich; NP=4; BIN=""
while [ $# -gt 0 ]; do
    case "$1" in
    --mpi) shift; MPI=$1 ;;
    --np) shift; NP=$1 ;;
    --bin) shift; BIN=$1 ;;
    *) sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
    shift
done
BIN=${BIN:-build/$MPI}
case "$MPI" in
mpich) RUN=(mpiexec.mpich); MPINAME="MPICH" ;;
openmpi) RUN=(mpiexec.openmpi --allow-run-as-root --oversubscribe); MPINAME="Open MPI" ;;
*) echo "demo.sh: --mpi mpich|openmpi"; exit 2 ;;
esac
export BLIS_NUM_THREADS=${BLIS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
LOGS=$BIN/demo
mkdir -p "$LOGS"

DEMOS="quickstart montecarlo matmul2d pencil heat2d heat2d_f swe_cgrid_f tp_mlp scalapack"

# the Fortran heat code (examples/heat2d.f90) at 1, 2 and 3 ranks too
extra_heat2d_f="1 2 3"

# the Fortran C-grid shallow-water code (examples/swe_cgrid.f90) likewise
extra_swe_cgrid_f="1 2 3"

# scalapack at 1, 2, 4 and 6 ranks (those not --np here); M, N, K and the
# system's order are not multiples of their blocks in every run
extra_scalapack="1 2 4 6"
args_scalapack_np6="--m 301 --n 203 --k 250 --mb 32 --nb 24 --kb 16 --s 199 --b 16 --nrhs 5"

args_matmul2d="--m 1536 --reps 3"

summary_quickstart() {
    awk '/^checksum/ { c = $2 } /^quickstart:/ { r = $2 }
         END { printf "7x5 matrix [S(0),S(1)] -> [R,S(0)] on a 2-D mesh, gathered: checksum %s (630 expected) %s\n", c, r }'
}
summary_montecarlo() {
    local one="$LOGS/montecarlo.np1.log" same=no
    "${RUN[@]}" -n 1 "$BIN/montecarlo" --no-check >"$one" 2>&1 </dev/null
    if diff <(grep -v -e '^ranks' -e '^identical' "$one") <(grep -v -e '^ranks' -e '^identical' "$LOGS/montecarlo.log") >/dev/null; then
        same=yes
    fi
    awk -v np="$NP" -v same="$same" '
        /^montecarlo:/ { pts = $4 } /pi ~/ { pi = $3; err = $5; sub(/,/, "", err) } /fingerprint/ { fp = $NF }
        /sum of squared/ { msd = $7; th = $9; sub(/\),/, "", th) } /^identical/ { self = $NF }
        END { printf "pi ~ %s from %s points (error %s); bits fingerprint %s\n", pi, pts, err, fp
              printf "             random walk <x^2> = %s (theory %s); output identical at 1 and %s ranks: %s (one-rank rerun: %s)\n", msd, th, np, same, self }'
}
summary_matmul2d() {
    awk '/^matmul2d:/ { sub(/^matmul2d: /, ""); sub(/, [0-9]+ ranks$/, ""); what = $0 }
         /^dt_matmul:/ { strat = $0; sub(/^dt_matmul: /, "", strat); sub(/; cost.*/, "", strat); gsub(/f64\[[0-9, ]*\] /, "", strat) }
         /GFLOP/ { t = $2; gf = $7 } /check:/ { ok = $NF }
         END { printf "%s: %s s, %s GFLOP/s, check %s\n", what, t, gf, ok
               printf "             strategy: %s\n", strat }'
}
summary_pencil() {
    awk '/^pencil: u/ { sz = $2 } /^  slab |^  slab->|^  pencil/ { if ($0 ~ / - +- /) r = r sprintf(" %s", $1); else { n++; r = r sprintf(" %s %s", $1 ($1 == "pencil" ? " " $2 : ""), $(NF-1)) } }
         /skipped/ { skip = 1 } /^pencil: (OK|FAILED)/ { ok = $2 } /^  fft3d/ { fft = $NF }
         /^  overlap:/ { nb = $2; bsz = $4; sub(/,$/, "", bsz) }
         /^    blocking|^    overlapped \(/ { x = $0; sub(/ ms .*/, "", x); k = split(x, a, " "); if ($1 == "blocking") { bms = a[k]; bok = $NF } else oms = a[k] }
         /^    overlapped\/blocking/ { ratio = $2 }
         END { if (skip) printf "%s c128 slab and pencil transposes checked: %s, 3-D FFT %s (FFTW-MPI comparison needs MPI=openmpi)\n", sz, ok, fft
               else printf "%s c128 slab/pencil transposes, checked %s, 3-D FFT %s; time dtensor/FFTW-MPI:%s\n", sz, ok, fft, r
               if (nb) printf "             batch of %s fields %s, redistributions in flight during other fields'"'"' FFTs: %s ms vs %s ms blocking (%s), checked %s\n", nb, bsz, oms, bms, ratio, bok }'
}
summary_heat2d() {
    awk '/^heat2d:/ { sub(/^heat2d: /, ""); sub(/, r = .*/, ""); grid = $0 }
         /^  \(a\) mesh/ { sub(/^  \(a\) /, ""); sub(/, steps.*/, ""); a = $0 }
         /^  \(b\) restart from/ { sub(/^  \(b\) restart from /, ""); sub(/, steps.*/, ""); b = $0 }
         /^  \(a\) uninterrupted/ { h = $4 } /^  identical/ { same = $NF }
         /^  \(o\) output every/ { every = $4 } /^      snapshots identical/ { osame = $NF }
         /^      ms\/step/ { for (i = 1; i < NF; i++) { v = $(i + 1); sub(/,$/, "", v)
                                  if ($i == "output") no = v; else if ($i == "blocking") bl = v; else if ($i == "overlapped") ov = v
                                  else if ($i == "overlapped/blocking") ratio = v } }
         END { printf "%s field, 200 steps on %s; checkpoint, restart %s\n", grid, a, b
               printf "             final field bitwise identical to the uninterrupted run: %s (fnv1a64 %s)\n", same, h
               if (every) printf "             output every %s steps overlapped with the next step: %s ms/step vs %s blocking (%s; none: %s), snapshots identical: %s\n", every, ov, bl, ratio, no, osame }'
}
summary_heat2d_f() {
    awk '/^heat2d_f:/ { sub(/^heat2d_f: /, ""); sub(/, r = .*/, ""); grid = $0 }
         /^  \(a\) mesh/ { sub(/^  \(a\) /, ""); sub(/, steps.*/, ""); a = $0 }
         /^  \(b\) restart on/ { sub(/^  \(b\) restart on /, ""); sub(/, steps.*/, ""); b = $0 }
         /^  identical/ { same = $NF }
         END { printf "Fortran (use dtensor): %s field on %s, its own ghosted arrays; checkpoint, restart on %s\n", grid, a, b
               printf "             both final fields bitwise identical to the serial run: %s\n", same }'
}
summary_swe_cgrid_f() {
    awk '/^swe_cgrid_f:/ { sub(/^swe_cgrid_f: /, ""); sub(/, shallow water on a C grid/, ""); sub(/ \(c dt.*/, ""); what = $0 }
         /^  mesh/ { mesh = $2 " " $3 " " $4; sub(/:$/, "", mesh) }
         /step pairs/ { sub(/^  /, ""); sub(/:[^:]*$/, ""); sched = $0 }
         /^  checksum/ { sum = $3 } /^  shared faces/ { shared = $NF } /^  identical/ { same = $NF }
         END { printf "Fortran shallow water on a C grid (h, u, v wrapped in place): %s on mesh %s\n", what, mesh
               printf "             %s; bitwise = serial: %s (sum(h) %s), shared faces in step: %s\n", sched, same, sum, shared }'
}
summary_scalapack() {
    awk '/^scalapack: [0-9]+ ranks/ { sub(/^scalapack: /, ""); sub(/, every tensor.*/, ""); grid = $0 }
         /^pdgemm:/ { g = $2; ms = $0; sub(/.*in place: /, "", ms); sub(/;.*/, "", ms); ok1 = $NF }
         /^pdgetrf/ { s = $4; ms2 = $0; sub(/.*in place: /, "", ms2); sub(/;.*/, "", ms2)
                      res = $0; sub(/.*\(\|S\| \|x\|\) = /, "", res); sub(/:.*/, "", res); ok2 = $NF }
         /^descriptors:/ { ok3 = $NF } /^placements \[S\(1\)/ { ok4 = $NF }
         END { printf "%s: pdgemm %s %s (%s), LU solve %s %s (residual %s, %s)\n", grid, g, ms, ok1, s, ms2, res, ok2
               printf "             in place on the tensors: descriptors %s, other placement order %s\n", ok3, ok4 }'
}
summary_tp_mlp() {
    local one="$LOGS/tp_mlp.np1.log" same=no
    "${RUN[@]}" -n 1 "$BIN/tp_mlp" >"$one" 2>&1 </dev/null
    if diff <(grep -e '^step' -e '^weights' "$one") <(grep -e '^step' -e '^weights' "$LOGS/tp_mlp.log") >/dev/null; then
        same=yes
    fi
    awk -v np="$NP" -v same="$same" '
        /^tp_mlp:/ { sub(/^tp_mlp: [0-9]+ ranks, /, ""); what = $0 } /^step/ { if (!first) first = $4; last = $4; n = $2 + 1 }
        END { printf "%s\n", what
              printf "             loss %s -> %s in %d SGD steps; losses identical at 1 and %s ranks: %s\n", first, last, n, np, same }'
}

printf 'dtensor.h demo: %s, %s ranks (logs in %s/)\n' "$MPINAME" "$NP" "$LOGS"
fails=0
for ex in $DEMOS; do
    if [ ! -x "$BIN/$ex" ]; then
        printf '%-12s skipped (no %s; examples/%s.c not in this tree?)\n' "$ex" "$BIN/$ex" "$ex"
        continue
    fi
    argsvar="args_$ex"
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout 300 "${RUN[@]}" -n "$NP" "$BIN/$ex" ${!argsvar:-} >"$LOGS/$ex.log" 2>&1 </dev/null
    rc=$?
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    if [ $rc -ne 0 ]; then
        printf '%-12s FAILED (exit %d after %s s); see %s:\n' "$ex" "$rc" "$secs" "$LOGS/$ex.log"
        tail -n 5 "$LOGS/$ex.log" | sed 's/^/             /'
        fails=$((fails + 1))
        continue
    fi
    extravar="extra_$ex" extra_ok=""
    for enp in ${!extravar:-}; do
        [ "$enp" = "$NP" ] && continue
        eargs="args_${ex}_np$enp"
        # shellcheck disable=SC2086
        if timeout 300 "${RUN[@]}" -n "$enp" "$BIN/$ex" ${!eargs:-${!argsvar:-}} >"$LOGS/$ex.np$enp.log" 2>&1 </dev/null; then
            extra_ok="$extra_ok $enp"
        else
            printf '%-12s FAILED at %s ranks; see %s:\n' "$ex" "$enp" "$LOGS/$ex.np$enp.log"
            tail -n 5 "$LOGS/$ex.np$enp.log" | sed 's/^/             /'
            fails=$((fails + 1))
        fi
    done
    if declare -F "summary_$ex" >/dev/null; then
        out=$("summary_$ex" <"$LOGS/$ex.log")
    else
        out=$(tail -n 2 "$LOGS/$ex.log" | sed '2s/^/             /')
    fi
    [ -n "$extra_ok" ] && out="$out (also at ranks:$extra_ok, OK)"
    printf '%-12s %s  [%s s]\n' "$ex" "$out" "$secs"
done
# heat2d on the GPU (examples/heat2d_cuda.cu, built by make cuda): where a
# GPU is; elsewhere the test suite runs it on the CPU stand-in
if [ -x build/cuda/heat2d_cuda ] && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    if timeout 300 "${RUN[@]}" -n "$NP" build/cuda/heat2d_cuda >"$LOGS/heat2d_cuda.log" 2>&1 </dev/null; then
        printf '%-12s %s\n' heat2d_cuda "$(grep -e '(a) mesh' -e 'overlap' -e 'identical' "$LOGS/heat2d_cuda.log" | tr -s ' ' | tr '\n' ' ')"
    else
        printf '%-12s FAILED; see %s\n' heat2d_cuda "$LOGS/heat2d_cuda.log"
        fails=$((fails + 1))
    fi
else
    printf '%-12s skipped (no GPU or no build/cuda/heat2d_cuda: make cuda); CI runs it on the CPU stand-in\n' heat2d_cuda
fi
[ $fails -eq 0 ] && echo "demo: all examples OK" || echo "demo: $fails example(s) FAILED"
exit $((fails > 0))

# bench/py/redist_mpi4py.py -- the mpi4py + numpy peer of bench/redistribute.c
# (family `mpi4py`): what a Python HPC user writes for the same four
# redistributions of an f32 rows x cols tensor on a 1-D "mesh" of all n ranks,
# with the buffer (uppercase) mpi4py methods on preallocated numpy arrays:
#
#   S(0)->R       Allgather of the row shard into a (rows, cols) array
#   S(0)->S(1)    pack the n column blocks of the row shard into one buffer
#                 (np.copyto into a preallocated (n, rows/n, cols/n) array),
#                 Alltoall; the received row blocks are the (rows, cols/n)
#                 column shard as they land (no unpack)
#   P(sum)->R     Allreduce (SUM) of the full tensor
#   P(sum)->S(0)  Reduce_scatter_block (SUM) of the full tensor
#
# Sizes and shapes are bench/redistribute.c's: nominal bytes from --min-kib
# KiB to --max-mib MiB, x4 per step; numel = b // 4,
# rows = llround(sqrt(numel) / n) * n (>= n), cols = llround(numel / rows / n) * n
# (>= n). Global value at (i, j) = (i * cols + j) % 251; Partial inputs: rank r
# holds value + r, so the sum is n * value + n (n - 1) / 2.
#
# Method: one untimed warm-up (whose result is checked), then --reps timed
# repetitions (default as in the C: 30 up to 4 MiB, 10 up to 64 MiB, else 5;
# --quick: 5); each: Barrier, MPI.Wtime around the operation, max over ranks;
# reported: the median. The output starts as NaN, so the warm-up check sees
# every element written; the output after the last repetition is checked too.
# Buffers are allocated once per (case, size), outside the timed region.
# Exits 1 on a wrong result.
#
#   mpiexec.openmpi --allow-run-as-root --oversubscribe -n 4 /usr/bin/python3 \
#       bench/py/redist_mpi4py.py --csv out.csv [--quick] [--max-mib N] [--min-kib N] [--reps N]
#
# --csv FILE appends raw rows (no header; rank 0 writes):
#   mpi4py,<case>,<bytes = rows*cols*4>,peer,<median ms>,ms
# --quick: --max-mib 4 (unless given) and 5 reps (unless --reps).
# Needs Debian's python3-numpy and python3-mpi4py (built against Open MPI, so
# launch with mpiexec.openmpi).
import argparse
import statistics
import sys

import numpy as np
from mpi4py import MPI

from sizes import nominal_sizes, reps_for, shape_for  # bench/py/sizes.py: the C bench's size rule

FAMILY = "mpi4py"
CASES = ["S(0)->R", "S(0)->S(1)", "P(sum)->R", "P(sum)->S(0)"]


def values(row0, nrows, cols):
    """global value rows row0 .. row0 + nrows - 1, all columns, as f32 (nrows, cols)"""
    idx = np.arange(row0 * cols, (row0 + nrows) * cols, dtype=np.int64)
    return (idx % 251).astype(np.float32).reshape(nrows, cols)


def run_case(comm, case, nominal, reps):
    rank, n = comm.Get_rank(), comm.Get_size()
    rows, cols = shape_for(nominal, n)
    lr, cb = rows // n, cols // n
    r0 = rank * lr

    if case == "S(0)->R":
        local = values(r0, lr, cols)
        out = np.empty((rows, cols), dtype=np.float32)

        def op():
            comm.Allgather(local, out)

        def expected():
            return values(0, rows, cols)

    elif case == "S(0)->S(1)":
        local = values(r0, lr, cols)
        packed = np.empty((n, lr, cb), dtype=np.float32)
        out = np.empty((rows, cb), dtype=np.float32)  # = (n, lr, cb): block j holds rank j's rows
        blocks = local.reshape(lr, n, cb).transpose(1, 0, 2)  # a view, made once

        def op():
            np.copyto(packed, blocks)
            comm.Alltoall(packed, out)

        def expected():
            return values(0, rows, cols)[:, rank * cb:(rank + 1) * cb]

    elif case == "P(sum)->R":
        local = values(0, rows, cols) + np.float32(rank)
        out = np.empty((rows, cols), dtype=np.float32)

        def op():
            comm.Allreduce(local, out, op=MPI.SUM)

        def expected():
            return values(0, rows, cols) * np.float32(n) + np.float32(n * (n - 1) // 2)

    else:  # P(sum)->S(0)
        local = values(0, rows, cols) + np.float32(rank)
        out = np.empty((lr, cols), dtype=np.float32)

        def op():
            comm.Reduce_scatter_block(local, out, op=MPI.SUM)

        def expected():
            return values(r0, lr, cols) * np.float32(n) + np.float32(n * (n - 1) // 2)

    def check(when):
        ok = np.array_equal(out, expected())
        all_ok = comm.allreduce(ok, op=MPI.LAND)
        if not all_ok:
            if rank == 0:
                sys.stderr.write("%s: wrong result (%s) at %d bytes (%dx%d)\n" % (case, when, rows * cols * 4, rows, cols))
            comm.Abort(1)

    t = np.empty(reps, dtype=np.float64)
    out.fill(np.nan)  # poisoned: the warm-up must write every element
    for rep in range(-1, reps):  # -1: warm-up
        comm.Barrier()
        t0 = MPI.Wtime()
        op()
        t1 = MPI.Wtime() - t0
        if rep < 0:
            check("warm-up")
        else:
            t[rep] = t1
    check("last rep")
    tmax = np.empty_like(t)
    comm.Allreduce(t, tmax, op=MPI.MAX)
    return rows, cols, statistics.median(tmax.tolist())


def main():
    ap = argparse.ArgumentParser(description="mpi4py + numpy redistribution peer of bench/redistribute.c")
    ap.add_argument("--csv", help="append raw rows family,case,size,side,value,unit")
    ap.add_argument("--quick", action="store_true", help="--max-mib 4 (unless given), 5 reps (unless --reps)")
    ap.add_argument("--max-mib", type=float, default=None, help="largest nominal size in MiB (64)")
    ap.add_argument("--min-kib", type=float, default=1.0, help="smallest nominal size in KiB (1)")
    ap.add_argument("--reps", type=int, default=0, help="timed repetitions (auto: 30 / 10 / 5)")
    comm = MPI.COMM_WORLD
    try:
        args = ap.parse_args()
    except SystemExit as e:
        sys.exit(e.code)
    max_mib = args.max_mib if args.max_mib is not None else (4.0 if args.quick else 64.0)
    if max_mib <= 0 or args.min_kib <= 0 or args.reps < 0 or (args.reps and args.reps < 1):
        ap.error("bad --max-mib / --min-kib / --reps")
    rank, n = comm.Get_rank(), comm.Get_size()

    fc = None
    if rank == 0:
        lib = MPI.Get_library_version().replace("\x00", "").split("\n")[0].strip()
        print("# mpi4py %s + numpy %s redistribution peer: %d rank(s), 1-D, f32" % (
            __import__("mpi4py").__version__, np.__version__, n))
        print("# MPI: %s" % lib)
        print("# ms: median over reps of the max over ranks (Barrier, MPI.Wtime)")
        print("%-13s %12s %13s %5s %11s" % ("transition", "bytes", "shape", "reps", "ms"))
        sys.stdout.flush()
        if args.csv:
            fc = open(args.csv, "a")
    for case in CASES:
        for nominal in nominal_sizes(args.min_kib, max_mib):
            reps = reps_for(nominal, args.reps, args.quick)
            rows, cols, med = run_case(comm, case, nominal, reps)
            if rank == 0:
                size = rows * cols * 4
                print("%-13s %12d %13s %5d %11.5f" % (case, size, "%dx%d" % (rows, cols), reps, med * 1e3))
                sys.stdout.flush()
                if fc:
                    fc.write("%s,%s,%d,peer,%.6f,ms\n" % (FAMILY, case, size, med * 1e3))
                    fc.flush()
    if fc:
        fc.close()
    if rank == 0:
        print("# all results correct")


if __name__ == "__main__":
    main()

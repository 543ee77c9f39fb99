# bench/py/torch_dtensor.py -- PyTorch DTensor (torch.distributed.tensor, CPU,
# gloo) as the peer of bench/redistribute.c and bench/dispatch.c.
#
# family `torch`: DTensor.redistribute on a 1-D DeviceMesh("cpu") of all n
# ranks, f32 rows x cols, the same four transitions and sizes as
# bench/redistribute.c (nominal bytes --min-kib KiB .. --max-mib MiB, x4 per
# step; numel = b // 4, rows = llround(sqrt(numel) / n) * n (>= n),
# cols = llround(numel / rows / n) * n (>= n)):
#   S(0)->R       x = DTensor.from_local(row shard, mesh, [Shard(0)])  -> [Replicate()]
#   S(0)->S(1)    the same x -> [Shard(1)]  (on CPU torch itself falls back to
#                 all_gather + chunk + .contiguous(): gloo has no alltoall path
#                 in DTensor; a warning says so once)
#   P(sum)->R     DTensor.from_local(value + rank, mesh, [Partial()]) -> [Replicate()]
#   P(sum)->S(0)  the same -> [Shard(0)]
# The timed region is y = x.redistribute(mesh, dst); t = y.to_local() (and
# .wait() should t be an AsyncCollectiveTensor), so the data has moved when the
# clock stops. The input DTensor is made once per (case, size), outside it.
# Global value at (i, j) = (i * cols + j) % 251; Partial: rank r holds value + r
# (sum n * value + n (n - 1) / 2). Every repetition's local result is checked
# against the closed form, outside the timed region.
# Method: one untimed warm-up, then --reps repetitions (default 30 up to 4 MiB,
# 10 up to 64 MiB, else 5; --quick: 5); each: dist.barrier(), time.perf_counter()
# around the call; the max over ranks (all_reduce MAX) of each repetition;
# reported: the median.
#
# family `torch-dispatch`, case `add`: c = a + b on two global [8] f32 tensors,
# Shard(0) on the same 1-D mesh of all n ranks (8 / n elements a rank; made by
# distribute_tensor from a = [1,-2,3,-4,5,-6,7,-8], b = [0.5,1,...,4]): the same
# shape and placement as bench/dispatch.c's `add S`. No communication. After
# --dispatch-warmup untimed calls, --dispatch-loops loops of K = --dispatch-k
# calls each (perf_counter around a loop, divided by K); each rank's median over
# the loops, then the max over ranks (as bench/dispatch.c); unit us, size 8
# (the global numel). The result's values and placement are checked.
#
# torch.set_num_threads(1). Rank and size come from Open MPI's launcher
# (OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE; PMI_RANK / PMI_SIZE, or
# RANK / WORLD_SIZE, also work). Rendezvous: --init-method URL if given; else
# tcp://127.0.0.1:PORT with --port PORT or $MASTER_PORT; else (default) a
# torch FileStore under /tmp named after the Open MPI job id, so concurrent
# runs never fight over a port. With all ranks on one node, GLOO_SOCKET_IFNAME
# defaults to lo.
#
#   mpiexec.openmpi --allow-run-as-root --oversubscribe -n 4 /tmp/pyv/bin/python \
#       bench/py/torch_dtensor.py --csv out.csv [--quick] [--max-mib N] [--min-kib N] [--reps N]
#
# --csv FILE appends raw rows (no header; rank 0 writes):
#   torch,<case>,<bytes = rows*cols*4>,peer,<median ms>,ms
#   torch-dispatch,add,8,peer,<us per call>,us
# --quick: --max-mib 1 (unless given), 5 reps (unless --reps), 5 dispatch loops
# of 100 calls. --no-dispatch / --no-redistribute skip a family.
# Exit status: 0 ok; 1 a wrong result; 2 bad arguments; 3 torch (or
# torch.distributed.tensor) cannot be imported: "peer unavailable".
import argparse
import os
import statistics
import sys
import tempfile
import time

try:
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
except Exception as e:  # ImportError, or a broken install raising something else
    sys.stderr.write("torch_dtensor.py: PyTorch with torch.distributed.tensor is not available "
                     "(%s: %s); peer unavailable\n" % (type(e).__name__, e))
    sys.exit(3)
try:
    from torch.distributed._functional_collectives import AsyncCollectiveTensor
except Exception:
    AsyncCollectiveTensor = None

from sizes import nominal_sizes, reps_for, shape_for  # bench/py/sizes.py: the C bench's size rule

CASES = ["S(0)->R", "S(0)->S(1)", "P(sum)->R", "P(sum)->S(0)"]


def values(row0, nrows, cols):
    """global values of rows row0 .. row0 + nrows - 1, all columns, f32 (nrows, cols)"""
    idx = torch.arange(row0 * cols, (row0 + nrows) * cols, dtype=torch.int64)
    return (idx % 251).to(torch.float32).reshape(nrows, cols)


def env_int(*names):
    for k in names:
        v = os.environ.get(k)
        if v is not None and v != "":
            return int(v)
    return None


def max_over_ranks(xs):
    t = torch.tensor(xs, dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.tolist()


def all_true(ok):
    t = torch.tensor([0 if ok else 1], dtype=torch.int32)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return int(t.item()) == 0


def materialise(y):
    t = y.to_local()
    if AsyncCollectiveTensor is not None and isinstance(t, AsyncCollectiveTensor):
        t = t.wait()
    return t


def run_case(mesh, rank, n, case, nominal, reps):
    rows, cols = shape_for(nominal, n)
    lr, cb = rows // n, cols // n
    nsum = float(n * (n - 1) // 2)
    if case.startswith("S(0)"):
        x = DTensor.from_local(values(rank * lr, lr, cols), mesh, [Shard(0)], run_check=False,
                               shape=torch.Size([rows, cols]), stride=(cols, 1))
    else:
        x = DTensor.from_local(values(0, rows, cols) + float(rank), mesh, [Partial()], run_check=False,
                               shape=torch.Size([rows, cols]), stride=(cols, 1))
    if case == "S(0)->R":
        dst, exp = [Replicate()], values(0, rows, cols)
    elif case == "S(0)->S(1)":
        dst, exp = [Shard(1)], values(0, rows, cols)[:, rank * cb:(rank + 1) * cb].contiguous()
    elif case == "P(sum)->R":
        dst, exp = [Replicate()], values(0, rows, cols) * float(n) + nsum
    else:
        dst, exp = [Shard(0)], values(rank * lr, lr, cols) * float(n) + nsum

    ts = []
    ok = True
    for rep in range(-1, reps):  # -1: warm-up
        dist.barrier()
        t0 = time.perf_counter()
        y = x.redistribute(mesh, dst)
        loc = materialise(y)
        t1 = time.perf_counter() - t0
        if rep >= 0:
            ts.append(t1)
        ok = ok and tuple(y.placements) == tuple(dst) and torch.equal(loc, exp)
        del y, loc
    if not all_true(ok):
        if rank == 0:
            sys.stderr.write("torch %s: wrong result at %d bytes (%dx%d)\n" % (case, rows * cols * 4, rows, cols))
        return rows, cols, None
    return rows, cols, statistics.median(max_over_ranks(ts))


def run_dispatch(mesh, rank, n, k, loops, warmup):
    av = torch.tensor([1, -2, 3, -4, 5, -6, 7, -8], dtype=torch.float32)
    bv = torch.tensor([0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4], dtype=torch.float32)
    a = distribute_tensor(av, mesh, [Shard(0)])
    b = distribute_tensor(bv, mesh, [Shard(0)])
    c = None
    for _ in range(warmup):
        c = a + b
    per = []
    for _ in range(loops):
        t0 = time.perf_counter()
        for _ in range(k):
            c = a + b
        per.append((time.perf_counter() - t0) / k)
    chunks = torch.chunk(av + bv, n)  # Shard(0)'s layout: ceil(8 / n) a rank, the last ones short or empty
    exp = chunks[rank] if rank < len(chunks) else torch.empty(0)
    ok = (isinstance(c, DTensor) and tuple(c.placements) == (Shard(0),) and tuple(c.shape) == (8,)
          and torch.equal(c.to_local(), exp))
    if not all_true(ok):
        if rank == 0:
            sys.stderr.write("torch-dispatch add: wrong result\n")
        return None
    return max_over_ranks([statistics.median(per)])[0]


def main():
    ap = argparse.ArgumentParser(description="PyTorch DTensor (CPU, gloo) peer of bench/redistribute.c "
                                             "and bench/dispatch.c")
    ap.add_argument("--csv", help="append raw rows family,case,size,side,value,unit")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--max-mib", type=float, default=None, help="largest nominal size in MiB (64; --quick 1)")
    ap.add_argument("--min-kib", type=float, default=1.0, help="smallest nominal size in KiB (1)")
    ap.add_argument("--reps", type=int, default=0, help="timed repetitions (auto: 30 / 10 / 5; --quick 5)")
    ap.add_argument("--dispatch-k", type=int, default=None, help="calls per timed loop (200; --quick 100)")
    ap.add_argument("--dispatch-loops", type=int, default=None, help="timed loops (21; --quick 5)")
    ap.add_argument("--dispatch-warmup", type=int, default=100, help="untimed calls first (100)")
    ap.add_argument("--no-dispatch", action="store_true")
    ap.add_argument("--no-redistribute", action="store_true")
    ap.add_argument("--port", type=int, default=None, help="rendezvous on tcp://127.0.0.1:PORT")
    ap.add_argument("--init-method", default=None, help="torch.distributed init_method URL")
    args = ap.parse_args()
    max_mib = args.max_mib if args.max_mib is not None else (1.0 if args.quick else 64.0)
    k = args.dispatch_k or (100 if args.quick else 200)
    loops = args.dispatch_loops or (5 if args.quick else 21)
    if max_mib <= 0 or args.min_kib <= 0 or args.reps < 0 or k < 1 or loops < 1 or args.dispatch_warmup < 1:
        ap.error("bad --max-mib / --min-kib / --reps / --dispatch-*")

    rank = env_int("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "RANK")
    size = env_int("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "WORLD_SIZE")
    if rank is None or size is None:
        rank, size = 0, 1
    local_size = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE")
    if local_size == size:  # all ranks on this node
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    store_file = None
    if args.init_method:
        init = args.init_method
    elif args.port is not None or os.environ.get("MASTER_PORT"):
        init = "tcp://%s:%d" % (os.environ.get("MASTER_ADDR", "127.0.0.1"),
                               args.port if args.port is not None else int(os.environ["MASTER_PORT"]))
    else:
        job = os.environ.get("OMPI_MCA_ess_base_jobid") or os.environ.get("PMIX_NAMESPACE")
        if job is None:
            if size > 1:
                sys.stderr.write("torch_dtensor.py: no Open MPI job id to name the rendezvous file; "
                                 "give --port or --init-method\n")
                sys.exit(2)
            job = "pid%d" % os.getpid()
        store_file = os.path.join(tempfile.gettempdir(), "dtensor-bench-torch-%s-%d" % (job, size))
        init = "file://" + store_file

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=size)
    mesh = init_device_mesh("cpu", (size,))
    n = size

    fc = None
    failed = False
    if rank == 0:
        print("# torch %s DTensor peer: %d rank(s), gloo, CPU, 1-D mesh, f32, torch.get_num_threads() = %d"
              % (torch.__version__, n, torch.get_num_threads()))
        print("# redistribute ms: median over reps of the max over ranks (dist.barrier, perf_counter), "
              "incl. to_local()")
        print("%-13s %12s %13s %5s %11s" % ("transition", "bytes", "shape", "reps", "ms"))
        sys.stdout.flush()
        if args.csv:
            fc = open(args.csv, "a")
    if not args.no_redistribute:
        for case in CASES:
            for nominal in nominal_sizes(args.min_kib, max_mib):
                reps = reps_for(nominal, args.reps, args.quick)
                rows, cols, med = run_case(mesh, rank, n, case, nominal, reps)
                if med is None:
                    failed = True
                    break
                if rank == 0:
                    size_b = rows * cols * 4
                    print("%-13s %12d %13s %5d %11.5f" % (case, size_b, "%dx%d" % (rows, cols), reps, med * 1e3))
                    sys.stdout.flush()
                    if fc:
                        fc.write("torch,%s,%d,peer,%.6f,ms\n" % (case, size_b, med * 1e3))
                        fc.flush()
            if failed:
                break
    if not failed and not args.no_dispatch:
        us = run_dispatch(mesh, rank, n, k, loops, args.dispatch_warmup)
        if us is None:
            failed = True
        elif rank == 0:
            print("# dispatch: c = a + b, global [8] f32, Shard(0) on the %d-rank mesh; us/call: each rank's "
                  "median over %d loops of %d calls, max over ranks" % (n, loops, k))
            print("%-13s %12s %13s %5s %11s" % ("op", "numel", "placement", "loops", "us/call"))
            print("%-13s %12d %13s %5d %11.3f" % ("add", 8, "S(0)+S(0)", loops, us * 1e6))
            sys.stdout.flush()
            if fc:
                fc.write("torch-dispatch,add,8,peer,%.6f,us\n" % (us * 1e6))
                fc.flush()
    if fc:
        fc.close()
    if rank == 0:
        print("# %s" % ("FAILED: a wrong result" if failed else "all results correct"))
    dist.barrier()
    dist.destroy_process_group()
    if store_file and rank == 0:
        try:
            os.remove(store_file)
        except OSError:
            pass
    # leave without the interpreter's teardown: gloo's threads can still be
    # running when C++ static destructors run, which aborts the process
    # ("terminate called without an active exception", exit 134) after every
    # row was printed and checked
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1 if failed else 0)


if __name__ == "__main__":
    main()

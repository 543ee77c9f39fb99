/* dtensor_cuda.h -- CUDA device tensors and an NCCL backend for dtensor.h

   HOW TO USE
   In ONE .cu file of a GPU code:

       #define DTENSOR_IMPLEMENTATION
       #include "dtensor_cuda.h"      (includes dtensor.h; do not include
                                       dtensor.h before it in this file)

   compile it with nvcc and link -lnccl -lcublas (and MPI, BLIS as for
   dtensor.h). Other files include dtensor.h or dtensor_cuda.h without the
   define. Tensors whose desc has `device = DT_CUDA` keep their shard in
   device memory; every dtensor.h call works on them.

   SYNCHRONISATION CONTRACT
   - dtensor's kernels, copies and NCCL calls are enqueued on ONE stream per
     process, dt_cuda_stream() (default: the legacy default stream 0).
     dt_comm_nccl(comm, stream, ...) makes `stream` that stream.
   - Calls that only enqueue device work return before it has run: ops,
     redistributions over NCCL, random fills. Work the caller enqueues on the
     same stream afterwards sees their results; work on another stream must
     wait for an event recorded on dt_cuda_stream().
   - Calls that hand data to the host synchronise the stream before they
     return: dt_tensor_gather / dt_tensor_distribute with host `full`,
     dt_tensor_from_local with DT_COPY from host memory, redistributions
     staged through MPI, the .npy functions.
   - Asynchronous kernel faults surface as DT_ERR_DEVICE from the next call
     that synchronises, with the CUDA error string in dt_last_error().
*/
#ifndef DTENSOR_CUDA_H
#define DTENSOR_CUDA_H

#include <cuda_runtime.h>
#include <nccl.h>

#if defined(DTENSOR_IMPLEMENTATION) && defined(DTENSOR_IMPLEMENTATION_DONE)
#error "dtensor_cuda.h: dtensor.h's implementation is already in this file; include dtensor_cuda.h instead of dtensor.h"
#endif
#ifdef DTENSOR_IMPLEMENTATION
#define DT__CUDA_BUILD 1
#endif
#include "dtensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>cuda-api ---------------------------------------------------------------- */

/* Optional device allocator (a caching pool, RMM, ...). Zero fields mean
   cudaMalloc / cudaFree. */
typedef struct dt_cuda_allocator {
    void *(*alloc)(size_t bytes, void *user); /* NULL on failure             */
    void (*free)(void *p, void *user);
    void *user;
} dt_cuda_allocator;
DT_API void dt_cuda_set_allocator(const dt_cuda_allocator *a); /* NULL: back to cudaMalloc */

/* the stream dtensor enqueues its device work on (see the contract above) */
DT_API void dt_cuda_set_stream(cudaStream_t s);
DT_API cudaStream_t dt_cuda_stream(void);

/* an NCCL communicator as a dtensor backend: device buffers only, all work
   on `stream` (which also becomes dt_cuda_stream()). The ncclComm_t stays
   the caller's; mesh sub-communicators come from ncclCommSplit and are
   destroyed with the dt_comm. */
DT_API dt_status dt_comm_nccl(ncclComm_t comm, cudaStream_t stream, dt_comm **out);

#ifdef __cplusplus
}
#endif
#endif /* DTENSOR_CUDA_H */

#if defined(DTENSOR_IMPLEMENTATION) && !defined(DTENSOR_CUDA_IMPLEMENTATION_DONE)
#define DTENSOR_CUDA_IMPLEMENTATION_DONE

/* >>cuda-device -------------------------------------------------------------
   memory, stream, allocator hook, errors: the dt__device of DT_CUDA */

/* >>cuda-kernels ------------------------------------------------------------
   the dt__kernels table on device memory */

/* >>nccl --------------------------------------------------------------------
   dt_comm_nccl: an NCCL communicator as a dt_comm backend (device = DT_CUDA:
   every buffer handed to a callback is device memory; native_half = 1).
   How each dtensor collective maps to NCCL (n ranks, me = this rank):

   sendrecv        one group: ncclSend(dest) and ncclRecv(source), in bytes
                   (ncclUint8). NCCL has no tags: messages between two ranks
                   match in issue order on a communicator, which is the order
                   the library issues them in. A zero-byte side is skipped;
                   the peer's matching side is zero bytes too, so it skips
                   alike.
   split           ncclCommSplit (color < 0: NCCL_SPLIT_NOCOLOR, no child;
                   ordered by key, then parent rank, as the contract asks).
                   A child owns its ncclComm_t and ncclCommDestroys it in
                   `destroy`; the user's communicator is never destroyed here.
   allgatherv      equal blocks at j*count: ncclAllGather. Otherwise one group
                   of ncclBroadcast, root j into recvbuf + displs[j], for each
                   rank j with a non-empty block (the counts are the same on
                   every rank, so every rank makes the same calls).
   alltoallv       my own piece: cudaMemcpyAsync. Then one group of
                   ncclSend/ncclRecv per peer, each non-empty piece only.
   allreduce       ncclAllReduce. SUM/MAX/MIN -> ncclSum/ncclMax/ncclMin; AVG
                   -> ncclAvg for F32/F64/F16/BF16 only (integer AVG is
                   refused, see dt__nccl_op). F16/BF16 reduce natively
                   (ncclFloat16/ncclBfloat16), in NCCL's own precision.
   reduce_scatter  equal counts: ncclReduceScatter. Uneven counts: NCCL has no
                   reduce-scatter-v, so each rank's block is padded to the
                   largest count m: the blocks are copied into a scratch
                   buffer of n*m elements (pads zeroed, so the reduction reads
                   no uninitialised memory; their results are dropped),
                   ncclReduceScatter(m) goes straight into recvbuf when my
                   count is m and into a scratch block of m otherwise, which
                   is then copied into recvbuf. Cost: n*m - sum(counts)
                   padding elements on the wire and two device copies. The
                   scratch is stream-ordered (cudaMallocAsync / cudaFreeAsync
                   on the stream): nothing waits, the pool caches it.
   broadcast       ncclBroadcast in place, in bytes (ncclUint8).
   barrier         a one-element ncclAllReduce on a stream-ordered scratch
                   int, then cudaStreamSynchronize.
   start / wait    start: one group of ncclSend/ncclRecv (one per message) and
                   a CUDA event recorded on the stream after it. wait:
                   cudaEventSynchronize on that event, then the request is
                   freed. Work enqueued between start and wait (a stencil's
                   interior) can run while the messages move.

   SYNCHRONISATION. Everything is enqueued on the dt_comm's stream (the
   `stream` given to dt_comm_nccl, which also becomes dt_cuda_stream()); its
   split children use the same stream. The callbacks return once the work is
   ENQUEUED, not done -- except barrier and wait, which block the host until
   the stream (barrier) or the messages (wait) are done. So the results are
   visible to later work on that stream without any synchronisation, and
   the host must synchronise before it reads them; the buffers must stay
   valid until the stream has run past the call.

   ERRORS. Every NCCL result other than ncclSuccess becomes DT_ERR_COMM with
   the call's name, ncclGetErrorString and ncclGetLastError; CUDA errors
   become DT_ERR_DEVICE with cudaGetErrorString. Errors NCCL finds while the
   work runs (a peer that died, a network failure) come back from
   ncclCommGetAsyncError, which barrier and wait check after synchronising.
   A nonblocking communicator (ncclConfig_t.blocking = 0) answers
   ncclInProgress; dt__nccl_check waits for its final state, so such
   communicators work too (blocking at the host while NCCL sets calls up).
   The calling thread's current CUDA device must be the communicator's (one
   GPU per process, as dtensor_cuda.h assumes throughout). */

typedef struct dt__nccl {
    ncclComm_t comm;
    cudaStream_t stream;
    int rank, size;
    int owned; /* a split child: its comm is ours to destroy */
} dt__nccl;

/* a start/wait request: the event recorded after the group of messages */
typedef struct dt__nccl_request {
    cudaEvent_t done;
} dt__nccl_request;

/* nonblocking communicators answer ncclInProgress and finish in the
   background: poll until the state is final (blocking ones never get here) */
static ncclResult_t dt__nccl_settle(ncclComm_t comm, ncclResult_t rc) {
    while (rc == ncclInProgress) {
        ncclResult_t q = ncclCommGetAsyncError(comm, &rc);
        if (q != ncclSuccess) return q;
    }
    return rc;
}

static dt_status dt__nccl_fail(ncclComm_t comm, ncclResult_t rc, const char *what) {
    const char *last = ncclGetLastError(comm); /* NCCL keeps it per thread; comm may be NULL */
    return dt__fail(DT_ERR_COMM, "dt_comm_nccl: %s failed: %s%s%s%s", what, ncclGetErrorString(rc),
                    last && last[0] ? " (" : "", last ? last : "", last && last[0] ? ")" : "");
}

static dt_status dt__nccl_check(ncclComm_t comm, ncclResult_t rc, const char *what) {
    rc = dt__nccl_settle(comm, rc);
    return rc == ncclSuccess ? DT_OK : dt__nccl_fail(comm, rc, what);
}

static dt_status dt__nccl_cuda(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return DT_OK;
    return dt__fail(DT_ERR_DEVICE, "dt_comm_nccl: %s failed: %s", what, cudaGetErrorString(e));
}

/* errors found while earlier work ran (checked after synchronising) */
static dt_status dt__nccl_async_error(const dt__nccl *b, const char *what) {
    ncclResult_t ae = ncclSuccess, rc = ncclCommGetAsyncError(b->comm, &ae);
    if (rc != ncclSuccess) return dt__nccl_fail(b->comm, rc, "ncclCommGetAsyncError");
    if (ae != ncclSuccess && ae != ncclInProgress) return dt__nccl_fail(b->comm, ae, what);
    return DT_OK;
}

static dt_status dt__nccl_group_begin(void) { return dt__nccl_check(NULL, ncclGroupStart(), "ncclGroupStart"); }

/* Ends the group even when a call inside it failed (st != DT_OK), so that
   NCCL's group depth stays balanced; the first error is the one reported. */
static dt_status dt__nccl_group_end(const dt__nccl *b, dt_status st) {
    ncclResult_t rc = ncclGroupEnd();
    if (st) return st;
    return dt__nccl_check(b->comm, rc, "ncclGroupEnd");
}

static dt_status dt__nccl_send(const dt__nccl *b, const void *buf, size_t bytes, int peer) {
    return dt__nccl_check(b->comm, ncclSend(buf, bytes, ncclUint8, peer, b->comm, b->stream), "ncclSend");
}

static dt_status dt__nccl_recv(const dt__nccl *b, void *buf, size_t bytes, int peer) {
    return dt__nccl_check(b->comm, ncclRecv(buf, bytes, ncclUint8, peer, b->comm, b->stream), "ncclRecv");
}

/* device-to-device (or any UVA pointers) on the stream */
static dt_status dt__nccl_copy(const dt__nccl *b, void *dst, const void *src, size_t bytes) {
    if (!bytes || dst == src) return DT_OK;
    return dt__nccl_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, b->stream), "cudaMemcpyAsync");
}

/* counts all equal, displacements (if given) j * count: the same on every
   rank, so the plain collective is chosen on all ranks alike */
static int dt__nccl_uniform(const size_t *cnt, const size_t *displ, int n) {
    int j;
    for (j = 0; j < n; j++)
        if (cnt[j] != cnt[0] || (displ && displ[j] != cnt[0] * (size_t)j)) return 0;
    return 1;
}

static int dt__nccl_type(dt_dtype t, ncclDataType_t *out) {
    switch (t) {
    case DT_F32: *out = ncclFloat32; return 1;
    case DT_F64: *out = ncclFloat64; return 1;
    case DT_F16: *out = ncclFloat16; return 1;
    case DT_BF16: *out = ncclBfloat16; return 1;
    case DT_I32: *out = ncclInt32; return 1;
    case DT_I64: *out = ncclInt64; return 1;
    case DT_U8: *out = ncclUint8; return 1;
    }
    return 0;
}

/* AVG of integers is dtensor's exact mean truncated toward zero, computed
   without overflow; ncclAvg sums first (and may overflow), so it is refused.
   The library never asks (it averages itself); declining with
   DT_ERR_UNSUPPORTED would send device buffers to the host fallback. */
static int dt__nccl_op(dt_reduce op, dt_dtype t, ncclRedOp_t *out) {
    int fp = t == DT_F32 || t == DT_F64 || t == DT_F16 || t == DT_BF16;
    switch (op) {
    case DT_SUM: *out = ncclSum; return 1;
    case DT_MAX: *out = ncclMax; return 1;
    case DT_MIN: *out = ncclMin; return 1;
    case DT_AVG: *out = ncclAvg; return fp;
    }
    return 0;
}

/* the NCCL type and op of a reduction of `count` elements (whose byte size
   must fit a size_t: the scratch and copy sizes are computed from it) */
static dt_status dt__nccl_reduction(const char *what, size_t count, dt_dtype t, dt_reduce op, ncclDataType_t *ty,
                                    ncclRedOp_t *o) {
    size_t bytes;
    if (!dt__nccl_type(t, ty))
        return dt__fail(DT_ERR_DTYPE, "dt_comm_nccl: %s: unknown dtype %d", what, (int)t);
    if (!dt__nccl_op(op, t, o))
        return dt__fail(DT_ERR_DTYPE, "dt_comm_nccl: %s: reduction %d of %s is not supported (AVG: floating dtypes only)",
                        what, (int)op, dt_dtype_name(t));
    if (!dt__mul_ok(count, dt_dtype_size(t), &bytes))
        return dt__fail(DT_ERR_ARG, "dt_comm_nccl: %s: %zu elements of %s overflow size_t bytes", what, count,
                        dt_dtype_name(t));
    return DT_OK;
}

static dt_status dt__nccl_sendrecv(void *user, const void *sb, size_t sn, int dest, void *rb, size_t rn, int src,
                                   int tag) {
    const dt__nccl *b = (const dt__nccl *)user;
    dt_status st;
    (void)tag; /* NCCL matches by issue order per pair, see the section comment */
    if ((st = dt__nccl_group_begin())) return st;
    if (dest >= 0 && sn) st = dt__nccl_send(b, sb, sn, dest);
    if (!st && src >= 0 && rn) st = dt__nccl_recv(b, rb, rn, src);
    return dt__nccl_group_end(b, st);
}

static dt_status dt__nccl_wrap(ncclComm_t comm, cudaStream_t stream, int owned, void **out, int *rank, int *size) {
    dt__nccl *b = NULL;
    int r = 0, n = 0;
    dt_status st;
    if ((st = dt__nccl_check(comm, ncclCommUserRank(comm, &r), "ncclCommUserRank"))) return st;
    if ((st = dt__nccl_check(comm, ncclCommCount(comm, &n), "ncclCommCount"))) return st;
    if ((st = dt__alloc("dt_comm_nccl", sizeof *b, (void **)&b))) return st;
    b->comm = comm;
    b->stream = stream;
    b->rank = r;
    b->size = n;
    b->owned = owned;
    *out = b;
    *rank = r;
    *size = n;
    return DT_OK;
}

static dt_status dt__nccl_split(void *user, int color, int key, void **new_user, int *new_rank, int *new_size) {
    const dt__nccl *b = (const dt__nccl *)user;
    ncclComm_t nc = NULL;
    ncclResult_t rc;
    dt_status st;
    *new_user = NULL;
    /* config NULL: the child inherits the parent's (blocking or not) */
    rc = ncclCommSplit(b->comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &nc, NULL);
    if (rc == ncclInProgress && nc) rc = dt__nccl_settle(nc, rc); /* a nonblocking child reports on itself */
    if ((st = dt__nccl_check(b->comm, rc, "ncclCommSplit"))) {
        if (nc) ncclCommAbort(nc); /* a child that failed to set up: abort, don't wait on it */
        return st;
    }
    if (color < 0) return DT_OK;
    if (!nc) return dt__fail(DT_ERR_COMM, "dt_comm_nccl: ncclCommSplit(color %d) returned no communicator", color);
    if ((st = dt__nccl_wrap(nc, b->stream, 1, new_user, new_rank, new_size))) ncclCommDestroy(nc);
    return st;
}

static dt_status dt__nccl_allgatherv(void *user, const void *sb, size_t sn, void *rb, const size_t *rc,
                                     const size_t *rd) {
    const dt__nccl *b = (const dt__nccl *)user;
    char *r = (char *)rb;
    int j;
    dt_status st;
    if (sn != rc[b->rank])
        return dt__fail(DT_ERR_COMM, "dt_comm_nccl: allgatherv: rank %d sends %zu bytes but its block is %zu", b->rank,
                        sn, rc[b->rank]);
    if (dt__nccl_uniform(rc, rd, b->size)) {
        if (!rc[0]) return DT_OK;
        return dt__nccl_check(b->comm, ncclAllGather(sb, rb, rc[0], ncclUint8, b->comm, b->stream), "ncclAllGather");
    }
    if ((st = dt__nccl_group_begin())) return st;
    for (j = 0; j < b->size && !st; j++) {
        if (!rc[j]) continue;
        /* the root sends from sendbuf (which may be its block: in place) */
        st = dt__nccl_check(b->comm,
                            ncclBroadcast(j == b->rank ? sb : (const void *)(r + rd[j]), r + rd[j], rc[j], ncclUint8, j,
                                          b->comm, b->stream),
                            "ncclBroadcast");
    }
    return dt__nccl_group_end(b, st);
}

static dt_status dt__nccl_alltoallv(void *user, const void *sb, const size_t *sc, const size_t *sd, void *rb,
                                    const size_t *rc, const size_t *rd) {
    const dt__nccl *b = (const dt__nccl *)user;
    const char *s = (const char *)sb;
    char *r = (char *)rb;
    int j, me = b->rank;
    dt_status st;
    if (sc[me] != rc[me])
        return dt__fail(DT_ERR_COMM, "dt_comm_nccl: alltoallv: rank %d sends itself %zu bytes but receives %zu", me,
                        sc[me], rc[me]);
    if ((st = dt__nccl_copy(b, r + rd[me], s + sd[me], rc[me]))) return st;
    if ((st = dt__nccl_group_begin())) return st;
    for (j = 0; j < b->size && !st; j++) {
        if (j == me) continue;
        if (sc[j]) st = dt__nccl_send(b, s + sd[j], sc[j], j);
        if (!st && rc[j]) st = dt__nccl_recv(b, r + rd[j], rc[j], j);
    }
    return dt__nccl_group_end(b, st);
}

static dt_status dt__nccl_allreduce(void *user, const void *sb, void *rb, size_t count, dt_dtype t, dt_reduce op) {
    const dt__nccl *b = (const dt__nccl *)user;
    /* set by dt__nccl_reduction; initialised for GCC -O2's -Wmaybe-uninitialized */
    ncclDataType_t ty = ncclUint8;
    ncclRedOp_t o = ncclSum;
    dt_status st;
    if ((st = dt__nccl_reduction("allreduce", count, t, op, &ty, &o))) return st;
    if (!count) return DT_OK; /* the same on every rank */
    return dt__nccl_check(b->comm, ncclAllReduce(sb, rb, count, ty, o, b->comm, b->stream), "ncclAllReduce");
}

/* uneven counts (see the section comment): pad every block to m elements */
static dt_status dt__nccl_reduce_scatter_padded(const dt__nccl *b, const void *sb, void *rb, const size_t *counts,
                                                size_t m, size_t es, ncclDataType_t ty, ncclRedOp_t o) {
    const char *s = (const char *)sb;
    char *pad = NULL, *out;
    size_t block = m * es, padded, off = 0;
    int j, me = b->rank, direct = counts[me] == m;
    cudaError_t fe;
    dt_status st = DT_OK;
    /* n blocks, plus my result block unless it lands in recvbuf directly */
    if (!dt__mul_ok(block, (size_t)b->size + (direct ? 0u : 1u), &padded))
        return dt__fail(DT_ERR_ARG, "dt_comm_nccl: reduce_scatter: %d blocks of %zu bytes overflow size_t", b->size,
                        block);
    if ((st = dt__nccl_cuda(cudaMallocAsync((void **)&pad, padded, b->stream), "cudaMallocAsync"))) return st;
    out = direct ? (char *)rb : pad + block * (size_t)b->size;
    for (j = 0; j < b->size && !st; j++) {
        char *dst = pad + block * (size_t)j;
        size_t have = counts[j] * es;
        st = dt__nccl_copy(b, dst, s + off, have);
        if (!st && have < block)
            st = dt__nccl_cuda(cudaMemsetAsync(dst + have, 0, block - have, b->stream), "cudaMemsetAsync");
        off += have;
    }
    if (!st)
        st = dt__nccl_check(b->comm, ncclReduceScatter(pad, out, m, ty, o, b->comm, b->stream), "ncclReduceScatter");
    if (!st && !direct) st = dt__nccl_copy(b, rb, out, counts[me] * es);
    fe = cudaFreeAsync(pad, b->stream); /* stream-ordered: after the work above, error or not */
    return st ? st : dt__nccl_cuda(fe, "cudaFreeAsync");
}

static dt_status dt__nccl_reduce_scatter(void *user, const void *sb, void *rb, const size_t *counts, dt_dtype t,
                                         dt_reduce op) {
    const dt__nccl *b = (const dt__nccl *)user;
    /* set by dt__nccl_reduction; initialised for GCC -O2's -Wmaybe-uninitialized */
    ncclDataType_t ty = ncclUint8;
    ncclRedOp_t o = ncclSum;
    size_t m = 0, total = 0;
    int j;
    dt_status st;
    for (j = 0; j < b->size; j++) {
        if (counts[j] > m) m = counts[j];
        if (total + counts[j] < total)
            return dt__fail(DT_ERR_ARG, "dt_comm_nccl: reduce_scatter: the counts overflow size_t");
        total += counts[j];
    }
    if ((st = dt__nccl_reduction("reduce_scatter", total, t, op, &ty, &o))) return st;
    if (!m) return DT_OK; /* nothing anywhere (the counts are the same on every rank) */
    if (dt__nccl_uniform(counts, NULL, b->size))
        return dt__nccl_check(b->comm, ncclReduceScatter(sb, rb, m, ty, o, b->comm, b->stream), "ncclReduceScatter");
    return dt__nccl_reduce_scatter_padded(b, sb, rb, counts, m, dt_dtype_size(t), ty, o);
}

static dt_status dt__nccl_broadcast(void *user, void *buf, size_t bytes, int root) {
    const dt__nccl *b = (const dt__nccl *)user;
    if (!bytes) return DT_OK;
    return dt__nccl_check(b->comm, ncclBroadcast(buf, buf, bytes, ncclUint8, root, b->comm, b->stream),
                          "ncclBroadcast");
}

static dt_status dt__nccl_barrier(void *user) {
    const dt__nccl *b = (const dt__nccl *)user;
    int *token = NULL;
    cudaError_t fe;
    dt_status st;
    if ((st = dt__nccl_cuda(cudaMallocAsync((void **)&token, sizeof *token, b->stream), "cudaMallocAsync"))) return st;
    st = dt__nccl_cuda(cudaMemsetAsync(token, 0, sizeof *token, b->stream), "cudaMemsetAsync");
    if (!st)
        st = dt__nccl_check(b->comm, ncclAllReduce(token, token, 1, ncclInt32, ncclSum, b->comm, b->stream),
                            "ncclAllReduce (barrier)");
    fe = cudaFreeAsync(token, b->stream);
    if (!st) st = dt__nccl_cuda(fe, "cudaFreeAsync");
    if (!st) st = dt__nccl_cuda(cudaStreamSynchronize(b->stream), "cudaStreamSynchronize (barrier)");
    if (!st) st = dt__nccl_async_error(b, "barrier");
    return st;
}

static dt_status dt__nccl_start(void *user, int n, const dt_message *msgs, void **request) {
    const dt__nccl *b = (const dt__nccl *)user;
    dt__nccl_request *rq = NULL;
    int i;
    dt_status st;
    *request = NULL;
    if ((st = dt__alloc("dt_comm_nccl start", sizeof *rq, (void **)&rq))) return st;
    if ((st = dt__nccl_cuda(cudaEventCreateWithFlags(&rq->done, cudaEventDisableTiming), "cudaEventCreateWithFlags"))) {
        DT_FREE(rq);
        return st;
    }
    if (!(st = dt__nccl_group_begin())) {
        for (i = 0; i < n && !st; i++)
            st = msgs[i].send ? dt__nccl_send(b, msgs[i].buf, msgs[i].bytes, msgs[i].peer)
                              : dt__nccl_recv(b, msgs[i].buf, msgs[i].bytes, msgs[i].peer);
        st = dt__nccl_group_end(b, st);
    }
    if (!st) st = dt__nccl_cuda(cudaEventRecord(rq->done, b->stream), "cudaEventRecord");
    if (st) {
        cudaEventDestroy(rq->done); /* released by CUDA once whatever was enqueued has run */
        DT_FREE(rq);
        return st;
    }
    *request = rq;
    return DT_OK;
}

static dt_status dt__nccl_wait(void *user, void *request) {
    const dt__nccl *b = (const dt__nccl *)user;
    dt__nccl_request *rq = (dt__nccl_request *)request;
    dt_status st;
    if (!rq) return DT_OK;
    st = dt__nccl_cuda(cudaEventSynchronize(rq->done), "cudaEventSynchronize (wait)");
    cudaEventDestroy(rq->done);
    DT_FREE(rq);
    if (!st) st = dt__nccl_async_error(b, "wait");
    return st;
}

static void dt__nccl_destroy(void *user) {
    dt__nccl *b = (dt__nccl *)user;
    if (!b) return;
    if (b->owned) ncclCommDestroy(b->comm); /* nothing to report to: destroy returns void */
    DT_FREE(b);
}

DT_API dt_status dt_comm_nccl(ncclComm_t comm, cudaStream_t stream, dt_comm **out) {
    dt_comm_desc d;
    void *user = NULL;
    dt_status st;
    if (!out) return dt__fail(DT_ERR_ARG, "dt_comm_nccl: out is NULL");
    *out = NULL;
    if (!comm) return dt__fail(DT_ERR_ARG, "dt_comm_nccl: comm is NULL");
    memset(&d, 0, sizeof d);
    if ((st = dt__nccl_wrap(comm, stream, 0, &user, &d.rank, &d.size))) return st;
    d.name = "nccl";
    d.user = user;
    d.sendrecv = dt__nccl_sendrecv;
    d.split = dt__nccl_split;
    d.allgatherv = dt__nccl_allgatherv;
    d.alltoallv = dt__nccl_alltoallv;
    d.allreduce = dt__nccl_allreduce;
    d.reduce_scatter = dt__nccl_reduce_scatter;
    d.broadcast = dt__nccl_broadcast;
    d.barrier = dt__nccl_barrier;
    d.start = dt__nccl_start;
    d.wait = dt__nccl_wait;
    d.destroy = dt__nccl_destroy;
    /* the cost model's guess for NVLink within a node: ~10 us per NCCL call
       (launch and protocol), ~200 GB/s; not measured */
    d.alpha = 1e-5;
    d.beta = 5e-12;
    d.device = DT_CUDA;
    d.native_half = 1;
    /* builtin (1): the messages above name the NCCL call; the wrappers keep them */
    if ((st = dt__comm_make("dt_comm_nccl", &d, 1, out))) {
        dt__nccl_destroy(user);
        return st;
    }
    dt_cuda_set_stream(stream);
    return DT_OK;
}

#endif /* DTENSOR_IMPLEMENTATION */

/* tests/standin/nccl.h -- NCCL's API over MPI, on the stand-in's device
   memory (see cuda_runtime.h here). One "GPU" per MPI process; with
   DTENSOR_NO_MPI, one-rank communicators only.

   - ncclGetUniqueId / ncclCommInitRank: the id names a communicator;
     InitRank is MPI_Comm_split of MPI_COMM_WORLD by the id (so every world
     rank must call it, as in the tests), ordered by the NCCL rank.
     ncclCommInitAll takes one device. ncclCommSplit is MPI_Comm_split
     (NCCL_SPLIT_NOCOLOR: no communicator).
   - Collectives and send/recv move bytes with MPI; reductions are done here
     in rank order, identically on every rank: F16/BF16 in float rounded
     back after each step (NCCL reduces them natively too), ncclAvg as NCCL
     does it for floating types (each input pre-multiplied by 1/nranks in
     its own type, then summed). Integer ncclAvg is NCCL's sum divided.
   - Groups: ncclGroupStart..End queues the calls; End posts every send and
     recv (MPI_Isend/Irecv, NCCL's per-pair issue order is MPI's
     non-overtaking order), runs the collectives in issue order, then waits.
     Outside a group a call is a group of one.
   - Streams: the one eager part of the stand-in (cuda_runtime.h queues all
     other device work until the host waits). The MPI traffic cannot wait
     for a sync point -- the peer may be blocked in a host MPI call, where a
     GPU would have run the collective without it -- so a group, when it
     runs, first runs the queued work of its calls' streams (their inputs),
     then moves the data over MPI at once into host copies of the receive
     buffers, and queues the stores of those copies into the receive
     buffers on each call's stream. So the results appear in stream order:
     a host read or another stream's work that does not wait for the
     stream sees the old contents, as it could on a GPU.
   - Every buffer must be device memory, each range inside one allocation
     (ncclInvalidArgument otherwise, with ncclGetLastError saying which);
     counts are checked against the element size.
   - One NCCL behaviour is reproduced on purpose: at one rank, ncclAvg of a
     floating type runs NCCL's one-rank pre-multiply kernel (NCCL 2.28.3),
     whose blocks take floor(count/blocks) elements rounded up to 16 bytes,
     blocks = min(32, ceil(bytes / 16 KiB)), so that the elements past the
     last block are never written. dtensor_cuda.h must not depend on that
     path (it copies at one rank); test_nccl checks the counts where it
     drops elements.
   Not modelled: asynchronous errors (ncclCommGetAsyncError is always
   ncclSuccess), nonblocking communicators (ncclInProgress), timing. */
#ifndef DTCU_STANDIN_NCCL_H
#define DTCU_STANDIN_NCCL_H

#include "cuda_runtime.h"
#include <stdarg.h>
#ifndef DTENSOR_NO_MPI
#include <mpi.h>
#endif

typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7
} ncclResult_t;

typedef enum {
    ncclInt8 = 0, ncclChar = 0,
    ncclUint8 = 1,
    ncclInt32 = 2, ncclInt = 2,
    ncclUint32 = 3,
    ncclInt64 = 4,
    ncclUint64 = 5,
    ncclFloat16 = 6, ncclHalf = 6,
    ncclFloat32 = 7, ncclFloat = 7,
    ncclFloat64 = 8, ncclDouble = 8,
    ncclBfloat16 = 9
} ncclDataType_t;

typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 } ncclRedOp_t;

#define NCCL_SPLIT_NOCOLOR -1
#define NCCL_UNIQUE_ID_BYTES 128
typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;

typedef struct ncclConfig_v21700 {
    size_t size;
    unsigned int magic, version;
    int blocking, cgaClusterSize, minCTAs, maxCTAs;
    const char *netName;
    int splitShare;
} ncclConfig_t;

struct ncclComm {
#ifndef DTENSOR_NO_MPI
    MPI_Comm mpi;
#endif
    int rank, size;
};
typedef struct ncclComm *ncclComm_t;

/* ------------------------------------------------------------ errors */

static thread_local char dtnc_msg[256];

static inline ncclResult_t dtnc_fail(ncclResult_t r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dtnc_msg, sizeof dtnc_msg, fmt, ap);
    va_end(ap);
    return r;
}

static inline const char *ncclGetErrorString(ncclResult_t r) {
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    }
    return "unknown result code";
}
static inline const char *ncclGetLastError(ncclComm_t comm) {
    (void)comm;
    return dtnc_msg;
}

static inline size_t dtnc_size(ncclDataType_t t) {
    switch (t) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    }
    return 0;
}

/* ------------------------------------------------------------ communicators */

static inline ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
    static unsigned serial = 0;
    if (!id) return dtnc_fail(ncclInvalidArgument, "ncclGetUniqueId: id is NULL");
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "standin:%ld:%u", (long)getpid(), ++serial);
    return ncclSuccess;
}

static inline ncclResult_t dtnc_new(ncclComm_t *out) {
    *out = (ncclComm_t)calloc(1, sizeof **out);
    return *out ? ncclSuccess : dtnc_fail(ncclSystemError, "out of host memory");
}

static inline ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
    ncclResult_t r;
    if (!comm) return dtnc_fail(ncclInvalidArgument, "ncclCommInitRank: comm is NULL");
    *comm = NULL;
    if (rank < 0 || rank >= nranks) return dtnc_fail(ncclInvalidArgument, "ncclCommInitRank: rank %d of %d", rank, nranks);
    if (dtcu_injected("ncclCommInitRank")) return dtnc_fail(ncclUnhandledCudaError, "ncclCommInitRank: injected");
    if ((r = dtnc_new(comm))) return r;
#ifndef DTENSOR_NO_MPI
    {
        unsigned h = 2166136261u;
        size_t i;
        int size = 0;
        for (i = 0; i < sizeof id.internal; i++) h = (h ^ (unsigned char)id.internal[i]) * 16777619u;
        MPI_Comm_split(MPI_COMM_WORLD, (int)(h & 0x7fffffff), rank, &(*comm)->mpi);
        MPI_Comm_size((*comm)->mpi, &size);
        if (size != nranks) {
            MPI_Comm_free(&(*comm)->mpi);
            free(*comm);
            *comm = NULL;
            return dtnc_fail(ncclInvalidUsage, "ncclCommInitRank: %d ranks joined, %d expected", size, nranks);
        }
    }
#else
    (void)id;
    if (nranks != 1) {
        free(*comm);
        *comm = NULL;
        return dtnc_fail(ncclInvalidUsage, "ncclCommInitRank: %d ranks without MPI", nranks);
    }
#endif
    (*comm)->rank = rank;
    (*comm)->size = nranks;
    return ncclSuccess;
}

static inline ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
    ncclResult_t r;
    if (!comms || ndev != 1) return dtnc_fail(ncclInvalidArgument, "ncclCommInitAll: the stand-in has one device a process");
    if (devlist && cudaSetDevice(devlist[0]) != cudaSuccess)
        return dtnc_fail(ncclInvalidArgument, "ncclCommInitAll: device %d", devlist[0]);
    if (dtcu_injected("ncclCommInitAll")) return dtnc_fail(ncclUnhandledCudaError, "ncclCommInitAll: injected");
    if ((r = dtnc_new(comms))) return r;
#ifndef DTENSOR_NO_MPI
    MPI_Comm_dup(MPI_COMM_SELF, &comms[0]->mpi);
#endif
    comms[0]->rank = 0;
    comms[0]->size = 1;
    return ncclSuccess;
}

static inline ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config) {
    ncclResult_t r;
    (void)config;
    if (!comm || !newcomm) return dtnc_fail(ncclInvalidArgument, "ncclCommSplit: NULL argument");
    *newcomm = NULL;
    if (dtcu_injected("ncclCommSplit")) return dtnc_fail(ncclUnhandledCudaError, "ncclCommSplit: injected");
#ifndef DTENSOR_NO_MPI
    {
        MPI_Comm child;
        MPI_Comm_split(comm->mpi, color < 0 ? MPI_UNDEFINED : color, key, &child);
        if (child == MPI_COMM_NULL) return ncclSuccess;
        if ((r = dtnc_new(newcomm))) {
            MPI_Comm_free(&child);
            return r;
        }
        (*newcomm)->mpi = child;
        MPI_Comm_rank(child, &(*newcomm)->rank);
        MPI_Comm_size(child, &(*newcomm)->size);
    }
#else
    (void)key;
    if (color < 0) return ncclSuccess;
    if ((r = dtnc_new(newcomm))) return r;
    (*newcomm)->rank = 0;
    (*newcomm)->size = 1;
#endif
    return ncclSuccess;
}

static inline ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    if (!comm) return dtnc_fail(ncclInvalidArgument, "ncclCommDestroy: comm is NULL");
#ifndef DTENSOR_NO_MPI
    MPI_Comm_free(&comm->mpi);
#endif
    free(comm);
    return ncclSuccess;
}
static inline ncclResult_t ncclCommAbort(ncclComm_t comm) { return ncclCommDestroy(comm); }
static inline ncclResult_t ncclCommCount(const ncclComm_t comm, int *n) {
    if (!comm || !n) return dtnc_fail(ncclInvalidArgument, "ncclCommCount: NULL argument");
    *n = comm->size;
    return ncclSuccess;
}
static inline ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *r) {
    if (!comm || !r) return dtnc_fail(ncclInvalidArgument, "ncclCommUserRank: NULL argument");
    *r = comm->rank;
    return ncclSuccess;
}
static inline ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *e) {
    if (!comm || !e) return dtnc_fail(ncclInvalidArgument, "ncclCommGetAsyncError: NULL argument");
    *e = ncclSuccess;
    return ncclSuccess;
}

/* ------------------------------------------------------------ element math */

/* element i of a buffer of type t, as double (64-bit integers exactly via
   the int64 path below) */
static inline double dtnc_ld(ncclDataType_t t, const void *p, size_t i) {
    switch (t) {
    case ncclInt8: return ((const int8_t *)p)[i];
    case ncclUint8: return ((const uint8_t *)p)[i];
    case ncclInt32: return ((const int32_t *)p)[i];
    case ncclUint32: return ((const uint32_t *)p)[i];
    case ncclFloat16: return dtcu_h2f(((const uint16_t *)p)[i]);
    case ncclBfloat16: return dtcu_b2f(((const uint16_t *)p)[i]);
    case ncclFloat32: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}
static inline void dtnc_st(ncclDataType_t t, void *p, size_t i, double v) {
    switch (t) {
    case ncclInt8: ((int8_t *)p)[i] = (int8_t)(int64_t)v; break;
    case ncclUint8: ((uint8_t *)p)[i] = (uint8_t)(int64_t)v; break;
    case ncclInt32: ((int32_t *)p)[i] = (int32_t)(int64_t)v; break;
    case ncclUint32: ((uint32_t *)p)[i] = (uint32_t)(int64_t)v; break;
    case ncclFloat16: ((uint16_t *)p)[i] = dtcu_f2h((float)v); break;
    case ncclBfloat16: ((uint16_t *)p)[i] = dtcu_f2b((float)v); break;
    case ncclFloat32: ((float *)p)[i] = (float)v; break;
    default: ((double *)p)[i] = v; break;
    }
}
static inline int dtnc_is_float(ncclDataType_t t) {
    return t == ncclFloat16 || t == ncclBfloat16 || t == ncclFloat32 || t == ncclFloat64;
}

/* acc[i] = acc[i] op x[i], in t's arithmetic; integers wrap (modulo 2^bits,
   as NCCL's), 64-bit ones without going through double */
static inline void dtnc_combine(ncclDataType_t t, ncclRedOp_t op, void *acc, const void *x, size_t n) {
    size_t i;
    if (t == ncclInt64 || t == ncclUint64) {
        for (i = 0; i < n; i++) {
            uint64_t a = ((uint64_t *)acc)[i], b = ((const uint64_t *)x)[i];
            int lt = t == ncclInt64 ? (int64_t)b < (int64_t)a : b < a;
            if (op == ncclSum || op == ncclAvg) a += b;
            else if (op == ncclProd) a *= b;
            else if (op == ncclMax) a = lt ? a : b;
            else a = lt ? b : a;
            ((uint64_t *)acc)[i] = a;
        }
        return;
    }
    for (i = 0; i < n; i++) {
        double a = dtnc_ld(t, acc, i), b = dtnc_ld(t, x, i), r;
        if (op == ncclSum || op == ncclAvg) r = a + b;
        else if (op == ncclProd) r = a * b;
        else if (op == ncclMax) r = a != a ? a : b != b ? b : a > b ? a : b;
        else r = a != a ? a : b != b ? b : a < b ? a : b;
        if (!dtnc_is_float(t)) { /* wrap the 8- and 32-bit integers */
            int64_t w = (int64_t)r;
            r = (double)(t == ncclInt8 ? (int64_t)(int8_t)w : t == ncclUint8 ? (int64_t)(uint8_t)w
                         : t == ncclInt32 ? (int64_t)(int32_t)w : (int64_t)(uint32_t)w);
        }
        if (t == ncclFloat32) r = (double)(float)r; /* float arithmetic: round each step */
        dtnc_st(t, acc, i, r);
    }
}

/* ncclAvg of a floating type: x * (1/n), the factor and product in t */
static inline void dtnc_premul(ncclDataType_t t, void *x, size_t count, int n) {
    size_t i;
    double f = 1.0 / n;
    if (t == ncclFloat32) f = (double)(float)f;
    else if (t == ncclFloat16) f = dtcu_h2f(dtcu_f2h((float)f));
    else if (t == ncclBfloat16) f = dtcu_b2f(dtcu_f2b((float)f));
    for (i = 0; i < count; i++) dtnc_st(t, x, i, dtnc_ld(t, x, i) * f);
}

/* integer ncclAvg: the sum divided by n (toward zero) */
static inline void dtnc_postdiv(ncclDataType_t t, void *x, size_t count, int n) {
    size_t i;
    for (i = 0; i < count; i++) {
        if (t == ncclInt64) ((int64_t *)x)[i] /= n;
        else if (t == ncclUint64) ((uint64_t *)x)[i] /= (uint64_t)n;
        else dtnc_st(t, x, i, (double)((int64_t)dtnc_ld(t, x, i) / n));
    }
}

/* ------------------------------------------------------------ calls and groups */

typedef enum { DTNC_SEND, DTNC_RECV, DTNC_ALLREDUCE, DTNC_REDUCESCATTER, DTNC_ALLGATHER, DTNC_BROADCAST } dtnc_kind;

typedef struct {
    dtnc_kind kind;
    const void *sb;
    void *rb;
    size_t count;
    ncclDataType_t t;
    ncclRedOp_t op;
    int peer; /* send/recv: the peer; broadcast: the root */
    ncclComm_t comm;
    cudaStream_t stream;
    size_t rbytes; /* the receive buffer's bytes */
    void *rdev;    /* while the group runs: the device receive buffer (rb is its host copy) */
} dtnc_call;

static thread_local int dtnc_depth = 0;
static thread_local dtnc_call *dtnc_q = NULL;
static thread_local int dtnc_nq = 0, dtnc_capq = 0;
static thread_local ncclResult_t dtnc_qerr = ncclSuccess;

/* one rank's byte pieces, in chunks MPI counts can hold */
#define DTNC_CHUNK ((size_t)1 << 20)
/* a send or recv in MPI messages of at most this many bytes */
#define DTNC_PIECE ((size_t)1 << 30)

#ifndef DTENSOR_NO_MPI
/* chunk by chunk: the chunk cut into n blocks, block j of every rank sent
   to rank j (MPI_Alltoall), combined there in rank order, and the reduced
   blocks gathered by all (MPI_Allgather): every rank gets the same bits */
static inline ncclResult_t dtnc_run_allreduce(const dtnc_call *c) {
    size_t es = dtnc_size(c->t), per = DTNC_CHUNK / es, n = (size_t)c->comm->size, off;
    size_t bmax = (per + n - 1) / n;
    char *pack = (char *)calloc(n * bmax, es), *tmp = (char *)malloc(n * bmax * es);
    int j;
    if (!pack || !tmp) {
        free(pack), free(tmp);
        return dtnc_fail(ncclSystemError, "ncclAllReduce: out of host memory");
    }
    for (off = 0; off < c->count; off += per) {
        size_t k = c->count - off < per ? c->count - off : per, b = (k + n - 1) / n;
        memset(pack, 0, n * b * es); /* the last block's padding */
        memcpy(pack, (const char *)c->sb + off * es, k * es);
        if (c->op == ncclAvg && dtnc_is_float(c->t)) dtnc_premul(c->t, pack, k, (int)n);
        MPI_Alltoall(pack, (int)(b * es), MPI_BYTE, tmp, (int)(b * es), MPI_BYTE, c->comm->mpi);
        for (j = 1; j < (int)n; j++) dtnc_combine(c->t, c->op, tmp, tmp + (size_t)j * b * es, b);
        if (c->op == ncclAvg && !dtnc_is_float(c->t)) dtnc_postdiv(c->t, tmp, b, (int)n);
        MPI_Allgather(tmp, (int)(b * es), MPI_BYTE, pack, (int)(b * es), MPI_BYTE, c->comm->mpi);
        memcpy((char *)c->rb + off * es, pack, k * es);
    }
    free(pack), free(tmp);
    return ncclSuccess;
}

/* block j of every rank's input goes to rank j, then combined in rank order */
static inline ncclResult_t dtnc_run_reducescatter(const dtnc_call *c) {
    size_t es = dtnc_size(c->t), per = DTNC_CHUNK / es, off, n = (size_t)c->comm->size;
    char *pack = (char *)malloc(n * per * es), *tmp = (char *)malloc(n * per * es), *out = (char *)malloc(per * es);
    int j;
    if (!pack || !tmp || !out) {
        free(pack), free(tmp), free(out);
        return dtnc_fail(ncclSystemError, "ncclReduceScatter: out of host memory");
    }
    for (off = 0; off < c->count; off += per) {
        size_t k = c->count - off < per ? c->count - off : per;
        for (j = 0; j < (int)n; j++) {
            memcpy(pack + (size_t)j * k * es, (const char *)c->sb + ((size_t)j * c->count + off) * es, k * es);
            if (c->op == ncclAvg && dtnc_is_float(c->t)) dtnc_premul(c->t, pack + (size_t)j * k * es, k, (int)n);
        }
        MPI_Alltoall(pack, (int)(k * es), MPI_BYTE, tmp, (int)(k * es), MPI_BYTE, c->comm->mpi);
        memcpy(out, tmp, k * es);
        for (j = 1; j < (int)n; j++) dtnc_combine(c->t, c->op, out, tmp + (size_t)j * k * es, k);
        if (c->op == ncclAvg && !dtnc_is_float(c->t)) dtnc_postdiv(c->t, out, k, (int)n);
        memcpy((char *)c->rb + off * es, out, k * es);
    }
    free(pack), free(tmp), free(out);
    return ncclSuccess;
}

static inline ncclResult_t dtnc_run_allgather(const dtnc_call *c) {
    size_t es = dtnc_size(c->t), bytes = c->count * es, off, n = (size_t)c->comm->size;
    char *tmp = (char *)malloc(n * DTNC_CHUNK), *mine = (char *)malloc(DTNC_CHUNK);
    int j;
    if (!tmp || !mine) {
        free(tmp), free(mine);
        return dtnc_fail(ncclSystemError, "ncclAllGather: out of host memory");
    }
    for (off = 0; off < bytes; off += DTNC_CHUNK) {
        size_t k = bytes - off < DTNC_CHUNK ? bytes - off : DTNC_CHUNK;
        memcpy(mine, (const char *)c->sb + off, k);
        MPI_Allgather(mine, (int)k, MPI_BYTE, tmp, (int)k, MPI_BYTE, c->comm->mpi);
        for (j = 0; j < (int)n; j++) memcpy((char *)c->rb + (size_t)j * bytes + off, tmp + (size_t)j * k, k);
    }
    free(tmp), free(mine);
    return ncclSuccess;
}

static inline ncclResult_t dtnc_run_broadcast(const dtnc_call *c) {
    size_t bytes = c->count * dtnc_size(c->t), off;
    if (c->comm->rank == c->peer && c->sb != c->rb) memmove(c->rb, c->sb, bytes);
    for (off = 0; off < bytes; off += DTNC_CHUNK) {
        size_t k = bytes - off < DTNC_CHUNK ? bytes - off : DTNC_CHUNK;
        MPI_Bcast((char *)c->rb + off, (int)k, MPI_BYTE, c->peer, c->comm->mpi);
    }
    return ncclSuccess;
}
#endif

/* one rank: what each collective leaves, including NCCL's one-rank ncclAvg
   split (see the top of this file) */
static inline ncclResult_t dtnc_run_one_rank(const dtnc_call *c) {
    size_t es = dtnc_size(c->t), bytes = c->count * es;
    if (c->kind == DTNC_BROADCAST || c->kind == DTNC_ALLGATHER || c->op != ncclAvg || !dtnc_is_float(c->t)) {
        if (c->rb != c->sb) memmove(c->rb, c->sb, bytes);
        return ncclSuccess;
    }
    {
        size_t blocks = (bytes + (16u << 10) - 1) / (16u << 10), seg, pack = 16 / es;
        if (blocks > 32) blocks = 32;
        if (blocks < 1) blocks = 1;
        seg = (c->count / blocks + pack - 1) / pack * pack;
        if (seg * blocks < c->count) bytes = seg * blocks * es; /* the tail no block covers stays unwritten */
        if (c->rb != c->sb) memmove(c->rb, c->sb, bytes);
    }
    return ncclSuccess;
}

static inline ncclResult_t dtnc_run(const dtnc_call *c) {
    if (c->kind == DTNC_SEND || c->kind == DTNC_RECV) return ncclSuccess; /* posted by dtnc_flush */
    if (!c->count) return ncclSuccess;
    if (c->comm->size == 1) return dtnc_run_one_rank(c);
#ifndef DTENSOR_NO_MPI
    switch (c->kind) {
    case DTNC_ALLREDUCE: return dtnc_run_allreduce(c);
    case DTNC_REDUCESCATTER: return dtnc_run_reducescatter(c);
    case DTNC_ALLGATHER: return dtnc_run_allgather(c);
    case DTNC_BROADCAST: return dtnc_run_broadcast(c);
    default: break;
    }
#endif
    return dtnc_fail(ncclInternalError, "stand-in: call kind %d", (int)c->kind);
}

/* a group's sends to this rank itself meet its recvs from itself in
   issue order (per communicator), as NCCL matches them */
static inline ncclResult_t dtnc_match_self(void) {
    int i, j;
    for (i = 0; i < dtnc_nq; i++) {
        const dtnc_call *s = &dtnc_q[i];
        if (s->kind != DTNC_SEND || s->peer != s->comm->rank) continue;
        for (j = 0; j < dtnc_nq; j++) {
            dtnc_call *r = &dtnc_q[j];
            if (r->kind == DTNC_RECV && r->comm == s->comm && r->peer == r->comm->rank) break;
        }
        if (j == dtnc_nq) return dtnc_fail(ncclInvalidUsage, "ncclSend to itself without a matching ncclRecv");
        if (dtnc_q[j].count * dtnc_size(dtnc_q[j].t) != s->count * dtnc_size(s->t))
            return dtnc_fail(ncclInvalidUsage, "ncclSend/ncclRecv to itself of different sizes");
        memmove(dtnc_q[j].rb, s->sb, s->count * dtnc_size(s->t));
        dtnc_q[j].peer = -1; /* matched */
    }
    for (j = 0; j < dtnc_nq; j++)
        if (dtnc_q[j].kind == DTNC_RECV && dtnc_q[j].peer == dtnc_q[j].comm->rank)
            return dtnc_fail(ncclInvalidUsage, "ncclRecv from itself without a matching ncclSend");
    return ncclSuccess;
}

/* the group's inputs: the queued work of its calls' streams, run now */
static inline void dtnc_run_inputs(void) {
    int i;
    for (i = 0; i < dtnc_nq; i++) dtcu_run_stream(dtcu_stream_of(dtnc_q[i].stream));
}

/* each receive buffer swapped for a host copy of it (what NCCL leaves
   unwritten keeps its old bytes); the copies go in `stage` */
static inline void dtnc_stage_outputs(std::vector<std::vector<char>> &stage) {
    int i;
    stage.resize((size_t)dtnc_nq);
    for (i = 0; i < dtnc_nq; i++) {
        dtnc_call *c = &dtnc_q[i];
        c->rdev = NULL;
        if (!c->rb || !c->rbytes) continue;
        stage[(size_t)i].assign((const char *)c->rb, (const char *)c->rb + c->rbytes);
        c->rdev = c->rb;
        c->rb = stage[(size_t)i].data();
    }
}

/* the stores of the results, queued on each call's stream */
static inline void dtnc_store_outputs(std::vector<std::vector<char>> &stage) {
    int i;
    for (i = 0; i < dtnc_nq; i++) {
        void *dst = dtnc_q[i].rdev;
        if (!dst) continue;
        std::vector<char> bytes;
        bytes.swap(stage[(size_t)i]);
        dtcu_enqueue(dtcu_stream_of(dtnc_q[i].stream), [dst, bytes]() { memcpy(dst, bytes.data(), bytes.size()); });
    }
}

/* the results stored now (a graph's replay, whose nodes run in order) */
static inline void dtnc_store_now(std::vector<std::vector<char>> &stage) {
    int i;
    for (i = 0; i < dtnc_nq; i++)
        if (dtnc_q[i].rdev) memcpy(dtnc_q[i].rdev, stage[(size_t)i].data(), stage[(size_t)i].size());
}

/* The queued group: inputs run, sends and recvs posted, collectives in
   order, wait; the results stored in stream order (see the top), or at
   once when a graph replays the group (`replay`: its inputs are the
   graph's earlier nodes, already run). */
static inline ncclResult_t dtnc_move(int replay) {
    ncclResult_t r = dtnc_qerr;
    std::vector<std::vector<char>> stage;
    int i;
#ifndef DTENSOR_NO_MPI
    /* each message in pieces an int count holds */
    size_t npieces = 0, np = 0;
    MPI_Request *rq;
    for (i = 0; i < dtnc_nq; i++)
        if ((dtnc_q[i].kind == DTNC_SEND || dtnc_q[i].kind == DTNC_RECV) && dtnc_q[i].peer != dtnc_q[i].comm->rank)
            npieces += (dtnc_q[i].count * dtnc_size(dtnc_q[i].t) + DTNC_PIECE - 1) / DTNC_PIECE;
    rq = (MPI_Request *)malloc((npieces ? npieces : 1) * sizeof *rq);
    if (!rq) r = dtnc_fail(ncclSystemError, "ncclGroupEnd: out of host memory");
#endif
    if (!replay) dtnc_run_inputs();
    dtcu_enter();
    dtnc_stage_outputs(stage);
    for (i = 0; i < dtnc_nq && !r; i++) {
        const dtnc_call *c = &dtnc_q[i];
        if (c->kind != DTNC_SEND && c->kind != DTNC_RECV) continue;
        if (c->peer == c->comm->rank) continue; /* matched below */
#ifndef DTENSOR_NO_MPI
        {
            size_t bytes = c->count * dtnc_size(c->t), off;
            for (off = 0; off < bytes; off += DTNC_PIECE) {
                int k = (int)(bytes - off < DTNC_PIECE ? bytes - off : DTNC_PIECE);
                if (c->kind == DTNC_SEND)
                    MPI_Isend((const char *)c->sb + off, k, MPI_BYTE, c->peer, 0, c->comm->mpi, &rq[np++]);
                else
                    MPI_Irecv((char *)c->rb + off, k, MPI_BYTE, c->peer, 0, c->comm->mpi, &rq[np++]);
            }
        }
#endif
    }
    if (!r) r = dtnc_match_self();
    for (i = 0; i < dtnc_nq && !r; i++) r = dtnc_run(&dtnc_q[i]);
#ifndef DTENSOR_NO_MPI
    if (np) MPI_Waitall((int)np, rq, MPI_STATUSES_IGNORE);
    free(rq);
#endif
    if (!r && replay) dtnc_store_now(stage);
    else if (!r) dtnc_store_outputs(stage); /* a failed group stores nothing */
    dtcu_leave();
    return r;
}

/* A group whose stream is being captured becomes one node of the graph:
   a copy of its calls, moved when the graph replays (all its calls on that
   one stream, as a captured group must be here). */
static inline ncclResult_t dtnc_capture(void) {
    std::vector<dtnc_call> calls(dtnc_q, dtnc_q + dtnc_nq);
    struct dtcu_stream *st = dtcu_stream_of(dtnc_q[0].stream);
    int i;
    for (i = 1; i < dtnc_nq; i++)
        if (dtcu_stream_of(dtnc_q[i].stream) != st)
            return dtnc_fail(ncclInvalidUsage, "stand-in: a captured group spans several streams");
    dtcu_enqueue(st, [calls]() {
        dtnc_call *q = dtnc_q;
        int n = dtnc_nq;
        std::vector<dtnc_call> mine(calls);
        dtnc_q = mine.data();
        dtnc_nq = (int)mine.size();
        if (dtnc_move(1) != ncclSuccess) fprintf(stderr, "tests/standin: a replayed NCCL group failed\n");
        dtnc_q = q;
        dtnc_nq = n;
    });
    return ncclSuccess;
}

static inline ncclResult_t dtnc_flush(void) {
    ncclResult_t r = dtnc_qerr;
    int i, captured = 0;
    for (i = 0; i < dtnc_nq; i++) captured |= dtcu_captured(dtcu_stream_of(dtnc_q[i].stream));
    if (!r && dtnc_nq) r = captured ? dtnc_capture() : dtnc_move(0);
    dtnc_nq = 0;
    dtnc_qerr = ncclSuccess;
    return r;
}

static inline ncclResult_t ncclGroupStart(void) {
    dtnc_depth++;
    return ncclSuccess;
}
static inline ncclResult_t ncclGroupEnd(void) {
    if (dtnc_depth == 0) return dtnc_fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
    if (--dtnc_depth > 0) return ncclSuccess;
    return dtnc_flush();
}

/* checks a call's arguments and queues it (runs it at once outside a group) */
static inline ncclResult_t dtnc_call_add(const char *fn, dtnc_call c, size_t sbytes, size_t rbytes) {
    size_t es = dtnc_size(c.t);
    int rs, rr;
    if (!c.comm) return dtnc_fail(ncclInvalidArgument, "%s: comm is NULL", fn);
    if (!dtcu_stream_of(c.stream)) return dtnc_fail(ncclInvalidArgument, "%s: invalid stream", fn);
    if (!es) return dtnc_fail(ncclInvalidArgument, "%s: invalid data type %d", fn, (int)c.t);
    if ((unsigned)c.op > (unsigned)ncclAvg) return dtnc_fail(ncclInvalidArgument, "%s: invalid op %d", fn, (int)c.op);
    if ((c.kind == DTNC_SEND || c.kind == DTNC_RECV || c.kind == DTNC_BROADCAST) &&
        (c.peer < 0 || c.peer >= c.comm->size))
        return dtnc_fail(ncclInvalidArgument, "%s: peer/root %d of %d ranks", fn, c.peer, c.comm->size);
    if (dtcu_injected(fn)) return dtnc_fail(ncclUnhandledCudaError, "%s: injected failure", fn);
    rs = sbytes ? dtcu_range(c.sb, sbytes) : 1;
    rr = rbytes ? dtcu_range(c.rb, rbytes) : 1;
    if (rs != 1 || rr != 1)
        return dtnc_fail(ncclInvalidArgument, "%s: %s buffer %p (%zu bytes) %s", fn, rs != 1 ? "send" : "receive",
                         rs != 1 ? c.sb : (const void *)c.rb, rs != 1 ? sbytes : rbytes,
                         (rs != 1 ? rs : rr) == 0 ? "is not device memory" : "runs past its device allocation");
    if (dtnc_nq == dtnc_capq) {
        int cap = dtnc_capq ? 2 * dtnc_capq : 16;
        dtnc_call *q = (dtnc_call *)realloc(dtnc_q, (size_t)cap * sizeof *q);
        if (!q) return dtnc_fail(ncclSystemError, "%s: out of host memory", fn);
        dtnc_q = q;
        dtnc_capq = cap;
    }
    c.rbytes = rbytes;
    dtnc_q[dtnc_nq++] = c;
    return dtnc_depth ? ncclSuccess : dtnc_flush();
}

static inline dtnc_call dtnc_make(dtnc_kind k, const void *sb, void *rb, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                  int peer, ncclComm_t comm, cudaStream_t s) {
    dtnc_call c;
    c.kind = k, c.sb = sb, c.rb = rb, c.count = count, c.t = t, c.op = op, c.peer = peer, c.comm = comm;
    c.stream = s, c.rbytes = 0, c.rdev = NULL;
    return c;
}

/* a failure inside a group is reported by its call and by ncclGroupEnd */
static inline ncclResult_t dtnc_add(const char *fn, dtnc_call c, size_t sbytes, size_t rbytes) {
    ncclResult_t r = dtnc_call_add(fn, c, sbytes, rbytes);
    if (r && dtnc_depth && !dtnc_qerr) dtnc_qerr = r;
    return r;
}

static inline ncclResult_t ncclSend(const void *buf, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                                    cudaStream_t s) {
    size_t b = count * dtnc_size(t);
    return dtnc_add("ncclSend", dtnc_make(DTNC_SEND, buf, NULL, count, t, ncclSum, peer, comm, s), b, 0);
}
static inline ncclResult_t ncclRecv(void *buf, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                                    cudaStream_t s) {
    size_t b = count * dtnc_size(t);
    return dtnc_add("ncclRecv", dtnc_make(DTNC_RECV, NULL, buf, count, t, ncclSum, peer, comm, s), 0, b);
}
static inline ncclResult_t ncclAllReduce(const void *sb, void *rb, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                         ncclComm_t comm, cudaStream_t s) {
    size_t b = count * dtnc_size(t);
    return dtnc_add("ncclAllReduce", dtnc_make(DTNC_ALLREDUCE, sb, rb, count, t, op, 0, comm, s), b, b);
}
static inline ncclResult_t ncclReduceScatter(const void *sb, void *rb, size_t recvcount, ncclDataType_t t,
                                             ncclRedOp_t op, ncclComm_t comm, cudaStream_t s) {
    size_t b = recvcount * dtnc_size(t), n = comm ? (size_t)comm->size : 1;
    return dtnc_add("ncclReduceScatter", dtnc_make(DTNC_REDUCESCATTER, sb, rb, recvcount, t, op, 0, comm, s), b * n,
                    b);
}
static inline ncclResult_t ncclAllGather(const void *sb, void *rb, size_t sendcount, ncclDataType_t t, ncclComm_t comm,
                                         cudaStream_t s) {
    size_t b = sendcount * dtnc_size(t), n = comm ? (size_t)comm->size : 1;
    return dtnc_add("ncclAllGather", dtnc_make(DTNC_ALLGATHER, sb, rb, sendcount, t, ncclSum, 0, comm, s), b, b * n);
}
static inline ncclResult_t ncclBroadcast(const void *sb, void *rb, size_t count, ncclDataType_t t, int root,
                                         ncclComm_t comm, cudaStream_t s) {
    size_t b = count * dtnc_size(t);
    int is_root = comm && comm->rank == root;
    return dtnc_add("ncclBroadcast", dtnc_make(DTNC_BROADCAST, sb, rb, count, t, ncclSum, root, comm, s), is_root ? b : 0,
                    b);
}

#endif /* DTCU_STANDIN_NCCL_H */

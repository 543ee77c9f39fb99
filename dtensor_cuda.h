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
   - Except a halo exchange: dt_halo_exchange_begin forks its work (one
     fused copy launch, NCCL's messages) onto the library's communication
     stream after an event on dt_cuda_stream(); _end joins it back (the
     unpack launch, then dt_cuda_stream() waits for an event). A kernel the
     program launches on dt_cuda_stream() in between runs alongside the
     exchange; between them the program must not write the interior cells
     sent nor touch the ghost cells.
   - Calls that only enqueue device work return before it has run: ops,
     redistributions over NCCL, random fills, halo exchanges over NCCL.
     Work the caller enqueues on the same stream afterwards sees their
     results; work on another stream must wait for an event recorded on
     dt_cuda_stream().
   - Calls that hand data to the host synchronise the stream before they
     return: dt_tensor_gather / dt_tensor_distribute with host `full`,
     dt_tensor_from_local with DT_COPY from host memory, redistributions
     and halo exchanges staged through plain MPI, the .npy functions.
   - CUDA graphs: a planned halo exchange over NCCL (or device-memory MPI),
     after its first call, neither waits nor allocates, so steps may be
     captured on dt_cuda_stream() (cudaStreamBeginCapture) and replayed.
     A call that would wait or allocate during a capture returns
     DT_ERR_DEVICE instead ("cannot run while dt_cuda_stream() is captured").
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
#if defined(DTENSOR_IMPLEMENTATION) && !defined(DTENSOR_IMPLEMENTATION_LINKED)
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

/* launch one of the program's kernels on dt_cuda_stream(), after what
   dtensor has enqueued there: a dt_stencil_apply callback on a device
   tensor, or the interior kernel between dt_halo_exchange_begin and _end.
       DT_CUDA_LAUNCH(my_kernel, blocks, threads, arg0, arg1);
   (tests/standin/ defines it to run the kernel on the CPU) */
#ifndef DT_CUDA_LAUNCH
#define DT_CUDA_LAUNCH(kernel, grid, block, ...) kernel<<<(grid), (block), 0, dt_cuda_stream()>>>(__VA_ARGS__)
#endif

/* an NCCL communicator as a dtensor backend: device buffers only, all work
   on `stream` (which also becomes dt_cuda_stream()). The ncclComm_t stays
   the caller's; mesh sub-communicators come from ncclCommSplit and are
   destroyed with the dt_comm. */
DT_API dt_status dt_comm_nccl(ncclComm_t comm, cudaStream_t stream, dt_comm **out);

#ifdef __cplusplus
}
#endif
#endif /* DTENSOR_CUDA_H */

#if defined(DTENSOR_IMPLEMENTATION) && !defined(DTENSOR_CUDA_IMPLEMENTATION_DONE) && !defined(DTENSOR_IMPLEMENTATION_LINKED)
#define DTENSOR_CUDA_IMPLEMENTATION_DONE

/* >>cuda-device -------------------------------------------------------------
   memory, stream, allocator hook, errors: the dt__device of DT_CUDA */
#include <cublas_v2.h>

/* __host__ __device__ helpers: the element and index math of the kernels is
   written once and runs on both sides, so tests/test_cuda_host.cu can check
   it on a machine without a GPU against the host kernels of dtensor.h */
#define DT__CU_HD static __host__ __device__ inline
#define DT__CU_THREADS 256

/* every kernel launch goes through here; tests/standin/cuda_runtime.h
   defines it to run the kernel on the CPU, block by block */
#ifndef DT__CU_START
#define DT__CU_START(kernel, grid, block, ...) kernel<<<grid, block, 0, dt__cu_stream_v>>>(__VA_ARGS__)
#endif

/* ---- stream, allocator, the first asynchronous error ---- */

static cudaStream_t dt__cu_stream_v = 0;          /* dt_cuda_set_stream's; 0: legacy default */
static dt_cuda_allocator dt__cu_allocator_v;       /* zero fields: cudaMalloc / cudaFree      */
static cudaError_t dt__cu_pending = cudaSuccess;   /* a launch error no sync has reported yet */

DT_API void dt_cuda_set_stream(cudaStream_t s) { dt__cu_stream_v = s; }
DT_API cudaStream_t dt_cuda_stream(void) { return dt__cu_stream_v; }

DT_API void dt_cuda_set_allocator(const dt_cuda_allocator *a) {
    if (a && a->alloc && a->free) dt__cu_allocator_v = *a;
    else memset(&dt__cu_allocator_v, 0, sizeof dt__cu_allocator_v);
}

/* Kernels return void: a launch failure is kept (the first one) and
   reported by the next sync, as the asynchronous faults are. */
static void dt__cu_note(cudaError_t e) {
    if (e != cudaSuccess && dt__cu_pending == cudaSuccess) dt__cu_pending = e;
}
static void dt__cu_check_launch(void) { dt__cu_note(cudaGetLastError()); }

/* blocks for a grid-stride loop over n items: enough to fill the GPU a few
   times over, no more (each thread then loops) */
static unsigned dt__cu_blocks(uint64_t n) {
    static int cap = 0;
    uint64_t b = (n + DT__CU_THREADS - 1) / DT__CU_THREADS;
    if (!cap) {
        int dev = 0, sms = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms <= 0) {
            (void)cudaGetLastError();
            sms = 132;
        }
        cap = sms * 32;
    }
    if (b < 1) b = 1;
    return (unsigned)(b < (uint64_t)cap ? b : (uint64_t)cap);
}

/* ---- memory ---- */

/* DT_OK unless dt_cuda_stream() (or the communication stream, during an
   exchange) is being captured into a CUDA graph: a call that allocates,
   waits for the device or reads device data on the host cannot be part of
   one, and says so before CUDA would invalidate the capture */
static dt_status dt__cu_uncaptured(const char *fn, const char *what) {
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(dt__cu_stream_v, &cs) != cudaSuccess) {
        (void)cudaGetLastError();
        return DT_OK;
    }
    if (cs == cudaStreamCaptureStatusNone) return DT_OK;
    return dt__fail(DT_ERR_DEVICE,
                    "%s: cannot run while dt_cuda_stream() is captured into a CUDA graph: it %s (capture only "
                    "calls that just enqueue device work: a planned halo exchange over NCCL or device-memory "
                    "MPI after its first call, ops into an existing *out; see docs/gpu.md)", fn, what);
}

static dt_status dt__cu_alloc(const char *fn, size_t bytes, void **p) {
    cudaError_t e;
    dt_status st;
    *p = NULL;
    if ((st = dt__cu_uncaptured(fn, "allocates device memory"))) return st;
    if (dt__cu_allocator_v.alloc) {
        *p = dt__cu_allocator_v.alloc(bytes ? bytes : 1, dt__cu_allocator_v.user);
        if (!*p) {
            /* a hook over cudaMalloc leaves its out-of-memory as CUDA's last
               error: clear it, or the next sync reports it as a fault of
               whatever call comes next (the stand-in's fault sweep saw this) */
            (void)cudaGetLastError();
            return dt__fail(DT_ERR_NOMEM, "%s: the dt_cuda_allocator failed to allocate %zu bytes", fn, bytes);
        }
        return DT_OK;
    }
    e = cudaMalloc(p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* an out-of-memory is not sticky: leave no error behind */
        *p = NULL;
        return dt__fail(e == cudaErrorMemoryAllocation ? DT_ERR_NOMEM : DT_ERR_DEVICE,
                        "%s: cudaMalloc of %zu bytes: %s", fn, bytes, cudaGetErrorString(e));
    }
    return DT_OK;
}

static void dt__cu_free(void *p) {
    if (!p) return;
    if (dt__cu_allocator_v.free) dt__cu_allocator_v.free(p, dt__cu_allocator_v.user);
    else (void)cudaFree(p);
}

static dt_status dt__cu_alloc_host(const char *fn, size_t bytes, void **p) {
    cudaError_t e;
    dt_status st;
    *p = NULL;
    if ((st = dt__cu_uncaptured(fn, "allocates pinned host memory"))) return st;
    if ((e = cudaMallocHost(p, bytes ? bytes : 1)) != cudaSuccess) {
        (void)cudaGetLastError();
        *p = NULL;
        return dt__fail(e == cudaErrorMemoryAllocation ? DT_ERR_NOMEM : DT_ERR_DEVICE,
                        "%s: cudaMallocHost of %zu bytes: %s", fn, bytes, cudaGetErrorString(e));
    }
    return DT_OK;
}

static void dt__cu_free_host(void *p) {
    if (p) (void)cudaFreeHost(p);
}

/* device or managed memory is ours; host, pinned host and unknown pointers
   are host memory to the copies. A failed query leaves an error that the
   next cudaGetLastError would report: clear it. */
static int dt__cu_owns(const void *p) {
    struct cudaPointerAttributes at;
    if (!p) return 0;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return at.type == cudaMemoryTypeDevice || at.type == cudaMemoryTypeManaged;
}

static dt_status dt__cu_err(const char *fn, const char *what, cudaError_t e) {
    (void)cudaGetLastError();
    return dt__fail(DT_ERR_DEVICE, "%s: %s: %s", fn, what, cudaGetErrorString(e));
}

/* waits for the stream; reports the first error since the last sync: an
   asynchronous fault, or a launch that failed (kept by dt__cu_note) */
static dt_status dt__cu_sync(const char *fn) {
    cudaError_t e, late;
    dt_status st;
    if ((st = dt__cu_uncaptured(fn, "waits for the device"))) return st;
    e = cudaStreamSynchronize(dt__cu_stream_v);
    late = cudaGetLastError();
    if (e == cudaSuccess) e = dt__cu_pending;
    if (e == cudaSuccess) e = late;
    dt__cu_pending = cudaSuccess;
    if (e != cudaSuccess) return dt__fail(DT_ERR_DEVICE, "%s: CUDA: %s", fn, cudaGetErrorString(e));
    return DT_OK;
}

/* device-to-device stays asynchronous on the stream; a host side must be
   safe to read or reuse on return, so then the stream is synchronised --
   and, as every sync, reports a kernel that failed before the copy (its
   output is what the host would read) */
static dt_status dt__cu_copy(const char *fn, void *dst, const void *src, size_t bytes) {
    cudaError_t e;
    dt_status st;
    int host;
    if (!bytes || dst == src) return DT_OK;
    host = !dt__cu_owns(dst) || !dt__cu_owns(src);
    if (host && (st = dt__cu_uncaptured(fn, "copies between host and device memory and waits"))) return st;
    e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, dt__cu_stream_v);
    if (e != cudaSuccess) return dt__cu_err(fn, "cudaMemcpyAsync", e);
    return host ? dt__cu_sync(fn) : DT_OK;
}

/* both sides device memory (the kernels' and copy_box's contract): no
   pointer queries, never a wait */
static dt_status dt__cu_d2d(const char *fn, void *dst, const void *src, size_t bytes) {
    cudaError_t e;
    if (!bytes || dst == src) return DT_OK;
    e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, dt__cu_stream_v);
    return e == cudaSuccess ? DT_OK : dt__cu_err(fn, "cudaMemcpyAsync", e);
}

static dt_status dt__cu_zero(const char *fn, void *p, size_t bytes) {
    cudaError_t e;
    if (!bytes) return DT_OK;
    e = cudaMemsetAsync(p, 0, bytes, dt__cu_stream_v);
    return e == cudaSuccess ? DT_OK : dt__cu_err(fn, "cudaMemsetAsync", e);
}

/* ---- the communication stream ----
   A halo exchange's device work (its copies, NCCL's messages) runs on a
   stream of the library's, created at the first exchange and kept: FORK
   records an event on the program's stream and makes the communication
   stream wait for it, then points dt__cu_stream_v (where every kernel,
   copy and NCCL call of the library goes) at the communication stream; OFF
   points it back; JOIN records an event there and makes the program's
   stream wait for it. Non-blocking, so that the legacy default stream does
   not serialise the two. Only events between them: nothing waits on the
   host, and a CUDA graph capture of the program's stream follows the
   fork into the communication stream and back. */
static cudaStream_t dt__cu_comm_v, dt__cu_user_v; /* the communication stream; the program's, while away */
static cudaEvent_t dt__cu_fork_v, dt__cu_join_v;
static int dt__cu_away = 0;                       /* dt__cu_stream_v is the communication stream */

static dt_status dt__cu_side_make(const char *fn) {
    cudaError_t e;
    if (dt__cu_comm_v) return DT_OK;
    if ((e = cudaEventCreateWithFlags(&dt__cu_fork_v, cudaEventDisableTiming)) != cudaSuccess ||
        (e = cudaEventCreateWithFlags(&dt__cu_join_v, cudaEventDisableTiming)) != cudaSuccess ||
        (e = cudaStreamCreateWithFlags(&dt__cu_comm_v, cudaStreamNonBlocking)) != cudaSuccess) {
        (void)cudaGetLastError();
        dt__cu_comm_v = 0;
        return dt__fail(DT_ERR_DEVICE, "%s: the communication stream could not be made: %s", fn,
                        cudaGetErrorString(e));
    }
    return DT_OK;
}

static dt_status dt__cu_side(const char *fn, int how) {
    cudaError_t e = cudaSuccess;
    dt_status st;
    if (how == DT__SIDE_FORK) {
        if ((st = dt__cu_side_make(fn))) return st;
        if (dt__cu_away) return dt__fail(DT_ERR_DEVICE, "%s: already on the communication stream", fn);
        if ((e = cudaEventRecord(dt__cu_fork_v, dt__cu_stream_v)) != cudaSuccess ||
            (e = cudaStreamWaitEvent(dt__cu_comm_v, dt__cu_fork_v, 0)) != cudaSuccess)
            return dt__cu_err(fn, "ordering the communication stream after the program's", e);
        how = DT__SIDE_ON;
    }
    if (how == DT__SIDE_ON && !dt__cu_away && dt__cu_comm_v) {
        dt__cu_user_v = dt__cu_stream_v;
        dt__cu_stream_v = dt__cu_comm_v;
        dt__cu_away = 1;
    }
    if (how == DT__SIDE_JOIN && dt__cu_away) e = cudaEventRecord(dt__cu_join_v, dt__cu_comm_v);
    if ((how == DT__SIDE_OFF || how == DT__SIDE_JOIN) && dt__cu_away) {
        dt__cu_stream_v = dt__cu_user_v;
        dt__cu_away = 0;
        if (how == DT__SIDE_JOIN && e == cudaSuccess) e = cudaStreamWaitEvent(dt__cu_stream_v, dt__cu_join_v, 0);
    }
    return e == cudaSuccess ? DT_OK : dt__cu_err(fn, "ordering the program's stream after the communication stream", e);
}

/* ---- strided box copy (pack / unpack) ----
   The plan of dt__copy_box: the innermost dims that are one span on both
   sides (row-major: whole in the box and in both arrays) fold into one
   contiguous span -- for a strided array whose innermost dim is not
   unit-stride, the span is one element; the remaining outer dims are
   merged where both sides step through them as one. The span moves in
   units of `vec` bytes (16, 8, 4, 2 or 1: the widest that the span length,
   both start addresses and every outer stride allow), so a thread moves
   one uint4 where it can. Unit u of the copy is row u / nunit, unit
   u % nunit of that row. */
typedef struct dt__cu_boxplan {
    const char *src;
    char *dst;
    int nd;                               /* outer dims after merging (0: one row) */
    int64_t ext[DT_MAX_DIMS];
    int64_t ss[DT_MAX_DIMS], ds[DT_MAX_DIMS]; /* byte strides of the outer dims */
    uint64_t rows, nunit;                 /* rows, units per row                   */
    unsigned vec;                         /* bytes per unit                        */
} dt__cu_boxplan;

/* host side: 0 when there is nothing to copy */
static int dt__cu_boxplan_make(const dt__array *s, const dt__array *d, const dt__box *p, dt__cu_boxplan *pl) {
    size_t ss[DT_MAX_DIMS] = {0}, ds[DT_MAX_DIMS] = {0}, span = s->es, so = 0, doff = 0, align;
    int k = s->ndim, j, n = 0;
    unsigned v;
    if (dt__box_numel(s->ndim, p) == 0) return 0;
    if (k > 0) {
        dt__array_strides(s, ss);
        dt__array_strides(d, ds);
        while (k > 0 && ss[k - 1] == span && ds[k - 1] == span) span *= (size_t)p->ext[--k];
        so = dt__array_offset(s, ss, p);
        doff = dt__array_offset(d, ds, p);
    }
    /* outer dims 0..k-1, extent 1 dropped, neighbours merged when both
       strides nest (the pencil piece [N, N, N/p] of [N, N, N] is one dim) */
    pl->rows = 1;
    for (j = 0; j < k; j++) {
        int64_t e = p->ext[j];
        if (e == 1) continue;
        if (n > 0 && pl->ss[n - 1] == (int64_t)ss[j] * e && pl->ds[n - 1] == (int64_t)ds[j] * e) {
            pl->ext[n - 1] *= e;
        } else {
            pl->ext[n] = e;
            n++;
        }
        pl->ss[n - 1] = (int64_t)ss[j];
        pl->ds[n - 1] = (int64_t)ds[j];
        pl->rows *= (uint64_t)e;
    }
    pl->nd = n;
    pl->src = s->data + so;
    pl->dst = d->data + doff;
    align = (size_t)(uintptr_t)pl->src | (size_t)(uintptr_t)pl->dst | span;
    for (j = 0; j < n; j++) align |= (size_t)pl->ss[j] | (size_t)pl->ds[j];
    for (v = 16; v > 1 && (align & (v - 1)); v >>= 1) {}
    pl->vec = v;
    pl->nunit = span / v;
    return 1;
}

/* byte offsets of row r in the source and the destination */
DT__CU_HD void dt__cu_boxplan_row(const dt__cu_boxplan *pl, uint64_t r, int64_t *so, int64_t *doff) {
    int64_t a = 0, b = 0;
    int j;
    for (j = pl->nd - 1; j >= 0; j--) {
        uint64_t e = (uint64_t)pl->ext[j], i = r % e;
        r /= e;
        a += (int64_t)i * pl->ss[j];
        b += (int64_t)i * pl->ds[j];
    }
    *so = a;
    *doff = b;
}

/* vec bytes from s to d, one move */
DT__CU_HD void dt__cu_move_vec(unsigned vec, char *d, const char *s) {
    switch (vec) {
    case 16: *(uint4 *)(void *)d = *(const uint4 *)(const void *)s; break;
    case 8: *(uint2 *)(void *)d = *(const uint2 *)(const void *)s; break;
    case 4: *(uint32_t *)(void *)d = *(const uint32_t *)(const void *)s; break;
    case 2: *(uint16_t *)(void *)d = *(const uint16_t *)(const void *)s; break;
    default: *d = *s; break;
    }
}

/* move unit u, any number of outer dims */
DT__CU_HD void dt__cu_boxplan_unit(const dt__cu_boxplan *pl, uint64_t u) {
    uint64_t r = u / pl->nunit, c = u - r * pl->nunit;
    int64_t so, doff;
    dt__cu_boxplan_row(pl, r, &so, &doff);
    dt__cu_move_vec(pl->vec, pl->dst + doff + (int64_t)(c * pl->vec), pl->src + so + (int64_t)(c * pl->vec));
}

/* the common case: one outer dim and fewer than 2^32 units, so a 32-bit
   division finds the row (a 64-bit one is a long software sequence) */
DT__CU_HD int dt__cu_boxplan_is_1d(const dt__cu_boxplan *pl) {
    return pl->nd == 1 && pl->rows * pl->nunit <= 0xffffffffu;
}
DT__CU_HD void dt__cu_boxplan_unit_1d(const dt__cu_boxplan *pl, uint32_t u) {
    uint32_t nu = (uint32_t)pl->nunit, r = u / nu, c = u - r * nu;
    dt__cu_move_vec(pl->vec, pl->dst + (int64_t)r * pl->ds[0] + (int64_t)c * pl->vec,
                    pl->src + (int64_t)r * pl->ss[0] + (int64_t)c * pl->vec);
}

__global__ void dt__cu_copy_box_kernel(dt__cu_boxplan pl) {
    uint64_t n = pl.rows * pl.nunit, u = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t step = (uint64_t)gridDim.x * blockDim.x;
    if (dt__cu_boxplan_is_1d(&pl)) {
        for (; u < n; u += step) dt__cu_boxplan_unit_1d(&pl, (uint32_t)u);
        return;
    }
    for (; u < n; u += step) dt__cu_boxplan_unit(&pl, u);
}

/* ---- lists of box copies, fused (dt__copies, >>device) ----
   A list becomes a table of row plans in device memory, each with the
   number of units before it; one grid-stride launch moves them all. Unit u
   of copy i is global unit first[i] + u, and a thread takes the global
   units congruent to its index, so the threads share the units of every
   copy, large or small, in one pass over the table. */
typedef struct dt__cu_fitem {
    dt__cu_boxplan pl;
    uint64_t first;                       /* units of the copies before it */
} dt__cu_fitem;

typedef struct dt__cu_fused {             /* host side */
    dt__cu_fitem *items;                  /* device memory */
    int n;
    uint64_t units;
} dt__cu_fused;

/* (device code only: it reads the launch's geometry) */
static __device__ inline void dt__cu_fused_items(const dt__cu_fitem *items, int n) {
    uint64_t step = (uint64_t)gridDim.x * blockDim.x, t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int i;
    for (i = 0; i < n; i++) {
        const dt__cu_boxplan *pl = &items[i].pl;
        uint64_t units = pl->rows * pl->nunit, u = (t + step - items[i].first % step) % step;
        if (dt__cu_boxplan_is_1d(pl))
            for (; u < units; u += step) dt__cu_boxplan_unit_1d(pl, (uint32_t)u);
        else
            for (; u < units; u += step) dt__cu_boxplan_unit(pl, u);
    }
}

__global__ void dt__cu_fused_kernel(const dt__cu_fitem *items, int n) { dt__cu_fused_items(items, n); }

/* a list for one call (dt__device.run_copies): the table travels as the
   kernel's argument (under CUDA's 4 KiB of parameters), so nothing is
   allocated or copied to the device first */
#define DT__CU_BATCH ((int)((4000 - sizeof(int)) / sizeof(dt__cu_fitem)))
typedef struct dt__cu_batch {
    dt__cu_fitem it[DT__CU_BATCH];
    int n;
} dt__cu_batch;

__global__ void dt__cu_batch_kernel(dt__cu_batch b) { dt__cu_fused_items(b.it, b.n); }

static void dt__cu_unfuse(void *table) {
    dt__cu_fused *f = (dt__cu_fused *)table;
    if (!f) return;
    dt__cu_free(f->items);
    DT_FREE(f);
}

/* the table made and copied to the device once (a plan's set-up: it may wait) */
static dt_status dt__cu_fuse(const char *fn, const dt__copy *c, int n, void **table) {
    dt__cu_fused *f = NULL;
    dt__cu_fitem *h = NULL;
    dt_status st;
    int i, m = 0;
    *table = NULL;
    if ((st = dt__alloc(fn, sizeof *f, (void **)&f))) return st;
    memset(f, 0, sizeof *f);
    if ((st = dt__alloc(fn, (size_t)n * sizeof *h, (void **)&h))) goto done;
    for (i = 0; i < n; i++) {
        if (c[i].s.es > 16) {
            st = dt__fail(DT_ERR_UNSUPPORTED, "%s: %zu-byte elements in a device copy", fn, c[i].s.es);
            goto done;
        }
        memset(&h[m], 0, sizeof h[m]);
        if (!dt__cu_boxplan_make(&c[i].s, &c[i].d, &c[i].p, &h[m].pl)) continue;
        h[m].first = f->units;
        f->units += h[m].pl.rows * h[m].pl.nunit;
        m++;
    }
    f->n = m;
    if (m && ((st = dt__cu_alloc(fn, (size_t)m * sizeof *h, (void **)&f->items)) ||
              (st = dt__cu_copy(fn, f->items, h, (size_t)m * sizeof *h))))
        goto done;
    *table = f;
    f = NULL;
done:
    DT_FREE(h);
    dt__cu_unfuse(f);
    return st;
}

static dt_status dt__cu_run_fused(const char *fn, const void *table) {
    const dt__cu_fused *f = (const dt__cu_fused *)table;
    (void)fn;
    if (!f->n) return DT_OK;
    DT__CU_START(dt__cu_fused_kernel, dt__cu_blocks(f->units), DT__CU_THREADS, f->items, f->n);
    dt__cu_check_launch();
    return DT_OK;
}

static void dt__cu_batch_launch(dt__cu_batch *b, uint64_t units) {
    if (!b->n) return;
    DT__CU_START(dt__cu_batch_kernel, dt__cu_blocks(units), DT__CU_THREADS, *b);
    dt__cu_check_launch();
    b->n = 0;
}

static dt_status dt__cu_copy_box(const char *fn, const dt__array *s, const dt__array *d, const dt__box *p);

/* a copy along whose last dim (longer than 1) one side is not unit-stride:
   the tiled kernel's (the row plan would move it an element at a time) */
static int dt__cu_transposing(const dt__copy *c) {
    size_t ss[DT_MAX_DIMS] = {0}, ds[DT_MAX_DIMS] = {0};
    int k = c->s.ndim - 1;
    if (k < 0 || (!c->s.stride && !c->d.stride) || c->p.ext[k] < 2) return 0;
    dt__array_strides(&c->s, ss);
    dt__array_strides(&c->d, ds);
    return ss[k] != c->s.es || ds[k] != c->s.es;
}

/* n copies now, DT__CU_BATCH to a launch; a transposing one alone, tiled */
static dt_status dt__cu_run_copies(const char *fn, const dt__copy *c, int n) {
    dt__cu_batch b;
    uint64_t units = 0;
    dt_status st;
    int i;
    b.n = 0;
    for (i = 0; i < n; i++) {
        dt__cu_fitem *it = &b.it[b.n];
        if (c[i].s.es > 16) return dt__fail(DT_ERR_UNSUPPORTED, "%s: %zu-byte elements in a device copy", fn, c[i].s.es);
        if (dt__cu_transposing(&c[i])) {
            if ((st = dt__cu_copy_box(fn, &c[i].s, &c[i].d, &c[i].p))) return st;
            continue;
        }
        memset(it, 0, sizeof *it);
        if (!dt__cu_boxplan_make(&c[i].s, &c[i].d, &c[i].p, &it->pl)) continue;
        it->first = units;
        units += it->pl.rows * it->pl.nunit;
        if (++b.n == DT__CU_BATCH) {
            dt__cu_batch_launch(&b, units);
            units = 0;
        }
    }
    dt__cu_batch_launch(&b, units);
    return DT_OK;
}

/* ---- strided and transposing box copy ----
   dt__cu_boxplan assumes row-major arrays (the innermost dim unit-stride on
   both sides). A strided array (column-major, permuted dims, a padded or
   struct-field layout) goes by tiles instead: a = the dim with the smallest
   source stride, b = the one with the smallest destination stride (another
   dim when they coincide; a dummy dim of extent 1 when the box has one dim
   longer than 1). The box moves by 32 x 32 tiles of the (a, b) plane
   through shared memory: a tile is read along a, written along b, so a
   transpose reads and writes whole segments (coalesced); the padding
   column keeps the transposed reads of shared memory free of bank
   conflicts. The other dims are an outer index (plane o). An element of
   es bytes moves in units of `vec` bytes (the widest its addresses and
   strides allow). */
#define DT__CU_TTILE 32
typedef struct dt__cu_tplan {
    const char *src;
    char *dst;
    unsigned es, vec;
    int no;                                     /* outer dims                   */
    int64_t oext[DT_MAX_DIMS], oss[DT_MAX_DIMS], ods[DT_MAX_DIMS]; /* byte strides */
    int64_t na, nb, ssa, ssb, dsa, dsb;         /* the plane: extents, byte strides */
    int64_t nta, ntb, nout;                     /* tiles along a, b; planes     */
} dt__cu_tplan;

/* host side: 0 when there is nothing to copy */
static int dt__cu_tplan_make(const dt__array *s, const dt__array *d, const dt__box *p, dt__cu_tplan *t) {
    size_t ss[DT_MAX_DIMS], ds[DT_MAX_DIMS], es = s->es, align, so, doff;
    int j, a = -1, b = -1;
    unsigned v;
    if (dt__box_numel(s->ndim, p) == 0) return 0;
    dt__array_strides(s, ss);
    dt__array_strides(d, ds);
    for (j = 0; j < s->ndim; j++) {
        if (p->ext[j] < 2) continue;
        if (a < 0 || ss[j] < ss[a]) a = j;
        if (b < 0 || ds[j] < ds[b]) b = j;
    }
    if (a >= 0 && a == b) { /* another dim as b, the one innermost in the destination after a */
        b = -1;
        for (j = 0; j < s->ndim; j++)
            if (j != a && p->ext[j] >= 2 && (b < 0 || ds[j] < ds[b])) b = j;
    }
    so = dt__array_offset(s, ss, p);
    doff = dt__array_offset(d, ds, p);
    t->src = s->data + so;
    t->dst = d->data + doff;
    t->es = (unsigned)es;
    t->na = a >= 0 ? p->ext[a] : 1;
    t->nb = b >= 0 ? p->ext[b] : 1;
    t->ssa = a >= 0 ? (int64_t)ss[a] : 0;
    t->dsa = a >= 0 ? (int64_t)ds[a] : 0;
    t->ssb = b >= 0 ? (int64_t)ss[b] : 0;
    t->dsb = b >= 0 ? (int64_t)ds[b] : 0;
    align = (size_t)(uintptr_t)t->src | (size_t)(uintptr_t)t->dst | es | (size_t)t->ssa | (size_t)t->ssb |
            (size_t)t->dsa | (size_t)t->dsb;
    t->no = 0;
    t->nout = 1;
    for (j = 0; j < s->ndim; j++) {
        if (j == a || j == b || p->ext[j] < 2) continue;
        t->oext[t->no] = p->ext[j];
        t->oss[t->no] = (int64_t)ss[j];
        t->ods[t->no] = (int64_t)ds[j];
        align |= ss[j] | ds[j];
        t->nout *= p->ext[j];
        t->no++;
    }
    for (v = 16; v > 1 && (align & (v - 1)); v >>= 1) {}
    t->vec = v;
    t->nta = (t->na + DT__CU_TTILE - 1) / DT__CU_TTILE;
    t->ntb = (t->nb + DT__CU_TTILE - 1) / DT__CU_TTILE;
    return 1;
}

/* one element of es bytes, in units of vec */
DT__CU_HD void dt__cu_move_el(unsigned es, unsigned vec, char *d, const char *s) {
    unsigned q;
    for (q = 0; q < es; q += vec) dt__cu_move_vec(vec, d + q, s + q);
}

/* blockDim (32, 8); any blockDim computes the same (the CPU stand-in
   launches 1 x 1) */
__global__ void dt__cu_copy_box_tiled_kernel(dt__cu_tplan t) {
    __shared__ uint4 tile[DT__CU_TTILE * (DT__CU_TTILE + 1)];
    char *sm = (char *)tile;
    int64_t k, ntiles = t.nout * t.nta * t.ntb;
    int tx, ty;
    for (k = blockIdx.x; k < ntiles; k += gridDim.x) {
        int64_t per = t.nta * t.ntb, o = k / per, r = k - o * per, a0 = (r / t.ntb) * DT__CU_TTILE;
        int64_t b0 = (r % t.ntb) * DT__CU_TTILE, sb = 0, db = 0;
        int j;
        for (j = t.no - 1; j >= 0; j--) {
            int64_t i = o % t.oext[j];
            o /= t.oext[j];
            sb += i * t.oss[j];
            db += i * t.ods[j];
        }
        for (tx = (int)threadIdx.x; tx < DT__CU_TTILE; tx += (int)blockDim.x) /* read along a */
            for (ty = (int)threadIdx.y; ty < DT__CU_TTILE; ty += (int)blockDim.y)
                if (a0 + tx < t.na && b0 + ty < t.nb)
                    dt__cu_move_el(t.es, t.vec, sm + (size_t)(ty * (DT__CU_TTILE + 1) + tx) * t.es,
                                   t.src + sb + (a0 + tx) * t.ssa + (b0 + ty) * t.ssb);
        __syncthreads();
        for (tx = (int)threadIdx.x; tx < DT__CU_TTILE; tx += (int)blockDim.x) /* written along b */
            for (ty = (int)threadIdx.y; ty < DT__CU_TTILE; ty += (int)blockDim.y)
                if (a0 + ty < t.na && b0 + tx < t.nb)
                    dt__cu_move_el(t.es, t.vec, t.dst + db + (a0 + ty) * t.dsa + (b0 + tx) * t.dsb,
                                   sm + (size_t)(tx * (DT__CU_TTILE + 1) + ty) * t.es);
        __syncthreads();
    }
}

static dt_status dt__cu_copy_box(const char *fn, const dt__array *s, const dt__array *d, const dt__box *p) {
    dt__cu_boxplan pl;
    dt__cu_tplan tp;
    if (s->stride || d->stride) { /* strided: the tiles (the row plan assumes row-major arrays) */
        int64_t ntiles, cap;
        dim3 block(DT__CU_TTILE, 8);
        if (s->es > 16) return dt__fail(DT_ERR_UNSUPPORTED, "%s: %zu-byte elements in strided device storage", fn, s->es);
        if (!dt__cu_tplan_make(s, d, p, &tp)) return DT_OK;
        ntiles = tp.nout * tp.nta * tp.ntb;
        cap = (int64_t)dt__cu_blocks((uint64_t)ntiles * DT__CU_THREADS);
        DT__CU_START(dt__cu_copy_box_tiled_kernel, (unsigned)(ntiles < cap ? ntiles : cap), block, tp);
        dt__cu_check_launch();
        return DT_OK;
    }
    if (!dt__cu_boxplan_make(s, d, p, &pl)) return DT_OK;
    if (pl.rows == 1) /* one contiguous span: the copy engine's job */
        return dt__cu_d2d(fn, pl.dst, pl.src, (size_t)(pl.nunit * pl.vec));
    DT__CU_START(dt__cu_copy_box_kernel, dt__cu_blocks(pl.rows * pl.nunit), DT__CU_THREADS, pl);
    dt__cu_check_launch();
    return DT_OK;
}

/* ---- combining box copy (dt_tensor_redistribute_reduce) ----
   d = d op s over a box, element by element: the rules of the host's
   dt__copy_box_op (>>redistribute): SUM adds (integers wrap: computed
   unsigned; complex per part), MAX/MIN keep d unless s compares greater /
   less (so a NaN in d stays); F16/BF16 combine in F32 as the host's
   dt__reduce_half does (a NaN in d stays, else s wins unless d compares
   greater / less) and round back. One thread per element, its offsets by
   division (the outer dims, extent 1 dropped); the reduce is a pass over
   data that is in cache or just received, not a hot loop. */
typedef struct dt__cu_opplan {
    const char *src;
    char *dst;
    int nd;
    int64_t ext[DT_MAX_DIMS], ss[DT_MAX_DIMS], ds[DT_MAX_DIMS]; /* byte strides */
    uint64_t n;
    dt_dtype t;
    int op;
} dt__cu_opplan;

/* host side: 0 when there is nothing to combine */
static int dt__cu_opplan_make(const dt__array *s, const dt__array *d, const dt__box *p, dt_dtype t, int op,
                              dt__cu_opplan *pl) {
    size_t ss[DT_MAX_DIMS] = {0}, ds[DT_MAX_DIMS] = {0};
    int j;
    pl->n = dt__box_numel(s->ndim, p);
    if (pl->n == 0) return 0;
    dt__array_strides(s, ss);
    dt__array_strides(d, ds);
    pl->src = s->data + dt__array_offset(s, ss, p);
    pl->dst = d->data + dt__array_offset(d, ds, p);
    pl->nd = 0;
    for (j = 0; j < s->ndim; j++) {
        if (p->ext[j] == 1) continue;
        pl->ext[pl->nd] = p->ext[j];
        pl->ss[pl->nd] = (int64_t)ss[j];
        pl->ds[pl->nd] = (int64_t)ds[j];
        pl->nd++;
    }
    pl->t = t;
    pl->op = op;
    return 1;
}

#define DT__CU_COMBINE(T, U, d, s, op)                                                     \
    do {                                                                                   \
        T a_ = *(T *)(void *)(d), b_ = *(const T *)(const void *)(s);                      \
        if ((op) == DT_SUM) *(T *)(void *)(d) = (T)((U)a_ + (U)b_);                        \
        else if ((op) == DT_MAX ? b_ > a_ : b_ < a_) *(T *)(void *)(d) = b_;               \
    } while (0)

DT__CU_HD void dt__cu_combine_half(dt_dtype t, int op, char *d, const char *s) {
    uint16_t a = *(uint16_t *)(void *)d, b = *(const uint16_t *)(const void *)s;
    float u = t == DT_F16 ? dt__h2f(a) : dt__b2f(a), v = t == DT_F16 ? dt__h2f(b) : dt__b2f(b);
    float r = op == DT_MAX ? (u > v || u != u ? u : v) : op == DT_MIN ? (u < v || u != u ? u : v) : u + v;
    *(uint16_t *)(void *)d = t == DT_F16 ? dt__f2h(r) : dt__f2b(r);
}

/* d = d op s, one element of dtype t */
DT__CU_HD void dt__cu_combine_elem(dt_dtype t, int op, char *d, const char *s) {
    switch (t) {
    case DT_F32: DT__CU_COMBINE(float, float, d, s, op); break;
    case DT_F64: DT__CU_COMBINE(double, double, d, s, op); break;
    case DT_I32: DT__CU_COMBINE(int32_t, uint32_t, d, s, op); break;
    case DT_I64: DT__CU_COMBINE(int64_t, uint64_t, d, s, op); break;
    case DT_U8: DT__CU_COMBINE(uint8_t, unsigned, d, s, op); break;
    case DT_C64: /* SUM only (checked by dt_tensor_redistribute_reduce) */
        DT__CU_COMBINE(float, float, d, s, DT_SUM);
        DT__CU_COMBINE(float, float, d + 4, s + 4, DT_SUM);
        break;
    case DT_C128:
        DT__CU_COMBINE(double, double, d, s, DT_SUM);
        DT__CU_COMBINE(double, double, d + 8, s + 8, DT_SUM);
        break;
    default: dt__cu_combine_half(t, op, d, s); break;
    }
}

__global__ void dt__cu_copy_box_op_kernel(dt__cu_opplan pl) {
    uint64_t u = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, step = (uint64_t)gridDim.x * blockDim.x;
    for (; u < pl.n; u += step) {
        uint64_t r = u;
        int64_t so = 0, doff = 0;
        int j;
        for (j = pl.nd - 1; j >= 0; j--) {
            uint64_t e = (uint64_t)pl.ext[j], i = r % e;
            r /= e;
            so += (int64_t)i * pl.ss[j];
            doff += (int64_t)i * pl.ds[j];
        }
        dt__cu_combine_elem(pl.t, pl.op, pl.dst + doff, pl.src + so);
    }
}

static dt_status dt__cu_copy_box_op(const char *fn, const dt__array *s, const dt__array *d, const dt__box *p,
                                    dt_dtype t, int op) {
    dt__cu_opplan pl;
    if (op < 0) return dt__cu_copy_box(fn, s, d, p);
    if (!dt__cu_opplan_make(s, d, p, t, op, &pl)) return DT_OK;
    DT__CU_START(dt__cu_copy_box_op_kernel, dt__cu_blocks(pl.n), DT__CU_THREADS, pl);
    dt__cu_check_launch();
    return DT_OK;
}

/* >>cuda-kernels ------------------------------------------------------------
   the dt__kernels table on device memory. Same contract as the host table
   (>>kernels); every kernel is enqueued on dt_cuda_stream() and returns at
   once (gemm may fail on cuBLAS). The element math is __host__ __device__
   and mirrors the host kernels': the same bits where the host's are
   exactly defined (conversions, casts, + - * / max min axpy, the integer
   ops, dt__expf's polynomial, every random value: Box-Muller uses
   dtensor.h's own log/sin/cos polynomials, not libm); the unary ops' libm
   functions (log, sin, tanh, erf, pow, and exp for F64) are CUDA's,
   within their documented ulps of the host's; sums (reduce, softmax,
   norm, xent) run in another order (a tree), still in double; gemm is
   cuBLAS's. Which NaN a two-NaN operation returns is not specified (the
   GPU gives its canonical NaN). */

/* (F16/BF16 <-> float, dt__f64_to_f32_odd, dt__i64_to_f64_odd and
   dt__sat_i64 are dtensor.h's >>math functions, __host__ __device__ here) */

DT__CU_HD int dt__cu_is_int(dt_dtype t) { return t == DT_I32 || t == DT_I64 || t == DT_U8; }
DT__CU_HD size_t dt__cu_es(dt_dtype t) {
    if (t == DT_C128) return 16;
    return t == DT_F64 || t == DT_I64 || t == DT_C64 ? 8 : t == DT_F32 || t == DT_I32 ? 4 : t == DT_U8 ? 1 : 2;
}

/* ---- element loads and stores, by dtype ----
   ld_f32: F32/F16/BF16 as float. ld_f64: any dtype as double. ld_i64: the
   integer dtypes as int64. st_f32: float to F32/F16/BF16. st_f64: double to
   any dtype (halves via round-to-odd, integers saturate). st_i64: int64 to
   an integer dtype keeping the low bits. */
DT__CU_HD float dt__cu_ld_f32(dt_dtype t, const void *p, int64_t i) {
    if (t == DT_F32) return ((const float *)p)[i];
    if (t == DT_F16) return dt__h2f(((const uint16_t *)p)[i]);
    return dt__b2f(((const uint16_t *)p)[i]);
}

DT__CU_HD void dt__cu_st_f32(dt_dtype t, void *p, int64_t i, float v) {
    if (t == DT_F32) ((float *)p)[i] = v;
    else if (t == DT_F16) ((uint16_t *)p)[i] = dt__f2h(v);
    else ((uint16_t *)p)[i] = dt__f2b(v);
}

DT__CU_HD double dt__cu_ld_f64(dt_dtype t, const void *p, int64_t i) {
    switch (t) {
    case DT_F64: return ((const double *)p)[i];
    case DT_F32: return (double)((const float *)p)[i];
    case DT_F16: return (double)dt__h2f(((const uint16_t *)p)[i]);
    case DT_BF16: return (double)dt__b2f(((const uint16_t *)p)[i]);
    case DT_I32: return (double)((const int32_t *)p)[i];
    case DT_I64: return (double)((const int64_t *)p)[i];
    default: return (double)((const uint8_t *)p)[i];
    }
}

DT__CU_HD void dt__cu_st_f64(dt_dtype t, void *p, int64_t i, double v) {
    switch (t) {
    case DT_F64: ((double *)p)[i] = v; break;
    case DT_F32: ((float *)p)[i] = (float)v; break;
    case DT_F16: ((uint16_t *)p)[i] = dt__f2h(dt__f64_to_f32_odd(v)); break;
    case DT_BF16: ((uint16_t *)p)[i] = dt__f2b(dt__f64_to_f32_odd(v)); break;
    case DT_I32: ((int32_t *)p)[i] = (int32_t)dt__sat_i64(v, INT32_MIN, INT32_MAX); break;
    case DT_I64: ((int64_t *)p)[i] = dt__sat_i64(v, INT64_MIN, INT64_MAX); break;
    default: ((uint8_t *)p)[i] = (uint8_t)dt__sat_i64(v, 0, UINT8_MAX); break;
    }
}

DT__CU_HD int64_t dt__cu_ld_i64(dt_dtype t, const void *p, int64_t i) {
    if (t == DT_I32) return ((const int32_t *)p)[i];
    if (t == DT_U8) return ((const uint8_t *)p)[i];
    if (t == DT_I64) return ((const int64_t *)p)[i];
    return dt__sat_i64(dt__cu_ld_f64(t, p, i), INT64_MIN, INT64_MAX); /* never passed: the host saturates too */
}

DT__CU_HD void dt__cu_st_i64(dt_dtype t, void *p, int64_t i, int64_t v) {
    if (t == DT_I32) ((int32_t *)p)[i] = (int32_t)v;
    else if (t == DT_U8) ((uint8_t *)p)[i] = (uint8_t)v;
    else if (t == DT_I64) ((int64_t *)p)[i] = v;
    else dt__cu_st_f64(t, p, i, (double)v);
}

/* int64 -> a float dtype, rounded once */
DT__CU_HD void dt__cu_st_i64_as_float(dt_dtype t, void *p, int64_t i, int64_t v) {
    if (t == DT_F64) ((double *)p)[i] = (double)v;
    else if (t == DT_F32) ((float *)p)[i] = (float)dt__i64_to_f64_odd(v);
    else if (t == DT_F16) ((uint16_t *)p)[i] = dt__f2h(dt__f64_to_f32_odd(dt__i64_to_f64_odd(v)));
    else ((uint16_t *)p)[i] = dt__f2b(dt__f64_to_f32_odd(dt__i64_to_f64_odd(v)));
}

/* element i of a cast: the rules of dt__k_cast */
DT__CU_HD void dt__cu_cast_elem(dt_dtype from, const void *x, dt_dtype to, void *y, int64_t i) {
    int fi = dt__cu_is_int(from), ti = dt__cu_is_int(to);
    int f32k = (from == DT_F32 || from == DT_F16 || from == DT_BF16) && (to == DT_F32 || to == DT_F16 || to == DT_BF16);
    if (from == to) {
        size_t es = dt__cu_es(from);
        memcpy((char *)y + i * (int64_t)es, (const char *)x + i * (int64_t)es, es);
    } else if (fi && ti) {
        dt__cu_st_i64(to, y, i, dt__cu_ld_i64(from, x, i));
    } else if (fi) {
        dt__cu_st_i64_as_float(to, y, i, dt__cu_ld_i64(from, x, i));
    } else if (f32k) {
        dt__cu_st_f32(to, y, i, dt__cu_ld_f32(from, x, i));
    } else {
        dt__cu_st_f64(to, y, i, dt__cu_ld_f64(from, x, i));
    }
}

/* ---- complex (C64/C128): the host's dt__cx_* kernels element by element,
   on >>math's dt__cx functions in double (C64 rounded to float on store) */
DT__CU_HD int dt__cu_is_cx(dt_dtype t) { return t == DT_C64 || t == DT_C128; }

/* (elements: >>math's dt__cx_load / dt__cx_store) */

/* ---- unary and binary: one element in the working type ----
   The switches over dtensor.h's element functions (>>math: dt__u_<name>_*,
   dt__b_<name>_*, __host__ __device__ there), one case per registry line. */
#define DT__CU_ELEM_SWITCHES(W)                                             \
    DT__CU_HD W DT__SFXNAME(dt__cu_unary)(dt__uop op, W x, W a) {           \
        switch (op) {                                                       \
            DT__UNARY_OPS(DT__UELEM_CASE)                                   \
        default: return x;                                                  \
        }                                                                   \
    }                                                                       \
    DT__CU_HD W DT__SFXNAME(dt__cu_bop)(dt__bop op, W p, W q, W alpha) {    \
        switch (op) {                                                       \
            DT__BINARY_OPS(DT__BELEM_CASE)                                  \
        default: return p;                                                  \
        }                                                                   \
    }                                                                       \
    DT__DEFS_END
#define DT__SFX f32
DT__CU_ELEM_SWITCHES(float);
#undef DT__SFX
#define DT__SFX f64
DT__CU_ELEM_SWITCHES(double);
#undef DT__SFX
#define DT__SFX i64
DT__CU_ELEM_SWITCHES(int64_t);
#undef DT__SFX
#undef DT__CU_ELEM_SWITCHES

/* element i of a unary op: a is already (float)a / a / dt__i64_of(a) by kind */
DT__CU_HD void dt__cu_unary_elem(dt__uop op, dt_dtype t, const void *x, void *y, int64_t i, double a, int64_t ia) {
    if (t == DT_F64) ((double *)y)[i] = dt__cu_unary_f64(op, ((const double *)x)[i], a);
    else if (dt__cu_is_int(t)) dt__cu_st_i64(t, y, i, dt__cu_unary_i64(op, dt__cu_ld_i64(t, x, i), ia));
    else dt__cu_st_f32(t, y, i, dt__cu_unary_f32(op, dt__cu_ld_f32(t, x, i), (float)a));
}

/* ---- binary: one element in the working type ---- */

/* out[o] = op(a[ia], b[ib]) by dtype */
DT__CU_HD void dt__cu_binary_at(dt__bop op, dt_dtype t, const void *a, int64_t ia, const void *b, int64_t ib,
                                void *out, int64_t o, double alpha, int64_t ialpha) {
    if (t == DT_F64) ((double *)out)[o] = dt__cu_bop_f64(op, ((const double *)a)[ia], ((const double *)b)[ib], alpha);
    else if (dt__cu_is_int(t))
        dt__cu_st_i64(t, out, o, dt__cu_bop_i64(op, dt__cu_ld_i64(t, a, ia), dt__cu_ld_i64(t, b, ib), ialpha));
    else dt__cu_st_f32(t, out, o, dt__cu_bop_f32(op, dt__cu_ld_f32(t, a, ia), dt__cu_ld_f32(t, b, ib), (float)alpha));
}

/* the operands' element offsets of output element o (row-major over g) */
DT__CU_HD void dt__cu_bgeom_offsets(const dt__bgeom *g, int64_t o, int64_t *ia, int64_t *ib) {
    int64_t a = 0, b = 0;
    int d;
    for (d = g->nd - 1; d >= 0; d--) {
        int64_t e = g->ext[d], i = o % e;
        o /= e;
        a += i * g->sa[d];
        b += i * g->sb[d];
    }
    *ia = a;
    *ib = b;
}

/* ---- the random fill's element values (see dt_rand's comment) ----
   Philox (dt__philox, dt__px_word_at), the word -> value mapping
   (dt__w64, dt__u24, dt__u53, dt__down_*), Box-Muller (dt__bm_pair_f,
   dt__bm_pair_d) and the bounded draw (dt__px_bounded) are dtensor.h's
   >>math functions, the very ones the host kernel runs. */

/* 0/1 as t's 0 and 1 */
DT__CU_HD void dt__cu_st_flag(dt_dtype t, void *y, int64_t i, int k) {
    switch (t) {
    case DT_F32: ((float *)y)[i] = (float)k; break;
    case DT_F64: ((double *)y)[i] = (double)k; break;
    case DT_F16: ((uint16_t *)y)[i] = (uint16_t)(k ? 0x3c00u : 0u); break;
    case DT_BF16: ((uint16_t *)y)[i] = (uint16_t)(k ? 0x3f80u : 0u); break;
    case DT_I32: ((int32_t *)y)[i] = k; break;
    case DT_I64: ((int64_t *)y)[i] = k; break;
    default: ((uint8_t *)y)[i] = (uint8_t)k; break;
    }
}

/* randint's value in t (dt__rng_store_int) */
DT__CU_HD void dt__cu_st_randint(dt_dtype t, void *y, int64_t i, int64_t v) {
    switch (t) {
    case DT_F32: ((float *)y)[i] = (float)v; break;
    case DT_F64: ((double *)y)[i] = (double)v; break;
    case DT_F16: ((uint16_t *)y)[i] = dt__f2h((float)v); break;
    case DT_BF16: ((uint16_t *)y)[i] = dt__f2b((float)v); break;
    case DT_I32: ((int32_t *)y)[i] = (int32_t)v; break;
    case DT_I64: ((int64_t *)y)[i] = v; break;
    default: ((uint8_t *)y)[i] = (uint8_t)v; break;
    }
}

/* uniform [a, b) into y[i] from the element's words (w of them at wv) */
DT__CU_HD void dt__cu_uniform_elem(const dt__rng_op *op, const uint32_t *wv, void *y, int64_t i) {
    double lo = op->a, width = op->b - op->a;
    if (op->t == DT_F64) {
        double v = dt__u53(dt__w64(wv));
        if (!(lo == 0 && width == 1)) {
            v = DT__DADD(lo, DT__DMUL(width, v));
            while (v >= op->b) v = dt__down_f64(v);
        }
        ((double *)y)[i] = v;
    } else if (op->t == DT_F32) {
        float v = dt__u24(wv[0]);
        if (!(lo == 0 && width == 1)) {
            v = (float)DT__DADD(lo, DT__DMUL(width, (double)v));
            while ((double)v >= op->b) v = dt__down_f32(v);
        }
        ((float *)y)[i] = v;
    } else { /* F16 / BF16: the double result rounded to float, then to the dtype */
        float v = (float)DT__DADD(lo, DT__DMUL(width, (double)dt__u24(wv[0])));
        uint16_t h = op->t == DT_F16 ? dt__f2h(v) : dt__f2b(v);
        while ((double)(op->t == DT_F16 ? dt__h2f(h) : dt__b2f(h)) >= op->b) h = dt__down_half(h);
        ((uint16_t *)y)[i] = h;
    }
}

/* bernoulli / dropout keep flag: u < p as an integer compare */
DT__CU_HD int dt__cu_keep(const dt__rng_op *op, const uint32_t *wv) {
    if (op->w == 1) return (wv[0] >> 8) < (uint32_t)op->thr;
    return (dt__w64(wv) >> 11) < op->thr;
}

/* one element of every kind but normal; pos: its first word's position */
DT__CU_HD void dt__cu_rng_elem(const dt__rng_op *op, const uint32_t *wv, uint64_t pos, void *y, int64_t i) {
    switch (op->kind) {
    case DT__RK_UNIFORM: dt__cu_uniform_elem(op, wv, y, i); break;
    case DT__RK_BERNOULLI: dt__cu_st_flag(op->t, y, i, dt__cu_keep(op, wv)); break;
    case DT__RK_RANDINT: {
        uint64_t x = op->w == 1 ? wv[0] : dt__w64(wv);
        uint64_t r = dt__px_bounded((uint32_t)op->seed, (uint32_t)(op->seed >> 32), op->w, op->range, pos, x);
        dt__cu_st_randint(op->t, y, i, (int64_t)((uint64_t)op->lo + r));
        break;
    }
    case DT__RK_DROPOUT: {
        int keep = dt__cu_keep(op, wv);
        if (op->mask) ((uint8_t *)op->mask)[i] = (uint8_t)keep;
        if (op->t == DT_F64) {
            double sc = op->b > 0 ? 1.0 / op->b : 0.0;
            ((double *)y)[i] = keep ? ((const double *)op->x)[i] * sc : 0.0;
        } else {
            float sc = op->b > 0 ? (float)(1.0 / op->b) : 0.0f;
            dt__cu_st_f32(op->t, y, i, keep ? dt__cu_ld_f32(op->t, op->x, i) * sc : 0.0f);
        }
        break;
    }
    default: break;
    }
}

/* a normal pair's values z0, z1 (mean + std * z, in the working type) stored at y[i0], y[i1] (<0: skip) */
DT__CU_HD void dt__cu_normal_pair(const dt__rng_op *op, const uint32_t *wv, void *y, int64_t i0, int64_t i1) {
    if (op->t == DT_F64) {
        double z0, z1;
        dt__bm_pair_d(dt__w64(wv), dt__w64(wv + 2), &z0, &z1);
        if (i0 >= 0) ((double *)y)[i0] = DT__DADD(op->a, DT__DMUL(op->b, z0));
        if (i1 >= 0) ((double *)y)[i1] = DT__DADD(op->a, DT__DMUL(op->b, z1));
    } else {
        float z0, z1, mean = (float)op->a, sd = (float)op->b;
        dt__bm_pair_f(wv[0], wv[1], &z0, &z1);
        if (i0 >= 0) dt__cu_st_f32(op->t, y, i0, DT__FADD(mean, DT__FMUL(sd, z0)));
        if (i1 >= 0) dt__cu_st_f32(op->t, y, i1, DT__FADD(mean, DT__FMUL(sd, z1)));
    }
}

/* ---- the random fill's work items ----
   The local box is walked as spans contiguous in the global row-major order
   (the trailing dims the box spans whole merge into one span, as dt__k_rng
   does). Within a span, a work item is one Philox block: it writes the
   elements (normal: the pairs) whose FIRST word lies in that block, reading
   the next block too when an element's words cross into it (an offset not
   a multiple of 4, or w = 2). Item t = span t / bpr, block t % bpr. */
typedef struct dt__cu_rngplan {
    int nd, d0;                      /* dims; spans are over dims >= d0         */
    int64_t gs[DT_MAX_DIMS], lo[DT_MAX_DIMS], ext[DT_MAX_DIMS];
    uint64_t span, nspans;            /* elements per span, spans               */
    uint64_t bpr;                    /* work items (blocks) per span            */
    int pair;                        /* normal: units are pairs of elements    */
} dt__cu_rngplan;

/* host side: 0 when the box is empty */
static int dt__cu_rngplan_make(const dt__rng_op *op, int nd, const int64_t *gs, const int64_t *lo, const int64_t *ext,
                               dt__cu_rngplan *pl) {
    int d;
    uint64_t words;
    for (d = 0; d < nd; d++)
        if (!ext[d]) return 0;
    pl->nd = nd;
    for (d = 0; d < nd; d++) { pl->gs[d] = gs[d]; pl->lo[d] = lo[d]; pl->ext[d] = ext[d]; }
    pl->d0 = nd > 0 ? nd - 1 : 0;
    while (pl->d0 > 0 && lo[pl->d0] == 0 && ext[pl->d0] == gs[pl->d0]) pl->d0--;
    pl->span = 1;
    pl->nspans = 1;
    for (d = pl->d0; d < nd; d++) pl->span *= (uint64_t)ext[d];
    for (d = 0; d < pl->d0; d++) pl->nspans *= (uint64_t)ext[d];
    pl->pair = op->kind == DT__RK_NORMAL;
    /* the words from the span's first unit's first word, plus up to 3 before it in its block */
    words = (uint64_t)op->w * (pl->span + (pl->pair ? 2 : 0)) + 3;
    pl->bpr = words / 4 + 1;
    return 1;
}

/* the global index of span r's first element */
DT__CU_HD uint64_t dt__cu_rng_span_start(const dt__cu_rngplan *pl, uint64_t r) {
    int64_t idx[DT_MAX_DIMS];
    uint64_t g = 0;
    int d;
    for (d = pl->d0 - 1; d >= 0; d--) { /* r as a row-major counter over the dims before d0 */
        idx[d] = (int64_t)(r % (uint64_t)pl->ext[d]);
        r /= (uint64_t)pl->ext[d];
    }
    for (d = 0; d < pl->nd; d++) g = g * (uint64_t)pl->gs[d] + (uint64_t)(pl->lo[d] + (d < pl->d0 ? idx[d] : 0));
    return g;
}

/* the hot case, F32 uniform [0, 1) with a whole 16-byte-aligned block of
   4 elements: its own registers (the general path indexes its words at span
   time, which puts them in local memory) and one 16-byte store */
DT__CU_HD int dt__cu_rng_fast4(const dt__rng_op *op, const void *y, int64_t i) {
    return op->kind == DT__RK_UNIFORM && op->t == DT_F32 && op->a == 0 && op->b == 1 &&
           ((uintptr_t)((const float *)y + i) & 15u) == 0;
}
DT__CU_HD void dt__cu_rng_store4(uint64_t blk, uint32_t k0, uint32_t k1, void *y, int64_t i) {
    uint32_t w[4];
    float *o = (float *)y + i;
    dt__philox(blk, 0, k0, k1, w);
#ifdef __CUDA_ARCH__
    *(float4 *)(void *)o = make_float4(dt__u24(w[0]), dt__u24(w[1]), dt__u24(w[2]), dt__u24(w[3]));
#else
    o[0] = dt__u24(w[0]); o[1] = dt__u24(w[1]); o[2] = dt__u24(w[2]); o[3] = dt__u24(w[3]);
#endif
}

/* work item t: one Philox block's elements. Units are 1, 2 or 4 words
   (an element of w words, or a normal pair of 2w), so the divisions by the
   unit are shifts. */
DT__CU_HD void dt__cu_rng_item(const dt__rng_op *op, const dt__cu_rngplan *pl, uint64_t t, void *y) {
    uint32_t k0 = (uint32_t)op->seed, k1 = (uint32_t)(op->seed >> 32), wv[8];
    uint64_t r = pl->nspans == 1 ? 0 : t / pl->bpr, j = t - r * pl->bpr;
    uint64_t g0 = pl->nd && pl->nspans > 1 ? dt__cu_rng_span_start(pl, r) : pl->nd ? dt__cu_rng_span_start(pl, 0) : 0;
    uint64_t w = (uint64_t)op->w, unit = pl->pair ? 2 * w : w;     /* words per unit                 */
    int sh = unit == 1 ? 0 : unit == 2 ? 1 : 2;
    uint64_t u0 = pl->pair ? g0 & ~(uint64_t)1 : g0;                /* the span's first unit's element */
    uint64_t nunits = pl->pair ? (g0 + pl->span - u0 + 1) / 2 : pl->span;
    uint64_t p0 = op->offset + w * u0, q0 = p0 & 3u;                /* its first word, place in block */
    uint64_t blk = (p0 >> 2) + j, lo_rel, hi_rel, ua, ub, u, base = r * pl->span;
    int have_next = 0;
    /* units whose first word (relative to p0: unit * u) is in [4j - q0, 4j - q0 + 4) */
    lo_rel = 4 * j >= q0 ? 4 * j - q0 : 0;
    hi_rel = 4 * j + 4 - q0;
    ua = (lo_rel + unit - 1) >> sh;
    ub = (hi_rel + unit - 1) >> sh;
    if (ub > nunits) ub = nunits;
    if (ua >= ub) return;
    if (unit == 1 && ub - ua == 4 && dt__cu_rng_fast4(op, y, (int64_t)(base + ua))) {
        dt__cu_rng_store4(blk, k0, k1, y, (int64_t)(base + ua));
        return;
    }
    dt__philox(blk, 0, k0, k1, wv);
    for (u = ua; u < ub; u++) {
        uint64_t rel = u << sh, pos = p0 + rel;
        size_t k = (size_t)(rel + q0 - 4 * j); /* the unit's first word in wv */
        if (k + unit > 4 && !have_next) {
            dt__philox(blk + 1, 0, k0, k1, wv + 4);
            have_next = 1;
        }
        if (pl->pair) {
            uint64_t ge = u0 + 2 * u; /* the pair's first element (global) */
            int64_t i0 = ge >= g0 ? (int64_t)(base + (ge - g0)) : -1;
            int64_t i1 = ge + 1 < g0 + pl->span ? (int64_t)(base + (ge + 1 - g0)) : -1;
            dt__cu_normal_pair(op, wv + k, y, i0, i1);
        } else {
            dt__cu_rng_elem(op, wv + k, pos, y, (int64_t)(base + u));
        }
    }
}

/* ---- reductions: a running value of one output, and how two combine ----
   Floats in double, integers in int64 (wrapping sums). ARGMAX keeps the
   first maximum: a larger value wins, NaN beats any number, ties (and two
   NaNs) go to the lower index; arg < 0 marks "no element yet". */
typedef struct dt__cu_racc {
    double v;
    int64_t iv, arg;
} dt__cu_racc;

DT__CU_HD void dt__cu_racc_init(dt__rop op, dt_dtype t, dt__cu_racc *a) {
    int64_t lo = t == DT_I32 ? INT32_MIN : t == DT_U8 ? 0 : INT64_MIN;
    int64_t hi = t == DT_I32 ? INT32_MAX : t == DT_U8 ? UINT8_MAX : INT64_MAX;
    a->arg = -1;
    a->v = op == DT__R_MIN ? HUGE_VAL : (op == DT__R_MAX || op == DT__R_ARGMAX) ? -HUGE_VAL : 0.0;
    a->iv = op == DT__R_MIN ? hi : op == DT__R_MAX ? lo : op == DT__R_ARGMAX ? INT64_MIN : 0;
}

/* does (v, i) beat the current argmax? */
DT__CU_HD int dt__cu_arg_wins(int isint, const dt__cu_racc *b, const dt__cu_racc *a) {
    if (b->arg < 0) return 0;
    if (a->arg < 0) return 1;
    if (isint) return b->iv > a->iv || (b->iv == a->iv && b->arg < a->arg);
    if (b->v != b->v) return a->v == a->v || b->arg < a->arg;
    if (a->v != a->v) return 0;
    return b->v > a->v || (b->v == a->v && b->arg < a->arg);
}

/* a <- a (+) b */
DT__CU_HD void dt__cu_racc_merge(dt__rop op, int isint, dt__cu_racc *a, const dt__cu_racc *b) {
    switch (op) {
    case DT__R_SUM: case DT__R_SUMSQ:
        if (isint) a->iv = DT__IADD(a->iv, b->iv);
        else a->v += b->v;
        break;
    case DT__R_MAX:
        if (isint) a->iv = b->iv > a->iv ? b->iv : a->iv;
        else a->v = DT__FMAX(b->v, a->v);
        break;
    case DT__R_MIN:
        if (isint) a->iv = b->iv < a->iv ? b->iv : a->iv;
        else a->v = DT__FMIN(b->v, a->v);
        break;
    default:
        if (dt__cu_arg_wins(isint, b, a)) *a = *b;
        break;
    }
}

/* fold element x[off] (reduced index ri) into a */
DT__CU_HD void dt__cu_racc_add(dt__rop op, dt_dtype t, dt__cu_racc *a, const void *x, int64_t off, int64_t ri) {
    dt__cu_racc e;
    int isint = dt__cu_is_int(t);
    if (isint) {
        e.iv = dt__cu_ld_i64(t, x, off);
        if (op == DT__R_SUMSQ) e.iv = DT__IMUL(e.iv, e.iv);
        e.v = 0;
    } else {
        e.v = dt__cu_ld_f64(t, x, off);
        if (op == DT__R_SUMSQ) e.v = e.v * e.v;
        e.iv = 0;
    }
    e.arg = ri;
    dt__cu_racc_merge(op, isint, a, &e);
}

/* the finished output o (dt__rstore's rules) */
DT__CU_HD void dt__cu_rstore(dt__rop op, dt_dtype t, const dt__cu_racc *a, void *out, int64_t o, double scale) {
    int scaled = (op == DT__R_SUM || op == DT__R_SUMSQ) && scale != 1.0;
    if (op == DT__R_ARGMAX) ((int64_t *)out)[o] = a->arg < 0 ? 0 : a->arg;
    else if (!dt__cu_is_int(t)) dt__cu_st_f64(t, out, o, scaled ? a->v * scale : a->v);
    else if (scaled) dt__cu_st_f64(t, out, o, (double)a->iv * scale);
    else dt__cu_st_i64(t, out, o, a->iv);
}

/* x's kept and reduced dims (after dt__rgeom_make's merging) with strides */
typedef struct dt__cu_rplan {
    int nk, nr;
    int64_t kext[DT_MAX_DIMS], kst[DT_MAX_DIMS], rext[DT_MAX_DIMS], rst[DT_MAX_DIMS];
    int64_t nout, nred;
} dt__cu_rplan;

/* offset of the row-major index i over (ext, st) dims */
DT__CU_HD int64_t dt__cu_unravel(int n, const int64_t *ext, const int64_t *st, int64_t i) {
    int64_t off = 0;
    int d;
    for (d = n - 1; d >= 0; d--) {
        off += (i % ext[d]) * st[d];
        i /= ext[d];
    }
    return off;
}

/* ---- the kernels ---- */

#define DT__CU_FOR(i, n) \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (int64_t)(n); i += (int64_t)gridDim.x * blockDim.x)

#define DT__CU_LAUNCH(kernel, n, ...)                                                                    \
    do {                                                                                                 \
        DT__CU_START(kernel, dt__cu_blocks((uint64_t)(n)), DT__CU_THREADS, __VA_ARGS__);                 \
        dt__cu_check_launch();                                                                           \
    } while (0)

__global__ void dt__cu_unary_kernel(dt__uop op, dt_dtype t, const void *x, void *y, int64_t n, double a, int64_t ia) {
    DT__CU_FOR(i, n) dt__cu_unary_elem(op, t, x, y, i, a, ia);
}

/* F32 contiguous, four at a time where the pointers allow: the common case at full bandwidth */
__global__ void dt__cu_unary_f32x4_kernel(dt__uop op, const float4 *x, float4 *y, int64_t n4, float a) {
    DT__CU_FOR(i, n4) {
        float4 v = x[i];
        v.x = dt__cu_unary_f32(op, v.x, a); v.y = dt__cu_unary_f32(op, v.y, a);
        v.z = dt__cu_unary_f32(op, v.z, a); v.w = dt__cu_unary_f32(op, v.w, a);
        y[i] = v;
    }
}

static int dt__cu_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* complex fill, shift, exp (dt__cx_unary's loop): fill and shift take a + 0i */
__global__ void dt__cu_cx_unary_kernel(dt__uop op, dt_dtype t, const void *x, void *y, int64_t n, double a) {
    DT__CU_FOR(i, n) {
        dt__cx z = op == DT__U_FILL ? dt__cx_make(a, 0.0) : dt__cx_load(t, x, i);
        if (op == DT__U_SHIFT) z.re += a;
        else if (op == DT__U_EXP) z = dt__cx_exp(z);
        dt__cx_store(t, y, i, z);
    }
}

static void dt__cu_k_unary(dt__uop op, dt_dtype t, const void *x, void *y, size_t n, double a) {
    size_t n4 = 0;
    if (!n) return;
    if (dt__cu_is_cx(t)) { /* neg, scale, copy act on the parts alike: the real kernel over them */
        if (op == DT__U_NEG || op == DT__U_SCALE || op == DT__U_COPY)
            dt__cu_k_unary(op, t == DT_C64 ? DT_F32 : DT_F64, x, y, 2 * n, a);
        else DT__CU_LAUNCH(dt__cu_cx_unary_kernel, n, op, t, x, y, (int64_t)n, a);
        return;
    }
    if (t == DT_F32 && dt__cu_aligned16(x) && dt__cu_aligned16(y)) {
        n4 = n / 4;
        if (n4) DT__CU_LAUNCH(dt__cu_unary_f32x4_kernel, n4, op, (const float4 *)x, (float4 *)y, (int64_t)n4, (float)a);
        n4 *= 4;
    }
    if (n > n4)
        DT__CU_LAUNCH(dt__cu_unary_kernel, n - n4, op, t, (const char *)x + n4 * 4, (char *)y + n4 * 4,
                      (int64_t)(n - n4), a, dt__i64_of(a));
}

__global__ void dt__cu_cast_kernel(dt_dtype from, const void *x, dt_dtype to, void *y, int64_t n) {
    DT__CU_FOR(i, n) dt__cu_cast_elem(from, x, to, y, i);
}

/* dt__cx_cast's rules: real x -> x + 0i (x read as double); C64 <-> C128
   both parts; complex -> real the real part (refused by the ops layer) */
__global__ void dt__cu_cx_cast_kernel(dt_dtype from, const void *x, dt_dtype to, void *y, int64_t n) {
    DT__CU_FOR(i, n) {
        if (!dt__cu_is_cx(from)) dt__cx_store(to, y, i, dt__cx_make(dt__cu_ld_f64(from, x, i), 0.0));
        else if (dt__cu_is_cx(to)) dt__cx_store(to, y, i, dt__cx_load(from, x, i));
        else dt__cu_st_f64(to, y, i, dt__cx_load(from, x, i).re);
    }
}

static void dt__cu_k_cast(dt_dtype from, const void *x, dt_dtype to, void *y, size_t n) {
    if (!n) return;
    if (from == to) { /* a plain copy: the host's memmove */
        if (x != y) dt__cu_note(cudaMemcpyAsync(y, x, n * dt_dtype_size(from), cudaMemcpyDeviceToDevice, dt__cu_stream_v));
        return;
    }
    if (dt__cu_is_cx(from) || dt__cu_is_cx(to)) {
        DT__CU_LAUNCH(dt__cu_cx_cast_kernel, n, from, x, to, y, (int64_t)n);
        return;
    }
    DT__CU_LAUNCH(dt__cu_cast_kernel, n, from, x, to, y, (int64_t)n);
}

/* any geometry: output element o's operand offsets by division */
__global__ void dt__cu_binary_kernel(dt__bop op, dt_dtype t, dt__bgeom g, int64_t n, const void *a, const void *b,
                                     void *out, double alpha, int64_t ialpha) {
    DT__CU_FOR(o, n) {
        int64_t ia, ib;
        dt__cu_bgeom_offsets(&g, o, &ia, &ib);
        dt__cu_binary_at(op, t, a, ia, b, ib, out, o, alpha, ialpha);
    }
}

/* one dim, each operand contiguous (stride 1) or a scalar (stride 0): no index math */
__global__ void dt__cu_binary_flat_kernel(dt__bop op, dt_dtype t, int64_t n, const void *a, int64_t sa, const void *b,
                                          int64_t sb, void *out, double alpha, int64_t ialpha) {
    DT__CU_FOR(o, n) dt__cu_binary_at(op, t, a, o * sa, b, o * sb, out, o, alpha, ialpha);
}

/* F32, both contiguous and 16-byte aligned: float4 moves */
__global__ void dt__cu_binary_f32x4_kernel(dt__bop op, int64_t n4, const float4 *a, const float4 *b, float4 *out,
                                           float alpha) {
    DT__CU_FOR(i, n4) {
        float4 p = a[i], q = b[i], r;
        r.x = dt__cu_bop_f32(op, p.x, q.x, alpha); r.y = dt__cu_bop_f32(op, p.y, q.y, alpha);
        r.z = dt__cu_bop_f32(op, p.z, q.z, alpha); r.w = dt__cu_bop_f32(op, p.w, q.w, alpha);
        out[i] = r;
    }
}

/* Two dims whose inner strides are 0 or 1 on both sides (a row-broadcast
   add [m, n] + [n], a per-row scale [m, n] * [m, 1]): rows over blocks,
   columns over threads, so no element pays the general kernel's two 64-bit
   divisions (that kernel ran the row-broadcast add at 0.33 of copy
   bandwidth on the first GPU run). */
__global__ void dt__cu_binary_rows_kernel(dt__bop op, dt_dtype t, dt__bgeom g, const void *a, const void *b,
                                          void *out, double alpha, int64_t ialpha) {
    int64_t r, c, cols = g.ext[1];
    for (r = blockIdx.x; r < g.ext[0]; r += gridDim.x)
        for (c = threadIdx.x; c < cols; c += blockDim.x)
            dt__cu_binary_at(op, t, a, r * g.sa[0] + c * g.sa[1], b, r * g.sb[0] + c * g.sb[1], out, r * cols + c,
                             alpha, ialpha);
}

/* the same for F32 with a's and out's rows 16-byte aligned, in float4s;
   b's row is a vector (sb[1] = 1, aligned too) or one value (sb[1] = 0) */
__global__ void dt__cu_binary_rows_f32x4_kernel(dt__bop op, dt__bgeom g, const float *a, const float *b, float *out,
                                                float alpha) {
    int64_t r, c, c4 = g.ext[1] / 4;
    for (r = blockIdx.x; r < g.ext[0]; r += gridDim.x) {
        const float4 *ar = (const float4 *)(const void *)(a + r * g.sa[0]);
        const float *br = b + r * g.sb[0];
        float4 *orow = (float4 *)(void *)(out + r * g.ext[1]);
        for (c = threadIdx.x; c < c4; c += blockDim.x) {
            float4 p = ar[c], q, o;
            if (g.sb[1]) q = ((const float4 *)(const void *)br)[c];
            else q = make_float4(br[0], br[0], br[0], br[0]);
            o.x = dt__cu_bop_f32(op, p.x, q.x, alpha); o.y = dt__cu_bop_f32(op, p.y, q.y, alpha);
            o.z = dt__cu_bop_f32(op, p.z, q.z, alpha); o.w = dt__cu_bop_f32(op, p.w, q.w, alpha);
            orow[c] = o;
        }
    }
}

/* g is [rows, cols] with both inner strides 0 or 1 and rows long enough to
   keep a block's threads busy */
static int dt__cu_binary_rows_fit(const dt__bgeom *g) {
    return g->nd == 2 && g->ext[1] >= 64 && (g->sa[1] == 0 || g->sa[1] == 1) && (g->sb[1] == 0 || g->sb[1] == 1);
}
static int dt__cu_binary_rows_x4(dt_dtype t, const dt__bgeom *g, const void *a, const void *b, const void *out) {
    return t == DT_F32 && g->sa[1] == 1 && g->ext[1] % 4 == 0 && g->sa[0] % 4 == 0 && dt__cu_aligned16(a) &&
           dt__cu_aligned16(out) && (g->sb[1] == 0 || (g->sb[0] % 4 == 0 && dt__cu_aligned16(b)));
}
static void dt__cu_binary_rows(dt__bop op, dt_dtype t, const dt__bgeom *g, const void *a, const void *b, void *out,
                               double alpha, int64_t ialpha) {
    uint64_t rows = (uint64_t)g->ext[0], cap = dt__cu_blocks((uint64_t)g->ext[0] * (uint64_t)g->ext[1]);
    unsigned blocks = (unsigned)(rows < cap ? rows : cap);
    if (dt__cu_binary_rows_x4(t, g, a, b, out))
        DT__CU_START(dt__cu_binary_rows_f32x4_kernel, blocks, DT__CU_THREADS, op, *g, (const float *)a,
                     (const float *)b, (float *)out, (float)alpha);
    else
        DT__CU_START(dt__cu_binary_rows_kernel, blocks, DT__CU_THREADS, op, t, *g, a, b, out, alpha, ialpha);
    dt__cu_check_launch();
}

/* out may alias a or b: every element is read by the thread that writes it */
/* complex: any geometry, dtensor.h's dt__cx_binary_elem per element */
__global__ void dt__cu_cx_binary_kernel(dt__bop op, dt_dtype t, dt__bgeom g, int64_t n, const void *a, const void *b,
                                        void *out, double alpha) {
    DT__CU_FOR(o, n) {
        int64_t ia, ib;
        dt__cu_bgeom_offsets(&g, o, &ia, &ib);
        dt__cx_store(t, out, o, dt__cx_binary_elem(op, dt__cx_load(t, a, ia), dt__cx_load(t, b, ib), alpha));
    }
}

static void dt__cu_k_binary(dt__bop op, dt_dtype t, int ndim, const int64_t *shape, const void *a, const int64_t *sa,
                            const void *b, const int64_t *sb, void *out, double alpha) {
    dt__bgeom g;
    int64_t n = 1, ialpha = dt__cu_is_int(t) ? dt__i64_of(alpha) : 0;
    int d;
    if (!dt__bgeom_make(ndim, shape, sa, sb, &g)) return;
    for (d = 0; d < g.nd; d++) n *= g.ext[d];
    if (dt__cu_is_cx(t)) {
        DT__CU_LAUNCH(dt__cu_cx_binary_kernel, n, op, t, g, n, a, b, out, alpha);
        return;
    }
    if (g.nd == 1 && (g.sa[0] == 0 || g.sa[0] == 1) && (g.sb[0] == 0 || g.sb[0] == 1)) {
        int64_t done = 0;
        if (t == DT_F32 && g.sa[0] == 1 && g.sb[0] == 1 && dt__cu_aligned16(a) && dt__cu_aligned16(b) &&
            dt__cu_aligned16(out) && n >= 4) {
            done = n / 4 * 4;
            DT__CU_LAUNCH(dt__cu_binary_f32x4_kernel, done / 4, op, done / 4, (const float4 *)a, (const float4 *)b,
                          (float4 *)out, (float)alpha);
        }
        if (n > done)
            DT__CU_LAUNCH(dt__cu_binary_flat_kernel, n - done, op, t, n - done, (const char *)a + done * 4 * g.sa[0],
                          g.sa[0], (const char *)b + done * 4 * g.sb[0], g.sb[0], (char *)out + done * 4, alpha, ialpha);
        return;
    }
    if (dt__cu_binary_rows_fit(&g)) {
        dt__cu_binary_rows(op, t, &g, a, b, out, alpha, ialpha);
        return;
    }
    DT__CU_LAUNCH(dt__cu_binary_kernel, n, op, t, g, n, a, b, out, alpha, ialpha);
}

/* block-wide merge of the threads' accumulators; thread 0 gets the result */
__device__ void dt__cu_block_merge(dt__rop op, int isint, dt__cu_racc *acc) {
    __shared__ dt__cu_racc sh[DT__CU_THREADS];
    unsigned s;
    sh[threadIdx.x] = *acc;
    __syncthreads();
    for (s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) dt__cu_racc_merge(op, isint, &sh[threadIdx.x], &sh[threadIdx.x + s]);
        __syncthreads();
    }
    *acc = sh[0];
    __syncthreads(); /* sh is reused by the next call */
}

/* few, long reductions: a block per output, threads striding over the reduced elements */
__global__ void dt__cu_reduce_block_kernel(dt__rop op, dt_dtype t, dt__cu_rplan p, const void *x, void *out,
                                           double scale) {
    int64_t o, r;
    int isint = dt__cu_is_int(t);
    for (o = blockIdx.x; o < p.nout; o += gridDim.x) {
        int64_t base = dt__cu_unravel(p.nk, p.kext, p.kst, o);
        dt__cu_racc acc;
        dt__cu_racc_init(op, t, &acc);
        for (r = threadIdx.x; r < p.nred; r += blockDim.x)
            dt__cu_racc_add(op, t, &acc, x, base + dt__cu_unravel(p.nr, p.rext, p.rst, r), r);
        dt__cu_block_merge(op, isint, &acc);
        if (threadIdx.x == 0) dt__cu_rstore(op, t, &acc, out, o, scale);
    }
}

/* many, short reductions: a thread per output */
__global__ void dt__cu_reduce_thread_kernel(dt__rop op, dt_dtype t, dt__cu_rplan p, const void *x, void *out,
                                            double scale) {
    DT__CU_FOR(o, p.nout) {
        int64_t base = dt__cu_unravel(p.nk, p.kext, p.kst, o), r;
        dt__cu_racc acc;
        dt__cu_racc_init(op, t, &acc);
        for (r = 0; r < p.nred; r++) dt__cu_racc_add(op, t, &acc, x, base + dt__cu_unravel(p.nr, p.rext, p.rst, r), r);
        dt__cu_rstore(op, t, &acc, out, o, scale);
    }
}

static void dt__cu_rplan_make(int ndim, const int64_t *shape, unsigned mask, dt__cu_rplan *p) {
    dt__rgeom g;
    int d;
    dt__rgeom_make(ndim, shape, mask, &g);
    p->nk = p->nr = 0;
    p->nout = p->nred = 1;
    for (d = 0; d < g.nd; d++) {
        if (g.red[d]) {
            p->rext[p->nr] = g.ext[d]; p->rst[p->nr] = g.st[d]; p->nr++;
            p->nred *= g.ext[d];
        } else {
            p->kext[p->nk] = g.ext[d]; p->kst[p->nk] = g.st[d]; p->nk++;
            p->nout *= g.ext[d];
        }
    }
}

static void dt__cu_k_reduce(dt__rop op, dt_dtype t, int ndim, const int64_t *shape, unsigned mask, const void *x,
                            void *out, double scale) {
    dt__cu_rplan p;
    int64_t nout = 1, nred = 1;
    int d, use_blocks;
    if (dt__cu_is_cx(t)) { /* sum, mean: the parts' reduction, as the host's */
        dt__cx_reduce(dt__cu_k_reduce, op, t, ndim, shape, mask, x, out, scale);
        return;
    }
    for (d = 0; d < ndim; d++) {
        if ((mask >> d) & 1u) nred *= shape[d];
        else nout *= shape[d];
    }
    if (nout == 0) return;
    dt__cu_rplan_make(ndim, shape, mask, &p);
    if (nred == 0) { /* the identity of op, scaled as the host's: a mean over an empty extent is NaN */
        p.nred = 0;
        p.nk = 0;
        p.nout = nout;
    }
    /* Coalescing decides: when x's innermost dim is kept, neighbouring
       outputs are neighbouring elements, so a thread per output reads a
       warp's worth of a row at once; when it is reduced, a block's threads
       read one output's span together. Few outputs: blocks either way. */
    {
        int inner_kept = p.nk > 0 && p.kst[p.nk - 1] == 1;
        use_blocks = inner_kept ? p.nout < 2048 : (p.nred >= 32 || p.nout < 1024);
    }
    if (use_blocks) {
        unsigned blocks = (unsigned)(p.nout < 65535 ? p.nout : 65535);
        DT__CU_START(dt__cu_reduce_block_kernel, blocks, DT__CU_THREADS, op, t, p, x, out, scale);
        dt__cu_check_launch();
    } else {
        DT__CU_LAUNCH(dt__cu_reduce_thread_kernel, p.nout, op, t, p, x, out, scale);
    }
}

/* ---- softmax / norm / xent: a block per row, two or three passes ---- */

/* the block's NaN-propagating max / double sum of per-thread values */
__device__ double dt__cu_block_max(double v) {
    dt__cu_racc a;
    a.v = v; a.iv = 0; a.arg = 0;
    dt__cu_block_merge(DT__R_MAX, 0, &a);
    return a.v;
}
__device__ double dt__cu_block_sum(double v) {
    dt__cu_racc a;
    a.v = v; a.iv = 0; a.arg = 0;
    dt__cu_block_merge(DT__R_SUM, 0, &a);
    return a.v;
}

/* row (o, c) of [outer, n, inner]: elements o*n*inner + i*inner + c */
__global__ void dt__cu_softmax_kernel(dt_dtype t, const void *x, void *y, int64_t outer, int64_t n, int64_t inner,
                                      int want_log) {
    int64_t row, i;
    for (row = blockIdx.x; row < outer * inner; row += gridDim.x) {
        int64_t base = (row / inner) * n * inner + row % inner;
        double m = -HUGE_VAL, s = 0.0;
        for (i = threadIdx.x; i < n; i += blockDim.x) {
            double v = t == DT_F64 ? ((const double *)x)[base + i * inner] : (double)dt__cu_ld_f32(t, x, base + i * inner);
            m = DT__FMAX(v, m);
        }
        m = dt__cu_block_max(m);
        if (t == DT_F64) {
            for (i = threadIdx.x; i < n; i += blockDim.x) s += exp(((const double *)x)[base + i * inner] - m);
            s = dt__cu_block_sum(s);
            {
                double f = want_log ? log(s) : 1.0 / s;
                for (i = threadIdx.x; i < n; i += blockDim.x) {
                    double v = ((const double *)x)[base + i * inner] - m;
                    ((double *)y)[base + i * inner] = want_log ? v - f : exp(v) * f;
                }
            }
        } else {
            float mf = (float)m, f;
            for (i = threadIdx.x; i < n; i += blockDim.x) s += (double)dt__expf(dt__cu_ld_f32(t, x, base + i * inner) - mf);
            s = dt__cu_block_sum(s);
            f = want_log ? logf((float)s) : (float)(1.0 / s);
            for (i = threadIdx.x; i < n; i += blockDim.x) {
                float v = dt__cu_ld_f32(t, x, base + i * inner) - mf;
                dt__cu_st_f32(t, y, base + i * inner, want_log ? v - f : dt__expf(v) * f);
            }
        }
    }
}

static unsigned dt__cu_row_blocks(uint64_t rows) { return (unsigned)(rows < 65535 ? rows : 65535); }

static void dt__cu_k_softmax(dt_dtype t, const void *x, void *y, size_t outer, size_t n, size_t inner, int want_log) {
    if (!n || !inner || !outer) return;
    DT__CU_START(dt__cu_softmax_kernel, dt__cu_row_blocks(outer * inner), DT__CU_THREADS,
        t, x, y, (int64_t)outer, (int64_t)n, (int64_t)inner, want_log);
    dt__cu_check_launch();
}

__global__ void dt__cu_norm_kernel(dt_dtype t, const void *x, const void *w, const void *b, void *y, int64_t rows,
                                   int64_t n, double eps, int rms) {
    int64_t r, i;
    for (r = blockIdx.x; r < rows; r += gridDim.x) {
        int64_t off = r * n;
        double mean = 0.0, sq = 0.0, scale;
        if (!rms) {
            double s = 0.0;
            for (i = threadIdx.x; i < n; i += blockDim.x) s += dt__cu_ld_f64(t, x, off + i);
            mean = dt__cu_block_sum(s) / (double)n;
        }
        for (i = threadIdx.x; i < n; i += blockDim.x) {
            double d = dt__cu_ld_f64(t, x, off + i) - mean;
            sq += d * d;
        }
        sq = dt__cu_block_sum(sq);
        scale = 1.0 / sqrt(sq / (double)n + eps);
        for (i = threadIdx.x; i < n; i += blockDim.x) {
            if (t == DT_F64) {
                double o = (((const double *)x)[off + i] - mean) * scale;
                if (w) o *= ((const double *)w)[i];
                if (b && !rms) o += ((const double *)b)[i];
                ((double *)y)[off + i] = o;
            } else {
                float o = (dt__cu_ld_f32(t, x, off + i) - (float)mean) * (float)scale;
                if (w) o *= dt__cu_ld_f32(t, w, i);
                if (b && !rms) o += dt__cu_ld_f32(t, b, i);
                dt__cu_st_f32(t, y, off + i, o);
            }
        }
    }
}

static void dt__cu_k_norm(dt_dtype t, const void *x, const void *w, const void *b, void *y, size_t rows, size_t n,
                          double eps, int rms) {
    if (!n || !rows) return;
    DT__CU_START(dt__cu_norm_kernel, dt__cu_row_blocks(rows), DT__CU_THREADS, t, x, w, b, y, (int64_t)rows,
                                                                                          (int64_t)n, eps, rms);
    dt__cu_check_launch();
}

/* M, rowmax, sumexp and tlogit are DEVICE memory in this table (the ops
   layer allocates them on the tensor's device) */
__global__ void dt__cu_xent_kernel(dt_dtype t, const void *x, int64_t rows, int64_t ncls, int64_t cls0,
                                   dt_dtype target_t, const void *target, const double *M, double *rowmax,
                                   double *sumexp, double *tlogit) {
    int64_t r, c;
    for (r = blockIdx.x; r < rows; r += gridDim.x) {
        int64_t off = r * ncls;
        if (!M) {
            double m = -HUGE_VAL;
            for (c = threadIdx.x; c < ncls; c += blockDim.x) m = DT__FMAX(dt__cu_ld_f64(t, x, off + c), m);
            m = dt__cu_block_max(m);
            if (threadIdx.x == 0 && rowmax) rowmax[r] = m;
            continue;
        }
        if (sumexp) {
            double s = 0.0;
            if (t == DT_F64)
                for (c = threadIdx.x; c < ncls; c += blockDim.x) s += exp(((const double *)x)[off + c] - M[r]);
            else
                for (c = threadIdx.x; c < ncls; c += blockDim.x)
                    s += (double)dt__expf(dt__cu_ld_f32(t, x, off + c) - (float)M[r]);
            s = dt__cu_block_sum(s);
            if (threadIdx.x == 0) sumexp[r] = s;
        }
        if (tlogit && threadIdx.x == 0) {
            int64_t k = target_t == DT_I32 ? (int64_t)((const int32_t *)target)[r] : ((const int64_t *)target)[r];
            tlogit[r] = k >= cls0 && k - cls0 < ncls ? dt__cu_ld_f64(t, x, off + (k - cls0)) : 0.0;
        }
    }
}

static void dt__cu_k_xent(dt_dtype t, const void *x, size_t rows, size_t ncls, int64_t cls0, dt_dtype target_t,
                          const void *target, const double *M, double *rowmax, double *sumexp, double *tlogit) {
    if (!rows) return;
    DT__CU_START(dt__cu_xent_kernel, dt__cu_row_blocks(rows), DT__CU_THREADS,
        t, x, (int64_t)rows, (int64_t)ncls, cls0, target_t, target, M, rowmax, sumexp, tlogit);
    dt__cu_check_launch();
}

/* ---- gemm ----
   cuBLAS is column-major. A row-major view with (row stride, col stride)
   is a column-major matrix when its row stride is 1 (leading dimension:
   the col stride) and the column-major transpose when its col stride is
   1 (leading dimension: the row stride). C column-major: C = op(A) op(B);
   C row-major: C^T = op(B^T) op(A^T), the same call with the operands
   swapped. Matrices with neither stride 1 (and integer dtypes, and
   k == 0) take a plain kernel, one thread per element of C. */

/* rows x cols with strides (rs, cs) as column-major: *trans 0 (ld = cs) or
   1 (stored transposed, ld = rs); 0 if neither fits. The stride of an
   extent-1 dim is free: a column vector is column-major with any rs == 1,
   or its transpose (a row of stride rs) otherwise. */
static int dt__cu_colmajor(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int *trans, int64_t *ld) {
    if (rows <= 1 && cols <= 1) { *trans = 0; *ld = 1; return 1; }
    if (cols == 1) {
        if (rs == 1) { *trans = 0; *ld = rows; return 1; }
        if (rs >= 1) { *trans = 1; *ld = rs; return 1; }
        return 0;
    }
    if (rows == 1) {
        if (cs == 1) { *trans = 1; *ld = cols; return 1; }
        if (cs >= 1) { *trans = 0; *ld = cs; return 1; }
        return 0;
    }
    if (rs == 1 && cs >= rows) { *trans = 0; *ld = cs; return 1; }
    if (cs == 1 && rs >= cols) { *trans = 1; *ld = rs; return 1; }
    return 0;
}

static cublasHandle_t dt__cu_blas_h = NULL;

static dt_status dt__cu_blas(const char *what, cublasStatus_t s) {
    if (s == CUBLAS_STATUS_SUCCESS) return DT_OK;
    return dt__fail(DT_ERR_DEVICE, "dt gemm: %s: %s", what, cublasGetStatusString(s));
}

/* the handle, made at first use, always bound to dt_cuda_stream() */
static dt_status dt__cu_blas_handle(cublasHandle_t *h) {
    dt_status st;
    if (!dt__cu_blas_h && (st = dt__cu_blas("cublasCreate", cublasCreate(&dt__cu_blas_h)))) {
        dt__cu_blas_h = NULL;
        return st;
    }
    if ((st = dt__cu_blas("cublasSetStream", cublasSetStream(dt__cu_blas_h, dt__cu_stream_v)))) return st;
    *h = dt__cu_blas_h;
    return DT_OK;
}

/* one column-major call: C[m x n] (ldc) = alpha op(A) op(B) + beta C */
static dt_status dt__cu_gemm_call(dt_dtype t, int m, int n, int k, double alpha, const void *a, int ta, int64_t lda,
                                  const void *b, int tb, int64_t ldb, double beta, void *c, int64_t ldc) {
    cublasHandle_t h;
    cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    dt_status st = dt__cu_blas_handle(&h);
    if (st) return st;
    if (t == DT_F64)
        return dt__cu_blas("cublasDgemm", cublasDgemm(h, oa, ob, m, n, k, &alpha, (const double *)a, (int)lda,
                                                      (const double *)b, (int)ldb, &beta, (double *)c, (int)ldc));
    {
        float al = (float)alpha, be = (float)beta;
        if (t == DT_F32)
            return dt__cu_blas("cublasSgemm", cublasSgemm(h, oa, ob, m, n, k, &al, (const float *)a, (int)lda,
                                                          (const float *)b, (int)ldb, &be, (float *)c, (int)ldc));
        {
            cudaDataType_t dty = t == DT_F16 ? CUDA_R_16F : CUDA_R_16BF; /* halves: F32 compute, as the host */
            return dt__cu_blas("cublasGemmEx", cublasGemmEx(h, oa, ob, m, n, k, &al, a, dty, (int)lda, b, dty, (int)ldb,
                                                            &be, c, dty, (int)ldc, CUBLAS_COMPUTE_32F,
                                                            CUBLAS_GEMM_DEFAULT));
        }
    }
}

/* C[i, j] by the definition, any strides; integers wrap in int64, floats
   accumulate in the working type as the host's loops do */
DT__CU_HD void dt__cu_gemm_elem(dt_dtype t, int64_t i, int64_t j, int64_t k, double alpha, const void *a, int64_t rsa,
                                int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta, void *c, int64_t rsc,
                                int64_t csc) {
    int64_t p, co = i * rsc + j * csc;
    if (dt__cu_is_cx(t)) {
        dt__gemm_cx_elem(t, i, j, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc);
    } else if (dt__cu_is_int(t)) {
        int64_t s = 0, al = dt__sat_i64(alpha, INT64_MIN, INT64_MAX), be = dt__sat_i64(beta, INT64_MIN, INT64_MAX);
        for (p = 0; p < k; p++)
            s = DT__IADD(s, DT__IMUL(dt__cu_ld_i64(t, a, i * rsa + p * csa), dt__cu_ld_i64(t, b, p * rsb + j * csb)));
        s = DT__IMUL(al, s);
        if (beta != 0.0) s = DT__IADD(s, DT__IMUL(be, dt__cu_ld_i64(t, c, co)));
        dt__cu_st_i64(t, c, co, s);
    } else if (t == DT_F64) {
        double s = 0.0;
        for (p = 0; p < k; p++) s += ((const double *)a)[i * rsa + p * csa] * ((const double *)b)[p * rsb + j * csb];
        s *= alpha;
        if (beta != 0.0) s += beta * ((const double *)c)[co]; /* beta == 0: C is not read */
        ((double *)c)[co] = s;
    } else {
        float s = 0.0f;
        for (p = 0; p < k; p++) s += dt__cu_ld_f32(t, a, i * rsa + p * csa) * dt__cu_ld_f32(t, b, p * rsb + j * csb);
        s *= (float)alpha;
        if (beta != 0.0) s += (float)beta * dt__cu_ld_f32(t, c, co);
        dt__cu_st_f32(t, c, co, s);
    }
}

__global__ void dt__cu_gemm_plain_kernel(dt_dtype t, int64_t m, int64_t n, int64_t k, double alpha, const void *a,
                                         int64_t rsa, int64_t csa, const void *b, int64_t rsb, int64_t csb,
                                         double beta, void *c, int64_t rsc, int64_t csc) {
    DT__CU_FOR(e, m * n) dt__cu_gemm_elem(t, e / n, e % n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc);
}

/* one cuBLAS call for a gemm: C' [m x n] (ldc) = op(A') op(B'), column-major */
typedef struct dt__cu_gemmplan {
    int m, n, k;
    const void *a, *b;   /* A', B' (swapped when C is row-major)         */
    int ta, tb;
    int64_t lda, ldb, ldc;
} dt__cu_gemmplan;

/* host side: 0 when cuBLAS cannot take the strides (or the dtype, or k == 0) */
static int dt__cu_gemm_plan(dt_dtype t, int64_t m, int64_t n, int64_t k, const void *a, int64_t rsa, int64_t csa,
                            const void *b, int64_t rsb, int64_t csb, int64_t rsc, int64_t csc, dt__cu_gemmplan *p) {
    int tc;
    if (dt__cu_is_int(t) || dt__cu_is_cx(t) || k <= 0 || m >= INT_MAX || n >= INT_MAX || k >= INT_MAX) return 0;
    if (!dt__cu_colmajor(m, n, rsc, csc, &tc, &p->ldc)) return 0;
    p->k = (int)k;
    if (!tc) { /* C column-major: C = op(A) op(B) */
        if (!dt__cu_colmajor(m, k, rsa, csa, &p->ta, &p->lda) || !dt__cu_colmajor(k, n, rsb, csb, &p->tb, &p->ldb))
            return 0;
        p->m = (int)m; p->n = (int)n; p->a = a; p->b = b;
    } else {   /* C row-major: C^T [n x m] = B^T A^T, B^T [n x k] has strides (csb, rsb) */
        if (!dt__cu_colmajor(n, k, csb, rsb, &p->ta, &p->lda) || !dt__cu_colmajor(k, m, csa, rsa, &p->tb, &p->ldb))
            return 0;
        p->m = (int)n; p->n = (int)m; p->a = b; p->b = a;
    }
    return p->lda < INT_MAX && p->ldb < INT_MAX && p->ldc < INT_MAX;
}

static dt_status dt__cu_k_gemm(dt_dtype t, int64_t m, int64_t n, int64_t k, double alpha, const void *a, int64_t rsa,
                               int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta, void *c, int64_t rsc,
                               int64_t csc) {
    dt__cu_gemmplan p;
    if (m <= 0 || n <= 0) return DT_OK;
    if (k <= 0) alpha = 0.0; /* C = beta C (the plain kernel: no products) */
    if (dt__cu_gemm_plan(t, m, n, k, a, rsa, csa, b, rsb, csb, rsc, csc, &p))
        return dt__cu_gemm_call(t, p.m, p.n, p.k, alpha, p.a, p.ta, p.lda, p.b, p.tb, p.ldb, beta, c, p.ldc);
    DT__CU_LAUNCH(dt__cu_gemm_plain_kernel, m * n, t, m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc);
    return DT_OK;
}

/* ---- permute, embedding: element moves ---- */

DT__CU_HD void dt__cu_move(size_t es, void *dst, const void *src) {
    switch (es) {
    case 1: *(uint8_t *)dst = *(const uint8_t *)src; break;
    case 2: *(uint16_t *)dst = *(const uint16_t *)src; break;
    case 4: *(uint32_t *)dst = *(const uint32_t *)src; break;
    case 8: *(uint64_t *)dst = *(const uint64_t *)src; break;
    default: memcpy(dst, src, es); break;
    }
}

/* y's dims (extent 1 dropped, neighbours adjacent in x merged) with x's
   strides. When y's innermost dim is not x's innermost (a transpose), the
   copy goes by 32 x 32 tiles of the plane (q: the dim contiguous in x,
   last: contiguous in y) through shared memory, so that both the reads and
   the writes of a warp are contiguous; the other dims index the tiles'
   planes (ost: their x and y strides). */
#define DT__CU_TILE 32
typedef struct dt__cu_pplan {
    int nd;
    int64_t ext[DT_MAX_DIMS], xst[DT_MAX_DIMS];
    /* the tiled form */
    int q, no;
    int64_t yq, xl;                                          /* y stride of q, x stride of last */
    int64_t eq, el, ntq, ntl;                                /* extents, tiles along q and last */
    int64_t oext[DT_MAX_DIMS], oxs[DT_MAX_DIMS], oys[DT_MAX_DIMS], nout;
} dt__cu_pplan;

/* host side: 0 when y's innermost dim is x's too (rows copy as they are) */
static int dt__cu_pplan_tiled(dt__cu_pplan *p) {
    int64_t yst[DT_MAX_DIMS];
    int d, last = p->nd - 1;
    if (p->xst[last] == 1) return 0;
    yst[last] = 1;
    for (d = last - 1; d >= 0; d--) yst[d] = yst[d + 1] * p->ext[d + 1];
    p->q = -1;
    for (d = 0; d < p->nd; d++)
        if (p->xst[d] == 1) p->q = d;
    if (p->q < 0) return 0; /* (x's innermost non-1 dim always has stride 1) */
    p->no = 0;
    p->nout = 1;
    for (d = 0; d < p->nd; d++)
        if (d != p->q && d != last) {
            p->oext[p->no] = p->ext[d];
            p->oxs[p->no] = p->xst[d];
            p->oys[p->no] = yst[d];
            p->nout *= p->ext[d];
            p->no++;
        }
    p->yq = yst[p->q];
    p->xl = p->xst[last];
    p->eq = p->ext[p->q];
    p->el = p->ext[last];
    p->ntq = (p->eq + DT__CU_TILE - 1) / DT__CU_TILE;
    p->ntl = (p->el + DT__CU_TILE - 1) / DT__CU_TILE;
    return 1;
}

/* tile t (plane, tile along q, tile along last): element offsets of its
   corner in x and y, and its first indices along q and last */
DT__CU_HD void dt__cu_pplan_tile(const dt__cu_pplan *p, int64_t t, int64_t *xo, int64_t *yo, int64_t *q0, int64_t *l0) {
    int64_t per = p->ntq * p->ntl, o = t / per, r = t - o * per, xb = 0, yb = 0;
    int d;
    *q0 = (r / p->ntl) * DT__CU_TILE;
    *l0 = (r % p->ntl) * DT__CU_TILE;
    for (d = p->no - 1; d >= 0; d--) {
        int64_t i = o % p->oext[d];
        o /= p->oext[d];
        xb += i * p->oxs[d];
        yb += i * p->oys[d];
    }
    *xo = xb + *q0 + *l0 * p->xl;
    *yo = yb + *q0 * p->yq + *l0;
}

__global__ void dt__cu_permute_kernel(size_t es, dt__cu_pplan p, int64_t total, const char *x, char *y) {
    DT__CU_FOR(o, total) dt__cu_move(es, y + o * (int64_t)es, x + dt__cu_unravel(p.nd, p.ext, p.xst, o) * (int64_t)es);
}

/* blockDim (32, 8): a tile is read along q (x contiguous) and written
   along last (y contiguous); the padding column keeps the transposed
   reads of shared memory free of bank conflicts. Any blockDim computes the
   same (the x loops run once at 32; the CPU stand-in launches 1 x 1). */
__global__ void dt__cu_permute_tiled_kernel(size_t es, dt__cu_pplan p, const char *x, char *y) {
    __shared__ uint64_t tile[DT__CU_TILE * (DT__CU_TILE + 1)];
    char *sm = (char *)tile;
    int64_t t, ntiles = p.nout * p.ntq * p.ntl;
    int tx, ty;
    for (t = blockIdx.x; t < ntiles; t += gridDim.x) {
        int64_t xo, yo, q0, l0;
        dt__cu_pplan_tile(&p, t, &xo, &yo, &q0, &l0);
        for (tx = (int)threadIdx.x; tx < DT__CU_TILE; tx += (int)blockDim.x)
            for (ty = (int)threadIdx.y; ty < DT__CU_TILE; ty += (int)blockDim.y) /* element (q0 + tx, l0 + ty) */
                if (q0 + tx < p.eq && l0 + ty < p.el)
                    dt__cu_move(es, sm + (size_t)(ty * (DT__CU_TILE + 1) + tx) * es,
                                x + (xo + tx + ty * p.xl) * (int64_t)es);
        __syncthreads();
        for (tx = (int)threadIdx.x; tx < DT__CU_TILE; tx += (int)blockDim.x)
            for (ty = (int)threadIdx.y; ty < DT__CU_TILE; ty += (int)blockDim.y) /* element (q0 + ty, l0 + tx) */
                if (q0 + ty < p.eq && l0 + tx < p.el)
                    dt__cu_move(es, y + (yo + ty * p.yq + tx) * (int64_t)es,
                                sm + (size_t)(tx * (DT__CU_TILE + 1) + ty) * es);
        __syncthreads();
    }
}

/* host side: the merged dims of y with their x strides */
static int64_t dt__cu_pplan_make(int ndim, const int64_t *xshape, const int *perm, dt__cu_pplan *p) {
    int64_t xst[DT_MAX_DIMS], total = 1;
    int d;
    for (d = ndim - 1; d >= 0; d--) {
        xst[d] = total;
        total *= xshape[d];
    }
    p->nd = 0;
    for (d = 0; d < ndim; d++) {
        int64_t e = xshape[perm[d]], s = xst[perm[d]];
        if (e == 1) continue;
        if (p->nd > 0 && p->xst[p->nd - 1] == s * e) p->ext[p->nd - 1] *= e;
        else p->ext[p->nd++] = e;
        p->xst[p->nd - 1] = s;
    }
    return total;
}

static void dt__cu_k_permute(size_t es, int ndim, const int64_t *xshape, const int *perm, const void *x, void *y) {
    dt__cu_pplan p;
    int64_t total = dt__cu_pplan_make(ndim, xshape, perm, &p);
    if (total == 0) return;
    if (p.nd <= 1) { /* no reordering left */
        if (x != y) dt__cu_note(cudaMemcpyAsync(y, x, (size_t)total * es, cudaMemcpyDeviceToDevice, dt__cu_stream_v));
        return;
    }
    if ((es == 1 || es == 2 || es == 4 || es == 8) && dt__cu_pplan_tiled(&p)) {
        int64_t ntiles = p.nout * p.ntq * p.ntl;
        dim3 block(DT__CU_TILE, 8);
        unsigned grid = (unsigned)(ntiles < (int64_t)dt__cu_blocks((uint64_t)ntiles * DT__CU_THREADS)
                                       ? ntiles : (int64_t)dt__cu_blocks((uint64_t)ntiles * DT__CU_THREADS));
        DT__CU_START(dt__cu_permute_tiled_kernel, grid, block, es, p, (const char *)x, (char *)y);
        dt__cu_check_launch();
        return;
    }
    DT__CU_LAUNCH(dt__cu_permute_kernel, total, es, p, total, (const char *)x, (char *)y);
}

__global__ void dt__cu_embedding_kernel(size_t es, const char *table, int64_t row0, int64_t nrows, int64_t dim,
                                        dt_dtype idx_t, const void *idx, int64_t nidx, char *out) {
    DT__CU_FOR(e, nidx * dim) {
        int64_t i = e / dim, j = e % dim;
        int64_t v = idx_t == DT_I32 ? (int64_t)((const int32_t *)idx)[i] : ((const int64_t *)idx)[i];
        if (v >= row0 && v - row0 < nrows) dt__cu_move(es, out + e * (int64_t)es, table + ((v - row0) * dim + j) * (int64_t)es);
        else memset(out + e * (int64_t)es, 0, es);
    }
}

static void dt__cu_k_embedding(dt_dtype t, const void *table, int64_t row0, int64_t nrows, int64_t dim, dt_dtype idx_t,
                               const void *idx, size_t nidx, void *out) {
    if (!nidx || dim <= 0) return;
    DT__CU_LAUNCH(dt__cu_embedding_kernel, (int64_t)nidx * dim, dt_dtype_size(t), (const char *)table, row0, nrows, dim,
                  idx_t, idx, (int64_t)nidx, (char *)out);
}

/* ---- rng: one Philox block per work item ---- */

__global__ void dt__cu_rng_kernel(dt__rng_op op, dt__cu_rngplan pl, uint64_t items, void *y) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, step = (uint64_t)gridDim.x * blockDim.x;
    for (; t < items; t += step) dt__cu_rng_item(&op, &pl, t, y);
}

/* op->x (dropout) and op->mask are device pointers, like y */
static void dt__cu_k_rng(const dt__rng_op *op, int ndim, const int64_t *gs, const int64_t *lo, const int64_t *ext,
                         void *y) {
    dt__cu_rngplan pl;
    uint64_t items;
    if (!dt__cu_rngplan_make(op, ndim, gs, lo, ext, &pl)) return;
    items = pl.nspans * pl.bpr;
    DT__CU_START(dt__cu_rng_kernel, dt__cu_blocks(items), DT__CU_THREADS, *op, pl, items, y);
    dt__cu_check_launch();
}

/* integer Partial(AVG): the host's dt__avg_split / dt__avg_join element
   by element (C's truncating division is CUDA's; the mean is dtensor.h's
   dt__avg_mean), so the device's mean is the host's bit for bit */
__global__ void dt__cu_avg_split_kernel(dt_dtype t, const void *x, int64_t n, int k, int64_t *q, int64_t *r) {
    DT__CU_FOR(i, n) {
        int64_t v = dt__cu_ld_i64(t, x, i);
        q[i] = v / k;
        r[i] = v % k;
    }
}

static void dt__cu_k_avg_split(dt_dtype t, const void *x, size_t n, int k, int64_t *q, int64_t *r) {
    if (n) DT__CU_LAUNCH(dt__cu_avg_split_kernel, n, t, x, (int64_t)n, k, q, r);
}

__global__ void dt__cu_avg_join_kernel(dt_dtype t, const int64_t *q, const int64_t *r, int64_t n, int k, void *out) {
    DT__CU_FOR(i, n) dt__cu_st_i64(t, out, i, dt__avg_mean(q[i], r[i], k));
}

static void dt__cu_k_avg_join(dt_dtype t, const int64_t *q, const int64_t *r, size_t n, int k, void *out) {
    if (n) DT__CU_LAUNCH(dt__cu_avg_join_kernel, n, t, q, r, (int64_t)n, k, out);
}

static const dt__kernels dt__cu_kernels_v = { dt__cu_k_unary, dt__cu_k_cast, dt__cu_k_binary, dt__cu_k_reduce,
                                              dt__cu_k_softmax, dt__cu_k_norm, dt__cu_k_gemm, dt__cu_k_permute,
                                              dt__cu_k_embedding, dt__cu_k_xent, dt__cu_k_rng, dt__cu_k_avg_split,
                                              dt__cu_k_avg_join };
static const struct dt__kernels *dt__cu_kernels_get(void) { return &dt__cu_kernels_v; }

/* the DT_CUDA device: the memory calls of >>cuda-device and these kernels */
static const dt__device dt__cu_device_v = { "cuda", dt__cu_alloc, dt__cu_free, dt__cu_copy, dt__cu_zero,
                                            dt__cu_copy_box, dt__cu_alloc_host, dt__cu_free_host, dt__cu_owns,
                                            dt__cu_sync, dt__cu_kernels_get, dt__cu_copy_box_op,
                                            dt__cu_fuse, dt__cu_run_fused, dt__cu_unfuse, dt__cu_run_copies,
                                            dt__cu_side };

static const dt__device *dt__cuda_device(void) { return &dt__cu_device_v; }

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
   one rank        allreduce and reduce_scatter on a one-rank communicator
                   are a device copy (every op, AVG included, is the
                   identity there). Not only a shortcut: NCCL (2.28.3 seen)
                   runs ncclAvg at one rank as a pre-multiplying kernel whose
                   blocks each take floor(count/blocks) elements rounded up to
                   a 16-byte pack, with blocks = min(32, bytes/16 KiB rounded
                   up); when that rounding adds nothing, the count % blocks
                   elements past the last block are never written (F64,
                   3,000,017 elements: 3,000,000 written). test_nccl runs
                   counts just past 512 KiB, where that split starts to drop.
   broadcast       ncclBroadcast in place, in bytes (ncclUint8).
   barrier         a one-element ncclAllReduce on a stream-ordered scratch
                   int, then cudaStreamSynchronize.
   start / wait    start: one group of ncclSend/ncclRecv (one per message) and
                   a CUDA event recorded after it (one of 64 kept per
                   communicator, used in turn). wait: the stream it is
                   called on waits for that event (cudaStreamWaitEvent);
                   the host does not. Work enqueued elsewhere between start
                   and wait (a stencil's interior, on the program's stream
                   while a halo exchange runs on the library's
                   communication stream) runs while the messages move.

   SYNCHRONISATION. Everything is enqueued on the library's current stream
   (dt__cu_stream_v): dt_cuda_stream() (the `stream` given to dt_comm_nccl
   becomes it), or the communication stream while a halo exchange's work
   runs there (>>cuda-device, dt__cu_side). Split children do the same. The
   callbacks return once the work is ENQUEUED, not done -- except barrier,
   which blocks the host until the stream is done. So the results are
   visible to later work on that stream without any synchronisation, and
   the host must synchronise before it reads them; the buffers must stay
   valid until the stream has run past the call.

   ERRORS. Every NCCL result other than ncclSuccess becomes DT_ERR_COMM with
   the call's name, ncclGetErrorString and ncclGetLastError; CUDA errors
   become DT_ERR_DEVICE with cudaGetErrorString. Errors NCCL finds while the
   work runs (a peer that died, a network failure) come back from
   ncclCommGetAsyncError, which barrier checks after synchronising.
   A nonblocking communicator (ncclConfig_t.blocking = 0) answers
   ncclInProgress; dt__nccl_check waits for its final state, so such
   communicators work too (blocking at the host while NCCL sets calls up).
   The calling thread's current CUDA device must be the communicator's (one
   GPU per process, as dtensor_cuda.h assumes throughout). */

/* a start/wait request: an event recorded after the group of messages,
   made at the slot's first use and kept (an exchange replayed from a CUDA
   graph allocates nothing) */
#define DT__NCCL_REQUESTS 64
typedef struct dt__nccl_request {
    cudaEvent_t done;
    int made;
} dt__nccl_request;

typedef struct dt__nccl {
    ncclComm_t comm;
    int rank, size;
    int owned; /* a split child: its comm is ours to destroy */
    dt__nccl_request rq[DT__NCCL_REQUESTS]; /* used in turn */
    int next;
} dt__nccl;

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
    return dt__nccl_check(b->comm, ncclSend(buf, bytes, ncclUint8, peer, b->comm, dt__cu_stream_v), "ncclSend");
}

static dt_status dt__nccl_recv(const dt__nccl *b, void *buf, size_t bytes, int peer) {
    return dt__nccl_check(b->comm, ncclRecv(buf, bytes, ncclUint8, peer, b->comm, dt__cu_stream_v), "ncclRecv");
}

/* device-to-device (or any UVA pointers) on the stream */
static dt_status dt__nccl_copy(void *dst, const void *src, size_t bytes) {
    if (!bytes || dst == src) return DT_OK;
    return dt__nccl_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, dt__cu_stream_v), "cudaMemcpyAsync");
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
    case DT_C64: case DT_C128: return 0; /* never asked: dtensor.h reduces complex as its parts (F32/F64) */
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

static dt_status dt__nccl_wrap(ncclComm_t comm, int owned, void **out, int *rank, int *size) {
    dt__nccl *b = NULL;
    int r = 0, n = 0;
    dt_status st;
    if ((st = dt__nccl_check(comm, ncclCommUserRank(comm, &r), "ncclCommUserRank"))) return st;
    if ((st = dt__nccl_check(comm, ncclCommCount(comm, &n), "ncclCommCount"))) return st;
    if ((st = dt__alloc("dt_comm_nccl", sizeof *b, (void **)&b))) return st;
    memset(b, 0, sizeof *b);
    b->comm = comm;
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
    if ((st = dt__nccl_wrap(nc, 1, new_user, new_rank, new_size))) ncclCommDestroy(nc);
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
        return dt__nccl_check(b->comm, ncclAllGather(sb, rb, rc[0], ncclUint8, b->comm, dt__cu_stream_v), "ncclAllGather");
    }
    if ((st = dt__nccl_group_begin())) return st;
    for (j = 0; j < b->size && !st; j++) {
        if (!rc[j]) continue;
        /* the root sends from sendbuf (which may be its block: in place) */
        st = dt__nccl_check(b->comm,
                            ncclBroadcast(j == b->rank ? sb : (const void *)(r + rd[j]), r + rd[j], rc[j], ncclUint8, j,
                                          b->comm, dt__cu_stream_v),
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
    if ((st = dt__nccl_copy(r + rd[me], s + sd[me], rc[me]))) return st;
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
    if (b->size == 1) return dt__nccl_copy(rb, sb, count * dt_dtype_size(t)); /* see "one rank" above */
    return dt__nccl_check(b->comm, ncclAllReduce(sb, rb, count, ty, o, b->comm, dt__cu_stream_v), "ncclAllReduce");
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
    if ((st = dt__nccl_cuda(cudaMallocAsync((void **)&pad, padded, dt__cu_stream_v), "cudaMallocAsync"))) return st;
    out = direct ? (char *)rb : pad + block * (size_t)b->size;
    for (j = 0; j < b->size && !st; j++) {
        char *dst = pad + block * (size_t)j;
        size_t have = counts[j] * es;
        st = dt__nccl_copy(dst, s + off, have);
        if (!st && have < block)
            st = dt__nccl_cuda(cudaMemsetAsync(dst + have, 0, block - have, dt__cu_stream_v), "cudaMemsetAsync");
        off += have;
    }
    if (!st)
        st = dt__nccl_check(b->comm, ncclReduceScatter(pad, out, m, ty, o, b->comm, dt__cu_stream_v), "ncclReduceScatter");
    if (!st && !direct) st = dt__nccl_copy(rb, out, counts[me] * es);
    fe = cudaFreeAsync(pad, dt__cu_stream_v); /* stream-ordered: after the work above, error or not */
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
    if (b->size == 1) return dt__nccl_copy(rb, sb, m * dt_dtype_size(t)); /* see "one rank" above */
    if (dt__nccl_uniform(counts, NULL, b->size))
        return dt__nccl_check(b->comm, ncclReduceScatter(sb, rb, m, ty, o, b->comm, dt__cu_stream_v), "ncclReduceScatter");
    return dt__nccl_reduce_scatter_padded(b, sb, rb, counts, m, dt_dtype_size(t), ty, o);
}

static dt_status dt__nccl_broadcast(void *user, void *buf, size_t bytes, int root) {
    const dt__nccl *b = (const dt__nccl *)user;
    if (!bytes) return DT_OK;
    return dt__nccl_check(b->comm, ncclBroadcast(buf, buf, bytes, ncclUint8, root, b->comm, dt__cu_stream_v),
                          "ncclBroadcast");
}

static dt_status dt__nccl_barrier(void *user) {
    const dt__nccl *b = (const dt__nccl *)user;
    int *token = NULL;
    cudaError_t fe;
    dt_status st;
    if ((st = dt__nccl_cuda(cudaMallocAsync((void **)&token, sizeof *token, dt__cu_stream_v), "cudaMallocAsync"))) return st;
    st = dt__nccl_cuda(cudaMemsetAsync(token, 0, sizeof *token, dt__cu_stream_v), "cudaMemsetAsync");
    if (!st)
        st = dt__nccl_check(b->comm, ncclAllReduce(token, token, 1, ncclInt32, ncclSum, b->comm, dt__cu_stream_v),
                            "ncclAllReduce (barrier)");
    fe = cudaFreeAsync(token, dt__cu_stream_v);
    if (!st) st = dt__nccl_cuda(fe, "cudaFreeAsync");
    if (!st) st = dt__nccl_cuda(cudaStreamSynchronize(dt__cu_stream_v), "cudaStreamSynchronize (barrier)");
    if (!st) st = dt__nccl_async_error(b, "barrier");
    return st;
}

/* The group of messages on the library's stream, then the event of the
   next request slot recorded after it; wait orders the stream it is
   called on after that event. Nothing blocks the host and nothing is
   allocated past a slot's first use, so an exchange can be captured into a
   CUDA graph; errors of the messages themselves surface at the next
   synchronising call (barrier, or any call that hands data to the host). */
static dt_status dt__nccl_start(void *user, int n, const dt_message *msgs, void **request) {
    dt__nccl *b = (dt__nccl *)user;
    dt__nccl_request *rq = &b->rq[b->next];
    int i;
    dt_status st;
    *request = NULL;
    if (!rq->made) {
        if ((st = dt__nccl_cuda(cudaEventCreateWithFlags(&rq->done, cudaEventDisableTiming), "cudaEventCreateWithFlags")))
            return st;
        rq->made = 1;
    }
    if (!(st = dt__nccl_group_begin())) {
        for (i = 0; i < n && !st; i++)
            st = msgs[i].send ? dt__nccl_send(b, msgs[i].buf, msgs[i].bytes, msgs[i].peer)
                              : dt__nccl_recv(b, msgs[i].buf, msgs[i].bytes, msgs[i].peer);
        st = dt__nccl_group_end(b, st);
    }
    if (!st) st = dt__nccl_cuda(cudaEventRecord(rq->done, dt__cu_stream_v), "cudaEventRecord");
    if (st) return st;
    b->next = (b->next + 1) % DT__NCCL_REQUESTS;
    *request = rq;
    return DT_OK;
}

/* (the asynchronous error NCCL has found so far: a query, not a wait) */
static dt_status dt__nccl_wait(void *user, void *request) {
    dt__nccl_request *rq = (dt__nccl_request *)request;
    dt_status st;
    if (!rq) return DT_OK;
    st = dt__nccl_cuda(cudaStreamWaitEvent(dt__cu_stream_v, rq->done, 0), "cudaStreamWaitEvent (wait)");
    return st ? st : dt__nccl_async_error((const dt__nccl *)user, "wait");
}

static void dt__nccl_destroy(void *user) {
    dt__nccl *b = (dt__nccl *)user;
    int i;
    if (!b) return;
    for (i = 0; i < DT__NCCL_REQUESTS; i++)
        if (b->rq[i].made) cudaEventDestroy(b->rq[i].done); /* (CUDA releases it once a record pending has run) */
    if (b->owned) ncclCommDestroy(b->comm); /* nothing to report to: destroy returns void */
    DT_FREE(b);
}

static dt_status dt__comm_nccl_body(ncclComm_t comm, cudaStream_t stream, dt_comm **out) {
    dt_comm_desc d;
    void *user = NULL;
    dt_status st;
    if (!out) return dt__fail(DT_ERR_ARG, "dt_comm_nccl: out is NULL");
    *out = NULL;
    if (!comm) return dt__fail(DT_ERR_ARG, "dt_comm_nccl: comm is NULL");
    memset(&d, 0, sizeof d);
    if ((st = dt__nccl_wrap(comm, 0, &user, &d.rank, &d.size))) return st;
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
    /* its own errors: the messages above name the NCCL call; the wrappers keep them */
    if ((st = dt__comm_make("dt_comm_nccl", &d, DT__CAP_OWN_ERRORS, out))) {
        dt__nccl_destroy(user);
        return st;
    }
    dt_cuda_set_stream(stream);
    return DT_OK;
}
DT_API dt_status dt_comm_nccl(ncclComm_t comm, cudaStream_t stream, dt_comm **out) {
    DT__PUBLIC("dt_comm_nccl", dt__comm_nccl_body(comm, stream, out));
}

#endif /* DTENSOR_IMPLEMENTATION */

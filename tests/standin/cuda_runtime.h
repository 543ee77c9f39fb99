/* tests/standin/cuda_runtime.h -- a CPU stand-in for the part of the CUDA
   runtime that dtensor_cuda.h and its tests use, so that they build with
   g++ and run where CI runs: no GPU, no CUDA toolkit.

   With tests/standin/ first on the include path, `#include "dtensor_cuda.h"`
   gets this file, nccl.h (NCCL's collectives over MPI) and cublas_v2.h
   (column-major GEMM loops) from here. The programs are compiled as C++
   (g++ -x c++ -I tests/standin); `make standin` builds them, tests/run.sh
   runs them (see tests/README.md).

   What it models, and how faithfully:
   - DEVICE MEMORY is host memory the program cannot touch. Every
     cudaMalloc is its own mapping, PROT_NONE outside the stand-in's "device
     work" (kernel launches, copies, memsets, NCCL and cuBLAS calls), with a
     guard page after it. Host code that reads or writes a device pointer
     directly -- a bug that only a GPU would have shown -- faults at once,
     with a backtrace under ASan. cudaMemcpy/Memset and every NCCL and
     cuBLAS call check that each device range lies inside ONE live
     allocation and that the copy direction matches the pointers (stricter
     than CUDA, which may fault later or not at all); double and foreign
     frees are errors.
   - The DEVICE has 2 SMs (so grid-stride loops wrap: dtensor_cuda.h caps its
     grids at 32 blocks per SM), DTCU_STANDIN_DEVICES devices (default 8:
     one per rank of a test) and DTCU_STANDIN_MEM bytes (default 2 GiB): an
     allocation past it fails with cudaErrorMemoryAllocation, so a test
     that outgrows a GPU's budget fails here too. Launch limits are CUDA's:
     a grid or block that is empty or too large is cudaErrorInvalidConfiguration
     from the next cudaGetLastError.
   - KERNELS run on the CPU when their stream runs (below): every block in
     turn, each as ONE thread (blockDim 1). Kernels written for any
     blockDim (grid-stride and block-stride loops, tree merges over
     blockDim) compute their results; __syncthreads is a no-op, __shared__
     is static. A kernel that assumes its launch's blockDim is wrong here,
     as it would be on a GPU launched otherwise. Warp-level behaviour,
     timing and races: GPU only.
   - STREAMS ARE ASYNCHRONOUS, so a missing synchronisation reads stale
     data here as on a GPU (more reliably: the work has not run at all).
     Kernel launches, cudaMemcpyAsync, cudaMemsetAsync, cudaMemset,
     cudaFreeAsync, cuBLAS GEMMs and the stores of NCCL's results are QUEUED
     on their stream, with their arguments captured by value at the call
     (as CUDA does), and run only when the host waits for them:
       cudaStreamSynchronize, cudaStreamQuery   the stream's work (both
                                                answer "done": the host
                                                polling is when the device
                                                gets to run)
       cudaEventSynchronize, cudaEventQuery     the work before the record
       cudaDeviceSynchronize, cudaFree,
       cudaFreeHost                             everything (CUDA syncs the
                                                device there too)
       cudaMemcpy                               up to the copy, on the legacy
                                                stream, then returns -- except
                                                device to device (no host
                                                wait in CUDA) and host to
                                                device from pageable memory
                                                (CUDA returns once it has
                                                staged the source: the
                                                stand-in snapshots it and
                                                queues the store); from
                                                cudaMallocHost memory it waits
       cudaMemcpyAsync host to host             up to the copy (synchronous
                                                in CUDA)
     Everything else is asynchronous: cudaMemcpyAsync between host and
     device reads and writes the host side when it runs (CUDA "might" be
     synchronous with pageable memory; code must not count on it), and
     cudaMemset of device memory is asynchronous, as CUDA documents.
     Ordering is CUDA's: FIFO per stream; the legacy default stream (0,
     cudaStreamLegacy) waits for the earlier work of every blocking stream
     and they for its earlier work, streams created cudaStreamNonBlocking
     do not (so cudaMemcpy on stream 0 does NOT wait for them);
     cudaStreamPerThread is a blocking stream of the calling thread;
     cudaEventRecord marks a point of a stream, cudaStreamWaitEvent orders
     a stream after it. Waiting runs exactly the work the wait depends on,
     in issue order, with device memory readable.
     NCCL is the one eager place (tests/standin/nccl.h): its MPI traffic
     cannot wait for a sync point (the peer may be blocked in MPI on the
     host, where a GPU would have run the collective), so a call first runs
     its stream's queued work, moves the data at once, and queues only the
     stores into the receive buffers on the stream: results still appear
     in stream order. DTCU_STANDIN_EAGER=1 runs all work when it is issued
     (the old synchronous stand-in), to tell a missing sync from a bug.
     The host process is one thread for the stand-in's queues.
   - ERRORS: the last error is per thread, read and cleared by
     cudaGetLastError. Any entry point can be made to fail on its n-th call
     (DTCU_STANDIN_FAIL="cudaMalloc:3,ncclAllReduce:1", or
     dtcu_standin_fail() from a test): allocations then answer
     cudaErrorMemoryAllocation, everything else cudaErrorLaunchFailure
     (NCCL: ncclUnhandledCudaError); a launch's error is there at once,
     for the next cudaGetLastError, and a wait made to fail still runs the
     work it waits for first (so nothing is written into a buffer the
     caller frees after the error). DTCU_STANDIN_REPORT=1 prints the device
     memory's high-water mark and the allocations not freed, at exit.
   - GRAPHS: stream capture into a graph, with CUDA's rules for what cannot
     be captured, and cudaGraphLaunch replaying the nodes (eagerly: see
     "graphs" below).
   Not modelled: the CUDA libm (the stand-in's device math is the host's),
   managed memory, multiple devices per process, peer access, graph APIs
   other than capture / instantiate / launch / destroy,
   concurrency between streams (queued work runs one op at a time), the
   per-thread default stream compilation mode, host callbacks, 2-D copies. */
#ifndef DTCU_STANDIN_CUDA_RUNTIME_H
#define DTCU_STANDIN_CUDA_RUNTIME_H

#ifndef __cplusplus
#error "tests/standin: compile as C++ (g++ -x c++), as nvcc compiles dtensor_cuda.h"
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <functional>
#include <tuple>
#include <utility>
#include <vector>

#define DTCU_STANDIN 1

/* ------------------------------------------------------------ language */

#define __host__
#define __device__
#define __global__
#define __shared__ static
#define __forceinline__ inline
#define __launch_bounds__(...)

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
typedef dim3 uint3;
struct uint2 { unsigned x, y; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(16) float4 { float x, y, z, w; };
static inline float4 make_float4(float x, float y, float z, float w) {
    float4 v;
    v.x = x, v.y = y, v.z = z, v.w = w;
    return v;
}

/* the running block's coordinates (the one thread of a block is thread 0) */
static thread_local dim3 threadIdx(0, 0, 0), blockIdx(0, 0, 0), blockDim, gridDim;
static inline void __syncthreads(void) {}

/* ------------------------------------------------------------ types */

enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorLaunchFailure = 719,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorStreamCaptureUnmatched = 903,
    cudaErrorStreamCaptureUnjoined = 904,
    cudaErrorStreamCaptureImplicit = 906,
    cudaErrorCapturedEvent = 907
};
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1,
                             cudaStreamCaptureModeRelaxed = 2 };
enum cudaStreamCaptureStatus { cudaStreamCaptureStatusNone = 0, cudaStreamCaptureStatusActive = 1,
                               cudaStreamCaptureStatusInvalidated = 2 };
typedef struct dtcu_graph *cudaGraph_t;
typedef struct dtcu_graph *cudaGraphExec_t; /* an instantiated graph: a copy of its nodes */
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};

enum cudaMemoryType { cudaMemoryTypeUnregistered = 0, cudaMemoryTypeHost = 1, cudaMemoryTypeDevice = 2, cudaMemoryTypeManaged = 3 };
struct cudaPointerAttributes {
    enum cudaMemoryType type;
    int device;
    void *devicePointer;
    void *hostPointer;
};

enum cudaDeviceAttr { cudaDevAttrMaxThreadsPerBlock = 1, cudaDevAttrMultiProcessorCount = 16 };

typedef struct dtcu_stream *cudaStream_t; /* 0: the legacy default stream */
typedef struct dtcu_event *cudaEvent_t;
#define cudaStreamDefault 0x0
#define cudaStreamNonBlocking 0x1
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaEventDefault 0x0
#define cudaEventDisableTiming 0x2

/* a stream: the last op queued on it (0: none); an event: the marker op its
   last cudaEventRecord queued (0: never recorded, which CUDA counts done) */
struct dtcu_stream {
    unsigned magic, flags;
    unsigned long long last;
    unsigned long cap;              /* the capture it takes part in (0: none)     */
    unsigned long long before_cap;  /* its last op before it joined the capture   */
};
struct dtcu_event {
    unsigned magic;
    unsigned long long at;
    unsigned long cap;              /* recorded in that capture (0: not captured) */
};
#define DTCU_STREAM_MAGIC 0x5354524du
#define DTCU_EVENT_MAGIC 0x45564e54u

/* ------------------------------------------------------------ state */

/* one device allocation: a mapping [base, base + maplen) whose last page is
   a guard; the caller's bytes [ptr, ptr + size) end at most 255 bytes
   before the guard (ptr stays 256-aligned, as cudaMalloc's are) */
struct dtcu_alloc {
    char *base, *ptr;
    size_t maplen, size;
    int freeing; /* cudaFreeAsync'd: unmapped when its stream gets there, no longer usable */
};

struct dtcu_state {
    int init;
    size_t budget, live_bytes, peak_bytes;
    int ndev;
    struct dtcu_alloc *a;
    int na, cap;
    int depth;                /* device work in progress: device memory readable */
    long fail_nth[16];        /* DTCU_STANDIN_FAIL / dtcu_standin_fail */
    char fail_fn[16][40];
    long calls[16];
    int nfail;
    long fired;               /* injected failures so far */
    int eager;                /* DTCU_STANDIN_EAGER=1: run device work when issued */
    long work[3];             /* device work queued: kernel launches, copies, memsets */
    long waits, allocs;       /* host waits for the device; cudaMalloc(Async)/cudaMallocHost calls */
};
static struct dtcu_state dtcu_s;
static thread_local cudaError_t dtcu_last = cudaSuccess;
static thread_local int dtcu_device = 0;

static inline size_t dtcu_page(void) {
    static size_t p = 0;
    if (!p) p = (size_t)sysconf(_SC_PAGESIZE);
    return p;
}

static inline void dtcu_fail_add(const char *fn, long nth) {
    int i;
    for (i = 0; i < dtcu_s.nfail; i++)
        if (!strcmp(dtcu_s.fail_fn[i], fn)) break;
    if (i == dtcu_s.nfail) {
        if (dtcu_s.nfail == 16) return;
        dtcu_s.nfail++;
        snprintf(dtcu_s.fail_fn[i], sizeof dtcu_s.fail_fn[i], "%s", fn);
    }
    dtcu_s.fail_nth[i] = nth;
    dtcu_s.calls[i] = 0;
}

/* DTCU_STANDIN_REPORT=1: one line at exit, the device memory's high-water
   mark and what was never freed */
static void dtcu_report(void) {
    int i, n = 0;
    for (i = 0; i < dtcu_s.na; i++) n += !dtcu_s.a[i].freeing;
    fprintf(stderr, "tests/standin: peak device memory %zu bytes; at exit %d allocations (%zu bytes) not freed\n",
            dtcu_s.peak_bytes, n, dtcu_s.live_bytes);
}

static inline void dtcu_boot(void) {
    const char *e;
    if (dtcu_s.init) return;
    dtcu_s.init = 1;
    if ((e = getenv("DTCU_STANDIN_REPORT")) && *e == '1') atexit(dtcu_report);
    dtcu_s.budget = (size_t)2 << 30;
    dtcu_s.ndev = 8;
    if ((e = getenv("DTCU_STANDIN_MEM")) && *e) dtcu_s.budget = (size_t)strtoull(e, NULL, 10);
    if ((e = getenv("DTCU_STANDIN_DEVICES")) && *e) dtcu_s.ndev = atoi(e);
    if ((e = getenv("DTCU_STANDIN_EAGER")) && *e == '1') dtcu_s.eager = 1;
    if ((e = getenv("DTCU_STANDIN_FAIL")) && *e) { /* name:n[,name:n...] */
        char buf[512], *tok, *save = NULL;
        snprintf(buf, sizeof buf, "%s", e);
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            char *colon = strchr(tok, ':');
            if (!colon) continue;
            *colon = 0;
            dtcu_fail_add(tok, atol(colon + 1));
        }
    }
}

/* The n-th call of `fn` from now on fails (n >= 1; 0 cancels). For tests
   of the error paths; DTCU_STANDIN_FAIL sets the same from the environment. */
static inline void dtcu_standin_fail(const char *fn, long nth) {
    dtcu_boot();
    dtcu_fail_add(fn, nth);
}

/* 1 if this call of `fn` is the one to fail */
static inline int dtcu_injected(const char *fn) {
    int i;
    dtcu_boot();
    for (i = 0; i < dtcu_s.nfail; i++)
        if (dtcu_s.fail_nth[i] > 0 && !strcmp(dtcu_s.fail_fn[i], fn))
            if (++dtcu_s.calls[i] == dtcu_s.fail_nth[i]) {
                dtcu_s.fired++;
                return 1;
            }
    return 0;
}

/* how many injected failures have happened (a test arms one, makes a
   call, and learns whether the call reached the n-th use) */
static inline long dtcu_standin_fired(void) { return dtcu_s.fired; }

static inline size_t dtcu_standin_live_bytes(void) { return dtcu_s.live_bytes; }

/* The device work queued so far, as a GPU profiler counts it: kernel
   launches, cudaMemcpy/cudaMemcpyAsync, cudaMemset/cudaMemsetAsync (NCCL's
   own work not included); returns their sum. A test takes the difference
   around a call to bound what the call enqueues. */
static inline long dtcu_standin_work(long *launches, long *copies, long *sets) {
    if (launches) *launches = dtcu_s.work[0];
    if (copies) *copies = dtcu_s.work[1];
    if (sets) *sets = dtcu_s.work[2];
    return dtcu_s.work[0] + dtcu_s.work[1] + dtcu_s.work[2];
}

/* How often the host has waited for the device (cudaStreamSynchronize,
   cudaEventSynchronize, cudaDeviceSynchronize, a cudaMemcpy that returns
   after its copy, cudaFree / cudaFreeHost) and allocated (cudaMalloc,
   cudaMallocAsync, cudaMallocHost): what a step replayed from a CUDA graph
   must not do. */
static inline long dtcu_standin_waits(void) { return dtcu_s.waits; }
static inline long dtcu_standin_allocs(void) { return dtcu_s.allocs; }

/* 1: device work waits in its stream's queue (the default); 0: it runs when
   issued (DTCU_STANDIN_EAGER=1), so a test of stale reads has nothing to see */
static inline int dtcu_standin_deferred(void) {
    dtcu_boot();
    return !dtcu_s.eager;
}

static inline cudaError_t dtcu_err(cudaError_t e) {
    if (e != cudaSuccess) dtcu_last = e;
    return e;
}

/* ------------------------------------------------------------ device memory */

static inline void dtcu_protect(const struct dtcu_alloc *a, int prot) {
    if (mprotect(a->base, a->maplen - dtcu_page(), prot) != 0) {
        perror("tests/standin: mprotect");
        abort();
    }
}

/* device work begins / ends: device memory readable and writable inside */
static inline void dtcu_enter(void) {
    int i;
    if (dtcu_s.depth++ == 0)
        for (i = 0; i < dtcu_s.na; i++) dtcu_protect(&dtcu_s.a[i], PROT_READ | PROT_WRITE);
}
static inline void dtcu_leave(void) {
    int i;
    if (--dtcu_s.depth == 0)
        for (i = 0; i < dtcu_s.na; i++) dtcu_protect(&dtcu_s.a[i], PROT_NONE);
}

/* ------------------------------------------------------------ the queues of device work

   One list of ops not yet run, in issue order (seq). An op waits for the
   ops in `after`: the one before it on its stream, the legacy stream's
   implicit ordering, an event it waits for. Running an op first runs what
   it waits for, transitively; issue order is a valid order for that
   (every op waits only for older ones). The list and the streams the
   legacy stream orders against live on the heap for the whole run, so that
   work still queued at exit is neither a leak nor a destroyed object. */
struct dtcu_op {
    unsigned long long seq;
    struct dtcu_stream *on;    /* its stream */
    std::vector<unsigned long long> after;
    std::function<void()> run; /* empty: a marker (an event's record, a stream's wait) */
};
static std::vector<dtcu_op> &dtcu_queue(void) {
    static std::vector<dtcu_op> *q = new std::vector<dtcu_op>;
    return *q;
}
/* the created blocking streams and the per-thread ones: the legacy stream
   orders against them */
static std::vector<struct dtcu_stream *> &dtcu_streams(void) {
    static std::vector<struct dtcu_stream *> *v = new std::vector<struct dtcu_stream *>;
    return *v;
}
static struct dtcu_stream dtcu_legacy = {DTCU_STREAM_MAGIC, 0, 0, 0, 0};
static unsigned long long dtcu_seq = 0;

/* the stream behind a handle, or NULL for an invalid one */
static inline struct dtcu_stream *dtcu_stream_of(cudaStream_t s) {
    if (!s || s == cudaStreamLegacy) return &dtcu_legacy;
    if (s == cudaStreamPerThread) {
        static thread_local struct dtcu_stream *mine = NULL;
        if (!mine) {
            mine = new struct dtcu_stream;
            mine->magic = DTCU_STREAM_MAGIC, mine->flags = 0, mine->last = 0, mine->cap = 0, mine->before_cap = 0;
            dtcu_streams().push_back(mine);
        }
        return mine;
    }
    return s->magic == DTCU_STREAM_MAGIC ? s : NULL;
}

/* the index of op `seq` in the queue, or -1 when it has run (or is 0) */
static inline long dtcu_op_at(unsigned long long seq) {
    std::vector<dtcu_op> &q = dtcu_queue();
    size_t lo = 0, hi = q.size();
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (q[mid].seq < seq) lo = mid + 1;
        else hi = mid;
    }
    return lo < q.size() && q[lo].seq == seq ? (long)lo : -1;
}

/* runs the ops marked in `need` (indices of the queue), in issue order,
   with device memory readable; they leave the queue before they run */
static inline void dtcu_run_marked(const std::vector<char> &need) {
    std::vector<dtcu_op> &q = dtcu_queue(), run, keep;
    size_t k;
    for (k = 0; k < q.size(); k++) (need[k] ? run : keep).push_back(std::move(q[k]));
    q.swap(keep);
    if (run.empty()) return;
    dtcu_enter();
    for (k = 0; k < run.size(); k++)
        if (run[k].run) run[k].run();
    dtcu_leave();
}

/* runs op `seq` and everything it waits for (nothing if it has run) */
static inline void dtcu_run_through(unsigned long long seq) {
    std::vector<dtcu_op> &q = dtcu_queue();
    std::vector<size_t> todo;
    std::vector<char> need;
    long i = dtcu_op_at(seq);
    if (i < 0) return;
    need.assign(q.size(), 0);
    need[(size_t)i] = 1;
    todo.push_back((size_t)i);
    while (!todo.empty()) {
        size_t k = todo.back(), d;
        todo.pop_back();
        for (d = 0; d < q[k].after.size(); d++) {
            long j = dtcu_op_at(q[k].after[d]);
            if (j >= 0 && !need[(size_t)j]) need[(size_t)j] = 1, todo.push_back((size_t)j);
        }
    }
    dtcu_run_marked(need);
}

/* device work (not markers) queued on s and not run yet: a test's proof
   that waiting for one stream did not run another's work */
static inline long dtcu_standin_pending(cudaStream_t s) {
    std::vector<dtcu_op> &q = dtcu_queue();
    struct dtcu_stream *st = dtcu_stream_of(s);
    long n = 0;
    size_t k;
    for (k = 0; k < q.size(); k++) n += q[k].on == st && q[k].run;
    return n;
}

/* cudaDeviceSynchronize: all of it */
static inline void dtcu_run_all(void) {
    std::vector<char> need(dtcu_queue().size(), 1);
    dtcu_run_marked(need);
}

static inline void dtcu_run_stream(struct dtcu_stream *s) { dtcu_run_through(s->last); }

/* ------------------------------------------------------------ stream capture (the queue's side)

   cudaStreamBeginCapture makes the work enqueued on a stream -- and on
   every stream that waits for an event recorded in the capture, which so
   joins it -- the nodes of a graph instead of queued work: each node after
   its stream's previous node and the event node it waits for. One capture
   at a time, in cudaStreamCaptureModeGlobal's rules: while it is active,
   a call that would wait for the device or allocate (cudaMalloc*, cudaFree*,
   the synchronisations, a synchronous cudaMemcpy/cudaMemset, queries of
   a captured stream or event) fails with cudaErrorStreamCaptureUnsupported
   (cudaErrorCapturedEvent for a captured event) and invalidates the
   capture, as CUDA's does; cudaStreamEndCapture then answers
   cudaErrorStreamCaptureInvalidated, or cudaErrorStreamCaptureUnjoined
   when a stream that joined has work the origin stream does not wait for. */
struct dtcu_graph {
    std::vector<dtcu_op> nodes;
};
struct dtcu_capture {
    unsigned long id;                 /* 0: none active */
    int invalid;
    struct dtcu_stream *origin;
    std::vector<struct dtcu_stream *> joined;
    struct dtcu_graph *g;
};
static struct dtcu_capture dtcu_cap;
static unsigned long dtcu_cap_ids = 0;

static inline int dtcu_captured(const struct dtcu_stream *s) { return dtcu_cap.id && s && s->cap == dtcu_cap.id; }

/* a call that cannot be captured: s NULL (any stream: allocation, device
   sync, synchronous copy) while a capture is active, or s a captured stream */
static inline cudaError_t dtcu_capture_guard(const struct dtcu_stream *s) {
    if (!dtcu_cap.id || (s && !dtcu_captured(s))) return cudaSuccess;
    dtcu_cap.invalid = 1;
    return dtcu_err(cudaErrorStreamCaptureUnsupported);
}

/* the node of `fn` in the active capture, on captured stream s */
static inline unsigned long long dtcu_capture_node(struct dtcu_stream *s, std::function<void()> fn,
                                                   unsigned long long wait) {
    dtcu_op op;
    op.seq = ++dtcu_seq;
    op.on = s;
    if (s->last) op.after.push_back(s->last);
    if (wait) op.after.push_back(wait);
    op.run = std::move(fn);
    s->last = op.seq;
    dtcu_cap.g->nodes.push_back(std::move(op));
    return s->last;
}

/* queues `fn` on s (after op `wait` too, if not 0); returns its seq */
static inline unsigned long long dtcu_enqueue(struct dtcu_stream *s, std::function<void()> fn,
                                              unsigned long long wait = 0) {
    dtcu_op op;
    size_t k;
    dtcu_boot();
    if (dtcu_captured(s)) return dtcu_capture_node(s, std::move(fn), wait);
    op.seq = ++dtcu_seq;
    op.on = s;
    if (dtcu_op_at(s->last) >= 0) op.after.push_back(s->last);
    if (dtcu_op_at(wait) >= 0) op.after.push_back(wait);
    if (s == &dtcu_legacy) { /* the legacy stream waits for every blocking stream... */
        std::vector<struct dtcu_stream *> &v = dtcu_streams();
        for (k = 0; k < v.size(); k++)
            if (dtcu_op_at(v[k]->last) >= 0) op.after.push_back(v[k]->last);
    } else if (!(s->flags & cudaStreamNonBlocking) && dtcu_op_at(dtcu_legacy.last) >= 0) {
        op.after.push_back(dtcu_legacy.last); /* ...and they for it */
    }
    op.run = std::move(fn);
    s->last = op.seq;
    dtcu_queue().push_back(std::move(op));
    if (dtcu_s.eager) dtcu_run_through(s->last);
    return s->last;
}

/* the allocation holding p, or -1 */
static inline int dtcu_find(const void *p) {
    const char *c = (const char *)p;
    int i;
    for (i = 0; i < dtcu_s.na; i++)
        if (!dtcu_s.a[i].freeing && c >= dtcu_s.a[i].ptr &&
            c < dtcu_s.a[i].ptr + (dtcu_s.a[i].size ? dtcu_s.a[i].size : 1))
            return i;
    return -1;
}

/* 1: [p, p + n) is device memory (inside one allocation); 0: p is not
   device memory; -1: p is, but the range runs past its allocation */
static inline int dtcu_range(const void *p, size_t n) {
    int i = dtcu_find(p);
    if (i < 0) return 0;
    return (size_t)((const char *)p - dtcu_s.a[i].ptr) + n <= dtcu_s.a[i].size ? 1 : -1;
}

static inline cudaError_t dtcu_malloc(const char *fn, void **p, size_t size) {
    size_t pg = dtcu_page(), data, lead;
    struct dtcu_alloc a;
    void *m;
    dtcu_boot();
    if (!p) return dtcu_err(cudaErrorInvalidValue);
    *p = NULL;
    if (dtcu_capture_guard(NULL)) return cudaErrorStreamCaptureUnsupported;
    dtcu_s.allocs++;
    if (dtcu_injected(fn) || size > dtcu_s.budget - dtcu_s.live_bytes) return dtcu_err(cudaErrorMemoryAllocation);
    lead = (size + 255) / 256 * 256;
    data = (lead + pg - 1) / pg * pg;
    if (!data) data = pg;
    m = mmap(NULL, data + pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return dtcu_err(cudaErrorMemoryAllocation);
    a.base = (char *)m;
    a.maplen = data + pg;
    a.ptr = a.base + (data - lead);
    a.size = size;
    a.freeing = 0;
    if (dtcu_s.na == dtcu_s.cap) {
        int cap = dtcu_s.cap ? 2 * dtcu_s.cap : 64;
        struct dtcu_alloc *na = (struct dtcu_alloc *)realloc(dtcu_s.a, (size_t)cap * sizeof *na);
        if (!na) {
            munmap(m, a.maplen);
            return dtcu_err(cudaErrorMemoryAllocation);
        }
        dtcu_s.a = na;
        dtcu_s.cap = cap;
    }
    dtcu_s.a[dtcu_s.na++] = a;
    if (dtcu_s.depth) dtcu_protect(&a, PROT_READ | PROT_WRITE);
    dtcu_s.live_bytes += size;
    if (dtcu_s.live_bytes > dtcu_s.peak_bytes) dtcu_s.peak_bytes = dtcu_s.live_bytes;
    *p = a.ptr;
    return cudaSuccess;
}

/* the live allocation starting at p, or -1 after reporting a bad free */
static inline int dtcu_freeable(const char *fn, void *p) {
    int i = dtcu_find(p);
    if (i < 0 || dtcu_s.a[i].ptr != (char *)p) {
        fprintf(stderr, "tests/standin: %s(%p): not a live device allocation (a double or foreign free)\n", fn, p);
        return -1;
    }
    return i;
}

static inline void dtcu_unmap(int i) {
    munmap(dtcu_s.a[i].base, dtcu_s.a[i].maplen);
    dtcu_s.a[i] = dtcu_s.a[--dtcu_s.na];
}

/* cudaFree: waits for the whole device first, as CUDA's does */
static inline cudaError_t dtcu_free(const char *fn, void *p) {
    int i;
    dtcu_boot();
    if (!p) return cudaSuccess;
    if (dtcu_capture_guard(NULL)) return cudaErrorStreamCaptureUnsupported;
    dtcu_s.waits++;
    dtcu_run_all();
    if (dtcu_injected(fn)) return dtcu_err(cudaErrorLaunchFailure);
    if ((i = dtcu_freeable(fn, p)) < 0) return dtcu_err(cudaErrorInvalidValue);
    dtcu_s.live_bytes -= dtcu_s.a[i].size;
    dtcu_unmap(i);
    return cudaSuccess;
}

/* cudaFreeAsync: unusable (and off the budget) at once, unmapped when the
   stream reaches the free, so the work queued before it still runs */
static inline cudaError_t dtcu_free_async(const char *fn, void *p, struct dtcu_stream *s) {
    int i;
    dtcu_boot();
    if (!p) return cudaSuccess;
    if (dtcu_injected(fn)) return dtcu_err(cudaErrorLaunchFailure);
    if (!s) return dtcu_err(cudaErrorInvalidResourceHandle);
    if ((i = dtcu_freeable(fn, p)) < 0) return dtcu_err(cudaErrorInvalidValue);
    dtcu_s.live_bytes -= dtcu_s.a[i].size;
    dtcu_s.a[i].freeing = 1;
    dtcu_enqueue(s, [p]() {
        int k;
        for (k = 0; k < dtcu_s.na; k++)
            if (dtcu_s.a[k].freeing && dtcu_s.a[k].ptr == (char *)p) {
                dtcu_unmap(k);
                return;
            }
    });
    return cudaSuccess;
}

/* pinned host memory (cudaMallocHost): a cudaMemcpy from it to the device
   waits; one from pageable memory returns once the source is staged */
static std::vector<std::pair<const char *, size_t>> &dtcu_pinned(void) {
    static std::vector<std::pair<const char *, size_t>> *v = new std::vector<std::pair<const char *, size_t>>;
    return *v;
}
static inline int dtcu_is_pinned(const void *p, size_t n) {
    std::vector<std::pair<const char *, size_t>> &v = dtcu_pinned();
    const char *c = (const char *)p;
    size_t k;
    for (k = 0; k < v.size(); k++)
        if (c >= v[k].first && c + n <= v[k].first + v[k].second) return 1;
    return 0;
}

/* ------------------------------------------------------------ half and bfloat16 (NCCL's and cuBLAS's math) */

static inline float dtcu_h2f(uint16_t h) { /* IEEE half */
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023u, u;
    float f;
    if (e == 31) u = s | 0x7f800000u | (m << 13);
    else if (e) u = s | ((e + 112) << 23) | (m << 13);
    else {
        f = (float)m * (1.0f / 16777216.0f); /* subnormal: m * 2^-24, exact */
        return s ? -f : f;
    }
    memcpy(&f, &u, 4);
    return f;
}
static inline uint16_t dtcu_f2h(float f) { /* round to nearest even */
    uint32_t u, s, a;
    memcpy(&u, &f, 4);
    s = (u >> 16) & 0x8000u;
    a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(s | 0x7e00u);
    if (a >= 0x477ff000u) return (uint16_t)(s | 0x7c00u); /* rounds to inf */
    if (a < 0x38800000u) {                                 /* subnormal or zero: scale to units of 2^-24 */
        float x, q;
        memcpy(&x, &a, 4);
        q = x * 16777216.0f;
        return (uint16_t)(s | (uint32_t)__builtin_rintf(q)); /* exact product, rint rounds to even */
    }
    a += ((a >> 13) & 1u) + 0xfffu;
    return (uint16_t)(s | (((a >> 23) - 112) << 10) | ((a >> 13) & 1023u));
}
static inline float dtcu_b2f(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint16_t dtcu_f2b(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* ------------------------------------------------------------ the runtime API */

static inline const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    case cudaErrorStreamCaptureUnmatched: return "capture was not initiated in this stream";
    case cudaErrorStreamCaptureUnjoined: return "capturing stream has unjoined work";
    case cudaErrorStreamCaptureImplicit: return "operation would make the legacy stream depend on a capturing blocking stream";
    case cudaErrorCapturedEvent: return "operation not permitted on an event last recorded in a capturing stream";
    }
    return "unrecognized error code";
}
static inline cudaError_t cudaGetLastError(void) {
    cudaError_t e = dtcu_last;
    dtcu_last = cudaSuccess;
    return e;
}

static inline cudaError_t cudaGetDeviceCount(int *n) {
    dtcu_boot();
    if (!n) return dtcu_err(cudaErrorInvalidValue);
    *n = dtcu_s.ndev;
    return cudaSuccess;
}
static inline cudaError_t cudaSetDevice(int d) {
    dtcu_boot();
    if (d < 0 || d >= dtcu_s.ndev) return dtcu_err(cudaErrorInvalidDevice);
    dtcu_device = d;
    return cudaSuccess;
}
static inline cudaError_t cudaGetDevice(int *d) {
    if (!d) return dtcu_err(cudaErrorInvalidValue);
    *d = dtcu_device;
    return cudaSuccess;
}
static inline cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d) {
    dtcu_boot();
    if (!v || d < 0 || d >= dtcu_s.ndev) return dtcu_err(cudaErrorInvalidValue);
    *v = a == cudaDevAttrMultiProcessorCount ? 2 : a == cudaDevAttrMaxThreadsPerBlock ? 1024 : 0;
    return cudaSuccess;
}

static inline cudaError_t cudaMalloc(void **p, size_t n) { return dtcu_malloc("cudaMalloc", p, n); }
static inline cudaError_t cudaFree(void *p) { return dtcu_free("cudaFree", p); }
/* the allocation is immediate (usable on any stream at once: more lenient
   than CUDA's stream order); the free is stream-ordered */
static inline cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s) {
    if (!dtcu_stream_of(s)) return dtcu_err(cudaErrorInvalidResourceHandle);
    return dtcu_malloc("cudaMallocAsync", p, n);
}
static inline cudaError_t cudaFreeAsync(void *p, cudaStream_t s) {
    return dtcu_free_async("cudaFreeAsync", p, dtcu_stream_of(s));
}
/* pinned host memory is host memory (remembered: see cudaMemcpy) */
static inline cudaError_t cudaMallocHost(void **p, size_t n) {
    if (!p) return dtcu_err(cudaErrorInvalidValue);
    if (dtcu_capture_guard(NULL)) return cudaErrorStreamCaptureUnsupported;
    dtcu_s.allocs++;
    *p = dtcu_injected("cudaMallocHost") ? NULL : malloc(n ? n : 1);
    if (!*p) return dtcu_err(cudaErrorMemoryAllocation);
    dtcu_pinned().push_back(std::make_pair((const char *)*p, n ? n : 1));
    return cudaSuccess;
}
static inline cudaError_t cudaFreeHost(void *p) {
    std::vector<std::pair<const char *, size_t>> &v = dtcu_pinned();
    size_t k;
    if (!p) return cudaSuccess;
    if (dtcu_capture_guard(NULL)) return cudaErrorStreamCaptureUnsupported;
    dtcu_s.waits++;
    dtcu_run_all(); /* CUDA waits for the device here too */
    for (k = 0; k < v.size(); k++)
        if (v[k].first == (const char *)p) break;
    if (k == v.size()) {
        fprintf(stderr, "tests/standin: cudaFreeHost(%p): not from cudaMallocHost\n", p);
        return dtcu_err(cudaErrorInvalidValue);
    }
    v.erase(v.begin() + (long)k);
    free(p);
    return cudaSuccess;
}

static inline cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *at, const void *p) {
    int i;
    if (!at) return dtcu_err(cudaErrorInvalidValue);
    i = dtcu_find(p);
    memset(at, 0, sizeof *at);
    at->type = i >= 0 ? cudaMemoryTypeDevice : dtcu_is_pinned(p, 1) ? cudaMemoryTypeHost : cudaMemoryTypeUnregistered;
    at->device = i >= 0 ? dtcu_device : -2;
    at->devicePointer = i >= 0 ? (void *)p : NULL;
    at->hostPointer = i >= 0 ? NULL : (void *)p;
    return cudaSuccess;
}

/* how a copy waits for the host (see the top of this file) */
enum dtcu_wait { DTCU_ASYNC, DTCU_SYNC, DTCU_STAGE };

/* Checks a copy and queues it on s. The direction comes from the pointers;
   a kind that contradicts them is an error here (CUDA's behaviour is
   undefined). `how`: DTCU_SYNC waits for the copy; DTCU_STAGE snapshots a
   host source now (the host may reuse it on return) and queues the store. */
static inline cudaError_t dtcu_copy(const char *fn, void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
                                    struct dtcu_stream *s, enum dtcu_wait how) {
    int dd, sd;
    unsigned long long op;
    if (dtcu_injected(fn)) return dtcu_err(cudaErrorLaunchFailure);
    if (!s) return dtcu_err(cudaErrorInvalidResourceHandle);
    if (!n) return cudaSuccess;
    if (!dst || !src) return dtcu_err(cudaErrorInvalidValue);
    dd = dtcu_range(dst, n);
    sd = dtcu_range(src, n);
    if (dd < 0 || sd < 0) {
        fprintf(stderr, "tests/standin: %s of %zu bytes runs past the end of a device allocation (%s)\n", fn, n,
                dd < 0 ? "destination" : "source");
        return dtcu_err(cudaErrorInvalidValue);
    }
    if ((k == cudaMemcpyHostToDevice && (!dd || sd)) || (k == cudaMemcpyDeviceToHost && (dd || !sd)) ||
        (k == cudaMemcpyDeviceToDevice && (!dd || !sd)) || (k == cudaMemcpyHostToHost && (dd || sd))) {
        fprintf(stderr, "tests/standin: %s: kind %d but the destination is %s memory and the source %s memory\n",
                fn, (int)k, dd ? "device" : "host", sd ? "device" : "host");
        return dtcu_err(cudaErrorInvalidValue);
    }
    if (how == DTCU_STAGE && !sd) {
        std::vector<char> staged((const char *)src, (const char *)src + n);
        dtcu_s.work[1]++;
        dtcu_enqueue(s, [dst, staged]() { memcpy(dst, staged.data(), staged.size()); });
        return cudaSuccess;
    }
    dtcu_s.work[1]++;
    op = dtcu_enqueue(s, [dst, src, n]() { memmove(dst, src, n); });
    if (how == DTCU_SYNC) dtcu_s.waits++, dtcu_run_through(op);
    return cudaSuccess;
}

/* on the legacy stream; returns when the host may use its side: device to
   device does not wait, host to device from pageable memory is staged */
static inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k) {
    int dd = dtcu_range(dst, n) != 0, sd = dtcu_range(src, n) != 0;
    enum dtcu_wait how = dd && sd ? DTCU_ASYNC : dd && !dtcu_is_pinned(src, n) ? DTCU_STAGE : DTCU_SYNC;
    if (dtcu_capture_guard(NULL)) return cudaErrorStreamCaptureUnsupported;
    return dtcu_copy("cudaMemcpy", dst, src, n, k, &dtcu_legacy, how);
}
/* asynchronous unless both sides are host memory */
static inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
                                          cudaStream_t s = 0) {
    int dev = dtcu_range(dst, n) != 0 || dtcu_range(src, n) != 0;
    return dtcu_copy("cudaMemcpyAsync", dst, src, n, k, dtcu_stream_of(s), dev ? DTCU_ASYNC : DTCU_SYNC);
}

/* device memory only; asynchronous in CUDA too (the host does not wait) */
static inline cudaError_t dtcu_set(const char *fn, void *p, int v, size_t n, struct dtcu_stream *s) {
    int r;
    if (dtcu_injected(fn)) return dtcu_err(cudaErrorLaunchFailure);
    if (!s) return dtcu_err(cudaErrorInvalidResourceHandle);
    if (!n) return cudaSuccess;
    if ((r = dtcu_range(p, n)) != 1) {
        fprintf(stderr, "tests/standin: %s of %zu bytes at %p: %s\n", fn, n, p,
                r ? "runs past the end of its device allocation" : "not device memory");
        return dtcu_err(cudaErrorInvalidValue);
    }
    dtcu_s.work[2]++;
    dtcu_enqueue(s, [p, v, n]() { memset(p, v, n); });
    return cudaSuccess;
}
static inline cudaError_t cudaMemset(void *p, int v, size_t n) {
    if (dtcu_capture_guard(NULL)) return cudaErrorStreamCaptureUnsupported;
    return dtcu_set("cudaMemset", p, v, n, &dtcu_legacy);
}
static inline cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s = 0) {
    return dtcu_set("cudaMemsetAsync", p, v, n, dtcu_stream_of(s));
}

/* ------------------------------------------------------------ streams and events */

static inline cudaError_t dtcu_stream_ok(cudaStream_t s) {
    return dtcu_stream_of(s) ? cudaSuccess : dtcu_err(cudaErrorInvalidResourceHandle);
}
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) {
    if (!s) return dtcu_err(cudaErrorInvalidValue);
    *s = (cudaStream_t)malloc(sizeof **s);
    if (!*s) return dtcu_err(cudaErrorMemoryAllocation);
    (*s)->magic = DTCU_STREAM_MAGIC;
    (*s)->flags = flags;
    (*s)->last = 0;
    (*s)->cap = 0;
    (*s)->before_cap = 0;
    if (!(flags & cudaStreamNonBlocking)) dtcu_streams().push_back(*s);
    return cudaSuccess;
}
static inline cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, 0); }
/* its queued work stays queued and runs when something waits for it (a
   GPU finishes it after the destroy too) */
static inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
    std::vector<struct dtcu_stream *> &v = dtcu_streams();
    size_t k;
    if (!s || s == cudaStreamLegacy || s == cudaStreamPerThread || dtcu_stream_ok(s))
        return dtcu_err(cudaErrorInvalidResourceHandle);
    for (k = 0; k < v.size(); k++)
        if (v[k] == s) {
            v.erase(v.begin() + (long)k);
            break;
        }
    s->magic = 0;
    free(s);
    return cudaSuccess;
}
/* The waits run the work, then report: an injected failure still leaves
   the work done, so that no buffer a caller frees after the error is
   written later (a GPU whose sync fails runs nothing more either). */
static inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    int fail = dtcu_injected("cudaStreamSynchronize");
    struct dtcu_stream *st = dtcu_stream_of(s);
    if (!st) return dtcu_err(cudaErrorInvalidResourceHandle);
    if (dtcu_capture_guard(st)) return cudaErrorStreamCaptureUnsupported;
    dtcu_s.waits++;
    dtcu_run_stream(st);
    return fail ? dtcu_err(cudaErrorLaunchFailure) : cudaSuccess;
}
static inline cudaError_t cudaStreamQuery(cudaStream_t s) {
    struct dtcu_stream *st = dtcu_stream_of(s);
    if (!st) return dtcu_err(cudaErrorInvalidResourceHandle);
    if (dtcu_capture_guard(st)) return cudaErrorStreamCaptureUnsupported;
    dtcu_run_stream(st);
    return cudaSuccess;
}
static inline cudaError_t cudaDeviceSynchronize(void) {
    int fail = dtcu_injected("cudaDeviceSynchronize");
    if (dtcu_capture_guard(NULL)) return cudaErrorStreamCaptureUnsupported;
    dtcu_s.waits++;
    dtcu_run_all();
    return fail ? dtcu_err(cudaErrorLaunchFailure) : cudaSuccess;
}
static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags) {
    (void)flags;
    if (!e) return dtcu_err(cudaErrorInvalidValue);
    if (dtcu_injected("cudaEventCreateWithFlags")) return dtcu_err(cudaErrorMemoryAllocation);
    *e = (cudaEvent_t)malloc(sizeof **e);
    if (!*e) return dtcu_err(cudaErrorMemoryAllocation);
    (*e)->magic = DTCU_EVENT_MAGIC;
    (*e)->at = 0;
    (*e)->cap = 0;
    return cudaSuccess;
}
static inline cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, cudaEventDefault); }
static inline cudaError_t dtcu_event_ok(cudaEvent_t e) {
    return e && e->magic == DTCU_EVENT_MAGIC ? cudaSuccess : dtcu_err(cudaErrorInvalidResourceHandle);
}
/* a marker op on s: done when the work s had before it is */
static inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = 0) {
    cudaError_t r;
    struct dtcu_stream *st;
    if (dtcu_injected("cudaEventRecord")) return dtcu_err(cudaErrorLaunchFailure);
    if ((r = dtcu_event_ok(e)) != cudaSuccess) return r;
    if (!(st = dtcu_stream_of(s))) return dtcu_err(cudaErrorInvalidResourceHandle);
    e->at = dtcu_enqueue(st, std::function<void()>());
    e->cap = dtcu_captured(st) ? dtcu_cap.id : 0;
    return cudaSuccess;
}
/* an event recorded in the active capture cannot be waited for by the host */
static inline cudaError_t dtcu_event_guard(cudaEvent_t e) {
    if (!dtcu_cap.id || e->cap != dtcu_cap.id) return cudaSuccess;
    dtcu_cap.invalid = 1;
    return dtcu_err(cudaErrorCapturedEvent);
}
static inline cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    int fail = dtcu_injected("cudaEventSynchronize");
    cudaError_t r = dtcu_event_ok(e);
    if (r != cudaSuccess) return r;
    if ((r = dtcu_event_guard(e)) != cudaSuccess) return r;
    dtcu_s.waits++;
    dtcu_run_through(e->at);
    return fail ? dtcu_err(cudaErrorLaunchFailure) : cudaSuccess;
}
static inline cudaError_t cudaEventQuery(cudaEvent_t e) {
    cudaError_t r = dtcu_event_ok(e);
    if (r != cudaSuccess) return r;
    if ((r = dtcu_event_guard(e)) != cudaSuccess) return r;
    dtcu_run_through(e->at);
    return cudaSuccess;
}
/* s's later work waits for the event's record (a marker op on s); an
   event recorded in the active capture makes s join it */
static inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags = 0) {
    cudaError_t r;
    struct dtcu_stream *st;
    int in_capture;
    (void)flags;
    if ((r = dtcu_event_ok(e)) != cudaSuccess) return r;
    if (!(st = dtcu_stream_of(s))) return dtcu_err(cudaErrorInvalidResourceHandle);
    in_capture = dtcu_cap.id && e->cap == dtcu_cap.id;
    if (in_capture && !dtcu_captured(st)) {
        if (st == &dtcu_legacy) return dtcu_err(cudaErrorStreamCaptureImplicit);
        st->cap = dtcu_cap.id;
        st->before_cap = st->last;
        st->last = 0;
        dtcu_cap.joined.push_back(st);
    }
    if (dtcu_captured(st) && !in_capture) return dtcu_err(cudaErrorStreamCaptureUnmatched); /* (stricter than CUDA) */
    dtcu_enqueue(st, std::function<void()>(), e->at);
    return cudaSuccess;
}

/* ------------------------------------------------------------ graphs

   Captured nodes replay in their capture order (a topological order:
   every node waits only for older ones). cudaGraphLaunch runs the graph AT
   ONCE, after the work its stream had queued -- eager, as the stand-in's
   NCCL is (a graph's NCCL calls move data over MPI; every rank launches its
   graph at the same point of the program) -- so a launch is synchronous
   here, and its results are there for the host when it returns. */
static inline cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode) {
    struct dtcu_stream *st = dtcu_stream_of(s);
    (void)mode;
    if (!st) return dtcu_err(cudaErrorInvalidResourceHandle);
    if (st == &dtcu_legacy || dtcu_cap.id) return dtcu_err(cudaErrorStreamCaptureUnsupported);
    dtcu_cap.id = ++dtcu_cap_ids;
    dtcu_cap.invalid = 0;
    dtcu_cap.origin = st;
    dtcu_cap.joined.assign(1, st);
    dtcu_cap.g = new dtcu_graph;
    st->cap = dtcu_cap.id;
    st->before_cap = st->last;
    st->last = 0;
    return cudaSuccess;
}

static inline cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status) {
    struct dtcu_stream *st = dtcu_stream_of(s);
    if (!st || !status) return dtcu_err(!st ? cudaErrorInvalidResourceHandle : cudaErrorInvalidValue);
    *status = !dtcu_captured(st) ? cudaStreamCaptureStatusNone
              : dtcu_cap.invalid ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
    return cudaSuccess;
}

/* is node `seq` of g one that node `last` waits for (or `last` itself)? */
static inline int dtcu_graph_before(const struct dtcu_graph *g, unsigned long long seq, unsigned long long last) {
    std::vector<unsigned long long> todo(1, last);
    std::vector<char> seen(g->nodes.size(), 0);
    while (!todo.empty()) {
        unsigned long long x = todo.back();
        size_t k;
        todo.pop_back();
        if (x == seq) return 1;
        for (k = 0; k < g->nodes.size() && g->nodes[k].seq != x; k++) {}
        if (k == g->nodes.size() || seen[k]) continue;
        seen[k] = 1;
        todo.insert(todo.end(), g->nodes[k].after.begin(), g->nodes[k].after.end());
    }
    return 0;
}

static inline cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph) {
    struct dtcu_stream *st = dtcu_stream_of(s);
    cudaError_t r = cudaSuccess;
    size_t k;
    if (!graph) return dtcu_err(cudaErrorInvalidValue);
    *graph = NULL;
    if (!st || !dtcu_cap.id || st != dtcu_cap.origin) return dtcu_err(cudaErrorStreamCaptureUnmatched);
    for (k = 1; k < dtcu_cap.joined.size(); k++) { /* every stream that joined, joined back */
        struct dtcu_stream *j = dtcu_cap.joined[k];
        if (j->last && !(st->last && dtcu_graph_before(dtcu_cap.g, j->last, st->last))) r = cudaErrorStreamCaptureUnjoined;
    }
    if (dtcu_cap.invalid) r = cudaErrorStreamCaptureInvalidated;
    for (k = 0; k < dtcu_cap.joined.size(); k++) {
        dtcu_cap.joined[k]->last = dtcu_cap.joined[k]->before_cap;
        dtcu_cap.joined[k]->cap = 0;
    }
    dtcu_cap.joined.clear();
    dtcu_cap.id = 0;
    if (r != cudaSuccess) {
        delete dtcu_cap.g;
        dtcu_cap.g = NULL;
        return dtcu_err(r);
    }
    *graph = dtcu_cap.g;
    dtcu_cap.g = NULL;
    return cudaSuccess;
}

static inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t g, unsigned long long flags = 0) {
    (void)flags;
    if (!exec || !g) return dtcu_err(cudaErrorInvalidValue);
    *exec = new dtcu_graph(*g);
    return cudaSuccess;
}

static inline cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
    struct dtcu_stream *st = dtcu_stream_of(s);
    size_t k;
    if (!exec) return dtcu_err(cudaErrorInvalidValue);
    if (!st) return dtcu_err(cudaErrorInvalidResourceHandle);
    if (dtcu_injected("cudaGraphLaunch")) return dtcu_err(cudaErrorLaunchFailure);
    if (dtcu_capture_guard(NULL)) return cudaErrorStreamCaptureUnsupported; /* (no graphs in graphs here) */
    dtcu_s.work[0]++;
    dtcu_run_stream(st);
    dtcu_enter();
    for (k = 0; k < exec->nodes.size(); k++)
        if (exec->nodes[k].run) exec->nodes[k].run();
    dtcu_leave();
    return cudaSuccess;
}

static inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
    delete exec;
    return cudaSuccess;
}
static inline cudaError_t cudaGraphDestroy(cudaGraph_t g) {
    delete g;
    return cudaSuccess;
}
/* the record stays in its stream's queue: destroying the event is fine */
static inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
    cudaError_t r = dtcu_event_ok(e);
    if (r != cudaSuccess) return r;
    e->magic = 0;
    free(e);
    return cudaSuccess;
}

/* ------------------------------------------------------------ kernel launches */

/* CUDA's limits: 1..1024 threads a block (z <= 64), grid x < 2^31, y and z
   <= 65535; a launch outside them does not run */
static inline int dtcu_config_ok(dim3 g, dim3 b) {
    unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
    return g.x >= 1 && g.y >= 1 && g.z >= 1 && g.x <= 0x7fffffffu && g.y <= 65535u && g.z <= 65535u && threads >= 1 &&
           threads <= 1024 && b.z <= 64;
}

/* A launch checks its configuration at once (errors for the next
   cudaGetLastError, as CUDA's) and queues the grid on the stream, with the
   arguments copied now, as CUDA copies them at the launch: `body` calls
   the kernel with them, once per block. */
template <class F, class... A>
static void dtcu_launch(const char *name, dim3 grid, dim3 block, cudaStream_t s, F body, A... args) {
    struct dtcu_stream *st;
    std::tuple<A...> argv(args...);
    (void)name;
    if (dtcu_injected("launch")) {
        dtcu_err(cudaErrorLaunchFailure);
        return;
    }
    if (!dtcu_config_ok(grid, block)) {
        dtcu_err(cudaErrorInvalidConfiguration);
        return;
    }
    if (!(st = dtcu_stream_of(s))) {
        dtcu_err(cudaErrorInvalidResourceHandle);
        return;
    }
    dtcu_s.work[0]++;
    dtcu_enqueue(st, [grid, body, argv]() {
        unsigned x, y, z;
        gridDim = grid;
        blockDim = dim3(1, 1, 1);
        threadIdx = dim3(0, 0, 0);
        for (z = 0; z < grid.z; z++)
            for (y = 0; y < grid.y; y++)
                for (x = 0; x < grid.x; x++) {
                    blockIdx = dim3(x, y, z);
                    std::apply(body, argv);
                }
    });
}

/* dtensor_cuda.h's launch point (its default is kernel<<<grid, block, 0,
   stream>>>(args)): the arguments are evaluated here, at the launch, and
   the kernel queued on dtensor's stream (dt__cu_stream_v, where the macro
   is used) */
#define DT__CU_START(kernel, grid, block, ...)                                                            \
    dtcu_launch(#kernel, dim3(grid), dim3(block), dt__cu_stream_v, [](auto... dtcu_arg) { kernel(dtcu_arg...); }, \
                __VA_ARGS__)
/* dtensor_cuda.h's launch macro for the program's own kernels: the same,
   queued on dt_cuda_stream() (the public accessor: it may be used in a file
   without the implementation) */
#define DT_CUDA_LAUNCH(kernel, grid, block, ...)                                                          \
    dtcu_launch(#kernel, dim3(grid), dim3(block), dt_cuda_stream(), [](auto... dtcu_arg) { kernel(dtcu_arg...); }, \
                __VA_ARGS__)

#endif /* DTCU_STANDIN_CUDA_RUNTIME_H */

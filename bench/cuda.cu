/* bench/cuda.cu -- dtensor_cuda.h's device kernels against the hardware's
   own yardsticks, at one rank, on one GPU.

       nvcc -O2 -std=c++17 -arch=sm_90 -DDTENSOR_NO_MPI -I. -o build/cuda/bench_cuda bench/cuda.cu \
            -lcurand -lcublas -lnccl -lblis -lm
       ./build/cuda/bench_cuda [--reps N] [--quick]

   (a) pack / unpack: the device's copy_box of a strided sub-box (a column
       block of a 2-D array; pieces of a 3-D pencil transpose; a column
       block whose rows are not 16-byte multiples) as a fraction of
       cudaMemcpyAsync device-to-device bandwidth for the same bytes
       (target >= 0.8).
   (b) pointwise: add of two 64M F32 arrays (3 streams of bytes), scale (2
       streams), a row-broadcast add; effective bandwidth as a fraction of
       the D2D copy's (2 streams).
   (c) random: the Philox uniform F32 fill against cuRAND's
       CURAND_RNG_PSEUDO_PHILOX4_32_10 curandGenerateUniform for the same
       count: ratio = cuRAND time / ours (target >= 1.0); normal likewise.
   (d) dispatch: dt_add of tiny device tensors through the public API, time
       per call on the host with one cudaStreamSynchronize at the end, and
       a bare cudaLaunchKernel of the kernel dt_add launches for them
       (dt__cu_binary_f32x4_kernel, one float4) timed the same way: ratio =
       dt_add / bare launch (target <= 1.3).

   (e) halo exchange: dt_halo_exchange of a periodic width-1 halo on a
       program's own cudaMalloc'd ghosted array (F64, 2-D [n, n] and 3-D
       [m, m, m], wrapped in place with local_ghost), one rank, against the
       exchange a stencil code writes by hand: one strided face-copy kernel
       per face on the same array. Both results are compared byte for byte
       first. ratio = dtensor / hand-written (target <= 1.10).

   Times: cudaEvent pairs around each call on dt_cuda_stream(), 3 warm-up
   calls, the median of --reps (default 11, at least 7). (a)-(c) call the
   internal device table directly. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor_cuda.h"
#include <curand.h>
#include <time.h>

static int reps = 11, quick = 0;

#define CU(call)                                                                                         \
    do {                                                                                                 \
        cudaError_t e_ = (call);                                                                         \
        if (e_ != cudaSuccess) {                                                                         \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));       \
            exit(1);                                                                                     \
        }                                                                                                \
    } while (0)

static int cmp_f(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* one timed thing: a closure over its arguments */
typedef struct job {
    void (*run)(struct job *);
    const dt__array *s, *d;
    const dt__box *box;
    void *p0, *p1, *p2;
    size_t n;
    curandGenerator_t gen;
    dt__rng_op rop;
    int64_t shape[2], sa[2], sb[2];
} job;

/* median milliseconds of one run, cudaEvents on the stream */
static float time_ms(job *j) {
    cudaEvent_t a, b;
    float t[64];
    int i, n = reps < 64 ? reps : 64;
    CU(cudaEventCreate(&a));
    CU(cudaEventCreate(&b));
    for (i = 0; i < 3; i++) j->run(j);
    for (i = 0; i < n; i++) {
        CU(cudaEventRecord(a, dt_cuda_stream()));
        j->run(j);
        CU(cudaEventRecord(b, dt_cuda_stream()));
        CU(cudaEventSynchronize(b));
        CU(cudaEventElapsedTime(&t[i], a, b));
    }
    if (dt__cuda_device()->sync("bench")) { fprintf(stderr, "%s\n", dt_last_error()); exit(1); }
    CU(cudaEventDestroy(a));
    CU(cudaEventDestroy(b));
    qsort(t, (size_t)n, sizeof *t, cmp_f);
    return t[n / 2];
}

static void run_memcpy(job *j) { CU(cudaMemcpyAsync(j->p1, j->p0, j->n, cudaMemcpyDeviceToDevice, dt_cuda_stream())); }
static void run_copy_box(job *j) {
    if (dt__cuda_device()->copy_box("bench", j->s, j->d, j->box)) { fprintf(stderr, "%s\n", dt_last_error()); exit(1); }
}

static void row(const char *name, double bytes_moved, float ms, double ref_gbs) {
    double gbs = bytes_moved / (ms * 1e-3) / 1e9;
    printf("  %-40s %10.3f ms %9.1f GB/s   %5.2f\n", name, ms, gbs, gbs / ref_gbs);
}

static void *dalloc(size_t bytes) {
    void *p;
    CU(cudaMalloc(&p, bytes));
    CU(cudaMemset(p, 0x11, bytes));
    return p;
}

/* D2D copy bandwidth, read + write, for `bytes` */
static double d2d_gbs(size_t bytes, void *a, void *b) {
    job j;
    memset(&j, 0, sizeof j);
    j.run = run_memcpy; j.p0 = a; j.p1 = b; j.n = bytes;
    return 2.0 * (double)bytes / (time_ms(&j) * 1e-3) / 1e9;
}

/* pack (array -> packed piece) and unpack (back) of `piece` inside the array `a` */
static void bench_piece(const char *name, dt__array *a, const dt__box *piece, void *packed, void *scratch) {
    dt__array p;
    job j;
    size_t bytes = dt__box_numel(a->ndim, piece) * a->es;
    double ref = d2d_gbs(bytes, packed, scratch);
    char label[96];
    p.data = (char *)packed; p.ndim = a->ndim; p.es = a->es; p.box = *piece; p.stride = NULL;
    memset(&j, 0, sizeof j);
    j.run = run_copy_box; j.box = piece;
    j.s = a; j.d = &p;
    snprintf(label, sizeof label, "pack   %s", name);
    row(label, 2.0 * (double)bytes, time_ms(&j), ref);
    j.s = &p; j.d = a;
    snprintf(label, sizeof label, "unpack %s", name);
    row(label, 2.0 * (double)bytes, time_ms(&j), ref);
}

static void bench_pack(void) {
    int64_t R = quick ? 4096 : 8192, N = quick ? 128 : 256;
    size_t big = (size_t)(R * R * 4);
    void *arr = dalloc(big), *packed = dalloc(big), *scratch = dalloc(big);
    dt__array a;
    dt__box b;
    printf("(a) pack / unpack through copy_box; ratio: GB/s over cudaMemcpyAsync D2D of the same bytes (target >= 0.8)\n");
    a.data = (char *)arr; a.ndim = 2; a.es = 4; a.stride = NULL;
    a.box.lo[0] = a.box.lo[1] = 0; a.box.ext[0] = R; a.box.ext[1] = R;
    b.lo[0] = 0; b.ext[0] = R; b.lo[1] = R / 4; b.ext[1] = R / 4;
    bench_piece("2-D F32 column block [R, R/4] of [R, R]", &a, &b, packed, scratch);
    b.lo[1] = 3; b.ext[1] = R / 4 + 1; /* rows of 4-byte alignment only */
    bench_piece("2-D F32 column block, odd width/offset", &a, &b, packed, scratch);
    a.es = 2; /* F16: the same bytes as half-width elements */
    a.box.ext[1] = 2 * R;
    b.lo[1] = 2 * R / 4; b.ext[1] = 2 * R / 4;
    bench_piece("2-D F16 column block [R, 2R/4] of [R, 2R]", &a, &b, packed, scratch);
    /* 3-D pencil transpose pieces: [N, 2N, 2N] F32, split along the last dim or the middle one */
    a.ndim = 3; a.es = 4;
    a.box.lo[2] = 0; a.box.ext[0] = N; a.box.ext[1] = 2 * N; a.box.ext[2] = 2 * N;
    b.lo[0] = 0; b.ext[0] = N; b.lo[1] = 0; b.ext[1] = 2 * N; b.lo[2] = N / 2; b.ext[2] = N / 2;
    bench_piece("3-D pencil piece [N, 2N, 2N/4] (last dim)", &a, &b, packed, scratch);
    b.lo[1] = N / 2; b.ext[1] = N / 2; b.lo[2] = 0; b.ext[2] = 2 * N;
    bench_piece("3-D pencil piece [N, 2N/4, 2N] (middle dim)", &a, &b, packed, scratch);
    b.lo[1] = N / 2; b.ext[1] = N / 2; b.lo[2] = N / 2; b.ext[2] = N / 2;
    bench_piece("3-D block [N, 2N/4, 2N/4]", &a, &b, packed, scratch);
    CU(cudaFree(arr)); CU(cudaFree(packed)); CU(cudaFree(scratch));
}

static void run_add(job *j) {
    dt__cuda_device()->kernels()->binary(DT__B_ADD, DT_F32, 1, j->shape, j->p0, j->sa, j->p1, j->sb, j->p2, 1.0);
}
static void run_bias_add(job *j) {
    dt__cuda_device()->kernels()->binary(DT__B_ADD, DT_F32, 2, j->shape, j->p0, j->sa, j->p1, j->sb, j->p2, 1.0);
}
static void run_scale(job *j) { dt__cuda_device()->kernels()->unary(DT__U_SCALE, DT_F32, j->p0, j->p2, j->n, 1.5); }

static void bench_pointwise(void) {
    size_t n = (size_t)(quick ? 16 : 64) << 20, bytes = n * 4;
    void *a = dalloc(bytes), *b = dalloc(bytes), *c = dalloc(bytes);
    double ref = d2d_gbs(bytes, a, c);
    job j;
    printf("(b) pointwise F32, %zuM elements; ratio: effective GB/s over D2D copy's\n", n >> 20);
    memset(&j, 0, sizeof j);
    j.p0 = a; j.p1 = b; j.p2 = c; j.n = n;
    j.shape[0] = (int64_t)n; j.sa[0] = j.sb[0] = 1;
    j.run = run_add;
    row("add a + b (3 streams)", 3.0 * (double)bytes, time_ms(&j), ref);
    j.p2 = a;
    row("add in place a = a + b (3 streams)", 3.0 * (double)bytes, time_ms(&j), ref);
    j.p2 = c;
    j.run = run_scale;
    row("scale 1.5 * a (2 streams)", 2.0 * (double)bytes, time_ms(&j), ref);
    j.shape[0] = (int64_t)(n / 8192); j.shape[1] = 8192;
    j.sa[0] = 8192; j.sa[1] = 1; j.sb[0] = 0; j.sb[1] = 1;
    j.run = run_bias_add;
    row("row-broadcast add [n/8192, 8192] + [8192]", 2.0 * (double)bytes, time_ms(&j), ref);
    CU(cudaFree(a)); CU(cudaFree(b)); CU(cudaFree(c));
}

static void run_dt_rng(job *j) {
    int64_t gs[1], lo[1] = {0};
    gs[0] = (int64_t)j->n;
    dt__cuda_device()->kernels()->rng(&j->rop, 1, gs, lo, gs, j->p0);
}
static void run_curand_uniform(job *j) {
    if (curandGenerateUniform(j->gen, (float *)j->p0, j->n) != CURAND_STATUS_SUCCESS) exit(1);
}
static void run_curand_normal(job *j) {
    if (curandGenerateNormal(j->gen, (float *)j->p0, j->n, 0.0f, 1.0f) != CURAND_STATUS_SUCCESS) exit(1);
}

static void bench_rng(void) {
    size_t n = (size_t)(quick ? 16 : 256) << 20;
    void *y = dalloc(n * 4);
    job j;
    float ours, theirs;
    printf("(c) random F32 fill of %zuM elements; ratio: cuRAND (Philox4_32_10) time over ours (target >= 1.0)\n", n >> 20);
    memset(&j, 0, sizeof j);
    j.p0 = y; j.n = n;
    if (curandCreateGenerator(&j.gen, CURAND_RNG_PSEUDO_PHILOX4_32_10) != CURAND_STATUS_SUCCESS ||
        curandSetStream(j.gen, dt_cuda_stream()) != CURAND_STATUS_SUCCESS ||
        curandSetPseudoRandomGeneratorSeed(j.gen, 1234) != CURAND_STATUS_SUCCESS) {
        fprintf(stderr, "curand setup failed\n");
        exit(1);
    }
    j.rop.seed = 1234; j.rop.offset = 8; j.rop.t = DT_F32; j.rop.w = 1;
    j.rop.kind = DT__RK_UNIFORM; j.rop.a = 0; j.rop.b = 1;
    j.run = run_dt_rng; ours = time_ms(&j);
    j.run = run_curand_uniform; theirs = time_ms(&j);
    printf("  %-40s %10.3f ms  cuRAND %8.3f ms   %5.2f\n", "uniform [0,1)", ours, theirs, theirs / ours);
    j.rop.kind = DT__RK_NORMAL; j.rop.a = 0; j.rop.b = 1;
    j.run = run_dt_rng; ours = time_ms(&j);
    j.run = run_curand_normal; theirs = time_ms(&j);
    printf("  %-40s %10.3f ms  cuRAND %8.3f ms   %5.2f\n", "normal (0, 1)", ours, theirs, theirs / ours);
    j.rop.kind = DT__RK_UNIFORM; j.rop.a = -2; j.rop.b = 3;
    j.run = run_dt_rng; ours = time_ms(&j);
    printf("  %-40s %10.3f ms\n", "uniform [-2, 3) (bounds in double)", ours);
    curandDestroyGenerator(j.gen);
    CU(cudaFree(y));
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the kernel dt_add runs on two aligned [4] F32 blocks, launched bare:
   median host time per launch over n batches of iters */
static double bare_launch_s(int iters, int n) {
    float4 *x = (float4 *)dalloc(16), *y = (float4 *)dalloc(16), *z = (float4 *)dalloc(16);
    dt__bop op = DT__B_ADD;
    int64_t n4 = 1;
    float alpha = 1.0f;
    void *args[6] = {&op, &n4, &x, &y, &z, &alpha};
    double t[15];
    int r, i;
    for (r = 0; r < n; r++) {
        double t0 = now_s();
        for (i = 0; i < iters; i++)
            CU(cudaLaunchKernel((const void *)dt__cu_binary_f32x4_kernel, dim3(1), dim3(DT__CU_THREADS), args, 0,
                                dt_cuda_stream()));
        CU(cudaStreamSynchronize(dt_cuda_stream()));
        t[r] = (now_s() - t0) / iters;
    }
    qsort(t, (size_t)n, sizeof *t, cmp_d);
    CU(cudaFree(x)); CU(cudaFree(y)); CU(cudaFree(z));
    return t[n / 2];
}

static void bench_dispatch(void) {
    dt_comm *comm = NULL;
    dt_mesh *mesh = NULL;
    dt_tensor *a = NULL, *b = NULL, *c = NULL;
    dt_mesh_desc md;
    dt_tensor_desc td;
    int iters = quick ? 2000 : 20000, i, r;
    double t[15];
    printf("(d) dispatch: dt_add of two [4] F32 device tensors, Replicate, one rank; host time per call\n");
    memset(&md, 0, sizeof md);
    md.ndim = 1; md.shape[0] = 1;
    memset(&td, 0, sizeof td);
    td.dtype = DT_F32; td.ndim = 1; td.shape[0] = 4; td.device = DT_CUDA;
    if (dt_comm_self(&comm) || dt_mesh_create(comm, &md, &mesh) || dt_tensor_empty(mesh, &td, &a) ||
        dt_tensor_empty(mesh, &td, &b) || dt_uniform_(a, 0, 1) || dt_uniform_(b, 0, 1) || dt_add(a, b, &c)) {
        printf("  skipped: %s\n", dt_last_error());
    } else {
        int n = reps < 15 ? reps : 15;
        for (r = 0; r < n; r++) {
            double t0 = now_s();
            for (i = 0; i < iters; i++)
                if (dt_add(a, b, &c)) { printf("  dt_add failed: %s\n", dt_last_error()); exit(1); }
            CU(cudaStreamSynchronize(dt_cuda_stream()));
            t[r] = (now_s() - t0) / iters;
        }
        qsort(t, (size_t)n, sizeof *t, cmp_d);
        printf("  %-40s %10.2f us per call (median of %d batches of %d)\n", "dt_add [4] + [4] -> *out reused",
               t[n / 2] * 1e6, n, iters);
        {
            double bare = bare_launch_s(iters, n);
            printf("  %-40s %10.2f us per call; dt_add / bare = %.2f (target <= 1.3)\n",
                   "cudaLaunchKernel, the same kernel", bare * 1e6, t[n / 2] / bare);
        }
    }
    dt_tensor_destroy(c); dt_tensor_destroy(b); dt_tensor_destroy(a);
    dt_mesh_destroy(mesh); dt_comm_destroy(comm);
}

/* ---- (e) halo exchange ---- */

/* the hand-written exchange's kernel: one face, a[dst + i0*t0 + i1*t1] = a[src + ...] */
__global__ void face_kernel(double *a, int64_t e0, int64_t e1, int64_t t0, int64_t t1, int64_t src, int64_t dst) {
    int64_t k;
    for (k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < e0 * e1; k += (int64_t)gridDim.x * blockDim.x) {
        int64_t o = (k / e1) * t0 + (k % e1) * t1;
        a[dst + o] = a[src + o];
    }
}

/* a periodic width-1 halo of an nd-dim ghosted array of n interior cells a
   side (strides st), dim by dim: ghost layer 0 <- layer n, layer n+1 <- 1 */
typedef struct hand_halo { double *a; int nd; int64_t n, st[3]; } hand_halo;
static hand_halo hand_h;
static void run_hand_halo(job *j) {
    const hand_halo *h = &hand_h;
    int d, k;
    (void)j;
    for (d = 0; d < h->nd; d++) {
        int64_t e[2] = {1, 1}, t[2] = {0, 0}, base = 0, blocks;
        int m = 0;
        for (k = 0; k < h->nd; k++)
            if (k != d) { e[m] = h->n; t[m] = h->st[k]; m++; base += h->st[k]; }
        blocks = (e[0] * e[1] + 255) / 256;
        if (blocks > 1024) blocks = 1024;
        face_kernel<<<(unsigned)blocks, 256, 0, dt_cuda_stream()>>>(h->a, e[0], e[1], t[0], t[1],
                                                                     base + h->n * h->st[d], base);
        face_kernel<<<(unsigned)blocks, 256, 0, dt_cuda_stream()>>>(h->a, e[0], e[1], t[0], t[1], base + h->st[d],
                                                                     base + (h->n + 1) * h->st[d]);
    }
}
static dt_tensor *bench_halo_t;
static void run_dt_halo(job *j) {
    (void)j;
    if (dt_halo_exchange(bench_halo_t)) { fprintf(stderr, "%s\n", dt_last_error()); exit(1); }
}

static void bench_halo_case(dt_mesh *mesh, int nd, int64_t n) {
    static const int64_t ghost[3] = {1, 1, 1};
    int64_t G = n + 2, cells = 1, ls[3];
    size_t bytes;
    double *a, *b, *h;
    dt_tensor_desc td;
    dt_halo_desc hd;
    job j;
    float t_dt, t_hand;
    char label[96];
    int d, same;
    for (d = 0; d < nd; d++) cells *= G;
    bytes = (size_t)cells * sizeof(double);
    a = (double *)dalloc(bytes);
    b = (double *)dalloc(bytes);
    h = (double *)malloc(bytes);
    for (d = 0; d < (int)cells; d++) h[d] = (double)d * 0.5;
    CU(cudaMemcpy(a, h, bytes, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(b, h, bytes, cudaMemcpyHostToDevice));
    memset(&td, 0, sizeof td);
    td.dtype = DT_F64; td.ndim = nd; td.device = DT_CUDA;
    for (d = 0; d < nd; d++) { td.shape[d] = n; ls[d] = n; }
    td.local_shape = ls;
    td.local_ghost = ghost;
    td.local_alloc = a;
    td.local_alloc_bytes = (int64_t)bytes;
    memset(&hd, 0, sizeof hd);
    for (d = 0; d < nd; d++) { hd.width[d] = 1; hd.boundary[d] = DT_BOUNDARY_PERIODIC; }
    bench_halo_t = NULL;
    if (dt_tensor_from_local(mesh, &td, a, DT_BORROW, &bench_halo_t) || dt_tensor_set_halo(bench_halo_t, &hd)) {
        printf("  skipped: %s\n", dt_last_error());
        dt_tensor_destroy(bench_halo_t);
        CU(cudaFree(a)); CU(cudaFree(b)); free(h);
        return;
    }
    hand_h.a = b; hand_h.nd = nd; hand_h.n = n;
    for (d = nd - 1; d >= 0; d--) hand_h.st[d] = d == nd - 1 ? 1 : hand_h.st[d + 1] * G;
    memset(&j, 0, sizeof j);
    /* the same ghost cells, byte for byte (corners are neither's: both leave them) */
    run_dt_halo(&j);
    run_hand_halo(&j);
    {
        double *x = (double *)malloc(bytes), *y = (double *)malloc(bytes);
        CU(cudaMemcpy(x, a, bytes, cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(y, b, bytes, cudaMemcpyDeviceToHost));
        same = memcmp(x, y, bytes) == 0;
        free(x); free(y);
    }
    if (!same) { printf("  halo %d-D: dtensor and the hand-written exchange differ\n", nd); exit(1); }
    j.run = run_dt_halo;
    t_dt = time_ms(&j);
    j.run = run_hand_halo;
    t_hand = time_ms(&j);
    snprintf(label, sizeof label, "%d-D F64 [%lld^%d], periodic, width 1", nd, (long long)n, nd);
    printf("  %-40s dtensor %8.1f us  hand %8.1f us   ratio %5.2f (target <= 1.10)\n", label, t_dt * 1e3,
           t_hand * 1e3, t_dt / t_hand);
    dt_tensor_destroy(bench_halo_t);
    CU(cudaFree(a)); CU(cudaFree(b)); free(h);
}

static void bench_halo(void) {
    dt_comm *comm = NULL;
    dt_mesh *mesh = NULL;
    dt_mesh_desc md;
    printf("(e) halo exchange of a ghosted device array, one rank: dt_halo_exchange against hand-written face kernels\n");
    memset(&md, 0, sizeof md);
    md.ndim = 1; md.shape[0] = 1;
    if (dt_comm_self(&comm) || dt_mesh_create(comm, &md, &mesh)) {
        printf("  skipped: %s\n", dt_last_error());
    } else {
        bench_halo_case(mesh, 2, quick ? 1024 : 4096);
        bench_halo_case(mesh, 3, quick ? 96 : 256);
    }
    dt_mesh_destroy(mesh); dt_comm_destroy(comm);
}

int main(int argc, char **argv) {
    int i, dev = 0;
    struct cudaDeviceProp prop;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick")) quick = 1;
    }
    if (reps < 7) reps = 7;
    CU(cudaGetDevice(&dev));
    CU(cudaGetDeviceProperties(&prop, dev));
    printf("bench_cuda on %s, %d SMs; median of %d reps after 3 warm-up%s\n", prop.name, prop.multiProcessorCount, reps,
           quick ? " (--quick sizes)" : "");
    bench_pack();
    bench_pointwise();
    bench_rng();
    bench_dispatch();
    bench_halo();
    return 0;
}

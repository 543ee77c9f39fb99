/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi (and a GPU when built with -DDT_TEST_CUDA: make cuda)
   impl:  own
   standin: -DDT_TEST_CUDA
*/
/* test_device.c -- device tensors through the whole library.

   Built two ways:
   - plain (mpicc, every CI run): against "sim", a device registered here
     whose memory is host memory handed out at NON-CANONICAL addresses (bit
     62 set). Any host code in dtensor.h that touches a device shard
     directly faults at once; only the device's own callbacks can decode the
     pointers. Its kernels are the host kernels behind that decoding, so
     device results must equal host results bit for bit. Allocations are
     counted (leaks, and allocation-free steady state).
   - with -DDT_TEST_CUDA (nvcc -x cu, `make cuda` / `make test-cuda` on a
     GPU machine): the same checks on DT_CUDA memory, allocations counted
     through dt_cuda_set_allocator; float results compared with a tolerance
     (different kernels), random numbers still bit for bit.
   - the same -DDT_TEST_CUDA source with g++ against tests/standin/ (the CPU
     stand-in for the CUDA runtime, NCCL and cuBLAS; `make standin`, every
     CI run): DT_CUDA memory the host cannot touch, kernels run on the
     CPU, NCCL over MPI at every rank count.

   Backends: the MPI backend (device shards staged through host buffers)
   and a backend that takes device memory itself -- for sim, the MPI
   backend behind pointer decoding; for CUDA, NCCL (DT_TEST_BACKEND=nccl;
   at one rank on a GPU machine, at every rank on the stand-in). Every value is checked against the same
   computation on host tensors, and gathered results against closed forms (redistribute_reduce and
   integer Partial(avg): against references computed here from the global values; I32/I64 sums
   that overflow: the wrapped sum, the bits every reduce path gives). */
#define _POSIX_C_SOURCE 200809L /* setenv, getpid */
#include <stdlib.h>
#include <unistd.h>
/* host allocations, watched: the largest one made while host_watch is set
   (the device's pinned staging buffers excluded), to show that a device
   shard is never copied whole into host memory on the device paths */
static int host_watch = 0, in_pinned = 0;
static size_t host_big = 0;
static void *cnt_malloc(size_t n) {
    if (host_watch && !in_pinned && n > host_big) host_big = n;
    return malloc(n);
}
#define DT_MALLOC(sz) cnt_malloc(sz)
#define DT_FREE(p) free(p)
#define DTENSOR_IMPLEMENTATION
#ifdef DT_TEST_CUDA
#include "dtensor_cuda.h"
#else
#include "dtensor.h"
#endif
#include "dtensor_layers.h" /* (the layers' implementation too: DTENSOR_IMPLEMENTATION) */
#include "dt_test.h"

static long dev_live = 0, dev_allocs = 0; /* live device allocations, all allocations */

/* ------------------------------------------------------------ the device under test */
#ifdef DT_TEST_CUDA
#define DEV DT_CUDA
static void *cu_alloc(size_t n, void *u) {
    void *p = NULL;
    (void)u;
    if (cudaMalloc(&p, n) != cudaSuccess) return NULL;
    dev_live++, dev_allocs++;
    return p;
}
static void cu_free(void *p, void *u) {
    (void)u;
    if (p) { cudaFree(p); dev_live--; }
}
static void dev_setup(void) {
    dt_cuda_allocator a = {cu_alloc, cu_free, NULL};
    cudaSetDevice(0);
    dt_cuda_set_allocator(&a);
}
static void *dev_alloc(size_t n) { void *p = NULL; cudaMalloc(&p, n ? n : 1); return p; }
static void dev_free(void *p) { cudaFree(p); }
static void dev_put(void *d, const void *h, size_t n) { cudaMemcpy(d, h, n, cudaMemcpyHostToDevice); }
static void dev_get(void *h, const void *d, size_t n) { cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost); }
#define EXACT_FLOATS 0
#else
#define DEV 2
#define SIM_BIT ((uintptr_t)1 << 62)
static void *sim_enc(void *p) { return (void *)((uintptr_t)p | SIM_BIT); }
static void *sim_dec(const void *p) { return (void *)((uintptr_t)p & ~SIM_BIT); }
static int sim_owns(const void *p) { return ((uintptr_t)p & SIM_BIT) != 0; }
static void *sim_any(const void *p) { return sim_owns(p) ? sim_dec(p) : (void *)p; }

static dt_status sim_alloc(const char *fn, size_t n, void **p) {
    void *r = malloc(n ? n : 1);
    if (!r) return dt__fail(DT_ERR_NOMEM, "%s: sim: out of memory (%zu bytes)", fn, n);
    dev_live++, dev_allocs++;
    *p = sim_enc(r);
    return DT_OK;
}
static void sim_free(void *p) {
    if (!p) return;
    free(sim_dec(p));
    dev_live--;
}
static size_t sim_crossed = 0; /* bytes copied between host and device memory */
static dt_status sim_copy(const char *fn, void *d, const void *s, size_t n) {
    (void)fn;
    if (sim_owns(d) != sim_owns(s)) sim_crossed += n;
    if (n) memmove(sim_any(d), sim_any(s), n);
    return DT_OK;
}
static dt_status sim_zero(const char *fn, void *p, size_t n) {
    (void)fn;
    if (n) memset(sim_dec(p), 0, n);
    return DT_OK;
}
static dt_status sim_copy_box(const char *fn, const dt__array *s, const dt__array *d, const dt__box *p) {
    dt__array a = *s, b = *d;
    (void)fn;
    if (dt__box_numel(s->ndim, p) == 0) return DT_OK;
    if (!sim_owns(s->data) || !sim_owns(d->data))
        return dt__fail(DT_ERR_DEVICE, "sim copy_box: an array is not device memory");
    a.data = (char *)sim_dec(a.data);
    b.data = (char *)sim_dec(b.data);
    dt__copy_box(&a, &b, p);
    return DT_OK;
}
static dt_status sim_copy_box_op(const char *fn, const dt__array *s, const dt__array *d, const dt__box *p, dt_dtype t,
                                 int op) {
    dt__array a = *s, b = *d;
    (void)fn;
    if (dt__box_numel(s->ndim, p) == 0) return DT_OK;
    if (!sim_owns(s->data) || !sim_owns(d->data))
        return dt__fail(DT_ERR_DEVICE, "sim copy_box_op: an array is not device memory");
    a.data = (char *)sim_dec(a.data);
    b.data = (char *)sim_dec(b.data);
    dt__copy_box_op(&a, &b, p, t, op);
    return DT_OK;
}
static dt_status sim_sync(const char *fn) { (void)fn; return DT_OK; }

/* the host kernels behind decoding; every pointer argument must be device memory */
static int sim_bad_ptrs = 0;
static void *D(const void *p) {
    if (p && !sim_owns(p)) sim_bad_ptrs++;
    return p ? sim_dec(p) : NULL;
}
static void k_unary(dt__uop op, dt_dtype t, const void *x, void *y, size_t n, double a) {
    dt__host_kernels.unary(op, t, D(x), D(y), n, a);
}
static void k_cast(dt_dtype f, const void *x, dt_dtype t, void *y, size_t n) { dt__host_kernels.cast(f, D(x), t, D(y), n); }
static void k_binary(dt__bop op, dt_dtype t, int nd, const int64_t *sh, const void *a, const int64_t *sa, const void *b,
                     const int64_t *sb, void *o, double al) {
    dt__host_kernels.binary(op, t, nd, sh, D(a), sa, D(b), sb, D(o), al);
}
static void k_reduce(dt__rop op, dt_dtype t, int nd, const int64_t *sh, unsigned m, const void *x, void *o, double sc) {
    dt__host_kernels.reduce(op, t, nd, sh, m, D(x), D(o), sc);
}
static void k_softmax(dt_dtype t, const void *x, void *y, size_t a, size_t n, size_t b, int l) {
    dt__host_kernels.softmax(t, D(x), D(y), a, n, b, l);
}
static void k_norm(dt_dtype t, const void *x, const void *w, const void *b, void *y, size_t r, size_t n, double e, int rms) {
    dt__host_kernels.norm(t, D(x), D(w), D(b), D(y), r, n, e, rms);
}
static dt_status k_gemm(dt_dtype t, int64_t m, int64_t n, int64_t k, double al, const void *a, int64_t rsa, int64_t csa,
                        const void *b, int64_t rsb, int64_t csb, double be, void *c, int64_t rsc, int64_t csc) {
    return dt__host_kernels.gemm(t, m, n, k, al, D(a), rsa, csa, D(b), rsb, csb, be, D(c), rsc, csc);
}
static void k_permute(size_t es, int nd, const int64_t *sh, const int *perm, const void *x, void *y) {
    dt__host_kernels.permute(es, nd, sh, perm, D(x), D(y));
}
static void k_embedding(dt_dtype t, const void *tb, int64_t r0, int64_t nr, int64_t dim, dt_dtype it, const void *idx,
                        size_t ni, void *o) {
    dt__host_kernels.embedding(t, D(tb), r0, nr, dim, it, D(idx), ni, D(o));
}
static void k_xent(dt_dtype t, const void *x, size_t r, size_t nc, int64_t c0, dt_dtype tt, const void *tg,
                   const double *M, double *rm, double *se, double *tl) {
    dt__host_kernels.xent(t, D(x), r, nc, c0, tt, D(tg), (const double *)D(M), (double *)D(rm), (double *)D(se),
                          (double *)D(tl));
}
static void k_rng(const dt__rng_op *op, int nd, const int64_t *gs, const int64_t *lo, const int64_t *ext, void *y) {
    dt__rng_op o = *op;
    o.x = op->x ? D(op->x) : NULL;
    o.mask = op->mask ? D(op->mask) : NULL;
    dt__host_kernels.rng(&o, nd, gs, lo, ext, D(y));
}
static void k_avg_split(dt_dtype t, const void *x, size_t n, int k, int64_t *q, int64_t *r) {
    dt__host_kernels.avg_split(t, D(x), n, k, (int64_t *)D(q), (int64_t *)D(r));
}
static void k_avg_join(dt_dtype t, const int64_t *q, const int64_t *r, size_t n, int k, void *o) {
    dt__host_kernels.avg_join(t, (const int64_t *)D(q), (const int64_t *)D(r), n, k, D(o));
}
static const dt__kernels sim_kernels = {k_unary, k_cast, k_binary, k_reduce, k_softmax, k_norm, k_gemm,
                                        k_permute, k_embedding, k_xent, k_rng, k_avg_split, k_avg_join};
static const dt__kernels *sim_kernels_get(void) { return &sim_kernels; }
static long pinned_live = 0;
static size_t pinned_max = 0; /* the largest staging buffer asked for */
static dt_status sim_alloc_host(const char *fn, size_t n, void **p) {
    dt_status st;
    in_pinned = 1;
    st = dt__alloc(fn, n, p);
    in_pinned = 0;
    if (!st) pinned_live++;
    if (n > pinned_max) pinned_max = n;
    return st;
}
static void sim_free_host(void *p) {
    if (p) pinned_live--;
    DT_FREE(p);
}
static const dt__device sim_device = {"sim", sim_alloc, sim_free, sim_copy, sim_zero, sim_copy_box,
                                      sim_alloc_host, sim_free_host, sim_owns, sim_sync, sim_kernels_get,
                                      sim_copy_box_op, NULL, NULL, NULL, NULL, NULL};

static void dev_setup(void) { dt__device_register(DEV, &sim_device); }
static void *dev_alloc(size_t n) { void *p = NULL; sim_alloc("test", n, &p); return p; }
static void dev_free(void *p) { sim_free(p); }
static void dev_put(void *d, const void *h, size_t n) { memcpy(sim_dec(d), h, n); }
static void dev_get(void *h, const void *d, size_t n) { memcpy(h, sim_dec(d), n); }
#define EXACT_FLOATS 1

/* ---- a backend that takes sim memory: the MPI backend behind decoding */
typedef struct simbe { dt_comm_desc in; } simbe;
static dt_status sb_wrap(const dt_comm_desc *in, void **out);
static dt_status sb_sendrecv(void *u, const void *sb, size_t sn, int d, void *rb, size_t rn, int s, int tag) {
    simbe *b = (simbe *)u;
    return b->in.sendrecv(b->in.user, sim_any(sb), sn, d, sim_any(rb), rn, s, tag);
}
static dt_status sb_split(void *u, int color, int key, void **nu, int *nr, int *ns) {
    simbe *b = (simbe *)u;
    void *child = NULL;
    dt_status st = b->in.split(b->in.user, color, key, &child, nr, ns);
    *nu = NULL;
    if (st || !child) return st;
    {
        dt_comm_desc d = b->in;
        d.user = child;
        if ((st = sb_wrap(&d, nu))) { if (b->in.destroy) b->in.destroy(child); }
    }
    return st;
}
static dt_status sb_allgatherv(void *u, const void *sb, size_t sn, void *rb, const size_t *rc, const size_t *rd) {
    simbe *b = (simbe *)u;
    return b->in.allgatherv(b->in.user, sim_any(sb), sn, sim_any(rb), rc, rd);
}
static dt_status sb_alltoallv(void *u, const void *sb, const size_t *sc, const size_t *sd, void *rb, const size_t *rc,
                              const size_t *rd) {
    simbe *b = (simbe *)u;
    return b->in.alltoallv(b->in.user, sim_any(sb), sc, sd, sim_any(rb), rc, rd);
}
static dt_status sb_allreduce(void *u, const void *sb, void *rb, size_t n, dt_dtype t, dt_reduce op) {
    simbe *b = (simbe *)u;
    return b->in.allreduce(b->in.user, sim_any(sb), sim_any(rb), n, t, op);
}
static dt_status sb_reduce_scatter(void *u, const void *sb, void *rb, const size_t *c, dt_dtype t, dt_reduce op) {
    simbe *b = (simbe *)u;
    return b->in.reduce_scatter(b->in.user, sim_any(sb), sim_any(rb), c, t, op);
}
static dt_status sb_broadcast(void *u, void *buf, size_t n, int root) {
    simbe *b = (simbe *)u;
    return b->in.broadcast(b->in.user, sim_any(buf), n, root);
}
static dt_status sb_barrier(void *u) { simbe *b = (simbe *)u; return b->in.barrier(b->in.user); }
static void sb_destroy(void *u) {
    simbe *b = (simbe *)u;
    if (b->in.destroy) b->in.destroy(b->in.user);
    free(b);
}
static dt_status sb_wrap(const dt_comm_desc *in, void **out) {
    simbe *b = (simbe *)malloc(sizeof *b);
    if (!b) return DT_ERR_NOMEM;
    b->in = *in;
    *out = b;
    return DT_OK;
}
/* the world's MPI backend, re-wrapped so that it takes device memory only */
static dt_status device_backend(dt_comm **out) {
    dt_comm *mpi = NULL;
    dt_comm_desc d;
    void *u = NULL;
    dt_status st;
    if ((st = dt_comm_mpi(MPI_COMM_WORLD, &mpi))) return st;
    memset(&d, 0, sizeof d);
    if ((st = sb_wrap(&mpi->be, &u))) { dt_comm_destroy(mpi); return st; }
    mpi->be.destroy = NULL; /* the wrapper owns the MPI user data now */
    dt_comm_destroy(mpi);
    d.name = "sim-mpi";
    d.rank = dtt_rank;
    d.size = dtt_np;
    d.user = u;
    d.sendrecv = sb_sendrecv;
    d.split = sb_split;
    d.allgatherv = sb_allgatherv;
    d.alltoallv = sb_alltoallv;
    d.allreduce = sb_allreduce;
    d.reduce_scatter = sb_reduce_scatter;
    d.broadcast = sb_broadcast;
    d.barrier = sb_barrier;
    d.destroy = sb_destroy;
    d.device = DEV;
    return dt_comm_custom(&d, out);
}
#endif

#ifdef DT_TEST_CUDA
static ncclComm_t user_nccl = NULL; /* the caller's communicator: dt_comm_destroy leaves it */
static dt_status device_backend(dt_comm **out) {
#ifdef DTCU_STANDIN /* tests/standin: NCCL over MPI, a "GPU" per rank */
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (dtt_rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) return DT_ERR_COMM;
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (ncclCommInitRank(&user_nccl, dtt_np, id, dtt_rank) != ncclSuccess) return DT_ERR_COMM;
#else
    int dev0 = 0;
    if (dtt_np != 1) return DT_ERR_UNSUPPORTED; /* NCCL needs a GPU per rank */
    if (ncclCommInitAll(&user_nccl, 1, &dev0) != ncclSuccess) return DT_ERR_COMM;
#endif
    return dt_comm_nccl(user_nccl, 0, out);
}
#endif

#ifdef DT_TEST_CUDA
static void sim_crossed_reset(void) {}
#else
static void sim_crossed_reset(void) { sim_crossed = 0; }
static size_t sim_crossed_get(void) { return sim_crossed; }
#endif

/* ------------------------------------------------------------ helpers */

static int dtt_ok(dt_status st) {
    CHECK(st == DT_OK, "%s", dt_last_error());
    return st == DT_OK;
}

static double val_at(int64_t g, int salt) { return (double)((g * 7 + salt * 3) % 23 - 11) / 4.0; }

static void fill_full(dt_dtype t, void *buf, int64_t n, int salt) {
    int64_t g;
    for (g = 0; g < n; g++) {
        double v = val_at(g, salt);
        dt__host_kernels.cast(DT_F64, &v, t, (char *)buf + (size_t)g * dt_dtype_size(t), 1);
    }
}

static dt_tensor_desc mkdesc(dt_dtype t, int nd, const int64_t *shape, const dt_placement *pl, int mnd, int device) {
    dt_tensor_desc d = dtt_desc(t, nd, shape, mnd, pl);
    d.device = device;
    return d;
}

static int64_t numel_of(const dt_tensor *t) {
    const dt_tensor_desc *d = dt_tensor_get_desc(t);
    int64_t n = 1;
    int i;
    for (i = 0; i < d->ndim; i++) n *= d->shape[i];
    return n;
}

/* gather a tensor (host or device) into a fresh host buffer */
static void *gathered(const dt_tensor *t) {
    size_t bytes = (size_t)numel_of(t) * dt_dtype_size(dt_tensor_get_desc(t)->dtype);
    void *h = malloc(bytes ? bytes : 1);
    CHECK_OK(dt_tensor_gather(t, h));
    return h;
}

/* host and device results of the same computation */
static void same_values(const char *what, const dt_tensor *h, const dt_tensor *d, int exact) {
    dt_dtype t = dt_tensor_get_desc(h)->dtype;
    int64_t n = numel_of(h), i, bad = 0;
    char *a = (char *)gathered(h), *b = (char *)gathered(d);
    size_t es = dt_dtype_size(t);
    if (t == DT_C64 || t == DT_C128) { /* the parts, as reals */
        t = t == DT_C64 ? DT_F32 : DT_F64;
        n *= 2;
        es /= 2;
    }
    for (i = 0; i < n; i++) {
        double x, y;
        if (exact || !(t == DT_F32 || t == DT_F64 || t == DT_F16 || t == DT_BF16)) {
            if (memcmp(a + (size_t)i * es, b + (size_t)i * es, es)) bad++;
            continue;
        }
        dt__host_kernels.cast(t, a + (size_t)i * es, DT_F64, &x, 1);
        dt__host_kernels.cast(t, b + (size_t)i * es, DT_F64, &y, 1);
        if (fabs(x - y) > (t == DT_F64 ? 1e-12 : t == DT_F32 ? 1e-5 : 1e-2) * (1 + fabs(x))) bad++;
    }
    CHECK(bad == 0, "%s: %lld of %lld elements differ between host and device", what, (long long)bad, (long long)n);
    free(a);
    free(b);
}

/* ------------------------------------------------------------ redistribution */

static const dt_dtype dtypes[] = {DT_F32, DT_F64, DT_F16, DT_I64};

static dt_placement random_placement(dtt_rng *r, int nd, int allow_partial) {
    int k = dtt_randint(r, allow_partial ? 4 : 3);
    if (k == 0) return dt_replicate();
    if (k == 3) { static const dt_reduce ops[] = {DT_SUM, DT_AVG, DT_MAX}; return dt_partial(ops[dtt_randint(r, 3)]); }
    return dt_shard(dtt_randint(r, nd));
}

static void redistribution_sweep(dt_comm *comm, const char *bname, int device_backend_used) {
    int s, trial, fac[16][4], nf, f;
    dtt_rng r = {0x5eed + (uint64_t)device_backend_used};
    nf = dtt_factorizations(dtt_np, 2, &fac[0][0], 8);
    for (f = 0; f < nf; f++) {
        dt_mesh_desc md;
        dt_mesh *m = NULL;
        memset(&md, 0, sizeof md);
        md.ndim = 2;
        md.shape[0] = fac[f][0];
        md.shape[1] = fac[f][1];
        if (!dtt_ok(dt_mesh_create(comm, &md, &m))) continue;
        for (trial = 0; trial < (dtt_quick ? 12 : 40); trial++) {
            int64_t shape[3] = {7, 5, 3};
            int nd = 1 + dtt_randint(&r, 3);
            dt_dtype t = dtypes[dtt_randint(&r, 4)];
            dt_placement src[2], dst[2];
            dt_tensor_desc hd, dd;
            dt_tensor *hs = NULL, *ds = NULL, *ho = NULL, *dout = NULL;
            dt_comm_stats a, b;
            int64_t n = 1;
            void *full;
            for (s = 0; s < nd; s++) n *= shape[s];
            for (s = 0; s < 2; s++) { src[s] = random_placement(&r, nd, 1); dst[s] = random_placement(&r, nd, 1); }
            for (s = 0; s < 2; s++) /* Shard -> Partial is not a redistribution */
                if (dst[s].kind == DT_PARTIAL && src[s].kind == DT_SHARD) dst[s] = dt_replicate();
            dtt_ctx("%s mesh %dx%d trial %d %s nd=%d", bname, md.shape[0], md.shape[1], trial, dt_dtype_name(t), nd);
            full = malloc((size_t)n * dt_dtype_size(t));
            fill_full(t, full, n, trial);
            hd = mkdesc(t, nd, shape, src, 2, DT_HOST);
            dd = mkdesc(t, nd, shape, src, 2, DEV);
            CHECK_OK(dt_tensor_distribute(m, &hd, full, 0, &hs));
            CHECK_OK(dt_tensor_distribute(m, &dd, full, 0, &ds));
            if (hs && ds) {
                dt_comm_reset_stats(comm);
                CHECK_OK(dt_tensor_redistribute(hs, dst, &ho));
                dt_comm_get_stats(comm, &a);
                dt_comm_reset_stats(comm);
                CHECK_OK(dt_tensor_redistribute(ds, dst, &dout));
                dt_comm_get_stats(comm, &b);
                if (ho && dout) {
                    CHECK(dt_tensor_get_desc(dout)->device == DEV, "result device %d", dt_tensor_get_desc(dout)->device);
                    same_values("redistribute", ho, dout, 1);
                    CHECK(a.bytes_sent == b.bytes_sent && a.bytes_recv == b.bytes_recv,
                          "device redistribution moved %llu/%llu bytes, host %llu/%llu",
                          (unsigned long long)b.bytes_sent, (unsigned long long)b.bytes_recv,
                          (unsigned long long)a.bytes_sent, (unsigned long long)a.bytes_recv);
                    /* again into the same *out: no new device memory */
                    {
                        long before = dev_allocs;
                        CHECK_OK(dt_tensor_redistribute(ds, dst, &dout));
                        CHECK(dev_allocs == before, "a repeated redistribution allocated %ld device buffers",
                              dev_allocs - before);
                    }
                }
            }
            dt_tensor_destroy(hs);
            dt_tensor_destroy(ds);
            dt_tensor_destroy(ho);
            dt_tensor_destroy(dout);
            free(full);
        }
        dtt_ctx("");
        dt_mesh_destroy(m);
    }
}

/* gather into device memory, distribute from device memory */
static void device_full_buffers(dt_comm *comm) {
    int64_t shape[2] = {9, 4}, n = 36, i;
    dt_placement pl[1];
    pl[0] = dt_shard(1);
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    dt_tensor_desc dd;
    dt_tensor *t = NULL;
    double full[36], back[36];
    void *dfull = dev_alloc(sizeof full);
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    if (!dtt_ok(dt_mesh_create(comm, &md, &m))) { dev_free(dfull); return; }
    for (i = 0; i < n; i++) full[i] = val_at(i, 5);
    dev_put(dfull, full, sizeof full);
    dd = mkdesc(DT_F64, 2, shape, pl, 1, DEV);
    CHECK_OK(dt_tensor_distribute(m, &dd, dfull, DT_SRC_ALL, &t));
    dev_put(dfull, back, 0);
    memset(back, 0, sizeof back);
    dev_put(dfull, back, sizeof back);
    if (t) CHECK_OK(dt_tensor_gather(t, dfull));
    dev_get(back, dfull, sizeof back);
    CHECK(memcmp(back, full, sizeof full) == 0, "gather into device memory differs");
    dt_tensor_destroy(t);
    dt_mesh_destroy(m);
    dev_free(dfull);
}

/* complex device tensors move as bytes (Partial(SUM/AVG) as sums of their
   parts): distribute, redistribute through every kind of step, gather, each
   against the host full array (their ops: complex_ops) */
static void complex_device(dt_comm *comm) {
    static const dt_dtype types[2] = {DT_C64, DT_C128};
    int64_t shape[2] = {7, 5}, n = 35, i;
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    int ti, s;
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    if (!dtt_ok(dt_mesh_create(comm, &md, &m))) return;
    for (ti = 0; ti < 2; ti++) {
        dt_dtype t = types[ti];
        size_t bytes = (size_t)n * dt_dtype_size(t);
        double full[70], back[70];
        float *ff = (float *)(void *)full;
        dt_placement steps[9][1], start[1];
        dt_tensor *x = NULL;
        dt_tensor_desc dd;
        for (i = 0; i < 2 * n; i++) { /* (re, im) = small quarters, exact in both */
            double v = (double)(i % 23 - 11) * 0.25;
            if (t == DT_C64) ff[i] = (float)v;
            else full[i] = v;
        }
        steps[0][0] = dt_shard(1);        /* all-to-all             */
        steps[1][0] = dt_replicate();     /* allgather              */
        steps[2][0] = dt_partial(DT_SUM); /* R -> P(sum): zeros off coordinate 0 */
        steps[3][0] = dt_shard(0);        /* reduce-scatter of the parts */
        steps[4][0] = dt_replicate();
        steps[5][0] = dt_partial(DT_AVG);
        steps[6][0] = dt_replicate();     /* allreduce, both parts divided */
        steps[7][0] = dt_partial(DT_SUM);
        steps[8][0] = dt_replicate();     /* allreduce of the parts */
        start[0] = dt_shard(0);
        dd = mkdesc(t, 2, shape, start, 1, DEV);
        dtt_ctx("complex device %s", dt_dtype_name(t));
        CHECK_OK(dt_tensor_distribute(m, &dd, full, DT_SRC_ALL, &x));
        for (s = 0; s < 9 && x; s++) {
            dt_tensor *y = NULL;
            char pls[64];
            CHECK_OK(dt_tensor_redistribute(x, steps[s], &y));
            if (!y) break;
            memset(back, 0, sizeof back);
            CHECK_OK(dt_tensor_gather(y, back));
            CHECK(memcmp(back, full, bytes) == 0, "step %d (%s): gathered values differ", s,
                  dt_placements_str(steps[s], 1, pls, sizeof pls));
            dt_tensor_destroy(x);
            x = y;
        }
        dt_tensor_destroy(x);
    }
    dt_mesh_destroy(m);
}

/* ------------------------------------------------------------ ops and RNG */

typedef struct pair { dt_tensor *h, *d; } pair;

static pair make_pair(dt_mesh *m, dt_dtype t, int nd, const int64_t *shape, const dt_placement *pl, int mnd, int salt) {
    pair p = {NULL, NULL};
    int64_t n = 1;
    int i;
    dt_tensor_desc hd = mkdesc(t, nd, shape, pl, mnd, DT_HOST), dd = mkdesc(t, nd, shape, pl, mnd, DEV);
    void *full;
    for (i = 0; i < nd; i++) n *= shape[i];
    full = malloc((size_t)n * dt_dtype_size(t) + 1);
    fill_full(t, full, n, salt);
    CHECK_OK(dt_tensor_distribute(m, &hd, full, DT_SRC_ALL, &p.h));
    CHECK_OK(dt_tensor_distribute(m, &dd, full, DT_SRC_ALL, &p.d));
    free(full);
    return p;
}

static void drop(pair *p) {
    dt_tensor_destroy(p->h);
    dt_tensor_destroy(p->d);
    p->h = p->d = NULL;
}

#define BOTH(call_h, call_d, what, exact)                         \
    do {                                                          \
        dt_tensor *rh_ = NULL, *rd_ = NULL;                       \
        dt_status sh_ = call_h, sd_ = call_d;                     \
        CHECK(sh_ == DT_OK && sd_ == DT_OK, "%s: host %s, device %s (%s)", what, dt_status_string(sh_), \
              dt_status_string(sd_), dt_last_error());            \
        if (!sh_ && !sd_) same_values(what, rh_, rd_, exact);     \
        dt_tensor_destroy(rh_);                                   \
        dt_tensor_destroy(rd_);                                   \
    } while (0)

static void ops_sweep(dt_comm *comm) {
    int fac[16][4], nf = dtt_factorizations(dtt_np, 2, &fac[0][0], 8), f, k;
    for (f = 0; f < nf; f++) {
        dt_mesh_desc md;
        dt_mesh *m = NULL;
        int64_t s2[2] = {6, 10}, s1[1] = {10}, sk[2] = {10, 7};
        dt_placement p_row[2], p_col[2], p_rep[2];
        pair a, b, v, w;
        int ex = EXACT_FLOATS;
        p_row[0] = dt_shard(0); p_row[1] = dt_shard(1);
        p_col[0] = dt_shard(1); p_col[1] = dt_replicate();
        p_rep[0] = p_rep[1] = dt_replicate();
        memset(&md, 0, sizeof md);
        md.ndim = 2;
        md.shape[0] = fac[f][0];
        md.shape[1] = fac[f][1];
        if (!dtt_ok(dt_mesh_create(comm, &md, &m))) continue;
        dtt_ctx("ops mesh %dx%d", md.shape[0], md.shape[1]);
        for (k = 0; k < 2; k++) {
            dt_dtype t = k ? DT_F64 : DT_F32;
            a = make_pair(m, t, 2, s2, p_row, 2, 1);
            b = make_pair(m, t, 2, s2, p_col, 2, 2);
            v = make_pair(m, t, 1, s1, p_rep, 2, 3);
            w = make_pair(m, t, 2, sk, p_col, 2, 4);
            BOTH(dt_add(a.h, b.h, &rh_), dt_add(a.d, b.d, &rd_), "add", 1);
            BOTH(dt_mul(a.h, v.h, &rh_), dt_mul(a.d, v.d, &rd_), "mul (broadcast)", 1);
            BOTH(dt_exp(a.h, &rh_), dt_exp(a.d, &rd_), "exp", ex);
            BOTH(dt_scale(b.h, -2.5, &rh_), dt_scale(b.d, -2.5, &rd_), "scale", 1);
            BOTH(dt_cast(a.h, DT_F16, &rh_), dt_cast(a.d, DT_F16, &rd_), "cast f16", 1);
            {
                int dims[1] = {1};
                BOTH(dt_sum(a.h, 1, dims, 0, &rh_), dt_sum(a.d, 1, dims, 0, &rd_), "sum dim 1 (sharded)", ex);
                BOTH(dt_mean(b.h, 1, dims, 1, &rh_), dt_mean(b.d, 1, dims, 1, &rd_), "mean dim 1", ex);
                BOTH(dt_max(a.h, 1, dims, 0, &rh_), dt_max(a.d, 1, dims, 0, &rd_), "max dim 1", 1);
            }
            { /* the mean over an empty extent is 0/0 on the device too: NaN (complex: both parts), the
                 empty dim sharded so that every shard is empty and the Partial(SUM) adds NaNs */
                int64_t se[2] = {6, 0};
                int d1[1] = {1}, q, i;
                dt_dtype et[2];
                et[0] = t;
                et[1] = k ? DT_C128 : DT_C64;
                for (q = 0; q < 2; q++) {
                    dt_tensor_desc ed = mkdesc(et[q], 2, se, p_row, 2, DEV);
                    dt_tensor *ez = NULL, *eo = NULL;
                    unsigned char got[6 * 16];
                    int parts = 6 * (q + 1);
                    dtt_ctx("ops mesh %dx%d: mean of nothing, %s", md.shape[0], md.shape[1], dt_dtype_name(et[q]));
                    CHECK_OK(dt_tensor_zeros(m, &ed, &ez));
                    if (ez) CHECK_OK(dt_mean(ez, 1, d1, 0, &eo));
                    if (eo) {
                        memset(got, 0, sizeof got);
                        CHECK_OK(dt_tensor_gather(eo, got));
                        for (i = 0; i < parts; i++) {
                            float f;
                            double g;
                            int nan;
                            if (k) { memcpy(&g, got + 8 * i, 8); nan = g != g; }
                            else { memcpy(&f, got + 4 * i, 4); nan = f != f; }
                            CHECK(nan, "part %d of the result is not NaN", i);
                        }
                    }
                    dt_tensor_destroy(eo);
                    dt_tensor_destroy(ez);
                }
                dtt_ctx("ops mesh %dx%d", md.shape[0], md.shape[1]);
            }
            BOTH(dt_matmul(a.h, w.h, &rh_), dt_matmul(a.d, w.d, &rd_), "matmul", ex);
            { /* streamed (SUMMA): panels packed by the device's box copies, sent over the backend's
                 start/wait (NCCL: device memory; a host-only comm gathers through staging), GEMMs on it */
                int saved = dt__mm_mode_state;
                long before = dt__summa_gemms;
                pair b2 = make_pair(m, t, 2, sk, p_row, 2, 6); /* [S(0), S(1)] x [S(0), S(1)] */
                dt__mm_mode_state = 1;
                CHECK_OK(dt_mesh_set_matmul_budget(m, 1024));
                BOTH(dt_matmul(a.h, b2.h, &rh_), dt_matmul(a.d, b2.d, &rd_), "matmul streamed", ex);
                CHECK(dt__summa_gemms > before, "the streamed path did not run"); /* (over the device
                   backend the host tensors gather: the count is the device's; over MPI the host's) */
                if (md.shape[1] > 1) { /* 2.5D: b's k over mesh dim 0, mesh dim 1's copies split it, their
                                          results summed on the device (dt__summa_layers_sum) */
                    dt_placement p_r0[2];
                    int lsaved = dt__mm_layers_state;
                    long lbefore = dt__summa_layered;
                    pair a3, b3;
                    p_r0[0] = dt_shard(0);
                    p_r0[1] = dt_replicate();
                    a3 = make_pair(m, t, 2, s2, p_r0, 2, 7);
                    b3 = make_pair(m, t, 2, sk, p_r0, 2, 8);
                    dt__mm_layers_state = 1;
                    BOTH(dt_matmul(a3.h, b3.h, &rh_), dt_matmul(a3.d, b3.d, &rd_), "matmul streamed in layers", ex);
                    CHECK(dt__summa_layered > lbefore, "the layered path did not run");
                    dt__mm_layers_state = lsaved;
                    drop(&a3);
                    drop(&b3);
                }
                CHECK_OK(dt_mesh_set_matmul_budget(m, 0));
                dt__mm_mode_state = saved;
                drop(&b2);
            }
            BOTH(dt_softmax(a.h, 1, &rh_), dt_softmax(a.d, 1, &rd_), "softmax", ex);
            BOTH(dt_layer_norm(a.h, v.h, v.h, 1e-5, &rh_), dt_layer_norm(a.d, v.d, v.d, 1e-5, &rd_), "layer_norm", ex);
            BOTH(dt_transpose(a.h, 0, 1, &rh_), dt_transpose(a.d, 0, 1, &rd_), "transpose", 1);
            BOTH(dt_narrow(b.h, 1, 3, 5, &rh_), dt_narrow(b.d, 1, 3, 5, &rd_), "narrow", 1);
            {
                const dt_tensor *hs[2], *ds[2];
                hs[0] = a.h; hs[1] = b.h; ds[0] = a.d; ds[1] = b.d;
                BOTH(dt_cat(2, hs, 1, &rh_), dt_cat(2, ds, 1, &rd_), "cat", 1);
                BOTH(dt_stack(2, hs, 1, &rh_), dt_stack(2, ds, 1, &rd_), "stack", 1);
            }
            drop(&a); drop(&b); drop(&v); drop(&w);
        }
        dtt_ctx("");
        dt_mesh_destroy(m);
    }
}

/* ------------------------------------------------------------ redistribute_reduce */

static int is_cx(dt_dtype t) { return t == DT_C64 || t == DT_C128; }

/* the global values: complex as (re, im) pairs of val_at */
static void fill_any(dt_dtype t, void *buf, int64_t n, int salt) {
    if (is_cx(t)) fill_full(t == DT_C64 ? DT_F32 : DT_F64, buf, 2 * n, salt);
    else fill_full(t, buf, n, salt);
}

/* the reference of out = out (op) x over n elements, written here: each
   value in double (exact: val_at's quarters, their sums and the dtypes'
   ranges here), combined, stored back; complex per part */
static void ref_combine(dt_dtype t, dt_reduce op, void *out, const void *x, int64_t n) {
    dt_dtype e = t == DT_C64 ? DT_F32 : t == DT_C128 ? DT_F64 : t;
    size_t es = dt_dtype_size(e);
    int64_t i, m = is_cx(t) ? 2 * n : n;
    for (i = 0; i < m; i++) {
        double a, b, r;
        dt__host_kernels.cast(e, (char *)out + (size_t)i * es, DT_F64, &a, 1);
        dt__host_kernels.cast(e, (const char *)x + (size_t)i * es, DT_F64, &b, 1);
        r = op == DT_SUM ? a + b : op == DT_MAX ? (b > a ? b : a) : (b < a ? b : a);
        dt__host_kernels.cast(DT_F64, &r, e, (char *)out + (size_t)i * es, 1);
    }
}

static pair make_pair_any(dt_mesh *m, dt_dtype t, int nd, const int64_t *shape, const dt_placement *pl, int salt) {
    pair p = {NULL, NULL};
    int64_t n = 1;
    int i;
    dt_tensor_desc hd = mkdesc(t, nd, shape, pl, 2, DT_HOST), dd = mkdesc(t, nd, shape, pl, 2, DEV);
    void *full;
    for (i = 0; i < nd; i++) n *= shape[i];
    full = malloc((size_t)n * dt_dtype_size(t) + 1);
    fill_any(t, full, n, salt);
    CHECK_OK(dt_tensor_distribute(m, &hd, full, DT_SRC_ALL, &p.h));
    CHECK_OK(dt_tensor_distribute(m, &dd, full, DT_SRC_ALL, &p.d));
    free(full);
    return p;
}

/* out = out (op) redistribute(x): on device tensors and on host tensors of
   the same mesh (over this comm: a device backend stages the host ones),
   both against the reference computed here from the global values (a
   Partial(SUM) source holds the value on coordinate 0, zeros elsewhere, so
   its reduction is the value). The transitions cover the piece exchanges
   (transposes, gathers, slices), a copy, the reductions of a Partial
   source as the last step (scratch, then the combining pass) and out = out
   op out. The device result must equal the reference bit for bit: every
   value and every combination is exact. */
static void reduce_sweep(dt_comm *comm) {
    static const dt_dtype ts[] = {DT_F32, DT_F64, DT_F16, DT_BF16, DT_I32, DT_I64, DT_U8, DT_C64, DT_C128};
    static const dt_reduce ops[] = {DT_SUM, DT_MAX, DT_MIN};
    enum { NT = 8 };
    int fac[16][4], nf = dtt_factorizations(dtt_np, 2, &fac[0][0], 8), f, k, o, ti;
    int64_t shape[2] = {7, 5}, n = 35;
    for (f = 0; f < nf; f++) {
        dt_mesh_desc md;
        dt_mesh *m = NULL;
        dt_placement src[NT][2], dst[NT][2];
        memset(&md, 0, sizeof md);
        md.ndim = 2;
        md.shape[0] = fac[f][0];
        md.shape[1] = fac[f][1];
        if (!dtt_ok(dt_mesh_create(comm, &md, &m))) continue;
        src[0][0] = dt_shard(0); src[0][1] = dt_shard(1); dst[0][0] = dt_shard(1); dst[0][1] = dt_shard(0); /* S->S transposes */
        src[1][0] = dt_shard(1); src[1][1] = dt_replicate(); dst[1][0] = dt_shard(0); dst[1][1] = dt_replicate();
        src[2][0] = dt_shard(0); src[2][1] = dt_shard(1); dst[2][0] = dt_replicate(); dst[2][1] = dt_replicate();
        src[3][0] = dt_replicate(); src[3][1] = dt_replicate(); dst[3][0] = dt_shard(1); dst[3][1] = dt_shard(0);
        src[4][0] = dt_partial(DT_SUM); src[4][1] = dt_shard(0); dst[4][0] = dt_replicate(); dst[4][1] = dt_shard(0);
        src[5][0] = dt_partial(DT_SUM); src[5][1] = dt_replicate(); dst[5][0] = dt_shard(0); dst[5][1] = dt_replicate();
        src[6][0] = dt_replicate(); src[6][1] = dt_shard(1); dst[6][0] = dt_replicate(); dst[6][1] = dt_shard(1);
        src[7][0] = dt_shard(0); src[7][1] = dt_partial(DT_SUM); dst[7][0] = dt_shard(0); dst[7][1] = dt_replicate();
        for (k = 0; k < NT + 1; k++) /* k == NT: out = out op out */
            for (o = 0; o < 3; o++)
                for (ti = 0; ti < 9; ti++) {
                    dt_dtype t = ts[ti];
                    dt_reduce op = ops[o];
                    int kk = k < NT ? k : 0, self = k == NT;
                    size_t bytes = (size_t)n * dt_dtype_size(t);
                    pair x, y;
                    char *want, *got;
                    if (is_cx(t) && op != DT_SUM) continue;
                    if (dtt_quick && (ti + k + o) % 3) continue;
                    dtt_ctx("reduce mesh %dx%d transition %d op %d %s", md.shape[0], md.shape[1], k, (int)op,
                            dt_dtype_name(t));
                    y = make_pair_any(m, t, 2, shape, dst[kk], 2);
                    x = self ? y : make_pair_any(m, t, 2, shape, src[kk], 1);
                    want = (char *)malloc(bytes + 1);
                    got = (char *)malloc(bytes + 1);
                    fill_any(t, want, n, 2);
                    {
                        char *xv = (char *)malloc(bytes + 1);
                        fill_any(t, xv, n, self ? 2 : 1);
                        ref_combine(t, op, want, xv, n);
                        free(xv);
                    }
                    if (x.h && x.d && y.h && y.d) {
                        CHECK_OK(dt_tensor_redistribute_reduce(x.d, dst[kk], op, y.d));
                        CHECK_OK(dt_tensor_redistribute_reduce(x.h, dst[kk], op, y.h));
                        memset(got, 0x55, bytes);
                        CHECK_OK(dt_tensor_gather(y.d, got));
                        CHECK(!memcmp(got, want, bytes), "device tensor: values differ from the reference");
                        memset(got, 0x55, bytes);
                        CHECK_OK(dt_tensor_gather(y.h, got));
                        CHECK(!memcmp(got, want, bytes), "host tensor: values differ from the reference");
                        CHECK(dt_tensor_get_desc(y.d)->device == DEV, "out moved to device %d",
                              dt_tensor_get_desc(y.d)->device);
                    }
                    if (!self) drop(&x);
                    drop(&y);
                    free(want);
                    free(got);
                }
        dtt_ctx("");
        dt_mesh_destroy(m);
    }
}

/* I32/I64 values near the top of the range (salt apart), so that
   out + x overflows: the device combine and the host's must give the
   two's-complement (wrapped) sum, the same bits as every other reduce path
   (tests/test_transport.c, tests/test_nccl.cu) */
static uint64_t wrap_val(dt_dtype t, int64_t g, int salt) {
    return t == DT_I64 ? (uint64_t)(INT64_MAX - 5 * g - 1000 * (int64_t)salt)
                       : (uint64_t)(uint32_t)(INT32_MAX - 5 * (int32_t)g - 1000 * salt);
}

static pair make_pair_wrap(dt_mesh *m, dt_dtype t, const int64_t *shape, const dt_placement *pl, int salt) {
    pair p = {NULL, NULL};
    int64_t n = shape[0] * shape[1], g;
    size_t es = dt_dtype_size(t);
    dt_tensor_desc hd = mkdesc(t, 2, shape, pl, 2, DT_HOST), dd = mkdesc(t, 2, shape, pl, 2, DEV);
    char *full = (char *)malloc((size_t)n * es + 1);
    for (g = 0; g < n; g++) {
        uint64_t v = wrap_val(t, g, salt);
        memcpy(full + (size_t)g * es, &v, es); /* (little-endian: the low bytes) */
    }
    CHECK_OK(dt_tensor_distribute(m, &hd, full, DT_SRC_ALL, &p.h));
    CHECK_OK(dt_tensor_distribute(m, &dd, full, DT_SRC_ALL, &p.d));
    free(full);
    return p;
}

static void reduce_wrap(dt_comm *comm) {
    static const dt_dtype ts[] = {DT_I32, DT_I64};
    int fac[16][4], nf = dtt_factorizations(dtt_np, 2, &fac[0][0], 8), f, k, ti;
    int64_t shape[2] = {7, 5}, n = 35, g;
    for (f = 0; f < nf; f++) {
        dt_mesh_desc md;
        dt_mesh *m = NULL;
        dt_placement src[3][2], dst[3][2];
        memset(&md, 0, sizeof md);
        md.ndim = 2;
        md.shape[0] = fac[f][0];
        md.shape[1] = fac[f][1];
        if (!dtt_ok(dt_mesh_create(comm, &md, &m))) continue;
        src[0][0] = dt_shard(0); src[0][1] = dt_shard(1); dst[0][0] = dt_shard(1); dst[0][1] = dt_shard(0);
        src[1][0] = dt_shard(0); src[1][1] = dt_shard(1); dst[1][0] = dt_replicate(); dst[1][1] = dt_replicate();
        src[2][0] = dt_replicate(); src[2][1] = dt_shard(1); dst[2][0] = dt_replicate(); dst[2][1] = dt_shard(1);
        for (k = 0; k < 3; k++)
            for (ti = 0; ti < 2; ti++) {
                dt_dtype t = ts[ti];
                size_t es = dt_dtype_size(t), bytes = (size_t)n * es;
                pair x, y;
                char *got = (char *)malloc(bytes + 1);
                dtt_ctx("reduce wrap mesh %dx%d transition %d %s", md.shape[0], md.shape[1], k, dt_dtype_name(t));
                y = make_pair_wrap(m, t, shape, dst[k], 2);
                x = make_pair_wrap(m, t, shape, src[k], 1);
                if (x.h && x.d && y.h && y.d) {
                    int side;
                    CHECK_OK(dt_tensor_redistribute_reduce(x.d, dst[k], DT_SUM, y.d));
                    CHECK_OK(dt_tensor_redistribute_reduce(x.h, dst[k], DT_SUM, y.h));
                    for (side = 0; side < 2; side++) {
                        memset(got, 0x55, bytes);
                        CHECK_OK(dt_tensor_gather(side ? y.h : y.d, got));
                        for (g = 0; g < n; g++) {
                            uint64_t v = 0, want = wrap_val(t, g, 1) + wrap_val(t, g, 2);
                            if (t == DT_I32) want &= 0xffffffffu;
                            memcpy(&v, got + (size_t)g * es, es);
                            if (v != want) {
                                CHECK(0, "%s tensor: element %lld bits %llx want %llx", side ? "host" : "device",
                                      (long long)g, (unsigned long long)v, (unsigned long long)want);
                                break;
                            }
                        }
                    }
                }
                drop(&x);
                drop(&y);
                free(got);
            }
        dtt_ctx("");
        dt_mesh_destroy(m);
    }
}

/* ------------------------------------------------------------ integer Partial(avg) */

/* rank r's part of element g of an integer Partial(avg) tensor: base(g) +
   d(g, r). Even g: base is huge (|k * base| overflows the dtype, so a
   plain sum would wrap) and the d's are small, so the truncated mean is
   base + floor (base > 0) or ceil (base < 0) of sum(d) / k; odd g: base 0
   and d of both signs, the mean sum(d) / k truncated toward zero. U8: base
   200, d >= 0. */
static int64_t avg_base(dt_dtype t, int64_t g) {
    int64_t big = t == DT_I64 ? ((int64_t)1 << 62) + g : t == DT_I32 ? ((int64_t)1 << 30) + g : 200;
    if (g % 2) return 0;
    return t != DT_U8 && g % 4 == 2 ? -big : big;
}
static int64_t avg_d(dt_dtype t, int64_t g, int r) {
    int64_t d = (g * 3 + (int64_t)r * 5) % 7;
    return t == DT_U8 ? d : d - 3;
}
static int64_t avg_want(dt_dtype t, int64_t g, int k) {
    int64_t b = avg_base(t, g), sd = 0, q;
    int r;
    for (r = 0; r < k; r++) sd += avg_d(t, g, r);
    if (b == 0) return sd / k;
    q = sd / k; /* C division truncates; adjust to floor / ceil */
    if (b > 0 && sd % k != 0 && sd < 0) q--;
    if (b < 0 && sd % k != 0 && sd > 0) q++;
    return b + q;
}
static void int_store(dt_dtype t, void *p, int64_t i, int64_t v) {
    if (t == DT_I64) ((int64_t *)p)[i] = v;
    else if (t == DT_I32) ((int32_t *)p)[i] = (int32_t)v;
    else ((uint8_t *)p)[i] = (uint8_t)v;
}

/* Partial(avg) of I32/I64/U8 to Replicate (allreduce) and to Shard(0)
   (reduce-scatter), on device and host tensors over this comm, against the
   mean computed above, on the 1-D mesh of every rank (redistribution_sweep
   draws I64 Partial(avg) on 2-D meshes against host tensors) */
static void int_avg_sweep(dt_comm *comm) {
    static const dt_dtype ts[] = {DT_I32, DT_I64, DT_U8};
    int64_t shape[1] = {13}, n = 13, g;
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    int ti, k;
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    if (!dtt_ok(dt_mesh_create(comm, &md, &m))) return;
    for (ti = 0; ti < 3; ti++)
        for (k = 0; k < 2; k++) {
            dt_dtype t = ts[ti];
            size_t es = dt_dtype_size(t), bytes = (size_t)n * es;
            dt_placement src[1], dst[1];
            dt_tensor_desc hd, dd;
            dt_tensor *h = NULL, *d = NULL, *ho = NULL, *dout = NULL;
            char *local = (char *)malloc(bytes), *want = (char *)malloc(bytes), *got = (char *)malloc(bytes);
            src[0] = dt_partial(DT_AVG);
            dst[0] = k ? dt_shard(0) : dt_replicate();
            dtt_ctx("int avg %s -> %s", dt_dtype_name(t), k ? "S(0)" : "R");
            for (g = 0; g < n; g++) {
                int_store(t, local, g, avg_base(t, g) + avg_d(t, g, dtt_rank));
                int_store(t, want, g, avg_want(t, g, dtt_np));
            }
            hd = mkdesc(t, 1, shape, src, 1, DT_HOST);
            dd = mkdesc(t, 1, shape, src, 1, DEV);
            CHECK_OK(dt_tensor_from_local(m, &hd, local, DT_COPY, &h));
            CHECK_OK(dt_tensor_from_local(m, &dd, local, DT_COPY, &d));
            if (h && d) {
                CHECK_OK(dt_tensor_redistribute(d, dst, &dout));
                CHECK_OK(dt_tensor_redistribute(h, dst, &ho));
                if (dout) {
                    memset(got, 0x55, bytes);
                    CHECK_OK(dt_tensor_gather(dout, got));
                    CHECK(!memcmp(got, want, bytes), "device tensor: the mean differs from the reference");
                }
                if (ho) {
                    memset(got, 0x55, bytes);
                    CHECK_OK(dt_tensor_gather(ho, got));
                    CHECK(!memcmp(got, want, bytes), "host tensor: the mean differs from the reference");
                }
            }
            dt_tensor_destroy(h); dt_tensor_destroy(d); dt_tensor_destroy(ho); dt_tensor_destroy(dout);
            free(local); free(want); free(got);
        }
    dtt_ctx("");
    dt_mesh_destroy(m);
}

/* ------------------------------------------------------------ complex ops */

/* every op the host takes on C64/C128 (dtensor.h's list under dt_add's
   family), on device tensors against host tensors: bit for bit on sim (the
   host's kernels), with the float tolerance per part on CUDA (exp's and the
   matmul's sums differ in the last bits); the data movement exactly */
static void complex_ops(dt_comm *comm) {
    int fac[16][4], nf = dtt_factorizations(dtt_np, 2, &fac[0][0], 8), f, k;
    for (f = 0; f < nf && f < 2; f++) {
        dt_mesh_desc md;
        dt_mesh *m = NULL;
        int64_t s2[2] = {6, 10}, s1[1] = {10}, sk[2] = {10, 7};
        dt_placement p_row[2], p_col[2], p_rep[2];
        int ex = EXACT_FLOATS;
        p_row[0] = dt_shard(0); p_row[1] = dt_shard(1);
        p_col[0] = dt_shard(1); p_col[1] = dt_replicate();
        p_rep[0] = p_rep[1] = dt_replicate();
        memset(&md, 0, sizeof md);
        md.ndim = 2;
        md.shape[0] = fac[f][0];
        md.shape[1] = fac[f][1];
        if (!dtt_ok(dt_mesh_create(comm, &md, &m))) continue;
        for (k = 0; k < 2; k++) {
            dt_dtype t = k ? DT_C128 : DT_C64;
            pair a = make_pair_any(m, t, 2, s2, p_row, 1), b = make_pair_any(m, t, 2, s2, p_col, 2);
            pair v = make_pair_any(m, t, 1, s1, p_rep, 3), w = make_pair_any(m, t, 2, sk, p_col, 4);
            pair r = make_pair(m, k ? DT_F16 : DT_I32, 2, s2, p_row, 2, 5);
            dtt_ctx("complex ops mesh %dx%d %s", md.shape[0], md.shape[1], dt_dtype_name(t));
            BOTH(dt_neg(a.h, &rh_), dt_neg(a.d, &rd_), "neg", 1);
            BOTH(dt_scale(b.h, -2.5, &rh_), dt_scale(b.d, -2.5, &rd_), "scale", 1);
            BOTH(dt_shift(b.h, 1.25, &rh_), dt_shift(b.d, 1.25, &rd_), "shift", 1);
            BOTH(dt_fill(b.h, 0.75, &rh_), dt_fill(b.d, 0.75, &rd_), "fill", 1);
            BOTH(dt_exp(a.h, &rh_), dt_exp(a.d, &rd_), "exp", ex);
            BOTH(dt_cast(r.h, t, &rh_), dt_cast(r.d, t, &rd_), "cast real -> complex", 1);
            BOTH(dt_cast(a.h, k ? DT_C64 : DT_C128, &rh_), dt_cast(a.d, k ? DT_C64 : DT_C128, &rd_), "cast c64 <-> c128", 1);
            BOTH(dt_add(a.h, b.h, &rh_), dt_add(a.d, b.d, &rd_), "add", 1);
            BOTH(dt_sub(a.h, b.h, &rh_), dt_sub(a.d, b.d, &rd_), "sub", 1);
            BOTH(dt_mul(a.h, v.h, &rh_), dt_mul(a.d, v.d, &rd_), "mul (broadcast)", ex);
            BOTH(dt_div(a.h, b.h, &rh_), dt_div(a.d, b.d, &rd_), "div", ex);
            {
                int dims[1] = {1}, all[2] = {0, 1};
                BOTH(dt_sum(a.h, 1, dims, 0, &rh_), dt_sum(a.d, 1, dims, 0, &rd_), "sum dim 1 (sharded)", ex);
                BOTH(dt_mean(b.h, 2, all, 1, &rh_), dt_mean(b.d, 2, all, 1, &rd_), "mean", ex);
            }
            BOTH(dt_matmul(a.h, w.h, &rh_), dt_matmul(a.d, w.d, &rd_), "matmul", ex);
            BOTH(dt_dot(v.h, v.h, &rh_), dt_dot(v.d, v.d, &rd_), "dot", ex);
            BOTH(dt_transpose(a.h, 0, 1, &rh_), dt_transpose(a.d, 0, 1, &rd_), "transpose", 1);
            BOTH(dt_narrow(b.h, 1, 3, 5, &rh_), dt_narrow(b.d, 1, 3, 5, &rd_), "narrow", 1);
            {
                const dt_tensor *hs[2], *ds[2];
                hs[0] = a.h; hs[1] = b.h; ds[0] = a.d; ds[1] = b.d;
                BOTH(dt_cat(2, hs, 1, &rh_), dt_cat(2, ds, 1, &rd_), "cat", 1);
            }
            CHECK_OK(dt_axpy(0.5, a.h, b.h));
            CHECK_OK(dt_axpy(0.5, a.d, b.d));
            if (b.h && b.d) same_values("axpy", b.h, b.d, 1);
            {
                dt_tensor *o = NULL;
                int dims[1] = {1};
                CHECK_ST(dt_max(a.d, 1, dims, 0, &o), DT_ERR_DTYPE); /* no order: refused as on the host */
                CHECK_ERRMSG("dt_max");
                CHECK(o == NULL, "dt_max made *out");
            }
            drop(&a); drop(&b); drop(&v); drop(&w); drop(&r);
        }
        dtt_ctx("");
        dt_mesh_destroy(m);
    }
}

/* ------------------------------------------------------------ embedding */

/* an index tensor [3, 4] (values (g * 5) % 11, one of them `bad` when bad != 0) */
static pair make_idx(dt_mesh *m, dt_dtype t, const dt_placement *pl, int64_t bad) {
    int64_t shape[2] = {3, 4}, g, v[12];
    int32_t w[12];
    pair p = {NULL, NULL};
    dt_tensor_desc hd = mkdesc(t, 2, shape, pl, 2, DT_HOST), dd = mkdesc(t, 2, shape, pl, 2, DEV);
    for (g = 0; g < 12; g++) v[g] = (g * 5) % 11;
    if (bad) v[7] = bad;
    for (g = 0; g < 12; g++) w[g] = (int32_t)v[g];
    CHECK_OK(dt_tensor_distribute(m, &hd, t == DT_I32 ? (void *)w : (void *)v, DT_SRC_ALL, &p.h));
    CHECK_OK(dt_tensor_distribute(m, &dd, t == DT_I32 ? (void *)w : (void *)v, DT_SRC_ALL, &p.d));
    return p;
}

/* dt_embedding on device tensors against host tensors (row-sharded,
   column-sharded and replicated tables; I32 and I64 indices, sharded and
   replicated), exact (rows copied, masked Partial sums of one row and
   zeros); an index out of range (too large, negative) on some ranks:
   DT_ERR_ARG naming the call on every rank, *out untouched (NULL, or an
   existing tensor keeping its values); dt_cross_entropy likewise on
   replicated, class-sharded and row-sharded logits */
static void embedding_device(dt_comm *comm) {
    int fac[16][4], nf = dtt_factorizations(dtt_np, 2, &fac[0][0], 8), f, k;
    for (f = 0; f < nf && f < 2; f++) {
        dt_mesh_desc md;
        dt_mesh *m = NULL;
        int64_t sw[2] = {11, 6};
        dt_placement tp[3][2], ip[2][2];
        memset(&md, 0, sizeof md);
        md.ndim = 2;
        md.shape[0] = fac[f][0];
        md.shape[1] = fac[f][1];
        if (!dtt_ok(dt_mesh_create(comm, &md, &m))) continue;
        tp[0][0] = dt_shard(0); tp[0][1] = dt_replicate();  /* vocab-parallel */
        tp[1][0] = dt_replicate(); tp[1][1] = dt_shard(1);  /* columns */
        tp[2][0] = dt_replicate(); tp[2][1] = dt_replicate();
        ip[0][0] = dt_replicate(); ip[0][1] = dt_shard(0);
        ip[1][0] = dt_replicate(); ip[1][1] = dt_replicate();
        for (k = 0; k < 6; k++) {
            dt_dtype it = k % 2 ? DT_I32 : DT_I64;
            pair tb = make_pair(m, DT_F32, 2, sw, tp[k % 3], 2, 7), ix = make_idx(m, it, ip[k / 3], 0);
            pair bad = make_idx(m, it, ip[k / 3], k % 2 ? -3 : 11);
            dt_tensor *o = NULL, *keep;
            float before[72], after[72];
            dtt_ctx("embedding mesh %dx%d table %d idx %s %d", md.shape[0], md.shape[1], k % 3, dt_dtype_name(it), k / 3);
            BOTH(dt_embedding(tb.h, ix.h, &rh_), dt_embedding(tb.d, ix.d, &rd_), "embedding", 1);
            CHECK_ST(dt_embedding(tb.d, bad.d, &o), DT_ERR_ARG);
            CHECK_ERRMSG("dt_embedding");
            CHECK(o == NULL, "*out made on failure");
            if (dtt_ok(dt_embedding(tb.d, ix.d, &o)) && o) {
                CHECK_OK(dt_tensor_gather(o, before));
                keep = o;
                CHECK_ST(dt_embedding(tb.d, bad.d, &o), DT_ERR_ARG);
                CHECK(o == keep, "*out replaced on failure");
                CHECK_OK(dt_tensor_gather(o, after));
                CHECK(!memcmp(before, after, sizeof before), "*out written on failure");
            }
            dt_tensor_destroy(o);
            o = NULL;
            CHECK_ST(dt_embedding(tb.h, bad.h, &o), DT_ERR_ARG); /* the host refuses the same */
            drop(&tb); drop(&ix); drop(&bad);
        }
        for (k = 0; k < 6; k++) { /* cross-entropy: replicated, class-sharded (loss_parallel), row-sharded logits */
            int64_t sl[2] = {4, 5}, st1[1] = {4}, tv[4] = {0, 4, 2, 3}, bv[4] = {0, 4, 5, 3};
            int32_t tw[4] = {0, 4, 2, 3}, bw[4] = {0, -1, 2, 3};
            dt_dtype it = k % 2 ? DT_I32 : DT_I64;
            dt_placement lp[3][2], rp[2];
            dt_tensor_desc th, tdd;
            pair lg, tg = {NULL, NULL}, bad = {NULL, NULL};
            dt_tensor *o = NULL;
            lp[0][0] = lp[0][1] = dt_replicate();
            lp[1][0] = dt_replicate(); lp[1][1] = dt_shard(1);
            lp[2][0] = dt_shard(0); lp[2][1] = dt_replicate();
            rp[0] = rp[1] = dt_replicate();
            dtt_ctx("cross_entropy mesh %dx%d logits %d %s", md.shape[0], md.shape[1], k / 2, dt_dtype_name(it));
            lg = make_pair(m, DT_F32, 2, sl, lp[k / 2], 2, 8);
            th = mkdesc(it, 1, st1, rp, 2, DT_HOST);
            tdd = mkdesc(it, 1, st1, rp, 2, DEV);
            CHECK_OK(dt_tensor_distribute(m, &th, it == DT_I32 ? (void *)tw : (void *)tv, DT_SRC_ALL, &tg.h));
            CHECK_OK(dt_tensor_distribute(m, &tdd, it == DT_I32 ? (void *)tw : (void *)tv, DT_SRC_ALL, &tg.d));
            CHECK_OK(dt_tensor_distribute(m, &tdd, it == DT_I32 ? (void *)bw : (void *)bv, DT_SRC_ALL, &bad.d));
            BOTH(dt_cross_entropy(lg.h, tg.h, &rh_), dt_cross_entropy(lg.d, tg.d, &rd_), "cross_entropy", EXACT_FLOATS);
            CHECK_ST(dt_cross_entropy(lg.d, bad.d, &o), DT_ERR_ARG);
            CHECK_ERRMSG("dt_cross_entropy");
            CHECK(o == NULL, "*out made on failure");
            drop(&lg); drop(&tg); drop(&bad);
        }
        dtt_ctx("");
        dt_mesh_destroy(m);
    }
}

/* the random values of device tensors equal the host's bit for bit, for every placement */
static void rng_sweep(dt_comm *comm) {
    static const dt_dtype ts[] = {DT_F32, DT_F64, DT_F16, DT_BF16, DT_I32, DT_I64};
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    int i, kind;
    int64_t shape[2] = {11, 6};
    dt_placement pls[3][1];
    pls[0][0] = dt_shard(0); pls[1][0] = dt_shard(1); pls[2][0] = dt_replicate();
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    if (!dtt_ok(dt_mesh_create(comm, &md, &m))) return;
    for (i = 0; i < 6; i++)
        for (kind = 0; kind < 5; kind++) {
            dt_dtype t = ts[i];
            int pi;
            if ((kind < 2 || kind == 4) && (t == DT_I32 || t == DT_I64)) continue;
            for (pi = 0; pi < 3; pi++) {
                dt_tensor_desc hd = mkdesc(t, 2, shape, pls[pi], 1, DT_HOST), dd = mkdesc(t, 2, shape, pls[pi], 1, DEV);
                dt_tensor *h = NULL, *d = NULL, *ho = NULL, *dout = NULL, *hm = NULL, *dm = NULL;
                dtt_ctx("rng %s kind %d placement %d", dt_dtype_name(t), kind, pi);
                CHECK_OK(dt_tensor_zeros(m, &hd, &h));
                CHECK_OK(dt_tensor_zeros(m, &dd, &d));
                if (!h || !d) { dt_tensor_destroy(h); dt_tensor_destroy(d); continue; }
                CHECK_OK(dt_manual_seed(m, 1234 + (uint64_t)kind));
                switch (kind) {
                case 0: CHECK_OK(dt_uniform_(h, -1, 3)); break;
                case 1: CHECK_OK(dt_normal_(h, 0.5, 2)); break;
                case 2: CHECK_OK(dt_bernoulli_(h, 0.3)); break;
                case 3: CHECK_OK(dt_randint_(h, 0, 100)); break;
                default: CHECK_OK(dt_fill(h, 2.0, &h)); CHECK_OK(dt_dropout(h, 0.25, &ho, &hm)); break;
                }
                CHECK_OK(dt_manual_seed(m, 1234 + (uint64_t)kind));
                switch (kind) {
                case 0: CHECK_OK(dt_uniform_(d, -1, 3)); break;
                case 1: CHECK_OK(dt_normal_(d, 0.5, 2)); break;
                case 2: CHECK_OK(dt_bernoulli_(d, 0.3)); break;
                case 3: CHECK_OK(dt_randint_(d, 0, 100)); break;
                default: CHECK_OK(dt_fill(d, 2.0, &d)); CHECK_OK(dt_dropout(d, 0.25, &dout, &dm)); break;
                }
                same_values("rng", h, d, 1);
                if (ho && dout) same_values("dropout", ho, dout, 1);
                if (hm && dm) same_values("dropout mask", hm, dm, 1);
                dt_tensor_destroy(h); dt_tensor_destroy(d); dt_tensor_destroy(ho); dt_tensor_destroy(dout);
                dt_tensor_destroy(hm); dt_tensor_destroy(dm);
            }
        }
    dtt_ctx("");
    dt_mesh_destroy(m);
}

/* ------------------------------------------------------------ bad input */

static void device_stencil(const dt_stencil_block *b, void *user);
static void host_stencil(const dt_stencil_block *b, void *user);
static void bad_input(dt_comm *comm) {
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    int64_t shape[1] = {8};
    dt_placement rep[1];
    dt_tensor_desc hd, dd;
    dt_tensor *h = NULL, *d = NULL, *o = NULL, *keep;
    float host_buf[8] = {0};
    rep[0] = dt_replicate();
    hd = mkdesc(DT_F32, 1, shape, rep, 1, DT_HOST);
    dd = mkdesc(DT_F32, 1, shape, rep, 1, DEV);
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    if (!dtt_ok(dt_mesh_create(comm, &md, &m))) return;
    CHECK_OK(dt_tensor_zeros(m, &hd, &h));
    CHECK_OK(dt_tensor_zeros(m, &dd, &d));
    /* a host pointer borrowed as device data */
    o = (dt_tensor *)&o;
    keep = o;
    CHECK_ST(dt_tensor_from_local(m, &dd, host_buf, DT_BORROW, &o), DT_ERR_DEVICE);
    CHECK_ERRMSG("dt_tensor_from_local");
    CHECK(o == keep, "*out changed on failure");
    o = NULL;
    /* but copied from: fine */
    CHECK_OK(dt_tensor_from_local(m, &dd, host_buf, DT_COPY, &o));
    dt_tensor_destroy(o);
    o = NULL;
    /* an unknown device */
    dd.device = 3;
    CHECK_ST(dt_tensor_empty(m, &dd, &o), DT_ERR_DEVICE);
    CHECK_ERRMSG("dt_tensor_empty");
    dd.device = DEV;
    /* host and device tensors in one op; *out on the wrong device */
    CHECK_ST(dt_add(h, d, &o), DT_ERR_DEVICE);
    CHECK_ERRMSG("dt_add");
    CHECK(o == NULL, "*out set on failure");
    o = h;
    CHECK_ST(dt_add(d, d, &o), DT_ERR_DEVICE);
    CHECK(o == h, "*out changed on failure");
    o = NULL;
    /* a device stencil into a host *out, and the reverse: refused on every rank, *out untouched */
    {
        dt_halo_desc hdsc;
        memset(&hdsc, 0, sizeof hdsc);
        hdsc.width[0] = 1;
        if (dtt_ok(dt_tensor_set_halo(d, &hdsc)) && dtt_ok(dt_tensor_set_halo(h, &hdsc))) {
            o = h;
            CHECK_ST(dt_stencil_apply(d, device_stencil, NULL, &o), DT_ERR_DEVICE);
            CHECK_ERRMSG("dt_stencil_apply");
            CHECK(o == h, "*out changed on failure");
            o = d;
            CHECK_ST(dt_stencil_apply(h, host_stencil, NULL, &o), DT_ERR_DEVICE);
            CHECK(o == d, "*out changed on failure");
            o = NULL;
        }
    }
    /* an unwritable path: the file's error, as on the host */
    {
        CHECK_ST(dt_tensor_save_npy(d, "/nonexistent/x.npy"), DT_ERR_IO); /* device tensors save (storage_npy) */
        CHECK_ERRMSG("dt_tensor_save_npy");
    }
    dt_tensor_destroy(h);
    dt_tensor_destroy(d);
    dt_mesh_destroy(m);
}

/* ------------------------------------------------------------ device storage as the program has it
   Device arrays wrapped with dt_tensor_from_local the way a GPU code keeps
   them: ghost cells around the interior (local_ghost), a padded
   column-major array, permuted dims with a padded innermost dim, a ghosted
   column-major array (local_ghost + local_strides), each in a device
   allocation whose every other byte holds a sentinel. Redistributed to
   every kind of placement (Replicate, chunk, balanced, block-cyclic,
   Partial, 2-D meshes) and back into a second such wrap: the gathered
   values against the closed form of the global index, the wrap's storage
   byte for byte (elements where they belong, the sentinel everywhere
   else), the source's storage unchanged. Over the device-memory backend no
   host allocation as large as the shard is made (the pack buffers are the
   device's). */

/* ghost room (1: widths 1, 2, 1 on dims 0, 1, 2), the dims from innermost to
   outermost, extra elements on the innermost dim */
typedef struct layout { const char *name; int ghost; int perm[3]; int pad; } layout;

typedef struct wrap {
    dt_tensor *t;
    void *dev;          /* the device allocation */
    size_t bytes, es;
    int nd;
    int64_t ext[3], g[3], st[3];
    dt_dtype dtype;
} wrap;

#define SENT 0x5b

static int64_t wrap_off(const wrap *w, const int64_t *i) {
    int64_t o = 0;
    int d;
    for (d = 0; d < w->nd; d++) o += (i[d] + w->g[d]) * w->st[d];
    return o;
}

/* the storage's host image: the sentinel, and with salt >= 0 every element
   at its place with the value of its global index */
static unsigned char *wrap_image(const wrap *w, const int64_t *shape, int salt) {
    unsigned char *img = (unsigned char *)malloc(w->bytes + 1);
    int64_t idx[3][64], i[3] = {0, 0, 0}, n = 1;
    int d;
    memset(img, SENT, w->bytes + 1);
    for (d = 0; d < w->nd; d++) n *= w->ext[d];
    if (salt < 0 || !n) return img;
    for (d = 0; d < w->nd; d++) CHECK_OK(dt_tensor_local_indices(w->t, d, idx[d]));
    for (;;) {
        int64_t gi = 0;
        double v;
        for (d = 0; d < w->nd; d++) gi = gi * shape[d] + idx[d][i[d]];
        v = val_at(gi, salt);
        dt__host_kernels.cast(DT_F64, &v, w->dtype, img + (size_t)wrap_off(w, i) * w->es, 1);
        for (d = w->nd - 1; d >= 0; d--) {
            if (++i[d] < w->ext[d]) break;
            i[d] = 0;
        }
        if (d < 0) return img;
    }
}

/* a device array laid out by L for this rank's part of [shape] under pl,
   wrapped; salt >= 0: holding the closed-form values, else the sentinel only */
static int wrap_make(dt_mesh *m, dt_dtype t, int nd, const int64_t *shape, const dt_placement *pl, int mnd,
                     const layout *L, int salt, wrap *w) {
    dt_tensor_desc d = mkdesc(t, nd, shape, pl, mnd, DEV);
    int coord[DT_MAX_MESH_DIMS], k, rowmajor = !L->pad, empty = 0;
    int64_t ls[3] = {0, 0, 0}, s = 1;
    unsigned char *img;
    memset(w, 0, sizeof *w);
    w->nd = nd;
    w->es = dt_dtype_size(t);
    w->dtype = t;
    if (dt_mesh_coordinate(m, coord)) CHECK_OK(dt_layout(m, &d, coord, ls, NULL));
    for (k = 0; k < nd; k++) {
        w->ext[k] = ls[k];
        w->g[k] = L->ghost ? (k == 1 ? 2 : 1) : 0;
        empty |= ls[k] + 2 * w->g[k] == 0;
    }
    for (k = 0; k < nd; k++) {
        int dd = L->perm[k];
        rowmajor &= dd == nd - 1 - k;
        w->st[dd] = s;
        s *= ls[dd] + 2 * w->g[dd] + (k == 0 ? L->pad : 0);
    }
    w->bytes = empty ? 0 : (size_t)s * w->es;
    w->dev = dev_alloc(w->bytes);
    d.local_shape = ls;
    if (L->ghost) d.local_ghost = w->g;
    if (!L->ghost || !rowmajor) d.local_strides = w->st;
    d.local_alloc = w->dev;
    d.local_alloc_bytes = w->bytes ? (int64_t)w->bytes : 1;
    if (!dtt_ok(dt_tensor_from_local(m, &d, w->dev, DT_BORROW, &w->t))) {
        dev_free(w->dev);
        w->dev = NULL;
        return 0;
    }
    img = wrap_image(w, shape, salt);
    dev_put(w->dev, img, w->bytes);
    free(img);
    return 1;
}

static void wrap_drop(wrap *w) {
    dt_tensor_destroy(w->t);
    dev_free(w->dev);
    w->t = NULL;
    w->dev = NULL;
}

/* the storage, byte for byte, against its image */
static void wrap_check(const wrap *w, const int64_t *shape, int salt, const char *what) {
    unsigned char *want = wrap_image(w, shape, salt), *got = (unsigned char *)malloc(w->bytes + 1);
    size_t i, bad = 0, first = 0;
    dev_get(got, w->dev, w->bytes);
    for (i = 0; i < w->bytes; i++)
        if (got[i] != want[i] && !bad++) first = i;
    CHECK(bad == 0, "%s: %zu of %zu storage bytes differ from the expected image (first at byte %zu)", what, bad,
          w->bytes, first);
    free(want);
    free(got);
}

/* gathered values against the closed form */
static void closed_form(const dt_tensor *t, int salt, const char *what) {
    dt_dtype dt = dt_tensor_get_desc(t)->dtype;
    int64_t n = numel_of(t);
    void *ref = malloc((size_t)n * dt_dtype_size(dt) + 1), *got = gathered(t);
    fill_full(dt, ref, n, salt);
    CHECK(memcmp(ref, got, (size_t)n * dt_dtype_size(dt)) == 0, "%s: gathered values differ from the closed form",
          what);
    free(ref);
    free(got);
}

static const layout layouts2[] = {
    {"ghosted", 1, {1, 0, 0}, 0},
    {"column-major, padded", 0, {0, 1, 0}, 3},
    {"ghosted column-major", 1, {0, 1, 0}, 0},
};
static const layout layouts3[] = {
    {"permuted (1, 2, 0), padded", 0, {1, 2, 0}, 1},
    {"ghosted", 1, {2, 1, 0}, 0},
};

static int is_shard_on(const dt_placement *pl, int i) { return pl[i].kind == DT_SHARD; }

/* one source wrap to one target, and back into a second wrap (salt: the
   values'; + 100: a pair --quick leaves out) */
static void storage_pair(dt_mesh *m, int mnd, dt_dtype t, int nd, const int64_t *shape, const dt_placement *src,
                         const layout *L, const dt_placement *dst, int device_backend_used, int salt) {
    wrap a, b;
    dt_tensor *o = NULL, *x;
    char ps[64], pd[64];
    int i;
    for (i = 0; i < mnd; i++) /* Shard -> Partial is not a redistribution */
        if (dst[i].kind == DT_PARTIAL && is_shard_on(src, i)) return;
    if (dtt_quick && salt >= 100) return; /* --quick: the callers' half (salt + 100) */
    salt %= 100;
    dtt_ctx("storage %s %s %dd %s -> %s", L->name, dt_dtype_name(t), nd, dt_placements_str(src, mnd, ps, sizeof ps),
            dt_placements_str(dst, mnd, pd, sizeof pd));
    if (!wrap_make(m, t, nd, shape, src, mnd, L, salt, &a)) return;
    if (!wrap_make(m, t, nd, shape, src, mnd, L, -1, &b)) { wrap_drop(&a); return; }
    host_big = 0;
    host_watch = 1;
    CHECK_OK(dt_tensor_redistribute(a.t, dst, &o));
    x = b.t;
    if (o) CHECK_OK(dt_tensor_redistribute(o, src, &x));
    host_watch = 0;
    CHECK(x == b.t, "the existing *out was replaced");
    if (device_backend_used && dt_tensor_local_numel(a.t) * a.es >= 1024)
        CHECK(host_big < dt_tensor_local_numel(a.t) * a.es, "a host allocation of %zu bytes, the shard is %zu",
              host_big, dt_tensor_local_numel(a.t) * a.es);
    if (o) closed_form(o, salt, "there");
    wrap_check(&b, shape, salt, "back, into the wrap");
    wrap_check(&a, shape, salt, "the source, after");
    closed_form(b.t, salt, "back, gathered");
    dt_tensor_destroy(o);
    wrap_drop(&a);
    wrap_drop(&b);
}

static void storage_sweep(dt_comm *comm, int device_backend_used) {
    int fac[16][4], nf = dtt_factorizations(dtt_np, 2, &fac[0][0], 8), f, si, ti, li, salt = 0;
    dt_mesh *m = NULL;
    dt_mesh_desc md;
    int64_t s2[2] = {40, 36}, s3[3] = {12, 10, 9};
    /* 1-D mesh */
    dt_placement src1[5][1], dst1[8][1];
    src1[0][0] = dt_shard(0); src1[1][0] = dt_shard(1); src1[2][0] = dt_replicate();
    src1[3][0] = dt_shard_cyclic(0, 3); src1[4][0] = dt_shard_balanced(1);
    dst1[0][0] = dt_replicate(); dst1[1][0] = dt_shard(0); dst1[2][0] = dt_shard(1); dst1[3][0] = dt_shard_balanced(0);
    dst1[4][0] = dt_shard_cyclic(0, 2); dst1[5][0] = dt_shard_cyclic_src(1, 3, dtt_np - 1); dst1[6][0] = dt_partial(DT_SUM);
    dst1[7][0] = dt_shard(2);
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    if (dtt_ok(dt_mesh_create(comm, &md, &m))) {
        for (si = 0; si < 5; si++)
            for (li = 0; li < 3; li++)
                for (ti = 0; ti < 7; ti++)
                    storage_pair(m, 1, li == 1 ? DT_F32 : DT_F64, 2, s2, src1[si], &layouts2[li], dst1[ti],
                                 device_backend_used, salt++ % 7 + (si + li + ti) % 2 * 100);
        for (si = 0; si < 4; si += 3) /* 3-D: S(0) and cyclic(0) sources, every target */
            for (li = 0; li < 2; li++)
                for (ti = 0; ti < 8; ti++)
                    storage_pair(m, 1, DT_F64, 3, s3, src1[si], &layouts3[li], dst1[ti], device_backend_used,
                                 salt++ % 7 + (si / 3 + li + ti) % 2 * 100);
        dt_mesh_destroy(m);
        m = NULL;
    }
    /* 2-D meshes */
    for (f = 0; f < nf; f++) {
        dt_placement src2[3][2], dst2[6][2];
        src2[0][0] = dt_shard(0); src2[0][1] = dt_shard(1);
        src2[1][0] = dt_replicate(); src2[1][1] = dt_shard(0);
        src2[2][0] = dt_shard_cyclic(1, 2); src2[2][1] = dt_shard(0);
        dst2[0][0] = dt_replicate(); dst2[0][1] = dt_replicate();
        dst2[1][0] = dt_shard(1); dst2[1][1] = dt_shard(0);
        dst2[2][0] = dt_shard(0); dst2[2][1] = dt_shard(0);
        dst2[3][0] = dt_shard_cyclic(0, 2); dst2[3][1] = dt_shard_cyclic(1, 3);
        dst2[4][0] = dt_partial(DT_SUM); dst2[4][1] = dt_replicate();
        dst2[5][0] = dt_replicate(); dst2[5][1] = dt_shard_balanced(1);
        memset(&md, 0, sizeof md);
        md.ndim = 2;
        md.shape[0] = fac[f][0];
        md.shape[1] = fac[f][1];
        if (!dtt_ok(dt_mesh_create(comm, &md, &m))) continue;
        for (si = 0; si < 3; si++)
            for (li = 0; li < 3; li++)
                for (ti = 0; ti < 6; ti++)
                    storage_pair(m, 2, DT_F64, 2, s2, src2[si], &layouts2[li], dst2[ti], device_backend_used,
                                 salt++ % 7 + (si + li + ti) % 2 * 100);
        dt_mesh_destroy(m);
        m = NULL;
    }
    dtt_ctx("");
}

/* block-cyclic device tensors made by distribute: redistributed between
   cyclic layouts and boxes, gathered, and an op on them, against host
   tensors (values and bytes moved) */
static void cyclic_device(dt_comm *comm) {
    int fac[16][4], nf = dtt_factorizations(dtt_np, 2, &fac[0][0], 8), f, k;
    int64_t shape[2] = {11, 9};
    for (f = 0; f < nf; f++) {
        dt_mesh_desc md;
        dt_mesh *m = NULL;
        dt_placement a[2], steps[4][2];
        pair p;
        memset(&md, 0, sizeof md);
        md.ndim = 2;
        md.shape[0] = fac[f][0];
        md.shape[1] = fac[f][1];
        if (!dtt_ok(dt_mesh_create(comm, &md, &m))) continue;
        a[0] = dt_shard_cyclic(0, 2); a[1] = dt_shard_cyclic_src(1, 1, md.shape[1] - 1);
        steps[0][0] = dt_shard_cyclic(1, 3); steps[0][1] = dt_shard_cyclic(0, 1);
        steps[1][0] = dt_replicate(); steps[1][1] = dt_shard(1);
        steps[2][0] = dt_shard_cyclic(0, 4); steps[2][1] = dt_replicate();
        steps[3][0] = dt_replicate(); steps[3][1] = dt_replicate();
        dtt_ctx("cyclic device mesh %dx%d", md.shape[0], md.shape[1]);
        p = make_pair(m, DT_F64, 2, shape, a, 2, 3);
        if (p.h && p.d) {
            closed_form(p.d, 3, "distributed");
            for (k = 0; k < 4; k++) {
                dt_tensor *rh = NULL, *rd = NULL;
                dt_comm_stats sa, sb;
                dt_comm_reset_stats(comm);
                CHECK_OK(dt_tensor_redistribute(p.h, steps[k], &rh));
                dt_comm_get_stats(comm, &sa);
                dt_comm_reset_stats(comm);
#ifdef DTCU_STANDIN
                {
                    long l0, l1;
                    dtcu_standin_work(&l0, NULL, NULL);
                    CHECK_OK(dt_tensor_redistribute(p.d, steps[k], &rd));
                    dtcu_standin_work(&l1, NULL, NULL);
                    if (getenv("DT_TEST_VERBOSE") && dtt_rank == 0)
                        printf("cyclic launches np=%d mesh %dx%d step %d: %ld\n", dtt_np, md.shape[0], md.shape[1], k,
                               l1 - l0);
                    /* the boxes of a step's packs, unpacks and span copies go as lists, a launch per 16
                       boxes and peer: at most 8 + 2 per rank (one per box made up to 90 at 4 ranks) */
                    CHECK(l1 - l0 <= 8 + 2 * dtt_np, "step %d: %ld kernel launches for one block-cyclic "
                          "redistribution", k, l1 - l0);
                }
#else
                CHECK_OK(dt_tensor_redistribute(p.d, steps[k], &rd));
#endif
                dt_comm_get_stats(comm, &sb);
                if (rd) closed_form(rd, 3, "redistributed");
                CHECK(sa.bytes_sent == sb.bytes_sent && sa.bytes_recv == sb.bytes_recv,
                      "step %d: device moved %llu/%llu bytes, host %llu/%llu", k, (unsigned long long)sb.bytes_sent,
                      (unsigned long long)sb.bytes_recv, (unsigned long long)sa.bytes_sent,
                      (unsigned long long)sa.bytes_recv);
                dt_tensor_destroy(rh);
                dt_tensor_destroy(rd);
            }
            BOTH(dt_add(p.h, p.h, &rh_), dt_add(p.d, p.d, &rd_), "add (cyclic)", 1);
            BOTH(dt_exp(p.h, &rh_), dt_exp(p.d, &rd_), "exp (cyclic)", EXACT_FLOATS);
        }
        drop(&p);
        dt_mesh_destroy(m);
    }
    dtt_ctx("");
}

/* ops on strided device wraps: the same results as on contiguous host
   tensors (inputs read through the strides or one device copy; a strided
   *out written back through its strides), the padding untouched; random
   fills of a ghosted wrap bit-identical to a contiguous tensor's, and of a
   column-major one refused */
static void storage_ops(dt_comm *comm) {
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    int64_t shape[2] = {13, 11};
    dt_placement pl[1];
    int li, d1 = 1;
    pl[0] = dt_shard(0);
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    if (!dtt_ok(dt_mesh_create(comm, &md, &m))) return;
    for (li = 0; li < 3; li++) {
        wrap w, o;
        pair p = make_pair(m, DT_F64, 2, shape, pl, 1, 4);
        dt_tensor *x;
        dtt_ctx("storage ops %s", layouts2[li].name);
        if (!p.h || !wrap_make(m, DT_F64, 2, shape, pl, 1, &layouts2[li], 4, &w)) { drop(&p); continue; }
        BOTH(dt_add(p.h, p.h, &rh_), dt_add(w.t, w.t, &rd_), "add", 1);
        BOTH(dt_exp(p.h, &rh_), dt_exp(w.t, &rd_), "exp", EXACT_FLOATS);
        BOTH(dt_sum(p.h, 1, &d1, 0, &rh_), dt_sum(w.t, 1, &d1, 0, &rd_), "sum", EXACT_FLOATS);
        BOTH(dt_softmax(p.h, 1, &rh_), dt_softmax(w.t, 1, &rd_), "softmax", EXACT_FLOATS);
        BOTH(dt_cast(p.h, DT_F32, &rh_), dt_cast(w.t, DT_F32, &rd_), "cast", 1);
        BOTH(dt_transpose(p.h, 0, 1, &rh_), dt_transpose(w.t, 0, 1, &rd_), "transpose", 1);
        BOTH(dt_narrow(p.h, 1, 2, 5, &rh_), dt_narrow(w.t, 1, 2, 5, &rd_), "narrow", 1);
        /* a strided *out: the result through its strides, the padding as it was */
        if (wrap_make(m, DT_F64, 2, shape, pl, 1, &layouts2[li], 5, &o)) {
            dt_tensor *rh = NULL;
            x = o.t;
            CHECK_OK(dt_scale(w.t, 1.0, &x));
            CHECK(x == o.t, "*out replaced");
            wrap_check(&o, shape, 4, "scale into a strided *out");
            CHECK_OK(dt_add(p.h, p.h, &rh));
            CHECK_OK(dt_add(w.t, w.t, &x));
            if (rh) same_values("add into a strided *out", rh, o.t, 1);
            dt_tensor_destroy(rh);
            wrap_drop(&o);
        }
        wrap_check(&w, shape, 4, "the input, after the ops");
        if (!layouts2[li].ghost) { /* DT_COPY of strided storage: from device memory, and from a host image */
            dt_tensor_desc cd = mkdesc(DT_F64, 2, shape, pl, 1, DEV);
            dt_tensor *c = NULL;
            unsigned char *img = wrap_image(&w, shape, 4);
            cd.local_shape = w.ext;
            cd.local_strides = w.st;
            cd.local_alloc = w.dev;
            cd.local_alloc_bytes = w.bytes ? (int64_t)w.bytes : 1;
            CHECK_OK(dt_tensor_from_local(m, &cd, w.dev, DT_COPY, &c));
            if (c) same_values("DT_COPY of a strided device array", p.h, c, 1);
            dt_tensor_destroy(c);
            c = NULL;
            cd.local_alloc = img;
            CHECK_OK(dt_tensor_from_local(m, &cd, img, DT_COPY, &c));
            cd.local_alloc = w.dev;
            if (c) same_values("DT_COPY of a strided host array into a device tensor", p.h, c, 1);
            dt_tensor_destroy(c);
            c = NULL;
            cd.device = DT_HOST;
            CHECK_OK(dt_tensor_from_local(m, &cd, w.dev, DT_COPY, &c));
            if (c) same_values("DT_COPY of a strided device array into a host tensor", p.h, c, 1);
            dt_tensor_destroy(c);
            free(img);
        }
        /* random fills */
        {
            dt_tensor_desc dd = mkdesc(DT_F64, 2, shape, pl, 1, DEV);
            dt_tensor *c = NULL;
            CHECK_OK(dt_tensor_zeros(m, &dd, &c));
            CHECK_OK(dt_manual_seed(m, 77));
            if (c) CHECK_OK(dt_uniform_(c, -1, 1));
            CHECK_OK(dt_manual_seed(m, 77));
            if (layouts2[li].perm[0] == 1) { /* a unit-stride last dim: filled in place */
                CHECK_OK(dt_uniform_(w.t, -1, 1));
                if (c) same_values("uniform_ into a ghosted wrap", c, w.t, 1);
            } else {
                CHECK_ST(dt_uniform_(w.t, -1, 1), DT_ERR_UNSUPPORTED);
                CHECK_ERRMSG("dt_uniform_");
                wrap_check(&w, shape, 4, "a refused fill");
            }
            dt_tensor_destroy(c);
        }
        wrap_drop(&w);
        drop(&p);
    }
    dtt_ctx("");
    dt_mesh_destroy(m);
}

/* .npy checkpoints of device tensors: saved from a strided wrap, a block-
   cyclic and a Partial device tensor with DTENSOR_IO_CHUNK = 40 bytes (so
   every shard moves in many pieces); loaded into a host tensor and into
   ghosted and strided device wraps (one block-cyclic), bit for bit. Over
   the MPI backend (MPI-IO) no staging buffer of the strided wrap's save is
   larger than the chunk. */
static void storage_npy(dt_comm *comm, int device_backend_used) {
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    int64_t shape[2] = {13, 11};
    dt_placement s0[1], s1[1], cyc[1], rep[1], ps[1];
    char path[512];
    const char *base = getenv("DT_TEST_TMPDIR");
    unsigned long id = 0;
    int kind;
    s0[0] = dt_shard(0); s1[0] = dt_shard(1); cyc[0] = dt_shard_cyclic(1, 2); rep[0] = dt_replicate();
    ps[0] = dt_partial(DT_SUM);
    if (dtt_rank == 0) id = (unsigned long)getpid();
    MPI_Bcast(&id, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/dt_test_device.%lu.%d.npy", base && base[0] ? base : "/tmp", id,
             device_backend_used);
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    if (!dtt_ok(dt_mesh_create(comm, &md, &m))) return;
    setenv("DTENSOR_IO_CHUNK", "40", 1);
    for (kind = 0; kind < 3; kind++) {
        wrap w, g, c;
        dt_tensor *src = NULL, *h = NULL, *x, *tmp = NULL;
        dtt_ctx("npy device, source %d", kind);
        memset(&w, 0, sizeof w);
        if (kind == 0) { /* a column-major padded wrap */
            if (!wrap_make(m, DT_F64, 2, shape, s0, 1, &layouts2[1], 6, &w)) continue;
            src = w.t;
        } else { /* block-cyclic; Partial(sum) (the save reduces it) */
            pair p = make_pair(m, DT_F64, 2, shape, kind == 1 ? cyc : rep, 1, 6);
            if (kind == 2 && p.d) { CHECK_OK(dt_tensor_redistribute(p.d, ps, &tmp)); src = tmp; }
            else { tmp = p.d; p.d = NULL; src = tmp; }
            drop(&p);
            if (!src) continue;
        }
#ifndef DT_TEST_CUDA
        pinned_max = 0;
#endif
        CHECK_OK(dt_tensor_save_npy(src, path));
#ifndef DT_TEST_CUDA
        /* (a cyclic or Partial source is first redistributed to boxes, which over plain MPI stages the shard as
           every redistribution does: the bound is the writing's) */
        if (!device_backend_used && kind == 0)
            CHECK(pinned_max <= 40, "a %zu-byte staging buffer, the chunk is 40", pinned_max);
#endif
        /* into a new host tensor */
        CHECK_OK(dt_tensor_load_npy(m, path, s1, &h));
        if (h) {
            CHECK(dt_tensor_get_desc(h)->device == DT_HOST, "a new tensor is loaded on the host");
            closed_form(h, 6, "loaded into a host tensor");
        }
        /* into a ghosted device wrap, S(1), and a column-major one, block-cyclic */
        if (wrap_make(m, DT_F64, 2, shape, s1, 1, &layouts2[0], -1, &g)) {
            x = g.t;
            CHECK_OK(dt_tensor_load_npy(m, path, s1, &x));
            CHECK(x == g.t, "*out replaced");
            wrap_check(&g, shape, 6, "loaded into a ghosted device wrap");
            wrap_drop(&g);
        }
        if (wrap_make(m, DT_F64, 2, shape, cyc, 1, &layouts2[1], -1, &c)) {
            x = c.t;
            CHECK_OK(dt_tensor_load_npy(m, path, cyc, &x));
            CHECK(x == c.t, "*out replaced");
            wrap_check(&c, shape, 6, "loaded into a block-cyclic column-major device wrap");
            wrap_drop(&c);
        }
        dt_tensor_destroy(h);
        if (w.t) wrap_drop(&w);
        else dt_tensor_destroy(tmp);
        MPI_Barrier(MPI_COMM_WORLD);
        if (dtt_rank == 0) remove(path);
    }
    unsetenv("DTENSOR_IO_CHUNK");
    dtt_ctx("");
    dt_mesh_destroy(m);
}

/* the wrapping mistakes: host memory as a device array (local, local_alloc),
   device memory as a host array, a device allocation the ghosted shape
   overruns (and the interior pointer): refused on every rank, the field
   named, *out untouched, nothing read (a read of sim memory would fault) */
static void storage_bad_input(dt_comm *comm) {
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    int64_t shape[2] = {8, 6}, ls[2] = {0, 0}, g[2] = {1, 1};
    dt_placement pl[1];
    dt_tensor_desc d;
    dt_tensor *o, *keep;
    int coord[DT_MAX_MESH_DIMS];
    double *host;
    void *dev;
    size_t bytes;
    pl[0] = dt_shard(0);
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    if (!dtt_ok(dt_mesh_create(comm, &md, &m))) return;
    d = mkdesc(DT_F64, 2, shape, pl, 1, DEV);
    if (dt_mesh_coordinate(m, coord)) CHECK_OK(dt_layout(m, &d, coord, ls, NULL));
    bytes = (size_t)((ls[0] + 2) * (ls[1] + 2)) * sizeof(double);
    host = (double *)calloc(bytes / sizeof(double) + 1, sizeof(double));
    dev = dev_alloc(bytes);
    d.local_shape = ls;
    d.local_ghost = g;
    keep = o = (dt_tensor *)&o;
    dtt_ctx("storage bad input");
    /* a host array given as a device one */
    d.local_alloc = host;
    d.local_alloc_bytes = (int64_t)bytes;
    CHECK_ST(dt_tensor_from_local(m, &d, host, DT_BORROW, &o), DT_ERR_DEVICE);
    CHECK(strstr(dt_last_error(), "dt_tensor_from_local") && strstr(dt_last_error(), "local ="), "%s",
          dt_last_error());
    CHECK(o == keep, "*out changed");
    /* the device array with a host local_alloc */
    CHECK_ST(dt_tensor_from_local(m, &d, dev, DT_BORROW, &o), DT_ERR_DEVICE);
    CHECK(strstr(dt_last_error(), "desc->local_alloc"), "%s", dt_last_error());
    CHECK(o == keep, "*out changed");
    /* a device array given as a host one (with and without ghost room) */
    d.device = DT_HOST;
    d.local_alloc = dev;
    CHECK_ST(dt_tensor_from_local(m, &d, dev, DT_BORROW, &o), DT_ERR_DEVICE);
    CHECK(strstr(dt_last_error(), "local =") && strstr(dt_last_error(), "DT_HOST"), "%s", dt_last_error());
    d.local_ghost = NULL;
    d.local_alloc = NULL;
    d.local_alloc_bytes = 0;
    d.local_shape = NULL;
    CHECK_ST(dt_tensor_from_local(m, &d, dev, DT_BORROW, &o), DT_ERR_DEVICE);
    CHECK(o == keep, "*out changed");
    /* a device allocation the ghosted shape overruns; the interior pointer */
    d.device = DEV;
    d.local_shape = ls;
    d.local_ghost = g;
    d.local_alloc = dev;
    d.local_alloc_bytes = (int64_t)bytes - 8;
    CHECK_ST(dt_tensor_from_local(m, &d, dev, DT_BORROW, &o), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "past the allocation"), "%s", dt_last_error());
    d.local_alloc_bytes = (int64_t)bytes;
    CHECK_ST(dt_tensor_from_local(m, &d, (char *)dev + (ls[1] + 3) * sizeof(double), DT_BORROW, &o), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "interior"), "%s", dt_last_error());
    CHECK(o == keep, "*out changed");
    /* and the right one */
    o = NULL;
    CHECK_OK(dt_tensor_from_local(m, &d, dev, DT_BORROW, &o));
    dt_tensor_destroy(o);
    dtt_ctx("");
    dev_free(dev);
    free(host);
    dt_mesh_destroy(m);
}

#ifdef DTCU_STANDIN
/* ------------------------------------------------------------ device faults (stand-in only)
   tests/standin fails the k-th use of one CUDA/NCCL/cuBLAS entry point on
   EVERY rank; the ranks make the same uses in the same order, so they all
   fail at the same point of the call. For each call below and each entry
   point, k = 1, 2, ... until the call no longer reaches a k-th use:
   - the call, or for a failed kernel launch the next call that
     synchronises (dt_tensor_gather), returns the point's status
     (allocations DT_ERR_NOMEM, CUDA DT_ERR_DEVICE, NCCL DT_ERR_COMM) with
     a message naming that public call, the same status on every rank;
   - *out stays NULL; the inputs keep their values; nothing leaks (the
     allocator hook's count and the stand-in's live device bytes);
   - a run the fault did not reach gives the fault-free result. */
typedef struct fault_in { dt_tensor *a, *b, *c, *p; } fault_in; /* a, b: [3n, 6] S(0); c: [6, 5] R; p: P(sum) */
typedef dt_status (*fault_call)(const fault_in *in, dt_tensor **out);
static dt_status fc_add(const fault_in *in, dt_tensor **out) { return dt_add(in->a, in->b, out); }
static dt_status fc_replicate(const dt_tensor *t, dt_tensor **out) {
    dt_placement r[1];
    r[0] = dt_replicate();
    return dt_tensor_redistribute(t, r, out);
}
static dt_status fc_gather_all(const fault_in *in, dt_tensor **out) { return fc_replicate(in->a, out); }
static dt_status fc_allreduce(const fault_in *in, dt_tensor **out) { return fc_replicate(in->p, out); }
static dt_status fc_matmul(const fault_in *in, dt_tensor **out) { return dt_matmul(in->a, in->c, out); }
/* a's halo (set up below): the exchange's packs, messages and unpacks, then the callback's kernels */
static void device_stencil(const dt_stencil_block *b, void *user);
static dt_status fc_stencil(const fault_in *in, dt_tensor **out) {
    return dt_stencil_apply(in->a, device_stencil, NULL, out);
}

static void fault_sweep(dt_comm *comm, int symmetric) {
    static const struct { const char *name; fault_call call; const char *fn; } calls[] = {
        {"add", fc_add, "dt_add"},
        {"S->R", fc_gather_all, "dt_tensor_redistribute"},
        {"matmul", fc_matmul, "dt_matmul"},
        {"P->R", fc_allreduce, "dt_tensor_redistribute"},
        {"stencil", fc_stencil, "dt_stencil_apply"},
    };
    /* sym: every rank makes the same uses in the same order (collectives,
       one allocation per tensor); the others depend on the shard's size
       (a float4 kernel and a tail, copies of non-empty pieces) */
    static const struct { const char *fn; dt_status want; int sym; } points[] = {
        {"cudaMalloc", DT_ERR_NOMEM, 1},       {"cudaMallocAsync", DT_ERR_NOMEM, 1}, {"ncclAllGather", DT_ERR_COMM, 1},
        {"ncclBroadcast", DT_ERR_COMM, 1},     {"ncclAllReduce", DT_ERR_COMM, 1},    {"ncclSend", DT_ERR_COMM, 1},
        {"cudaMemcpyAsync", DT_ERR_DEVICE, 0}, {"cudaMemsetAsync", DT_ERR_DEVICE, 0}, {"launch", DT_ERR_DEVICE, 0},
        {"cublasGemm", DT_ERR_DEVICE, 0},
    };
    /* every shard the same size (3 rows): an empty one makes fewer uses */
    int64_t sa[2] = {3 * (int64_t)dt_comm_size(comm), 6}, sc[2] = {6, 5}, na = sa[0] * 6;
    dt_placement s0[1], rep[1];
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    fault_in in = {NULL, NULL, NULL, NULL};
    int d0 = 0;
    dt_tensor_desc da, dc;
    float *ha = (float *)dtt_malloc((size_t)na * sizeof(float)), *hc = (float *)dtt_malloc(30 * sizeof(float));
    float *ref = (float *)dtt_malloc((size_t)na * sizeof(float)), *got = (float *)dtt_malloc((size_t)na * sizeof(float));
    size_t q, p;
    s0[0] = dt_shard(0);
    rep[0] = dt_replicate();
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dt_comm_size(comm);
    da = mkdesc(DT_F32, 2, sa, s0, 1, DEV);
    dc = mkdesc(DT_F32, 2, sc, rep, 1, DEV);
    fill_full(DT_F32, ha, na, 1);
    fill_full(DT_F32, hc, 30, 2);
    if (!dtt_ok(dt_mesh_create(comm, &md, &m))) goto done;
    if (!dtt_ok(dt_tensor_distribute(m, &da, ha, DT_SRC_ALL, &in.a)) ||
        !dtt_ok(dt_tensor_distribute(m, &da, ha, DT_SRC_ALL, &in.b)) ||
        !dtt_ok(dt_tensor_distribute(m, &dc, hc, DT_SRC_ALL, &in.c)) || !dtt_ok(dt_sum(in.a, 1, &d0, 0, &in.p)))
        goto done;
    { /* rows wrap (every rank sends and receives the same faces), columns see a constant */
        dt_halo_desc hd;
        memset(&hd, 0, sizeof hd);
        hd.width[0] = hd.width[1] = 1;
        hd.boundary[0] = DT_BOUNDARY_PERIODIC;
        hd.fill = 2.0;
        if (!dtt_ok(dt_tensor_set_halo(in.a, &hd))) goto done;
    }
    for (q = 0; q < sizeof calls / sizeof calls[0]; q++) {
        dt_tensor *out = NULL;
        size_t nref;
        if (!dtt_ok(calls[q].call(&in, &out))) continue;
        {
            const dt_tensor_desc *od = dt_tensor_get_desc(out);
            int i;
            for (nref = 1, i = 0; i < od->ndim; i++) nref *= (size_t)od->shape[i];
        }
        CHECK_OK(dt_tensor_gather(out, ref));
        dt_tensor_destroy(out);
        for (p = 0; p < sizeof points / sizeof points[0]; p++) {
            long k;
            if (points[p].sym != symmetric) continue;
            for (k = 1; k <= 32; k++) {
                long live = dev_live, fired0 = dtcu_standin_fired();
                size_t bytes = dtcu_standin_live_bytes();
                dt_status st;
                const char *where = calls[q].fn;
                int fired;
                out = NULL;
                dtt_ctx("fault %s in %s, use %ld", points[p].fn, calls[q].name, k);
                dtcu_standin_fail(points[p].fn, k);
                st = calls[q].call(&in, &out);
                fired = dtcu_standin_fired() > fired0;
                CHECK(st != DT_OK || out != NULL, "DT_OK without *out");
                if (st == DT_OK && out) { /* a failed launch shows at the next sync */
                    st = dt_tensor_gather(out, got);
                    where = "dt_tensor_gather";
                    fired = dtcu_standin_fired() > fired0;
                }
                dtcu_standin_fail(points[p].fn, 0);
                /* every rank of the mesh (the world's, when symmetric): the same status, and the same
                   verdict on whether the fault fired */
                if (symmetric) {
                    int mine[2] = {(int)st, fired}, lo[2], hi[2];
                    MPI_Allreduce(mine, lo, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
                    MPI_Allreduce(mine, hi, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
                    CHECK(lo[0] == hi[0] && lo[1] == hi[1], "ranks disagree: status %d..%d, fired %d..%d", lo[0],
                          hi[0], lo[1], hi[1]);
                }
                if (!fired) {
                    CHECK(st == DT_OK, "no fault, yet %s", dt_last_error());
                    if (st == DT_OK) CHECK(!memcmp(got, ref, nref * sizeof(float)), "fault-free result differs");
                    dt_tensor_destroy(out);
                    break;
                }
                CHECK(st == points[p].want, "status %s, want %s (%s)", dt_status_string(st),
                      dt_status_string(points[p].want), dt_last_error());
                if (st != DT_OK) CHECK_ERRMSG(where);
                if (where == calls[q].fn) CHECK(out == NULL, "*out set on failure");
                dt_tensor_destroy(out);
                CHECK(dev_live == live && dtcu_standin_live_bytes() == bytes,
                      "leak: %ld device allocations, %zu device bytes", dev_live - live,
                      dtcu_standin_live_bytes() - bytes);
            }
        }
    }
    /* the inputs are as they were */
    CHECK_OK(dt_tensor_gather(in.a, got));
    CHECK(!memcmp(got, ha, (size_t)na * sizeof(float)), "input a changed");
done:
    dtt_ctx("");
    dt_tensor_destroy(in.a);
    dt_tensor_destroy(in.b);
    dt_tensor_destroy(in.c);
    dt_tensor_destroy(in.p);
    dt_mesh_destroy(m);
    free(ha), free(hc), free(ref), free(got);
}
/* the faults whose uses are the same on every rank on the mesh of the
   run; the others on a one-rank mesh of each process (a device fault on
   ONE rank inside a collective is not agreed on: the others would wait,
   as on the host paths -- see the closing note of the issue) */
static void device_faults(dt_comm *comm, int self_too) {
    dt_comm *self = NULL;
    fault_sweep(comm, 1);
    if (!self_too || !dtt_ok(dt_comm_self(&self))) return;
    fault_sweep(self, 0);
    dt_comm_destroy(self);
}
#endif

/* ------------------------------------------------------------ halos and stencils
   Every boundary kind, widths 0-2, corners or not, on 1-3-d tensors under
   random Shard/Replicate placements: the device tensor's ghosted block must
   equal, byte for byte, a host tensor's on the same mesh (staged the other
   way when the backend takes device memory) and a host tensor's on a plain
   MPI mesh (tests/test_halo.c checks those against closed forms). The
   bytes on the wire are the host's; on the sim device, the bytes that cross
   between host and device memory are exactly those messages (staged) or
   none (a backend that takes device memory): only faces move. */
#ifdef DT_TEST_CUDA
#define TEST_HD __host__ __device__
#else
#define TEST_HD
#endif

/* element i of the block's input (F32 or F64) */
TEST_HD static double cell_in(const dt_stencil_block *b, int64_t i) {
    return b->dtype == DT_F32 ? (double)((const float *)b->in)[i] : ((const double *)b->in)[i];
}

/* cell k of the block's box: out = in/2 + (the 2 neighbours along each dim with ghosts)/8 */
TEST_HD static void stencil_cell(const dt_stencil_block *b, int64_t k) {
    int64_t io = 0, oo = 0;
    double acc;
    int d;
    for (d = b->ndim - 1; d >= 0; d--) {
        int64_t i = b->lo[d] + k % b->ext[d];
        k /= b->ext[d];
        io += (i + b->width[d]) * b->in_stride[d];
        oo += i * b->out_stride[d];
    }
    acc = 0.5 * cell_in(b, io);
    for (d = 0; d < b->ndim; d++)
        if (b->width[d] > 0) acc += 0.125 * (cell_in(b, io - b->in_stride[d]) + cell_in(b, io + b->in_stride[d]));
    if (b->dtype == DT_F32) ((float *)b->out)[oo] = (float)acc;
    else ((double *)b->out)[oo] = acc;
}

static int64_t block_cells(const dt_stencil_block *b) {
    int64_t n = 1;
    int d;
    for (d = 0; d < b->ndim; d++) n *= b->ext[d];
    return n;
}

static void host_stencil(const dt_stencil_block *b, void *user) {
    int64_t k, n = block_cells(b);
    (void)user;
    for (k = 0; k < n; k++) stencil_cell(b, k);
}

static int stencil_host_ptrs = 0; /* device callbacks handed pointers that are not device memory */
#ifdef DT_TEST_CUDA
__global__ void stencil_kernel(dt_stencil_block b, int64_t n) {
    int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; k < n; k += (int64_t)gridDim.x * blockDim.x) stencil_cell(&b, k);
}
/* enqueued on dt_cuda_stream(), as the contract says; the library orders the rest */
static void device_stencil(const dt_stencil_block *b, void *user) {
    int64_t n = block_cells(b);
    struct cudaPointerAttributes at;
    (void)user;
    if (cudaPointerGetAttributes(&at, b->out) != cudaSuccess) {
        stencil_host_ptrs++;
        (void)cudaGetLastError(); /* (only then: a failed launch before this one stays for the library to report) */
    } else if (at.type != cudaMemoryTypeDevice) {
        stencil_host_ptrs++;
    }
    DT__CU_START(stencil_kernel, (unsigned)((n + 255) / 256 < 64 ? (n + 255) / 256 : 64), 256, *b, n);
}
#else
static void device_stencil(const dt_stencil_block *b, void *user) {
    dt_stencil_block h = *b;
    if (!sim_owns(b->in) || !sim_owns(b->out)) stencil_host_ptrs++;
    h.in = sim_dec(b->in);
    h.out = sim_dec(b->out);
    host_stencil(&h, user);
}
#endif

/* the local ghosted blocks of a host tensor and another: same shape, same bytes */
static void same_ghosts(const char *what, const dt_tensor *h, const dt_tensor *d) {
    int on_device = dt_tensor_get_desc(d)->device != DT_HOST;
    int64_t gh[DT_MAX_DIMS], gd[DT_MAX_DIMS], n = 1;
    int nd = dt_tensor_get_desc(h)->ndim, i;
    size_t es = dt_dtype_size(dt_tensor_get_desc(h)->dtype);
    const void *a = dt_tensor_ghosted_data(h, gh);
    const void *b = dt_tensor_ghosted_data(d, gd);
    char *got;
    for (i = 0; i < nd; i++) {
        CHECK(gh[i] == gd[i], "%s: ghosted shape[%d] %lld (host) vs %lld (device)", what, i, (long long)gh[i],
              (long long)gd[i]);
        n *= gh[i];
    }
    if (!n || !a || !b) return;
    got = (char *)malloc((size_t)n * es);
    if (on_device) dev_get(got, b, (size_t)n * es);
    else memcpy(got, b, (size_t)n * es);
    for (i = 0; i < n && memcmp((const char *)a + (size_t)i * es, got + (size_t)i * es, es) == 0; i++) {}
    CHECK(i == n, "%s: ghosted element %d of %lld differs (rank %d)", what, i, (long long)n, dtt_rank);
    free(got);
}

/* A device array of the program's own with ghost room g[d] >= the halo's
   width (one more along dim 0), wrapped in place: its interior t's shard
   of `full`, its ghost room poisoned (-7); *arr gets the allocation. */
static dt_tensor *ghosted_wrap(dt_mesh *m, dt_tensor_desc desc, const void *full, const dt_halo_desc *hd,
                               int64_t *g, void **arr) {
    int64_t ls[DT_MAX_DIMS] = {0}, off[DT_MAX_DIMS] = {0}, ge[DT_MAX_DIMS], n = 1, gn = 1, k;
    int coord[DT_MAX_MESH_DIMS], nd = desc.ndim, d;
    size_t es = dt_dtype_size(desc.dtype);
    char *h;
    dt_tensor *t = NULL;
    double poison = -7.0;
    if (dt_mesh_coordinate(m, coord)) CHECK_OK(dt_layout(m, &desc, coord, ls, off));
    for (d = 0; d < nd; d++) {
        g[d] = hd->width[d] + (d == 0);
        ge[d] = ls[d] + 2 * g[d];
        gn *= ge[d];
        n *= ls[d];
    }
    h = (char *)malloc((size_t)gn * es + 1);
    for (k = 0; k < gn; k++) dt__host_kernels.cast(DT_F64, &poison, desc.dtype, h + (size_t)k * es, 1);
    for (k = 0; k < n; k++) { /* interior cell k (local) <- full at its global index */
        int64_t r = k, gi = 0, hi = 0, gs = 1, hs = 1;
        for (d = nd - 1; d >= 0; d--) {
            int64_t i = r % ls[d];
            r /= ls[d];
            gi += (off[d] + i) * gs;
            hi += (i + g[d]) * hs;
            gs *= desc.shape[d];
            hs *= ge[d];
        }
        memcpy(h + (size_t)hi * es, (const char *)full + (size_t)gi * es, es);
    }
    *arr = dev_alloc((size_t)gn * es);
    dev_put(*arr, h, (size_t)gn * es);
    free(h);
    desc.local_shape = ls;
    desc.local_ghost = g;
    desc.local_alloc = *arr;
    desc.local_alloc_bytes = (int64_t)((size_t)gn * es);
    CHECK_OK(dt_tensor_from_local(m, &desc, *arr, DT_BORROW, &t));
    return t;
}

/* the halo of a ghosted wrap (ghost room g, wider than the halo) equals the
   reference's ghosted block (the halo's widths) where the halo reaches, and
   the ghost room past it keeps its poison */
static void same_ghosts_wrap(const dt_tensor *ref, const dt_tensor *d, const dt_halo_desc *hd, const int64_t *g) {
    int64_t gr[DT_MAX_DIMS], gd[DT_MAX_DIMS], n = 1, k, bad = 0, poisoned = 0;
    int nd = dt_tensor_get_desc(ref)->ndim, i;
    size_t es = dt_dtype_size(dt_tensor_get_desc(ref)->dtype);
    const char *a = (const char *)dt_tensor_ghosted_data(ref, gr);
    const void *b = dt_tensor_ghosted_data(d, gd);
    char *got, poison[16];
    double pv = -7.0;
    int64_t gn = 1;
    for (i = 0; i < nd; i++) { n *= gr[i]; gn *= gd[i]; }
    if (!gn || !b) return;
    got = (char *)malloc((size_t)gn * es);
    dev_get(got, b, (size_t)gn * es);
    dt__host_kernels.cast(DT_F64, &pv, dt_tensor_get_desc(ref)->dtype, poison, 1);
    for (k = 0; k < gn; k++) { /* each cell of the wrap: inside the halo's reach, or the caller's */
        int64_t r = k, rk = 0, rs = 1;
        int inside = 1, ghost_dims = 0;
        for (i = nd - 1; i >= 0; i--) {
            int64_t j = r % gd[i] - (g[i] - hd->width[i]);
            r /= gd[i];
            if (j < 0 || j >= gr[i]) inside = 0;
            ghost_dims += j < hd->width[i] || j >= gr[i] - hd->width[i];
            rk += j * rs;
            rs *= gr[i];
        }
        if (inside && !hd->corners && ghost_dims > 1) continue; /* a corner without corners: a CONSTANT edge
                                                                   fills it, a message does not */
        if (inside && a) bad += memcmp(a + (size_t)rk * es, got + (size_t)k * es, es) != 0;
        if (!inside) poisoned += memcmp(poison, got + (size_t)k * es, es) != 0;
    }
    CHECK(bad == 0, "ghosted wrap: %lld cells of the halo differ from the reference (rank %d)", (long long)bad, dtt_rank);
    CHECK(poisoned == 0, "ghosted wrap: %lld cells of ghost room past the halo were written", (long long)poisoned);
    (void)n;
    free(got);
}

static void halo_sweep(dt_comm *comm, const char *bname, int device_backend_used) {
    static const dt_dtype ht[] = {DT_F64, DT_F32, DT_I64, DT_F16};
    int fac[16][4], nf, f, trial, s;
    dt_comm *mpi = NULL;
    dtt_rng r = {0x4a10 + (uint64_t)device_backend_used};
    if (!dtt_ok(dt_comm_mpi(MPI_COMM_WORLD, &mpi))) return;
    nf = dtt_factorizations(dtt_np, 2, &fac[0][0], 8);
    for (f = 0; f < nf; f++) {
        dt_mesh_desc md;
        dt_mesh *m = NULL, *mr = NULL;
        memset(&md, 0, sizeof md);
        md.ndim = 2;
        md.shape[0] = fac[f][0];
        md.shape[1] = fac[f][1];
        if (!dtt_ok(dt_mesh_create(comm, &md, &m)) || !dtt_ok(dt_mesh_create(mpi, &md, &mr))) {
            dt_mesh_destroy(m);
            continue;
        }
        for (trial = 0; trial < (dtt_quick ? 6 : 12); trial++) {
            int64_t shape[3] = {9, 6, 4}, n = 1;
            int nd = 1 + dtt_randint(&r, 3);
            dt_dtype t = ht[trial % 4];
            dt_placement pl[2];
            dt_halo_desc hd;
            dt_tensor_desc desc;
            dt_tensor *ref = NULL, *hs = NULL, *ds = NULL, *ho = NULL, *dout = NULL;
            dt_comm_stats a, b;
            void *full, *arr = NULL;
            int64_t ghost[DT_MAX_DIMS] = {0};
            int wrap = trial % 3 == 2; /* the device tensor: the program's own ghosted array */
            for (s = 0; s < nd; s++) n *= shape[s];
            for (s = 0; s < 2; s++) pl[s] = dtt_randint(&r, 3) ? dt_shard(dtt_randint(&r, nd)) : dt_replicate();
            memset(&hd, 0, sizeof hd);
            for (s = 0; s < nd; s++) {
                hd.width[s] = dtt_randint(&r, 3);
                hd.boundary[s] = (dt_boundary)dtt_randint(&r, 3);
                /* a wrap's NONE edges keep the caller's ghosts, the reference's its zeros: not compared */
                if (wrap && hd.boundary[s] == DT_BOUNDARY_NONE) hd.boundary[s] = DT_BOUNDARY_PERIODIC;
            }
            hd.corners = dtt_randint(&r, 2);
            hd.fill = 1.5 + trial;
            dtt_ctx("%s halo mesh %dx%d trial %d %s nd=%d corners=%d wrap=%d", bname, md.shape[0], md.shape[1], trial,
                    dt_dtype_name(t), nd, hd.corners, wrap);
            full = malloc((size_t)n * dt_dtype_size(t));
            fill_full(t, full, n, trial);
            desc = mkdesc(t, nd, shape, pl, 2, DT_HOST);
            CHECK_OK(dt_tensor_distribute(mr, &desc, full, 0, &ref));
            CHECK_OK(dt_tensor_distribute(m, &desc, full, 0, &hs));
            desc.device = DEV;
            if (wrap) ds = ghosted_wrap(m, desc, full, &hd, ghost, &arr);
            else CHECK_OK(dt_tensor_distribute(m, &desc, full, 0, &ds));
            if (ref && hs && ds && dtt_ok(dt_tensor_set_halo(ref, &hd)) && dtt_ok(dt_tensor_set_halo(hs, &hd)) &&
                dtt_ok(dt_tensor_set_halo(ds, &hd))) {
                long allocs;
                CHECK_OK(dt_halo_exchange(ref));
                CHECK_OK(dt_halo_exchange(hs));
                dt_comm_reset_stats(comm);
                sim_crossed_reset();
                if (trial % 2) CHECK_OK(dt_halo_exchange(ds));
                else { CHECK_OK(dt_halo_exchange_begin(ds)); CHECK_OK(dt_halo_exchange_end(ds)); }
                dt_comm_get_stats(comm, &b);
                dt_comm_reset_stats(mpi);
                CHECK_OK(dt_halo_exchange(ref));
                dt_comm_get_stats(mpi, &a);
                same_ghosts("host tensor on this backend", ref, hs);
                if (wrap) same_ghosts_wrap(ref, ds, &hd, ghost);
                else same_ghosts("device tensor", ref, ds);
                CHECK(a.bytes_sent == b.bytes_sent && a.bytes_recv == b.bytes_recv,
                      "device halo moved %llu/%llu bytes, host %llu/%llu", (unsigned long long)b.bytes_sent,
                      (unsigned long long)b.bytes_recv, (unsigned long long)a.bytes_sent,
                      (unsigned long long)a.bytes_recv);
#ifndef DT_TEST_CUDA /* (the reference exchange and same_ghosts cross nothing through the sim device) */
                CHECK(sim_crossed_get() == (device_backend_used ? 0 : (size_t)(b.bytes_sent + b.bytes_recv)),
                      "%zu bytes crossed between host and device for %llu sent + %llu received", sim_crossed_get(),
                      (unsigned long long)b.bytes_sent, (unsigned long long)b.bytes_recv);
#endif
                allocs = dev_allocs;
                CHECK_OK(dt_halo_exchange(ds));
                CHECK(dev_allocs == allocs, "a repeated exchange allocated %ld device buffers", dev_allocs - allocs);
                if (t == DT_F64 || t == DT_F32) {
                    CHECK_OK(dt_stencil_apply(hs, host_stencil, NULL, &ho));
                    CHECK_OK(dt_stencil_apply(ds, device_stencil, NULL, &dout));
                    if (ho && dout) same_values("stencil", ho, dout, EXACT_FLOATS);
                }
            }
            dt_tensor_destroy(ref);
            dt_tensor_destroy(hs);
            dt_tensor_destroy(ds);
            dt_tensor_destroy(ho);
            dt_tensor_destroy(dout);
            if (arr) dev_free(arr);
            free(full);
        }
        dtt_ctx("");
        dt_mesh_destroy(mr);
        dt_mesh_destroy(m);
    }
    CHECK(stencil_host_ptrs == 0, "the device stencil got %d host pointers", stencil_host_ptrs);
    dt_comm_destroy(mpi);
}

#ifdef DTCU_STANDIN
/* The device work one planned exchange enqueues (kernel launches, copies,
   memsets; NCCL's own calls not counted), counted by the stand-in: a 3-D
   field with corners, periodic and CONSTANT edges, on a 2-D mesh of all
   ranks, as a block the library owns and as the program's own ghosted
   array. Every copy before the messages is one launch and every unpack
   one more: at most 2 over a backend that takes device memory, 4 over
   staged MPI (its two staging copies), whatever the pieces and peers.
   Over the device backend the exchange also never waits on the host and
   allocates nothing, and it runs on the library's communication stream: a
   kernel the program enqueues on dt_cuda_stream() between _begin and _end
   runs (here: the stand-in runs it when the host waits for it) while the
   exchange's work is still queued. The values are halo_sweep's to check
   (the same exchange, any shape). */
__global__ void mark_kernel(int *p) { *p = 1; }

static void halo_launches(dt_comm *comm, int device_backend_used) {
    static const int64_t shape[3] = {9, 6, 4};
    long most = device_backend_used ? 2 : 4;
    int fac[16][4], nf, f, wrap, call;
    nf = dtt_factorizations(dtt_np, 2, &fac[0][0], 8);
    for (f = 0; f < nf; f++)
        for (wrap = 0; wrap < 2; wrap++) {
            dt_mesh_desc md;
            dt_mesh *m = NULL;
            dt_placement pl[2] = {dt_shard(0), dt_shard(1)};
            dt_halo_desc hd;
            dt_tensor_desc desc;
            dt_tensor *t = NULL;
            int64_t ghost[DT_MAX_DIMS] = {0}, n = 9 * 6 * 4;
            void *arr = NULL, *full = malloc((size_t)n * 8);
            memset(&md, 0, sizeof md);
            md.ndim = 2;
            md.shape[0] = fac[f][0];
            md.shape[1] = fac[f][1];
            memset(&hd, 0, sizeof hd);
            hd.width[0] = 1, hd.width[1] = 2, hd.width[2] = 1;
            hd.boundary[0] = hd.boundary[1] = DT_BOUNDARY_PERIODIC;
            hd.boundary[2] = DT_BOUNDARY_CONSTANT;
            hd.corners = 1;
            hd.fill = 2.5;
            fill_full(DT_F64, full, n, 3);
            dtt_ctx("halo launches mesh %dx%d wrap=%d", md.shape[0], md.shape[1], wrap);
            if (dtt_ok(dt_mesh_create(comm, &md, &m))) {
                desc = mkdesc(DT_F64, 3, shape, pl, 2, DEV);
                if (wrap) t = ghosted_wrap(m, desc, full, &hd, ghost, &arr);
                else CHECK_OK(dt_tensor_distribute(m, &desc, full, 0, &t));
                if (t && dtt_ok(dt_tensor_set_halo(t, &hd)) && dtt_ok(dt_halo_exchange(t)))
                    for (call = 0; call < 2; call++) {
                        long before = dtcu_standin_work(NULL, NULL, NULL), l, c, z, l0, c0, z0, got;
                        long waits = dtcu_standin_waits(), allocs = dtcu_standin_allocs();
                        dtcu_standin_work(&l0, &c0, &z0);
                        if (call) CHECK_OK(dt_halo_exchange(t));
                        else { CHECK_OK(dt_halo_exchange_begin(t)); CHECK_OK(dt_halo_exchange_end(t)); }
                        got = dtcu_standin_work(&l, &c, &z) - before;
                        CHECK(got <= most, "%s enqueued %ld device calls (%ld launches, %ld copies, %ld memsets), "
                              "at most %ld allowed (rank %d)", call ? "dt_halo_exchange" : "_begin + _end", got,
                              l - l0, c - c0, z - z0, most, dtt_rank);
                        CHECK(dtcu_standin_allocs() == allocs, "a planned exchange allocated %ld times",
                              dtcu_standin_allocs() - allocs);
                        if (device_backend_used)
                            CHECK(dtcu_standin_waits() == waits, "a planned exchange over the device backend made "
                                  "the host wait %ld times", dtcu_standin_waits() - waits);
                        if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE") && f == nf - 1)
                            printf("halo launches np=%d mesh %dx%d %s wrap=%d: %ld device calls (%ld launches)\n", dtt_np, md.shape[0], md.shape[1], device_backend_used ? "device backend" : "staged MPI", wrap, got, l - l0);
                    }
            }
            if (t && device_backend_used && dtcu_standin_deferred()) { /* the program's kernel alongside */
                int *flag = (int *)dev_alloc(sizeof(int)), seen = 0;
                cudaEvent_t ev = NULL;
                CHECK(cudaEventCreate(&ev) == cudaSuccess, "cudaEventCreate");
                CHECK_OK(dt_halo_exchange_begin(t));
                DT_CUDA_LAUNCH(mark_kernel, 1, 1, flag);
                cudaEventRecord(ev, dt_cuda_stream());
                cudaEventSynchronize(ev);
                CHECK(dtcu_standin_pending(dt__cu_comm_v) > 0, "the exchange's device work ran before a kernel the "
                      "program enqueued after _begin: not on a stream of its own (rank %d)", dtt_rank);
                CHECK_OK(dt_halo_exchange_end(t));
                dev_get(&seen, flag, sizeof seen);
                CHECK(seen == 1, "the program's kernel did not run");
                CHECK(dtcu_standin_pending(dt__cu_comm_v) == 0, "work after _end on the program's stream did "
                      "not wait for the exchange");
                cudaEventDestroy(ev);
                dev_free(flag);
            }
            dt_tensor_destroy(t);
            if (arr) dev_free(arr);
            dt_mesh_destroy(m);
            free(full);
        }
    dtt_ctx("");
}

/* A group (dt_halo_group) of an F64 [9,6,4] and an F32 [10,6,4] field with
   different halos: one exchange enqueues what one tensor's does (one pack
   launch, one unpack launch; staged: two copies more), and leaves every
   ghost cell as the members' own exchanges do; the same for an exchange of
   fewer layers (dt_halo_group_exchange_layers). */
static void halo_group_launches(dt_comm *comm, int device_backend_used) {
    static const int64_t s0[3] = {9, 6, 4}, s1[3] = {10, 6, 4};
    long most = device_backend_used ? 2 : 4;
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    dt_placement pl[2] = {dt_shard(0), dt_shard(1)};
    dt_halo_desc h0, h1;
    dt_tensor_desc d0, d1;
    dt_tensor *t[2] = {NULL, NULL};
    dt_halo_group *g = NULL;
    int fac[16][4], k;
    void *f0 = malloc(9 * 6 * 4 * 8), *f1 = malloc(10 * 6 * 4 * 4);
    dtt_factorizations(dtt_np, 2, &fac[0][0], 8);
    memset(&md, 0, sizeof md);
    md.ndim = 2;
    md.shape[0] = fac[0][0];
    md.shape[1] = fac[0][1];
    memset(&h0, 0, sizeof h0);
    h0.width[0] = 1, h0.width[1] = 2, h0.width[2] = 1;
    h0.boundary[0] = h0.boundary[1] = DT_BOUNDARY_PERIODIC;
    h0.corners = 1;
    h0.fill = 2.5;
    memset(&h1, 0, sizeof h1);
    h1.width_lo[0] = 2, h1.width_hi[0] = 1, h1.width[1] = 0, h1.width_lo[1] = 1, h1.width_hi[1] = 1;
    h1.boundary[0] = DT_BOUNDARY_CONSTANT, h1.boundary[1] = DT_BOUNDARY_PERIODIC;
    h1.fill = -1.5;
    fill_full(DT_F64, f0, 9 * 6 * 4, 3);
    fill_full(DT_F32, f1, 10 * 6 * 4, 5);
    dtt_ctx("halo group launches mesh %dx%d", md.shape[0], md.shape[1]);
    if (dtt_ok(dt_mesh_create(comm, &md, &m))) {
        d0 = mkdesc(DT_F64, 3, s0, pl, 2, DEV);
        d1 = mkdesc(DT_F32, 3, s1, pl, 2, DEV);
        CHECK_OK(dt_tensor_distribute(m, &d0, f0, 0, &t[0]));
        CHECK_OK(dt_tensor_distribute(m, &d1, f1, 0, &t[1]));
        if (t[0] && t[1] && dtt_ok(dt_tensor_set_halo(t[0], &h0)) && dtt_ok(dt_tensor_set_halo(t[1], &h1)) &&
            dtt_ok(dt_halo_group_create(t, 2, &g))) {
            int64_t gs[2][DT_MAX_DIMS];
            size_t bytes[2];
            void *mine[2];
            long before = dtcu_standin_work(NULL, NULL, NULL), l, c, z, l0, c0, z0, got;
            CHECK_OK(dt_halo_group_exchange(g)); /* (the first) */
            before = dtcu_standin_work(&l0, &c0, &z0);
            CHECK_OK(dt_halo_group_exchange(g));
            got = dtcu_standin_work(&l, &c, &z) - before;
            CHECK(got <= most, "a group's exchange enqueued %ld device calls (%ld launches, %ld copies, %ld memsets), "
                  "at most %ld allowed (rank %d)", got, l - l0, c - c0, z - z0, most, dtt_rank);
            CHECK(l - l0 <= 2, "a group's exchange made %ld launches (one pack, one unpack)", l - l0);
            for (k = 0; k < 2; k++) { /* the group's ghosts, then the members' own */
                const void *gb = dt_tensor_ghosted_data(t[k], gs[k]);
                bytes[k] = (size_t)(gs[k][0] * gs[k][1] * gs[k][2]) * (k ? 4 : 8);
                mine[k] = malloc(bytes[k] ? bytes[k] : 1);
                if (bytes[k]) dev_get(mine[k], gb, bytes[k]);
            }
            for (k = 0; k < 2; k++) {
                void *own = malloc(bytes[k] ? bytes[k] : 1);
                CHECK_OK(dt_halo_exchange(t[k]));
                if (bytes[k]) dev_get(own, dt_tensor_ghosted_data(t[k], NULL), bytes[k]);
                CHECK(!bytes[k] || !memcmp(own, mine[k], bytes[k]), "member %d: the group's ghosts differ from its "
                      "own exchange's (rank %d)", k, dtt_rank);
                free(own);
                free(mine[k]);
            }
            { /* fewer layers (1 along dim 0, all along 1 and 2): the same launches; from poisoned blocks, the
                 ghosts each member's own exchange of that many layers (up to its halo's) leaves */
                static const int64_t w[3] = {1, 2, 1}, wm[2][3] = {{1, 2, 1}, {1, 1, 0}};
                CHECK_OK(dt_halo_group_exchange_layers(g, w)); /* (the first: planned) */
                for (k = 0; k < 2; k++) {
                    void *gb = dt_tensor_ghosted_data(t[k], gs[k]), *poison;
                    bytes[k] = (size_t)(gs[k][0] * gs[k][1] * gs[k][2]) * (k ? 4 : 8);
                    poison = malloc(bytes[k] ? bytes[k] : 1);
                    memset(poison, 0xA5, bytes[k] ? bytes[k] : 1);
                    if (bytes[k]) dev_put(gb, poison, bytes[k]);
                    free(poison);
                }
                before = dtcu_standin_work(&l0, &c0, &z0);
                CHECK_OK(dt_halo_group_exchange_layers(g, w));
                got = dtcu_standin_work(&l, &c, &z) - before;
                CHECK(got <= most && l - l0 <= 2, "a group's exchange of fewer layers enqueued %ld device calls "
                      "(%ld launches), at most %ld and 2 allowed (rank %d)", got, l - l0, most, dtt_rank);
                for (k = 0; k < 2; k++) {
                    void *gb = dt_tensor_ghosted_data(t[k], NULL), *own;
                    mine[k] = malloc(bytes[k] ? bytes[k] : 1);
                    own = malloc(bytes[k] ? bytes[k] : 1);
                    if (bytes[k]) dev_get(mine[k], gb, bytes[k]);
                    memset(own, 0xA5, bytes[k] ? bytes[k] : 1);
                    if (bytes[k]) dev_put(gb, own, bytes[k]);
                    CHECK_OK(dt_halo_exchange_layers(t[k], wm[k]));
                    if (bytes[k]) dev_get(own, gb, bytes[k]);
                    CHECK(!bytes[k] || !memcmp(own, mine[k], bytes[k]), "member %d: the group's layers differ "
                          "from its own layered exchange's (rank %d)", k, dtt_rank);
                    free(own);
                    free(mine[k]);
                }
            }
        }
        dt_halo_group_destroy(g);
        dt_tensor_destroy(t[0]);
        dt_tensor_destroy(t[1]);
        dt_mesh_destroy(m);
    }
    free(f0);
    free(f1);
    dtt_ctx("");
}
#endif

#ifdef DT_TEST_CUDA
__global__ void count_kernel(int *p) { *p += 1; }

/* the local ghosted blocks of two device tensors: the same bytes */
static void same_device_ghosts(const char *what, const dt_tensor *a, const dt_tensor *b) {
    int64_t ga[DT_MAX_DIMS], gb[DT_MAX_DIMS], n = 1;
    int nd = dt_tensor_get_desc(a)->ndim, i;
    size_t es = dt_dtype_size(dt_tensor_get_desc(a)->dtype);
    const void *pa = dt_tensor_ghosted_data(a, ga), *pb = dt_tensor_ghosted_data(b, gb);
    char *x, *y;
    for (i = 0; i < nd; i++) n *= ga[i];
    if (!n || !pa || !pb) return;
    x = (char *)malloc((size_t)n * es);
    y = (char *)malloc((size_t)n * es);
    dev_get(x, pa, (size_t)n * es);
    dev_get(y, pb, (size_t)n * es);
    CHECK(memcmp(x, y, (size_t)n * es) == 0, "%s: the ghosted blocks differ (rank %d)", what, dtt_rank);
    free(x);
    free(y);
}

/* A time step captured as a CUDA graph on dt_cuda_stream() (the stand-in
   models capture and replay): _begin, the program's kernel, _end. Replayed
   three times on new interiors, the ghosted block equals a tensor of the
   same layout exchanged by plain calls, byte for byte, and the program's
   kernel ran once per replay. A call that must wait or allocate, made
   during a capture, is DT_ERR_DEVICE saying so, on every rank. On the
   stand-in and on a GPU (NCCL at one rank there). */
static void halo_graph(dt_comm *comm) {
    static const int64_t shape[3] = {9, 6, 4};
    int fac[16][4], nf, rep;
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    dt_placement pl[2] = {dt_shard(0), dt_shard(1)};
    dt_halo_desc hd;
    dt_tensor_desc desc;
    dt_tensor *a = NULL, *b = NULL, *c = NULL;
    cudaStream_t s = NULL, old = dt_cuda_stream();
    cudaGraph_t g = NULL;
    cudaGraphExec_t ex = NULL;
    int64_t n = 9 * 6 * 4, nl;
    int *count = NULL, ran = 0;
    void *full = malloc((size_t)n * 8);
    char *vals = NULL;
    nf = dtt_factorizations(dtt_np, 2, &fac[0][0], 8);
    memset(&md, 0, sizeof md);
    md.ndim = 2;
    md.shape[0] = fac[nf - 1][0];
    md.shape[1] = fac[nf - 1][1];
    memset(&hd, 0, sizeof hd);
    hd.width[0] = 2, hd.width[1] = 1, hd.width[2] = 1;
    hd.boundary[0] = hd.boundary[2] = DT_BOUNDARY_PERIODIC;
    hd.boundary[1] = DT_BOUNDARY_CONSTANT;
    hd.corners = 1;
    hd.fill = -1.25;
    fill_full(DT_F64, full, n, 5);
    dtt_ctx("halo graph mesh %dx%d", md.shape[0], md.shape[1]);
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "cudaStreamCreateWithFlags");
    dt_cuda_set_stream(s);
    desc = mkdesc(DT_F64, 3, shape, pl, 2, DEV);
    if (!dtt_ok(dt_mesh_create(comm, &md, &m))) goto done;
    CHECK_OK(dt_tensor_distribute(m, &desc, full, 0, &a));
    CHECK_OK(dt_tensor_distribute(m, &desc, full, 0, &b));
    CHECK_OK(dt_tensor_distribute(m, &desc, full, 0, &c));
    if (!a || !b || !c || !dtt_ok(dt_tensor_set_halo(a, &hd)) || !dtt_ok(dt_tensor_set_halo(b, &hd))) goto done;
    CHECK_OK(dt_halo_exchange(a)); /* the first call: after it, nothing to allocate or wait for */
    count = (int *)dev_alloc(sizeof(int));
    CHECK(cudaMemsetAsync(count, 0, sizeof(int), s) == cudaSuccess, "cudaMemsetAsync");
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess, "cudaStreamBeginCapture");
    CHECK_OK(dt_halo_exchange_begin(a));
    DT_CUDA_LAUNCH(count_kernel, 1, 1, count);
    CHECK_OK(dt_halo_exchange_end(a));
    CHECK(cudaStreamEndCapture(s, &g) == cudaSuccess, "cudaStreamEndCapture: the exchange is not capturable");
    if (!g || cudaGraphInstantiate(&ex, g, 0) != cudaSuccess) goto done;
    nl = 1;
    {
        int64_t ls[DT_MAX_DIMS];
        int d;
        dt_tensor_local_shape(a, ls);
        for (d = 0; d < 3; d++) nl *= ls[d];
    }
    vals = (char *)malloc((size_t)(nl ? nl : 1) * 8);
    for (rep = 0; rep < 3; rep++) {
        int64_t k;
        for (k = 0; k < nl; k++) ((double *)vals)[k] = rep * 100.0 + dtt_rank * 10.0 + (double)k / 8;
        if (nl) {
            dev_put(dt_tensor_data(a), vals, (size_t)nl * 8);
            dev_put(dt_tensor_data(b), vals, (size_t)nl * 8);
        }
        CHECK(cudaDeviceSynchronize() == cudaSuccess, "cudaDeviceSynchronize"); /* (s does not wait for stream 0) */
        CHECK(cudaGraphLaunch(ex, s) == cudaSuccess, "cudaGraphLaunch");
        CHECK_OK(dt_halo_exchange(b));
        CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
        same_device_ghosts("graph replay", a, b);
    }
    dev_get(&ran, count, sizeof ran);
    CHECK(ran == 3, "the captured program kernel ran %d times in 3 replays", ran);
    /* not capturable: a new halo's ghosted block is allocated, a gather to the host waits */
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess, "cudaStreamBeginCapture");
    CHECK_ST(dt_tensor_set_halo(c, &hd), DT_ERR_DEVICE);
    CHECK(strstr(dt_last_error(), "captured into a CUDA graph") != NULL, "set_halo during capture: %s",
          dt_last_error());
    {
        cudaGraph_t g2 = NULL;
        (void)cudaStreamEndCapture(s, &g2);
        if (g2) cudaGraphDestroy(g2);
        (void)cudaGetLastError();
    }
done:
    if (ex) cudaGraphExecDestroy(ex);
    if (g) cudaGraphDestroy(g);
    if (count) dev_free(count);
    dt_tensor_destroy(a);
    dt_tensor_destroy(b);
    dt_tensor_destroy(c);
    dt_mesh_destroy(m);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
    dt_cuda_set_stream(old);
    cudaStreamDestroy(s);
    free(vals);
    free(full);
    dtt_ctx("");
}
#endif

/* dt_conv1d/2d/3d on device tensors against host tensors: x [N, C, spatial...]
   sharded along N or a spatial dim, w and bias sharded or not (the call
   replicates them), padding and dilation random. Bounds: the sim device
   runs the host kernels (bitwise); on a GPU the taps are cuBLAS GEMMs
   accumulated in another order, within same_values' relative 1e-12 (f64)
   and 1e-5 (f32) of the host. */
static void conv_device(dt_comm *comm) {
    dt_mesh *m = NULL;
    dt_mesh_desc md;
    dtt_rng r = {0xc0a7};
    int trial, s;
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    if (!dtt_ok(dt_mesh_create(comm, &md, &m))) return;
    for (trial = 0; trial < (dtt_quick ? 6 : 9); trial++) {
        int nsp = 1 + trial % 3, with_bias = dtt_randint(&r, 2);
        dt_dtype t = trial % 2 ? DT_F32 : DT_F64;
        int64_t xs[5] = {2, 3, 7, 6, 5}, ws[5] = {4, 3, 3, 2, 3}, bs[1] = {4}, nx = 1, nw = 1;
        dt_placement px[1], pw[1];
        dt_conv_desc cd;
        dt_tensor_desc d;
        dt_tensor *hx = NULL, *hw = NULL, *hb = NULL, *dx = NULL, *dw = NULL, *db = NULL, *ho = NULL, *dout = NULL;
        void *fx, *fw, *fb;
        memset(&cd, 0, sizeof cd);
        for (s = 0; s < nsp; s++) {
            cd.padding[s] = dtt_randint(&r, 3);
            cd.dilation[s] = 1 + dtt_randint(&r, 2);
        }
        for (s = 0; s < 2 + nsp; s++) { nx *= xs[s]; nw *= ws[s]; }
        px[0] = dtt_randint(&r, 3) ? dt_shard(dtt_randint(&r, 2) ? 0 : 2 + dtt_randint(&r, nsp)) : dt_replicate();
        pw[0] = dtt_randint(&r, 2) ? dt_shard(0) : dt_replicate();
        dtt_ctx("conv%dd trial %d %s bias=%d", nsp, trial, dt_dtype_name(t), with_bias);
        fx = malloc((size_t)nx * 8), fw = malloc((size_t)nw * 8), fb = malloc(4 * 8);
        fill_full(t, fx, nx, trial);
        fill_full(t, fw, nw, trial + 1);
        fill_full(t, fb, 4, trial + 2);
        d = mkdesc(t, 2 + nsp, xs, px, 1, DT_HOST);
        CHECK_OK(dt_tensor_distribute(m, &d, fx, 0, &hx));
        d.device = DEV;
        CHECK_OK(dt_tensor_distribute(m, &d, fx, 0, &dx));
        d = mkdesc(t, 2 + nsp, ws, pw, 1, DT_HOST);
        CHECK_OK(dt_tensor_distribute(m, &d, fw, 0, &hw));
        d.device = DEV;
        CHECK_OK(dt_tensor_distribute(m, &d, fw, 0, &dw));
        d = mkdesc(t, 1, bs, pw, 1, DT_HOST);
        CHECK_OK(dt_tensor_distribute(m, &d, fb, 0, &hb));
        d.device = DEV;
        CHECK_OK(dt_tensor_distribute(m, &d, fb, 0, &db));
        if (hx && dx && hw && dw && hb && db) {
            dt_status (*conv)(const dt_tensor *, const dt_tensor *, const dt_tensor *, const dt_conv_desc *,
                              dt_tensor **) = nsp == 1 ? dt_conv1d : nsp == 2 ? dt_conv2d : dt_conv3d;
            CHECK_OK(conv(hx, hw, with_bias ? hb : NULL, &cd, &ho));
            CHECK_OK(conv(dx, dw, with_bias ? db : NULL, &cd, &dout));
            if (ho && dout) {
                CHECK(dt_tensor_get_desc(dout)->device == DEV, "conv result on device %d", dt_tensor_get_desc(dout)->device);
                same_values("conv", ho, dout, EXACT_FLOATS);
            }
            if (trial == 0) { /* host and device tensors mixed: refused on every rank, *out untouched */
                dt_tensor *keep = dout;
                CHECK_ST(conv(dx, hw, NULL, &cd, &dout), DT_ERR_DEVICE);
                CHECK_ERRMSG(nsp == 1 ? "dt_conv1d" : "dt_conv2d");
                CHECK(dout == keep, "*out changed on failure");
            }
        }
        dt_tensor_destroy(hx), dt_tensor_destroy(hw), dt_tensor_destroy(hb), dt_tensor_destroy(ho);
        dt_tensor_destroy(dx), dt_tensor_destroy(dw), dt_tensor_destroy(db), dt_tensor_destroy(dout);
        free(fx), free(fw), free(fb);
    }
    dtt_ctx("");
    dt_mesh_destroy(m);
}

/* ------------------------------------------------------------ tensor-parallel layers
   A colwise and a rowwise dt_tp_linear on device tensors (desc.device)
   against the same layers on the host, the weights copied across: y of the
   forward, dx and the gradients of the backward, an SGD step, zero_grad;
   the activations must be on the layer's device. */
static void copy_to_device(const dt_tensor *h, dt_tensor *d) {
    dt_tensor_desc desc = *dt_tensor_get_desc(h);
    dt_tensor *tmp = NULL;
    void *full = gathered(h);
    desc.device = DEV;
    if (dtt_ok(dt_tensor_distribute(dt_tensor_mesh(h), &desc, full, DT_SRC_ALL, &tmp)))
        CHECK_OK(dt_tensor_redistribute(tmp, desc.placements, &d));
    dt_tensor_destroy(tmp);
    free(full);
}

static void layers_device(dt_comm *comm) {
    dt_mesh *m = NULL;
    dt_mesh_desc md;
    int style;
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    if (!dtt_ok(dt_mesh_create(comm, &md, &m))) return;
    for (style = 0; style < 2; style++) {
        dt_tp_linear_desc ld;
        dt_tp_linear *hl = NULL, *dl = NULL;
        int64_t xs[2] = {5, 6}, ys[2] = {5, 7};
        dt_placement px[1], py[1];
        dt_tensor_desc xd, yd;
        dt_tensor *hx = NULL, *dx = NULL, *hdy = NULL, *ddy = NULL, *hy = NULL, *dy = NULL, *hdx = NULL, *ddx = NULL;
        double fx[30], fy[35];
        dtt_ctx("tp_linear %s", style ? "rowwise" : "colwise");
        memset(&ld, 0, sizeof ld);
        ld.style = style ? DT_TP_ROWWISE : DT_TP_COLWISE;
        ld.in_features = 6;
        ld.out_features = 7;
        ld.dtype = DT_F64;
        CHECK_OK(dt_tp_linear_create(m, &ld, &hl));
        ld.device = DEV;
        ld.init = DT_TP_INIT_ZEROS;
        CHECK_OK(dt_tp_linear_create(m, &ld, &dl));
        if (!hl || !dl) { dt_tp_linear_destroy(hl); dt_tp_linear_destroy(dl); continue; }
        CHECK(dt_tensor_get_desc(dt_tp_linear_weight(dl))->device == DEV, "the weight is not on the device");
        copy_to_device(dt_tp_linear_weight(hl), dt_tp_linear_weight(dl));
        copy_to_device(dt_tp_linear_bias(hl), dt_tp_linear_bias(dl));
        fill_full(DT_F64, fx, 30, 3);
        fill_full(DT_F64, fy, 35, 4);
        px[0] = style ? dt_shard(1) : dt_replicate(); /* rowwise takes x sharded on features, colwise replicated */
        py[0] = style ? dt_replicate() : dt_shard(1);
        xd = mkdesc(DT_F64, 2, xs, px, 1, DT_HOST);
        yd = mkdesc(DT_F64, 2, ys, py, 1, DT_HOST);
        CHECK_OK(dt_tensor_distribute(m, &xd, fx, DT_SRC_ALL, &hx));
        CHECK_OK(dt_tensor_distribute(m, &yd, fy, DT_SRC_ALL, &hdy));
        xd.device = yd.device = DEV;
        CHECK_OK(dt_tensor_distribute(m, &xd, fx, DT_SRC_ALL, &dx));
        CHECK_OK(dt_tensor_distribute(m, &yd, fy, DT_SRC_ALL, &ddy));
        CHECK_OK(dt_tp_linear_forward(hl, hx, &hy));
        CHECK_OK(dt_tp_linear_forward(dl, dx, &dy));
        if (hy && dy) same_values("tp_linear forward", hy, dy, EXACT_FLOATS);
        CHECK_OK(dt_tp_linear_backward(hl, hx, hdy, &hdx));
        CHECK_OK(dt_tp_linear_backward(dl, dx, ddy, &ddx));
        if (hdx && ddx) same_values("tp_linear dx", hdx, ddx, EXACT_FLOATS);
        same_values("tp_linear dW", dt_tp_linear_grad_weight(hl), dt_tp_linear_grad_weight(dl), EXACT_FLOATS);
        same_values("tp_linear db", dt_tp_linear_grad_bias(hl), dt_tp_linear_grad_bias(dl), EXACT_FLOATS);
        CHECK_OK(dt_tp_linear_sgd(hl, 0.25));
        CHECK_OK(dt_tp_linear_sgd(dl, 0.25));
        same_values("tp_linear W after sgd", dt_tp_linear_weight(hl), dt_tp_linear_weight(dl), EXACT_FLOATS);
        CHECK_OK(dt_tp_linear_zero_grad(dl));
        CHECK_OK(dt_tp_linear_zero_grad(hl));
        same_values("tp_linear dW after zero_grad", dt_tp_linear_grad_weight(hl), dt_tp_linear_grad_weight(dl), 1);
        { /* a host x for a device layer, a device *y for a host layer: refused on every rank */
            dt_tensor *keep = dy;
            CHECK_ST(dt_tp_linear_forward(dl, hx, &dy), DT_ERR_DEVICE);
            CHECK_ERRMSG("dt_tp_linear_forward");
            CHECK(dy == keep, "*y changed on failure");
            CHECK_ST(dt_tp_linear_forward(hl, hx, &dy), DT_ERR_DEVICE);
            CHECK(dy == keep, "*y changed on failure");
        }
        dt_tensor_destroy(hx), dt_tensor_destroy(dx), dt_tensor_destroy(hdy), dt_tensor_destroy(ddy);
        dt_tensor_destroy(hy), dt_tensor_destroy(dy), dt_tensor_destroy(hdx), dt_tensor_destroy(ddx);
        dt_tp_linear_destroy(hl);
        dt_tp_linear_destroy(dl);
    }
    dtt_ctx("");
    dt_mesh_destroy(m);
}

/* out = out + redistribute(t) where out is the program's own ghosted device
   array (strided storage): the combine runs on the device, against the same
   call into a contiguous host tensor */
static void reduce_into_wrap(dt_comm *comm) {
    dt_mesh *m = NULL;
    dt_mesh_desc md;
    int64_t shape[2] = {9, 6}, g[DT_MAX_DIMS] = {0};
    dt_placement ps[1], pt[1];
    dt_tensor_desc d;
    dt_halo_desc hd;
    dt_tensor *hs = NULL, *ds = NULL, *ho = NULL, *dw = NULL;
    double a[54], b[54];
    void *arr = NULL;
    int op;
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    memset(&hd, 0, sizeof hd);
    hd.width[0] = hd.width[1] = 1;
    if (!dtt_ok(dt_mesh_create(comm, &md, &m))) return;
    fill_full(DT_F64, a, 54, 7);
    fill_full(DT_F64, b, 54, 8);
    ps[0] = dt_shard(0);
    pt[0] = dt_shard(1);
    for (op = 0; op < 3; op++) {
        dt_reduce r = op == 0 ? DT_SUM : op == 1 ? DT_MAX : DT_MIN;
        dtt_ctx("redistribute_reduce into a ghosted device wrap, op %d", (int)r);
        d = mkdesc(DT_F64, 2, shape, ps, 1, DT_HOST);
        CHECK_OK(dt_tensor_distribute(m, &d, a, DT_SRC_ALL, &hs));
        d.device = DEV;
        CHECK_OK(dt_tensor_distribute(m, &d, a, DT_SRC_ALL, &ds));
        d = mkdesc(DT_F64, 2, shape, pt, 1, DT_HOST);
        CHECK_OK(dt_tensor_distribute(m, &d, b, DT_SRC_ALL, &ho));
        d.device = DEV;
        dw = ghosted_wrap(m, d, b, &hd, g, &arr);
        if (hs && ds && ho && dw) {
            CHECK_OK(dt_tensor_redistribute_reduce(hs, pt, r, ho));
            CHECK_OK(dt_tensor_redistribute_reduce(ds, pt, r, dw));
            same_values("redistribute_reduce into a ghosted wrap", ho, dw, 1);
        }
        dt_tensor_destroy(hs), dt_tensor_destroy(ds), dt_tensor_destroy(ho), dt_tensor_destroy(dw);
        hs = ds = ho = dw = NULL;
        if (arr) dev_free(arr);
        arr = NULL;
    }
    dtt_ctx("");
    dt_mesh_destroy(m);
}

/* A dim of points (dt_shard_points) on the device: the program's own
   array holding its part, the point shared with the next part (junk at
   first) and a ghost cell each side, wrapped in device memory and in host
   memory (the host path is test_points' to check against the closed
   form): after an exchange, dt_tensor_sync_shared and
   dt_tensor_sum_shared the two arrays are equal byte for byte. */
static void points_device(dt_comm *comm) {
    enum { NX = 12, NY = 5 };
    int64_t shape[2] = {NX + 1, NY}, ls[2], off[2], g[2] = {1, 1}, gn, k;
    int coord[DT_MAX_MESH_DIMS], step;
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    dt_placement pl[1];
    dt_tensor_desc desc;
    dt_tensor *ht = NULL, *dtn = NULL;
    dt_halo_desc hd;
    double *h = NULL, *back = NULL;
    void *arr = NULL;
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    dtt_ctx("points on the device");
    if (!dtt_ok(dt_mesh_create(comm, &md, &m))) return;
    pl[0] = dt_shard_points(0);
    desc = mkdesc(DT_F64, 2, shape, pl, 1, DT_HOST);
    CHECK_OK(dt_layout(m, &desc, (dt_mesh_coordinate(m, coord), coord), ls, off));
    ls[0] += coord[0] != dtt_np - 1; /* the shared point */
    gn = (ls[0] + 2) * (ls[1] + 2);
    h = (double *)malloc((size_t)gn * sizeof *h);
    back = (double *)malloc((size_t)gn * sizeof *back);
    for (k = 0; k < gn; k++) {
        int64_t i = k / (ls[1] + 2) - 1, j = k % (ls[1] + 2) - 1;
        int ghost = i < 0 || j < 0 || i >= ls[0] || j >= ls[1];
        h[k] = ghost ? -7.0 : (coord[0] != dtt_np - 1 && i == ls[0] - 1) ? -3.0 : 100.0 * (off[0] + i) + (off[1] + j);
    }
    arr = dev_alloc((size_t)gn * sizeof *h);
    dev_put(arr, h, (size_t)gn * sizeof *h);
    desc.local_shape = ls;
    desc.local_ghost = g;
    desc.local_alloc = h;
    desc.local_alloc_bytes = gn * (int64_t)sizeof *h;
    CHECK_OK(dt_tensor_from_local(m, &desc, h, DT_BORROW, &ht));
    desc.device = DEV;
    desc.local_alloc = arr;
    CHECK_OK(dt_tensor_from_local(m, &desc, arr, DT_BORROW, &dtn));
    memset(&hd, 0, sizeof hd);
    hd.width[0] = hd.width[1] = 1;
    hd.corners = 1;
    hd.boundary[1] = DT_BOUNDARY_PERIODIC;
    hd.fill = 2.5;
    if (ht && dtn && dtt_ok(dt_tensor_set_halo(ht, &hd)) && dtt_ok(dt_tensor_set_halo(dtn, &hd)))
        for (step = 0; step < 3; step++) {
            dt_status (*call)(dt_tensor *) = step == 0 ? dt_halo_exchange : step == 1 ? dt_tensor_sync_shared
                                                                                      : dt_tensor_sum_shared;
            CHECK_OK(call(ht));
            CHECK_OK(call(dtn));
            dev_get(back, arr, (size_t)gn * sizeof *back);
            CHECK(memcmp(back, h, (size_t)gn * sizeof *h) == 0, "step %d: the device array differs from the host's",
                  step);
        }
    dt_tensor_destroy(dtn);
    dt_tensor_destroy(ht);
    dev_free(arr);
    free(back);
    free(h);
    dt_mesh_destroy(m);
}

static void run_all(dt_comm *comm, const char *name, int device_backend_used) {
    dtt_ctx("%s", name);
    redistribution_sweep(comm, name, device_backend_used);
    halo_sweep(comm, name, device_backend_used);
    if (dtt_np <= 12) points_device(comm); /* (12 cells: one a part) */
#ifdef DTCU_STANDIN
    halo_launches(comm, device_backend_used);
    halo_group_launches(comm, device_backend_used);
#endif
#ifdef DT_TEST_CUDA
    if (device_backend_used) halo_graph(comm);
#endif
    conv_device(comm);
    layers_device(comm);
    reduce_into_wrap(comm);
    device_full_buffers(comm);
    complex_device(comm);
    ops_sweep(comm);
    reduce_sweep(comm);
    reduce_wrap(comm);
    int_avg_sweep(comm);
    complex_ops(comm);
    embedding_device(comm);
    rng_sweep(comm);
    bad_input(comm);
    storage_sweep(comm, device_backend_used);
    cyclic_device(comm);
    storage_ops(comm);
    storage_npy(comm, device_backend_used);
    storage_bad_input(comm);
#ifdef DTCU_STANDIN
    device_faults(comm, !device_backend_used);
#endif
    dtt_ctx("");
}

int main(int argc, char **argv) {
    dt_comm *comm = NULL;
    const char *be = getenv("DT_TEST_BACKEND");
    dtt_init(&argc, &argv, "device");
    dev_setup();
    if (!be || strcmp(be, "device") != 0) { /* host backend: device shards staged */
        CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
        if (comm) run_all(comm, "mpi (staged)", 0);
        dt_comm_destroy(comm);
        comm = NULL;
    }
    if (!be || strcmp(be, "mpi") != 0) { /* a backend that takes device memory */
        dt_status st = device_backend(&comm);
        if (st == DT_OK) run_all(comm, "device backend", 1);
#if defined(DT_TEST_CUDA) && !defined(DTCU_STANDIN)
        else if (dtt_np > 1) st = DT_OK; /* NCCL runs at one rank here (one GPU) */
#endif
        CHECK(st == DT_OK, "device backend: %s", dt_last_error());
        dt_comm_destroy(comm);
#ifdef DT_TEST_CUDA
        if (user_nccl) ncclCommDestroy(user_nccl);
#endif
    }
    CHECK(dev_live == 0, "%ld device allocations leaked", dev_live);
#ifndef DT_TEST_CUDA
    CHECK(pinned_live == 0, "%ld staging buffers leaked", pinned_live);
    CHECK(sim_bad_ptrs == 0, "%d kernel arguments were host pointers", sim_bad_ptrs);
#endif
    return dtt_finish();
}

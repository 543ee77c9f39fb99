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
   integer Partial(avg): against references computed here from the global values). */
#define DTENSOR_IMPLEMENTATION
#ifdef DT_TEST_CUDA
#include "dtensor_cuda.h"
#else
#include "dtensor.h"
#endif
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
static dt_status sim_copy(const char *fn, void *d, const void *s, size_t n) {
    (void)fn;
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
static dt_status sim_alloc_host(const char *fn, size_t n, void **p) {
    dt_status st = dt__alloc(fn, n, p);
    if (!st) pinned_live++;
    return st;
}
static void sim_free_host(void *p) {
    if (p) pinned_live--;
    DT_FREE(p);
}
static const dt__device sim_device = {"sim", sim_alloc, sim_free, sim_copy, sim_zero, sim_copy_box,
                                      sim_alloc_host, sim_free_host, sim_owns, sim_sync, sim_kernels_get,
                                      sim_copy_box_op};

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
            BOTH(dt_matmul(a.h, w.h, &rh_), dt_matmul(a.d, w.d, &rd_), "matmul", ex);
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
    /* host-only calls say so */
    {
        dt_halo_desc hdsc;
        memset(&hdsc, 0, sizeof hdsc);
        hdsc.width[0] = 1;
        CHECK_ST(dt_tensor_set_halo(d, &hdsc), DT_ERR_UNSUPPORTED);
        CHECK_ERRMSG("dt_tensor_set_halo");
        CHECK_ST(dt_tensor_save_npy(d, "/nonexistent/x.npy"), DT_ERR_UNSUPPORTED);
        CHECK_ERRMSG("dt_tensor_save_npy");
    }
    dt_tensor_destroy(h);
    dt_tensor_destroy(d);
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

static void fault_sweep(dt_comm *comm, int symmetric) {
    static const struct { const char *name; fault_call call; const char *fn; } calls[] = {
        {"add", fc_add, "dt_add"},
        {"S->R", fc_gather_all, "dt_tensor_redistribute"},
        {"matmul", fc_matmul, "dt_matmul"},
        {"P->R", fc_allreduce, "dt_tensor_redistribute"},
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

static void run_all(dt_comm *comm, const char *name, int device_backend_used) {
    dtt_ctx("%s", name);
    redistribution_sweep(comm, name, device_backend_used);
    device_full_buffers(comm);
    complex_device(comm);
    ops_sweep(comm);
    reduce_sweep(comm);
    int_avg_sweep(comm);
    complex_ops(comm);
    embedding_device(comm);
    rng_sweep(comm);
    bad_input(comm);
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

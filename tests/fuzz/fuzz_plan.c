/* tests/fuzz/fuzz_plan.c -- libFuzzer target: the redistribution planner and
   op strategy propagation, through a counting simulation backend (one
   process plays rank r of N; fuzz_sim.h).

   Input bytes -> a mesh (1-4 dims, 1..8 ranks each, at most 64 ranks), a
   tensor (0-4 dims, 0..12 each, any dtype) and src / dst placements
   (R, S(d) with negative d, P(sum/avg/max/min)), each Shard with a split
   rule (fuzz_sim.h's fz_rule: torch.chunk, balanced, sizes with zeros,
   cyclic with a random block, nested in any combination). Checks:
   - dt_tensor_redistribute returns DT_OK, or DT_ERR_PLACEMENT for the one
     refused transition (Shard -> Partial on a mesh dim);
   - the result's desc: same dtype and shape, the normalised dst placements;
   - without Partial on either side, the bytes this rank receives (counted by
     the backend, and dt_comm_get_stats) equal the lower bound computed here
     by intersecting the reference parts (fuzz_sim.h's ref_part, per dim a
     set of indices): |D| - |D n S| elements of its destination part D not
     in its source part S. With a Partial target, at most that;
   - the result's desc keeps each rule (split, block, its own copy of a
     sizes array: the caller's arrays are overwritten after each call);
   - values: every element of a constant tensor stays that constant (the
     mirroring peers hold the same constant, so any element left unwritten,
     misplaced or read from the wrong offset shows), for transitions whose
     reductions keep a constant; with N = 1 (a real run) a tensor of
     distinct values arrives bit for bit;
   - reusing the result as *out gives the same bytes again;
   - strided storage (random dim order, padding, interleaving): the same
     redistribution from a strided copy of the source and into a strided
     *out gives the same elements and the same bytes received, and no
     padding byte is written;
   - an op (add with broadcasting, mul, matmul, sum, max, softmax, transpose,
     neg, exp, reshape) on random sharded inputs returns DT_OK (or a
     documented refusal) with the expected global shape and placements
     valid for the mesh (their dt_layout works); with N = 1, values against
     a serial double computation (F32/F64). */
#define _GNU_SOURCE
#ifndef DTENSOR_NO_MPI
#define DTENSOR_NO_MPI
#endif
#define DTENSOR_IMPLEMENTATION
#include "../../dtensor.h"
#include "fuzz_sim.h"
#include <math.h>


#define MAX_RANKS 64

/* ------------------------------------------------------------ element access */

static double get_el(const void *p, dt_dtype t, size_t i) {
    switch (t) {
    case DT_F32: return ((const float *)p)[i];
    case DT_F64: return ((const double *)p)[i];
    case DT_F16: return (double)dt__h2f(((const uint16_t *)p)[i]);
    case DT_BF16: return (double)dt__b2f(((const uint16_t *)p)[i]);
    case DT_I32: return ((const int32_t *)p)[i];
    case DT_I64: return (double)((const int64_t *)p)[i];
    case DT_U8: return ((const uint8_t *)p)[i];
    default: break; /* complex: not fuzzed here */
    }
    return 0;
}

static void set_el(void *p, dt_dtype t, size_t i, double v) {
    switch (t) {
    case DT_F32: ((float *)p)[i] = (float)v; break;
    case DT_F64: ((double *)p)[i] = v; break;
    case DT_F16: ((uint16_t *)p)[i] = dt__f2h((float)v); break;
    case DT_BF16: ((uint16_t *)p)[i] = dt__f2b((float)v); break;
    case DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case DT_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case DT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    default: break;
    }
}

/* a value exact in every dtype, distinct for global index g (U8 wraps; fine) */
static double pattern(int64_t g) { return (double)(g % 200) + 1; }

static void fill_local(dt_tensor *t, int distinct, double c) {
    const dt_tensor_desc *d = dt_tensor_get_desc(t);
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], idx[DT_MAX_DIMS];
    size_t n = dt_tensor_local_numel(t), i;
    void *p = dt_tensor_data(t);
    int k;
    dt_tensor_local_shape(t, ls);
    dt_tensor_local_offset(t, lo);
    for (k = 0; k < d->ndim; k++) idx[k] = 0;
    for (i = 0; i < n; i++) {
        int64_t g = 0;
        for (k = 0; k < d->ndim; k++) g = g * d->shape[k] + lo[k] + idx[k];
        set_el(p, d->dtype, i, distinct ? pattern(g) : c);
        for (k = d->ndim - 1; k >= 0; k--) { if (++idx[k] < ls[k]) break; idx[k] = 0; }
    }
}

/* ------------------------------------------------------------ decoding */

typedef struct sim_setup {
    sim_world w;
    dt_comm *comm;
    dt_mesh *mesh;
    int mnd, ms[DT_MAX_MESH_DIMS], n, r;
} sim_setup;

static void setup(fz *f, sim_setup *s) {
    dt_mesh_desc md;
    int i;
    memset(&md, 0, sizeof md);
    s->mnd = 1 + fz_below(f, DT_MAX_MESH_DIMS);
    s->n = 1;
    for (i = 0; i < s->mnd; i++) {
        s->ms[i] = 1 + fz_below(f, 8);
        if (s->n * s->ms[i] > MAX_RANKS) s->ms[i] = 1;
        s->n *= s->ms[i];
        md.shape[i] = s->ms[i];
    }
    md.ndim = s->mnd;
    s->r = fz_below(f, s->n);
    if (sim_comm_make(&s->w, s->r, s->n, &s->comm)) FZ_FAIL("sim comm: %s", dt_last_error());
    if (sim_mesh_make(&s->w, s->comm, &md, &s->mesh)) FZ_FAIL("mesh: %s", dt_last_error());
}

static void teardown(sim_setup *s) {
    dt_mesh_destroy(s->mesh);
    dt_comm_destroy(s->comm);
}

static dt_placement fz_placement(fz *f, int ndim, int partial_ok) {
    unsigned k = fz_u8(f) % 4;
    if ((k == 1 || k == 3) && ndim > 0) return dt_shard(fz_below(f, 2 * ndim) - ndim);
    if (k == 2 && partial_ok) return dt_partial((dt_reduce)fz_below(f, 4));
    return dt_replicate();
}

static int norm_dim(int d, int nd) { return d < 0 ? d + nd : d; }

/* the split rules of the Shard placements (fuzz_sim.h's fz_rule: chunk,
   balanced, sizes with zeros fitting the nesting, cyclic), all valid */
static void fz_rules(fz *f, sim_setup *s, int nd, const int64_t *shape, dt_placement *pl, int64_t (*store)[8]) {
    int i;
    for (i = 0; i < s->mnd; i++)
        if (pl[i].kind == DT_SHARD) fz_rule(f, nd, shape, s->mnd, s->ms, pl, i, store[i], 0);
}

/* ------------------------------------------------------------ redistribution */

/* ------------------------------------------------------------ strided storage */

/* A strided home for a tensor's local part: dims laid out in a random order
   (row-major, reversed = column-major, or rotated), each padded by 0..2, the
   innermost stride 1 or 2 (interleaved); every byte starts as 0xA5. */
typedef struct strided {
    int64_t ls[DT_MAX_DIMS], st[DT_MAX_DIMS];
    size_t n;          /* storage elements */
    unsigned char *buf;
} strided;

static void strided_make(fz *f, const dt_tensor *like, strided *x) {
    const dt_tensor_desc *d = dt_tensor_get_desc(like);
    int order[DT_MAX_DIMS], k, rot = fz_below(f, d->ndim ? d->ndim : 1), how = fz_below(f, 3);
    int64_t run = 1 + fz_below(f, 2);
    size_t es = dt_dtype_size(d->dtype);
    dt_tensor_local_shape(like, x->ls);
    for (k = 0; k < d->ndim; k++) /* order[0] is the innermost */
        order[k] = how == 0 ? d->ndim - 1 - k : how == 1 ? k : (d->ndim - 1 - k + rot) % d->ndim;
    for (k = 0; k < d->ndim; k++) {
        x->st[order[k]] = run;
        run *= x->ls[order[k]] + fz_below(f, 3);
    }
    x->n = (size_t)run;
    x->buf = (unsigned char *)malloc(x->n * es + 1);
    if (!x->buf) FZ_FAIL("out of memory");
    memset(x->buf, 0xA5, x->n * es + 1);
}

/* local element i (row-major order) <-> its place in the strided storage */
static size_t strided_at(const strided *x, int nd, size_t i) {
    size_t off = 0;
    int k;
    for (k = nd - 1; k >= 0; k--) {
        off += (i % (size_t)x->ls[k]) * (size_t)x->st[k];
        i /= (size_t)x->ls[k];
    }
    return off;
}

/* is every storage element outside the tensor's still 0xA5? */
static int strided_padding_intact(const strided *x, int nd, size_t numel, size_t es) {
    unsigned char *mark = (unsigned char *)calloc(x->n + 1, 1);
    size_t i, b;
    int ok = 1;
    if (!mark) FZ_FAIL("out of memory");
    for (i = 0; i < numel; i++) mark[strided_at(x, nd, i)] = 1;
    for (i = 0; i < x->n && ok; i++)
        if (!mark[i])
            for (b = 0; b < es; b++) ok &= x->buf[i * es + b] == 0xA5;
    free(mark);
    return ok && x->buf[x->n * es] == 0xA5;
}

static dt_tensor *strided_wrap(sim_setup *s, const dt_tensor *like, strided *x) {
    dt_tensor_desc d = *dt_tensor_get_desc(like);
    dt_tensor *t = NULL;
    d.local_shape = x->ls;
    d.local_strides = x->st;
    d.local_ghost = NULL;
    d.local_alloc = x->buf;
    d.local_alloc_bytes = (int64_t)(x->n * dt_dtype_size(d.dtype) + 1);
    if (dt_tensor_from_local(s->mesh, &d, x->buf, 0, &t)) FZ_FAIL("strided from_local: %s", dt_last_error());
    return t;
}

/* The same redistribution from a strided copy of t's shard, and into a
   strided *out: the same values as the contiguous run o, the same bytes
   received, the padding untouched. */
static void check_strided(fz *f, sim_setup *s, const dt_tensor *t, const dt_placement *dst, const dt_tensor *o,
                          uint64_t recv1) {
    const dt_tensor_desc *td = dt_tensor_get_desc(t);
    size_t es = dt_dtype_size(td->dtype), i, n = dt_tensor_local_numel(t), no = dt_tensor_local_numel(o);
    strided xs, xo;
    dt_tensor *ts, *os, *o2 = NULL;
    int64_t got[DT_MAX_DIMS];
    int k;
    strided_make(f, t, &xs);
    for (i = 0; i < n; i++) memcpy(xs.buf + strided_at(&xs, td->ndim, i) * es, (const char *)dt_tensor_data(t) + i * es, es);
    ts = strided_wrap(s, t, &xs);
    FZ_ASSERT(dt_tensor_local_strides(ts, got) == td->ndim, "local_strides ndim");
    for (k = 0; k < td->ndim; k++) FZ_ASSERT(got[k] == xs.st[k], "local_strides[%d] = %lld, gave %lld", k,
                                             (long long)got[k], (long long)xs.st[k]);
    s->w.recv = 0;
    if (dt_tensor_redistribute(ts, dst, &o2)) FZ_FAIL("strided source: %s", dt_last_error());
    FZ_ASSERT(s->w.recv == recv1, "strided source: received %llu bytes, contiguous %llu",
              (unsigned long long)s->w.recv, (unsigned long long)recv1);
    FZ_ASSERT(dt_tensor_local_numel(o2) == no && (!no || !memcmp(dt_tensor_data(o2), dt_tensor_data(o), no * es)),
              "strided source: a different result");
    FZ_ASSERT(strided_padding_intact(&xs, td->ndim, n, es), "strided source: its storage was written");
    strided_make(f, o, &xo);
    os = strided_wrap(s, o, &xo);
    s->w.recv = 0;
    if (dt_tensor_redistribute(fz_u8(f) & 1 ? ts : t, dst, &os)) FZ_FAIL("strided target: %s", dt_last_error());
    FZ_ASSERT(s->w.recv == recv1, "strided target: received %llu bytes, contiguous %llu",
              (unsigned long long)s->w.recv, (unsigned long long)recv1);
    for (i = 0; i < no; i++)
        FZ_ASSERT(!memcmp(xo.buf + strided_at(&xo, td->ndim, i) * es, (const char *)dt_tensor_data(o) + i * es, es),
                  "strided target: element %zu differs", i);
    FZ_ASSERT(strided_padding_intact(&xo, td->ndim, no, es), "strided target: padding written");
    dt_tensor_destroy(o2);
    dt_tensor_destroy(os);
    dt_tensor_destroy(ts);
    free(xs.buf);
    free(xo.buf);
}

static void check_redistribute(fz *f) {
    sim_setup s;
    dt_tensor_desc td;
    dt_placement dst[DT_MAX_MESH_DIMS];
    dt_tensor *t = NULL, *o = NULL;
    dt_comm_stats cs;
    int64_t sstore[DT_MAX_MESH_DIMS][8], skeep[DT_MAX_MESH_DIMS][8], dstore[DT_MAX_MESH_DIMS][8], dkeep[DT_MAX_MESH_DIMS][8];
    int i, d, src_partial = 0, dst_partial = 0, dst_psum = 0, shard_to_partial = 0, keeps_const = 1;
    int distinct;
    dt_status st;
    uint64_t recv1;

    setup(f, &s);
    memset(&td, 0, sizeof td);
    td.dtype = (dt_dtype)fz_below(f, DT_U8 + 1); /* the real dtypes (its value model's) */
    td.ndim = fz_below(f, 5);
    for (d = 0; d < td.ndim; d++) td.shape[d] = fz_below(f, 13);
    memset(dst, 0, sizeof dst);
    for (i = 0; i < s.mnd; i++) {
        td.placements[i] = fz_placement(f, td.ndim, 1);
        dst[i] = fz_placement(f, td.ndim, 1);
        if (td.placements[i].kind == DT_PARTIAL) {
            src_partial = 1;
            if (td.placements[i].reduce == DT_SUM || td.placements[i].reduce == DT_AVG) keeps_const = 0;
        }
        if (dst[i].kind == DT_PARTIAL) {
            dst_partial = 1;
            if (dst[i].reduce == DT_SUM) dst_psum = 1;
        }
        if (td.placements[i].kind == DT_SHARD && dst[i].kind == DT_PARTIAL) shard_to_partial = 1;
    }
    fz_rules(f, &s, td.ndim, td.shape, td.placements, sstore);
    fz_rules(f, &s, td.ndim, td.shape, dst, dstore);
    memcpy(dkeep, dstore, sizeof dkeep);
    memcpy(skeep, sstore, sizeof skeep);
    distinct = s.n == 1;
    if (getenv("FUZZ_VERBOSE")) {
        fprintf(stderr, "redistribute: rank %d of %d, mesh", s.r, s.n);
        for (i = 0; i < s.mnd; i++) fprintf(stderr, " %d", s.ms[i]);
        fprintf(stderr, ", %s[", dt_dtype_name(td.dtype));
        for (d = 0; d < td.ndim; d++) fprintf(stderr, "%s%lld", d ? "," : "", (long long)td.shape[d]);
        fprintf(stderr, "]");
        for (i = 0; i < s.mnd; i++)
            fprintf(stderr, " %d/%d/%d/split %d/block %lld", td.placements[i].kind, td.placements[i].dim,
                    td.placements[i].reduce, td.placements[i].split, (long long)td.placements[i].block);
        fprintf(stderr, " ->");
        for (i = 0; i < s.mnd; i++)
            fprintf(stderr, " %d/%d/%d/split %d/block %lld", dst[i].kind, dst[i].dim, dst[i].reduce, dst[i].split,
                    (long long)dst[i].block);
        for (i = 0; i < s.mnd; i++)
            if (dst[i].kind == DT_SHARD && dst[i].split == DT_SPLIT_SIZES) {
                int c;
                fprintf(stderr, " dst[%d] sizes", i);
                for (c = 0; c < s.ms[i]; c++) fprintf(stderr, " %lld", (long long)dst[i].sizes[c]);
            }
        fprintf(stderr, "\n");
        setenv("DTENSOR_LOG", "plan", 1);
    }
    if ((st = dt_tensor_empty(s.mesh, &td, &t))) FZ_FAIL("dt_tensor_empty: %s", dt_last_error());
    memset(sstore, 0x66, sizeof sstore); /* the tensor has its own copy of the sizes */
    fill_local(t, distinct, 7);
    memcpy(sstore, skeep, sizeof sstore); /* (for the reference below) */
    s.w.pat_n = dt_dtype_size(td.dtype);
    { double tmp[1]; set_el(tmp, td.dtype, 0, 7); memcpy(s.w.pat, tmp, sizeof s.w.pat); }

    s.w.recv = s.w.sent = s.w.calls = 0;
    dt_comm_reset_stats(s.comm);
    st = dt_tensor_redistribute(t, dst, &o);
    if (shard_to_partial) {
        FZ_ASSERT(st == DT_ERR_PLACEMENT, "Shard -> Partial: status %d, not DT_ERR_PLACEMENT", (int)st);
        FZ_ASSERT(o == NULL, "*out set on error");
        goto done;
    }
    FZ_ASSERT(st == DT_OK, "dt_tensor_redistribute: %s", dt_last_error());
    {
        const dt_tensor_desc *od = dt_tensor_get_desc(o);
        FZ_ASSERT(od->dtype == td.dtype && od->ndim == td.ndim, "out dtype/ndim");
        for (d = 0; d < td.ndim; d++) FZ_ASSERT(od->shape[d] == td.shape[d], "out shape");
        for (i = 0; i < DT_MAX_MESH_DIMS; i++) {
            dt_placement w = i < s.mnd ? dst[i] : dt_replicate();
            if (w.kind == DT_SHARD) w.dim = (int8_t)norm_dim(w.dim, td.ndim);
            FZ_ASSERT(od->placements[i].kind == w.kind, "out placement %d kind", i);
            if (w.kind == DT_SHARD) {
                const dt_placement *g = &od->placements[i];
                int c;
                FZ_ASSERT(g->dim == w.dim, "out placement %d dim", i);
                FZ_ASSERT(g->split == w.split, "out placement %d split %d, asked %d", i, g->split, w.split);
                if (w.split == DT_SPLIT_CYCLIC) FZ_ASSERT(g->block == w.block, "out placement %d block", i);
                if (w.split == DT_SPLIT_SIZES) {
                    FZ_ASSERT(g->sizes && g->sizes != w.sizes, "out placement %d: sizes not the tensor's own copy", i);
                    for (c = 0; c < s.ms[i]; c++) FZ_ASSERT(g->sizes[c] == w.sizes[c], "out placement %d sizes[%d]", i, c);
                }
            }
            if (w.kind == DT_PARTIAL) FZ_ASSERT(od->placements[i].reduce == w.reduce, "out placement %d reduce", i);
        }
    }
    /* bytes received against the lower bound */
    dt_comm_get_stats(s.comm, &cs);
    recv1 = s.w.recv;
    if (!src_partial) {
        ref_part sb, db;
        int coord[DT_MAX_MESH_DIMS];
        uint64_t es = dt_dtype_size(td.dtype), lb;
        ref_coord(s.mnd, s.ms, s.r, coord);
        ref_part_of(td.ndim, td.shape, s.mnd, s.ms, coord, td.placements, &sb);
        ref_part_of(td.ndim, td.shape, s.mnd, s.ms, coord, dst, &db);
        lb = (uint64_t)(ref_part_numel(&db) - ref_part_overlap(&db, &sb)) * es;
        ref_part_free(&sb);
        ref_part_free(&db);
        if (!dst_partial) {
            FZ_ASSERT(s.w.recv == lb, "rank %d of %d received %llu bytes, the lower bound is %llu",
                      s.r, s.n, (unsigned long long)s.w.recv, (unsigned long long)lb);
            FZ_ASSERT(cs.bytes_recv == lb, "dt_comm_stats: %llu bytes received, the lower bound is %llu",
                      (unsigned long long)cs.bytes_recv, (unsigned long long)lb);
        } else {
            FZ_ASSERT(s.w.recv <= lb, "to Partial: received %llu bytes, more than %llu",
                      (unsigned long long)s.w.recv, (unsigned long long)lb);
        }
    }
    /* values */
    {
        size_t n = dt_tensor_local_numel(o), j;
        const void *p = dt_tensor_data(o);
        if (distinct && !src_partial) {
            int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], idx[DT_MAX_DIMS];
            dt_tensor_local_shape(o, ls);
            dt_tensor_local_offset(o, lo);
            for (d = 0; d < td.ndim; d++) idx[d] = 0;
            for (j = 0; j < n; j++) {
                int64_t g = 0;
                double v = get_el(p, td.dtype, j), want;
                for (d = 0; d < td.ndim; d++) g = g * td.shape[d] + lo[d] + idx[d];
                want = pattern(g);
                FZ_ASSERT(v == want || (dst_psum && v == 0), "N=1: element %zu (global %lld) is %g, want %g", j,
                          (long long)g, v, want);
                for (d = td.ndim - 1; d >= 0; d--) { if (++idx[d] < ls[d]) break; idx[d] = 0; }
            }
        } else if (!distinct && keeps_const) {
            for (j = 0; j < n; j++) {
                double v = get_el(p, td.dtype, j);
                FZ_ASSERT(v == 7 || (dst_psum && v == 0), "constant 7: element %zu is %g (rank %d of %d)", j, v,
                          s.r, s.n);
            }
        }
    }
    /* *out reused: the same bytes again (the caller's dst sizes changed and put back: copied per call) */
    memset(dstore, 0x55, sizeof dstore);
    memcpy(dstore, dkeep, sizeof dstore);
    s.w.recv = 0;
    st = dt_tensor_redistribute(t, dst, &o);
    FZ_ASSERT(st == DT_OK, "redistribute into *out: %s", dt_last_error());
    FZ_ASSERT(s.w.recv == recv1, "into *out: received %llu bytes, first time %llu", (unsigned long long)s.w.recv,
              (unsigned long long)recv1);
    if (fz_u8(f) & 1) check_strided(f, &s, t, dst, o, recv1);
done:
    dt_tensor_destroy(o);
    dt_tensor_destroy(t);
    teardown(&s);
}

/* ------------------------------------------------------------ ops */

static dt_tensor *make_input(sim_setup *s, fz *f, dt_dtype t, int nd, const int64_t *shape, int partial_ok) {
    dt_tensor_desc td;
    dt_tensor *x = NULL;
    int i, d;
    memset(&td, 0, sizeof td);
    td.dtype = t;
    td.ndim = nd;
    for (d = 0; d < nd; d++) td.shape[d] = shape[d];
    int64_t store[DT_MAX_MESH_DIMS][8];
    for (i = 0; i < s->mnd; i++) td.placements[i] = fz_placement(f, nd, partial_ok);
    fz_rules(f, s, nd, td.shape, td.placements, store);
    if (dt_tensor_empty(s->mesh, &td, &x)) FZ_FAIL("input: %s", dt_last_error());
    if (getenv("FUZZ_VERBOSE")) {
        int c;
        fprintf(stderr, "input: mesh");
        for (i = 0; i < s->mnd; i++) fprintf(stderr, " %d", s->ms[i]);
        fprintf(stderr, ", %s[", dt_dtype_name(t));
        for (d = 0; d < nd; d++) fprintf(stderr, "%s%lld", d ? "," : "", (long long)shape[d]);
        fprintf(stderr, "]");
        for (i = 0; i < s->mnd; i++) {
            const dt_placement *p = &td.placements[i];
            fprintf(stderr, " %d/%d/%d/split %d/block %lld", p->kind, p->dim, p->reduce, p->split, (long long)p->block);
            if (p->kind == DT_SHARD && p->split == DT_SPLIT_SIZES)
                for (c = 0; c < s->ms[i]; c++) fprintf(stderr, "%s%lld", c ? "," : " sizes ", (long long)p->sizes[c]);
        }
        fprintf(stderr, "\n");
    }
    /* N = 1: distinct values; otherwise 1 (keeps exp/softmax finite) */
    fill_local(x, s->n == 1, 1);
    return x;
}

static void check_out_desc(sim_setup *s, const dt_tensor *o, dt_dtype t, int nd, const int64_t *shape) {
    const dt_tensor_desc *od = dt_tensor_get_desc(o);
    int i, d, coord[DT_MAX_MESH_DIMS];
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS];
    FZ_ASSERT(od->dtype == t, "op out dtype %d, want %d", (int)od->dtype, (int)t);
    FZ_ASSERT(od->ndim == nd, "op out ndim %d, want %d", od->ndim, nd);
    for (d = 0; d < nd; d++)
        FZ_ASSERT(od->shape[d] == shape[d], "op out shape[%d] = %lld, want %lld", d, (long long)od->shape[d],
                  (long long)shape[d]);
    for (i = 0; i < DT_MAX_MESH_DIMS; i++) {
        const dt_placement *p = &od->placements[i];
        if (i >= s->mnd) { FZ_ASSERT(p->kind == 0 && p->dim == 0 && p->reduce == 0, "placement past the mesh"); continue; }
        FZ_ASSERT(p->kind <= DT_PARTIAL, "placement kind %d", p->kind);
        if (p->kind == DT_SHARD) {
            FZ_ASSERT(p->dim >= 0 && p->dim < nd, "out Shard(%d) of a %d-d tensor", p->dim, nd);
            FZ_ASSERT(p->split <= DT_SPLIT_CYCLIC, "out split %d", p->split);
            FZ_ASSERT(p->split != DT_SPLIT_SIZES || p->sizes, "out sizes NULL");
            FZ_ASSERT(p->split != DT_SPLIT_CYCLIC || p->block > 0, "out block %lld", (long long)p->block);
        } else {
            FZ_ASSERT(p->split == 0 && p->block == 0 && p->sizes == NULL, "out: split fields on a non-Shard placement");
        }
        if (p->kind == DT_PARTIAL) FZ_ASSERT(p->reduce <= DT_MIN, "out Partial reduce %d", p->reduce);
    }
    ref_coord(s->mnd, s->ms, s->r, coord);
    FZ_ASSERT(dt_layout(s->mesh, od, coord, ls, lo) == DT_OK, "out desc fails dt_layout: %s", dt_last_error());
    {
        size_t n = 1;
        for (d = 0; d < nd; d++) n *= (size_t)ls[d];
        FZ_ASSERT(n == dt_tensor_local_numel(o), "out local numel");
    }
}

/* N = 1: the whole tensor is local; a real run */
static double val(const dt_tensor *x, size_t i) { return get_el(dt_tensor_data(x), dt_tensor_get_desc(x)->dtype, i); }

static void check_close(double got, double want, dt_dtype t, const char *what, size_t i) {
    double tol = (t == DT_F64 ? 1e-9 : 1e-3) * (1 + fabs(want));
    if (t != DT_F64 && fabs(want) > 3.4e38) { FZ_ASSERT(isinf(got), "N=1 %s: %g should overflow f32", what, got); return; }
    FZ_ASSERT(fabs(got - want) <= tol, "N=1 %s: element %zu is %.17g, serial %.17g", what, i, got, want);
}

static void check_ops(fz *f) {
    sim_setup s;
    dt_tensor *a = NULL, *b = NULL, *o = NULL;
    int64_t sa[DT_MAX_DIMS], sb[DT_MAX_DIMS], so[DT_MAX_DIMS];
    int na, nb, no, d, op, real;
    dt_dtype t;
    dt_status st;
    static const dt_dtype dts[] = {DT_F32, DT_F64, DT_F16, DT_BF16, DT_F32, DT_F64};

    setup(f, &s);
    op = fz_below(f, 10);
    if (getenv("FUZZ_VERBOSE")) fprintf(stderr, "op %d (rank %d of %d)\n", op, s.r, s.n);
    t = dts[fz_below(f, 6)];
    real = s.n == 1 && (t == DT_F32 || t == DT_F64);
    na = 1 + fz_below(f, 3);
    for (d = 0; d < na; d++) sa[d] = fz_below(f, 7);
    switch (op) {
    case 0: case 1: { /* add / mul, numpy broadcasting: b is a suffix of a with some dims 1 */
        nb = 1 + fz_below(f, na);
        for (d = 0; d < nb; d++) sb[d] = (fz_u8(f) & 1) ? 1 : sa[na - nb + d];
        if (fz_u8(f) % 4 == 0) { /* swap roles */
            int64_t tmp[DT_MAX_DIMS]; int tn = na;
            memcpy(tmp, sa, sizeof tmp); memcpy(sa, sb, sizeof tmp); memcpy(sb, tmp, sizeof tmp); na = nb; nb = tn;
        }
        no = na > nb ? na : nb;
        for (d = 0; d < no; d++) {
            int ia = d - (no - na), ib = d - (no - nb);
            int64_t x = ia >= 0 ? sa[ia] : 1, y = ib >= 0 ? sb[ib] : 1;
            so[d] = x == 1 ? y : x;
        }
        a = make_input(&s, f, t, na, sa, 1);
        b = make_input(&s, f, t, nb, sb, 1);
        st = op == 0 ? dt_add(a, b, &o) : dt_mul(a, b, &o);
        FZ_ASSERT(st == DT_OK, "add/mul: %s", dt_last_error());
        check_out_desc(&s, o, t, no, so);
        if (real) { /* values, with numpy broadcasting */
            int64_t idx[DT_MAX_DIMS] = {0};
            size_t n = dt_tensor_local_numel(o), j;
            for (j = 0; j < n; j++) {
                size_t ja = 0, jb = 0;
                for (d = 0; d < no; d++) {
                    int ia = d - (no - na), ib = d - (no - nb);
                    if (ia >= 0) ja = ja * (size_t)sa[ia] + (size_t)(sa[ia] == 1 ? 0 : idx[d]);
                    if (ib >= 0) jb = jb * (size_t)sb[ib] + (size_t)(sb[ib] == 1 ? 0 : idx[d]);
                }
                check_close(val(o, j), op == 0 ? val(a, ja) + val(b, jb) : val(a, ja) * val(b, jb), t, "add/mul", j);
                for (d = no - 1; d >= 0; d--) { if (++idx[d] < so[d]) break; idx[d] = 0; }
            }
        }
        break;
    }
    case 2: { /* matmul [m,k] x [k,n] (or batched / 1-D operands) */
        int64_t m = fz_below(f, 6), k = fz_below(f, 6), n = fz_below(f, 6);
        int form = fz_below(f, 3);
        if (form == 0) { na = 2; sa[0] = m; sa[1] = k; nb = 2; sb[0] = k; sb[1] = n; no = 2; so[0] = m; so[1] = n; }
        else if (form == 1) { na = 3; sa[0] = 2; sa[1] = m; sa[2] = k; nb = 2; sb[0] = k; sb[1] = n;
                              no = 3; so[0] = 2; so[1] = m; so[2] = n; }
        else { na = 1; sa[0] = k; nb = 2; sb[0] = k; sb[1] = n; no = 1; so[0] = n; }
        a = make_input(&s, f, t, na, sa, 1);
        b = make_input(&s, f, t, nb, sb, 1);
        st = dt_matmul(a, b, &o);
        FZ_ASSERT(st == DT_OK, "matmul: %s", dt_last_error());
        check_out_desc(&s, o, t, no, so);
        if (real && form == 0) {
            int64_t i, j, l;
            for (i = 0; i < m; i++)
                for (j = 0; j < n; j++) {
                    double acc = 0;
                    for (l = 0; l < k; l++) acc += val(a, (size_t)(i * k + l)) * val(b, (size_t)(l * n + j));
                    check_close(val(o, (size_t)(i * n + j)), acc, t, "matmul", (size_t)(i * n + j));
                }
        }
        break;
    }
    case 3: case 4: { /* sum / max over a dim list, keepdim */
        int dims[DT_MAX_DIMS], nd = fz_below(f, na + 1), keep = fz_u8(f) & 1, used[DT_MAX_DIMS] = {0}, j;
        for (j = 0; j < nd; j++) {
            int x = fz_below(f, na);
            while (used[x]) x = (x + 1) % na;
            used[x] = 1;
            dims[j] = (fz_u8(f) & 1) ? x - na : x;
        }
        if (nd == 0) for (j = 0; j < na; j++) used[j] = 1;
        if (op == 4) for (j = 0; j < na; j++) if (used[j] && sa[j] == 0) sa[j] = 1; /* max of nothing */
        a = make_input(&s, f, t, na, sa, op == 3);
        st = op == 3 ? dt_sum(a, nd, dims, keep, &o) : dt_max(a, nd, dims, keep, &o);
        FZ_ASSERT(st == DT_OK, "sum/max: %s", dt_last_error());
        no = 0;
        for (j = 0; j < na; j++) {
            if (!used[j]) so[no++] = sa[j];
            else if (keep) so[no++] = 1;
        }
        check_out_desc(&s, o, t, no, so);
        if (real && op == 3 && nd == 0) {
            double acc = 0;
            size_t n = dt_tensor_local_numel(a), i;
            for (i = 0; i < n; i++) acc += val(a, i);
            check_close(val(o, 0), acc, t, "sum", 0);
        }
        break;
    }
    case 5: { /* softmax along a dim */
        int dim = fz_below(f, 2 * na) - na;
        a = make_input(&s, f, t, na, sa, 0);
        st = dt_softmax(a, dim, &o);
        FZ_ASSERT(st == DT_OK, "softmax: %s", dt_last_error());
        check_out_desc(&s, o, t, na, sa);
        break;
    }
    case 6: { /* transpose */
        int d0 = fz_below(f, na), d1 = fz_below(f, na);
        int64_t tmp;
        a = make_input(&s, f, t, na, sa, 1);
        st = dt_transpose(a, d0, d1, &o);
        FZ_ASSERT(st == DT_OK, "transpose: %s", dt_last_error());
        memcpy(so, sa, sizeof so);
        tmp = so[d0]; so[d0] = so[d1]; so[d1] = tmp;
        check_out_desc(&s, o, t, na, so);
        break;
    }
    case 7: case 8: { /* neg, exp */
        a = make_input(&s, f, t, na, sa, 1);
        st = op == 7 ? dt_neg(a, &o) : dt_exp(a, &o);
        FZ_ASSERT(st == DT_OK, "neg/exp: %s", dt_last_error());
        check_out_desc(&s, o, t, na, sa);
        if (real) {
            size_t n = dt_tensor_local_numel(o), j;
            for (j = 0; j < n; j++)
                check_close(val(o, j), op == 7 ? -val(a, j) : exp(val(a, j)), t, "neg/exp", j);
        }
        break;
    }
    default: { /* reshape to the flat shape, or to [numel/last, last] */
        int64_t numel = 1;
        for (d = 0; d < na; d++) numel *= sa[d];
        a = make_input(&s, f, t, na, sa, 0);
        if (fz_u8(f) & 1 || na < 2 || sa[na - 1] == 0) { no = 1; so[0] = numel; }
        else { no = 2; so[1] = sa[na - 1]; so[0] = numel / sa[na - 1]; }
        st = dt_reshape(a, no, so, &o);
        FZ_ASSERT(st == DT_OK, "reshape: %s", dt_last_error());
        check_out_desc(&s, o, t, no, so);
        if (real) {
            size_t n = dt_tensor_local_numel(o), j;
            const dt_tensor_desc *od = dt_tensor_get_desc(o);
            int i, whole = 1;
            for (i = 0; i < s.mnd; i++) if (od->placements[i].kind) whole = 0;
            if (whole) for (j = 0; j < n; j++) check_close(val(o, j), val(a, j), t, "reshape", j);
        }
        break;
    }
    }
    dt_tensor_destroy(o);
    dt_tensor_destroy(a);
    dt_tensor_destroy(b);
    teardown(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    f.p = data; f.n = size; f.i = 0;
    if (!getenv("FUZZ_VERBOSE")) fz_quiet();
    if (size == 0) return 0;
    if (fz_u8(&f) < 160) check_redistribute(&f);
    else check_ops(&f);
    return 0;
}

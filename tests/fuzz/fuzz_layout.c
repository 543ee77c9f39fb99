/* tests/fuzz/fuzz_layout.c -- libFuzzer target: where every shard sits.

   Input bytes -> a mesh (1-4 dims, 1..16 ranks each, at most 1024 ranks), a
   global shape (0-8 dims, zero-size, uneven, sometimes large, sometimes near
   INT64_MAX: u8, or beside a 0, whose chunk arithmetic must not overflow) and placements
   (Shard(d) with negative d, the same dim sharded on several mesh dims,
   Replicate, Partial), each Shard with a split rule (fz_rule: torch.chunk,
   balanced, sizes with zeros, cyclic with a random block; nested in any
   combination), now and then a bad one. Checks, for every mesh coordinate:
   - dt_layout equals an independent layout of every rule (fuzz_sim.h's
     ref_part: per tensor dim the set of global indices held): the local
     shape is the set's size, the offset its first index (an empty
     torch.chunk part: at the end of its parent), and dt_layout_indices
     lists the set in increasing order;
   - the parts tile the global tensor: replicas (coordinates that differ
     only on non-Shard mesh dims) identical, distinct shards disjoint (every
     element marked once, or pairwise), their sizes adding up to the total;
   - a bad rule (sizes not adding up, negative, NULL, or not fitting every
     part the earlier mesh dims leave; block <= 0; split > 3) is
     DT_ERR_PLACEMENT from dt_layout and dt_tensor_empty, outputs untouched;
   - on a simulated rank r of N (dt_comm_custom), dt_tensor_empty's
     dt_tensor_local_shape / _offset / _numel / _indices agree, and the
     normalised desc has non-negative Shard dims and keeps each rule (its
     own copy of a sizes array: the caller's is overwritten before
     dt_tensor_local_indices).
   A second mode feeds garbage dt_tensor_desc / dt_mesh_desc fields (split
   fields included) to the public validation (dt_layout, dt_tensor_empty,
   dt_mesh_create): it must return a status, never crash, and what it
   accepts must be consistent. */
#define _GNU_SOURCE
#ifndef DTENSOR_NO_MPI
#define DTENSOR_NO_MPI
#endif
#define DTENSOR_IMPLEMENTATION
#include "../../dtensor.h"
#include "fuzz_sim.h"


#define MAX_MESH_RANKS 1024
#define MAX_PAIRWISE 256

static int64_t fz_dim(fz *f) {
    unsigned k = fz_u8(f);
    if (k < 200) return (int64_t)(k % 24);           /* small, incl. 0        */
    if (k < 250) return (int64_t)(fz_u16(f) % 1000); /* medium                */
    if (k < 255) return (int64_t)fz_u16(f) << (fz_u8(f) % 24); /* large (no allocation) */
    return INT64_MAX - (int64_t)(fz_u8(f) % 4);      /* huge                  */
}

#define IDX_BUDGET (1 << 20) /* global indices compared per input (dt_layout_indices) */

static int pure_chunk(const dt_tensor_desc *td, int mnd, int dim) {
    int i;
    for (i = 0; i < mnd; i++)
        if (td->placements[i].kind == DT_SHARD && td->placements[i].split != DT_SPLIT_CHUNK &&
            (td->placements[i].dim < 0 ? td->placements[i].dim + td->ndim : td->placements[i].dim) == dim)
            return 0;
    return 1;
}

/* dt_layout_indices (or the tensor's dt_tensor_local_indices) of one dim against the reference set */
static void check_indices(const dt_mesh *mesh, const dt_tensor_desc *td, const dt_tensor *t, const int *coord, int dim,
                          const ref_set *s, int64_t *budget) {
    int64_t *idx, i, k, j;
    dt_status st;
    if (s->len > *budget) return;
    *budget -= s->len;
    idx = (int64_t *)malloc((size_t)(s->len + 1) * sizeof *idx);
    if (!idx) FZ_FAIL("out of memory");
    idx[s->len] = -7;
    st = t ? dt_tensor_local_indices(t, dim, idx) : dt_layout_indices(mesh, td, coord, dim, idx);
    FZ_ASSERT(st == DT_OK, "%s dim %d: %s", t ? "dt_tensor_local_indices" : "dt_layout_indices", dim, dt_last_error());
    for (k = 0, j = 0; k < s->n; k++)
        for (i = s->iv[2 * k]; i < s->iv[2 * k + 1]; i++, j++)
            FZ_ASSERT(idx[j] == i, "%s dim %d: local position %lld is global %lld, the reference says %lld",
                      t ? "dt_tensor_local_indices" : "dt_layout_indices", dim, (long long)j, (long long)idx[j],
                      (long long)i);
    FZ_ASSERT(idx[s->len] == -7, "wrote past local_shape[%d] = %lld entries", dim, (long long)s->len);
    free(idx);
}

/* a rule's fields, as the normalised desc must keep them */
static void check_rule_kept(const dt_placement *got, const dt_placement *want, int k, int i) {
    int c;
    FZ_ASSERT(got->split == want->split, "placements[%d]: split %d, given %d", i, got->split, want->split);
    if (want->split == DT_SPLIT_CYCLIC) FZ_ASSERT(got->block == want->block, "placements[%d]: block", i);
    if (want->split == DT_SPLIT_SIZES) {
        FZ_ASSERT(got->sizes && got->sizes != want->sizes, "placements[%d]: sizes %p, not a copy of the caller's %p", i,
                  (const void *)got->sizes, (const void *)want->sizes);
        for (c = 0; c < k; c++) FZ_ASSERT(got->sizes[c] == want->sizes[c], "placements[%d]: sizes[%d]", i, c);
    }
}

static void check_layout(fz *f) {
    dt_mesh_desc md;
    dt_tensor_desc td;
    dt_comm *comm = NULL;
    dt_mesh *mesh = NULL;
    dt_tensor *t = NULL;
    sim_world w;
    int mnd, ms[DT_MAX_MESH_DIMS], nranks = 1, i, d, r, sharded[DT_MAX_MESH_DIMS];
    int coord[DT_MAX_MESH_DIMS];
    int64_t gnumel = 1, sum = 0, nz = 1, budget = IDX_BUDGET;
    int64_t store[DT_MAX_MESH_DIMS][16];
    int big = 0, valid = 1;
    ref_part *parts = NULL;
    int *shard_ids = NULL, nshard = 0;
    dt_status st;

    memset(&md, 0, sizeof md);
    memset(&td, 0, sizeof td);
    mnd = 1 + fz_below(f, DT_MAX_MESH_DIMS);
    for (i = 0; i < mnd; i++) {
        ms[i] = 1 + fz_below(f, 16);
        if (nranks * ms[i] > MAX_MESH_RANKS) ms[i] = 1;
        nranks *= ms[i];
        md.shape[i] = ms[i];
    }
    md.ndim = mnd;
    td.dtype = (dt_dtype)fz_below(f, DT_U8 + 1); /* the real dtypes */
    td.ndim = fz_below(f, 9);
    if (td.ndim > 4 && (fz_u8(f) & 1)) td.ndim -= 4; /* favour small ranks */
    for (d = 0; d < td.ndim; d++) td.shape[d] = fz_dim(f);
    for (i = 0; i < mnd; i++) {
        unsigned k = fz_u8(f) % 4;
        if (k == 1 || k == 3) {
            if (td.ndim == 0) continue;
            td.placements[i] = dt_shard(fz_below(f, 2 * td.ndim) - td.ndim);
            /* the split rule, given the earlier ones; a bad one now and then */
            if (valid) valid = fz_rule(f, td.ndim, td.shape, mnd, ms, td.placements, i, store[i], 1);
        } else if (k == 2) {
            td.placements[i] = dt_partial((dt_reduce)fz_below(f, 4));
        }
    }
    for (d = 0; d < td.ndim; d++) { /* big: the dims (0 counted as 1) may break the library's size rule */
        if (td.shape[d] > 1 && nz > INT64_MAX / 64 / td.shape[d]) big = 1;
        else if (td.shape[d] > 1) nz *= td.shape[d];
    }
    for (d = 0; d < td.ndim && !big; d++) gnumel *= td.shape[d];

    r = fz_below(f, nranks);
    if ((st = sim_comm_make(&w, r, nranks, &comm))) FZ_FAIL("sim comm: %s", dt_last_error());
    if ((st = sim_mesh_make(&w, comm, &md, &mesh))) FZ_FAIL("mesh: %s", dt_last_error());

    if (!valid) { /* a bad rule: refused by every call that takes it, outputs untouched */
        int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS];
        ref_coord(mnd, ms, dt_mesh_rank(mesh), coord);
        memset(ls, 0x5A, sizeof ls);
        memset(lo, 0x5A, sizeof lo);
        st = dt_layout(mesh, &td, coord, ls, lo);
        FZ_ASSERT(st == DT_ERR_PLACEMENT || (big && st == DT_ERR_SHAPE), "dt_layout took a bad rule: status %d: %s",
                  (int)st, dt_last_error());
        FZ_ASSERT(ls[0] == 0x5A5A5A5A5A5A5A5ALL && lo[0] == 0x5A5A5A5A5A5A5A5ALL, "dt_layout wrote its outputs");
        FZ_ASSERT(dt_last_error()[0] != 0, "no message");
        st = dt_tensor_empty(mesh, &td, &t);
        FZ_ASSERT(st == DT_ERR_PLACEMENT || (big && st == DT_ERR_SHAPE), "dt_tensor_empty took a bad rule: status %d: %s",
                  (int)st, dt_last_error());
        FZ_ASSERT(t == NULL, "*out set");
        goto done;
    }

    /* every coordinate: the library's layout against the reference */
    parts = (ref_part *)calloc((size_t)nranks, sizeof *parts);
    shard_ids = (int *)calloc((size_t)nranks, sizeof *shard_ids);
    if (!parts || !shard_ids) FZ_FAIL("out of memory");
    for (i = 0; i < mnd; i++) sharded[i] = td.placements[i].kind == DT_SHARD;
    for (r = 0; r < nranks; r++) {
        int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS];
        ref_part *b = &parts[r];
        ref_box cb;
        int base[DT_MAX_MESH_DIMS], b0 = 0;
        ref_coord(mnd, ms, r, coord);
        st = dt_layout(mesh, &td, coord, ls, lo);
        if (big && st == DT_ERR_SHAPE) goto done; /* overflowing global size: refused, fine */
        FZ_ASSERT(st == DT_OK, "dt_layout refused a valid desc: %s", dt_last_error());
        ref_part_of(td.ndim, td.shape, mnd, ms, coord, td.placements, b);
        ref_layout(td.ndim, td.shape, mnd, ms, coord, td.placements, &cb); /* torch.chunk boxes: empty parts' offsets */
        for (d = 0; d < td.ndim; d++) {
            const ref_set *sd = &b->s[d];
            FZ_ASSERT(ls[d] == sd->len, "rank %d dim %d: dt_layout local_shape %lld, reference %lld", r, d,
                      (long long)ls[d], (long long)sd->len);
            if (sd->len)
                FZ_ASSERT(lo[d] == sd->iv[0], "rank %d dim %d: dt_layout local_offset %lld, reference's first index %lld",
                          r, d, (long long)lo[d], (long long)sd->iv[0]);
            else if (pure_chunk(&td, mnd, d))
                FZ_ASSERT(lo[d] == cb.lo[d], "rank %d dim %d: empty torch.chunk part at %lld, reference %lld", r, d,
                          (long long)lo[d], (long long)cb.lo[d]);
            FZ_ASSERT(sd->n == 0 || (sd->iv[0] >= 0 && sd->iv[2 * sd->n - 1] <= td.shape[d]), "part outside");
            if (r < 64 || r == dt_mesh_rank(mesh)) check_indices(mesh, &td, NULL, coord, d, sd, &budget);
        }
        /* replicas: the coordinate with the non-Shard mesh dims at 0 has the same part */
        for (i = 0; i < mnd; i++) base[i] = sharded[i] ? coord[i] : 0;
        for (i = 0; i < mnd; i++) b0 = b0 * ms[i] + base[i];
        if (b0 != r) {
            FZ_ASSERT(b0 < r, "replica order");
            for (d = 0; d < td.ndim; d++)
                FZ_ASSERT(ref_set_same(&parts[b0].s[d], &b->s[d]), "replicas %d and %d differ on dim %d", b0, r, d);
        } else {
            shard_ids[nshard++] = r;
        }
    }
    /* distinct shards: disjoint, adding up to the global tensor */
    if (!big) {
        for (i = 0; i < nshard; i++) sum += ref_part_numel(&parts[shard_ids[i]]);
        FZ_ASSERT(sum == gnumel, "shards hold %lld elements, the tensor has %lld", (long long)sum, (long long)gnumel);
        if (gnumel <= (1 << 16)) { /* every element marked once */
            unsigned char *seen = (unsigned char *)calloc((size_t)gnumel + 1, 1);
            if (!seen) FZ_FAIL("out of memory");
            for (i = 0; i < nshard; i++) {
                const ref_part *p = &parts[shard_ids[i]];
                int64_t n = ref_part_numel(p), e, pos[DT_MAX_DIMS];
                for (d = 0; d < td.ndim; d++) pos[d] = 0;
                for (e = 0; e < n; e++) {
                    int64_t g = 0;
                    for (d = 0; d < td.ndim; d++) g = g * td.shape[d] + ref_set_at(&p->s[d], pos[d]);
                    FZ_ASSERT(!seen[g], "global element %lld in two shards (the second: rank %d)", (long long)g, shard_ids[i]);
                    seen[g] = 1;
                    for (d = td.ndim - 1; d >= 0; d--) { if (++pos[d] < p->s[d].len) break; pos[d] = 0; }
                }
            }
            free(seen);
        } else if (nshard <= MAX_PAIRWISE) {
            int j;
            for (i = 0; i < nshard; i++)
                for (j = 0; j < i; j++)
                    FZ_ASSERT(ref_part_overlap(&parts[shard_ids[i]], &parts[shard_ids[j]]) == 0, "shards %d and %d overlap",
                              shard_ids[i], shard_ids[j]);
        }
    }

    /* the public API on this simulated rank */
    {
        ref_part *b = &parts[dt_mesh_rank(mesh)];
        size_t bytes = big ? 0 : (size_t)ref_part_numel(b) * dt_dtype_size(td.dtype);
        if (!big && bytes <= ((size_t)1 << 22)) {
            int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS];
            const dt_tensor_desc *nd;
            st = dt_tensor_empty(mesh, &td, &t);
            FZ_ASSERT(st == DT_OK, "dt_tensor_empty: %s", dt_last_error());
            dt_tensor_local_shape(t, ls);
            dt_tensor_local_offset(t, lo);
            for (d = 0; d < td.ndim; d++) {
                FZ_ASSERT(ls[d] == b->s[d].len, "dt_tensor_local_shape dim %d", d);
                FZ_ASSERT(b->s[d].len == 0 || lo[d] == b->s[d].iv[0], "dt_tensor_local_offset dim %d", d);
            }
            FZ_ASSERT(dt_tensor_local_numel(t) == (size_t)ref_part_numel(b), "local numel");
            nd = dt_tensor_get_desc(t);
            for (i = 0; i < mnd; i++)
                if (nd->placements[i].kind == DT_SHARD) {
                    FZ_ASSERT(nd->placements[i].dim >= 0 && nd->placements[i].dim < td.ndim, "normalised dim");
                    check_rule_kept(&nd->placements[i], &td.placements[i], ms[i], i);
                }
            /* the tensor keeps its own sizes: the caller's arrays may change after the call */
            memset(store, 0x77, sizeof store);
            for (d = 0; d < td.ndim; d++) check_indices(mesh, &td, t, NULL, d, &b->s[d], &budget);
        }
    }
done:
    if (parts) for (r = 0; r < nranks; r++) ref_part_free(&parts[r]);
    free(parts);
    free(shard_ids);
    dt_tensor_destroy(t);
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
}

/* garbage descs through the public validation */
static void check_garbage(fz *f) {
    static const char *const names[] = {NULL, "", "dp", "tp", "dp", "a-name-that-is-far-too-long-for-a-mesh-dim-name-surely-0123456789"};
    dt_mesh_desc md;
    dt_tensor_desc td;
    dt_comm *comm = NULL;
    dt_mesh *mesh = NULL;
    dt_tensor *t = NULL;
    sim_world w;
    int n = 1 + fz_below(f, 64), r = fz_below(f, n), ranks[80], i, coord[DT_MAX_MESH_DIMS];
    int64_t gsizes[72];
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS];
    dt_status st;

    memset(&md, 0, sizeof md);
    md.ndim = (int)(fz_u8(f) % 7) - 1;
    for (i = 0; i < DT_MAX_MESH_DIMS; i++) {
        unsigned k = fz_u8(f);
        md.shape[i] = k < 240 ? (int)(k % 9) - 1 : (int)(fz_u16(f) | fz_u16(f) << 16);
        md.names[i] = names[fz_below(f, 6)];
    }
    if (fz_u8(f) & 1) {
        for (i = 0; i < 80; i++) ranks[i] = (int)(fz_u8(f) % 70) - 2;
        md.ranks = ranks;
    }
    /* the validation reads product(shape) ranks entries: keep that within the array */
    if (md.ranks) {
        long long prod = 1;
        for (i = 0; i < md.ndim && i < DT_MAX_MESH_DIMS && prod <= 80; i++) prod *= md.shape[i] > 0 ? md.shape[i] : 1;
        if (prod > 80) md.ranks = NULL;
    }
    if (sim_comm_make(&w, r, n, &comm)) FZ_FAIL("sim comm");
    st = sim_mesh_make(&w, comm, &md, &mesh);
    if (st != DT_OK) {
        FZ_ASSERT(mesh == NULL || 1, "");
        FZ_ASSERT(st == DT_ERR_MESH || st == DT_ERR_ARG, "dt_mesh_create: status %d: %s", (int)st, dt_last_error());
        /* a valid fallback mesh for the tensor part */
        memset(&md, 0, sizeof md);
        md.ndim = 1;
        md.shape[0] = n;
        mesh = NULL;
        if (sim_mesh_make(&w, comm, &md, &mesh)) FZ_FAIL("fallback mesh: %s", dt_last_error());
    } else {
        int in = dt_mesh_coordinate(mesh, coord), mr = dt_mesh_rank(mesh);
        FZ_ASSERT(in == (mr >= 0), "coordinate / rank disagree");
        FZ_ASSERT(dt_mesh_ndim(mesh) == md.ndim, "mesh ndim");
        if (in) for (i = 0; i < md.ndim; i++) FZ_ASSERT(coord[i] >= 0 && coord[i] < md.shape[i], "coordinate");
    }

    memset(&td, 0, sizeof td);
    td.dtype = (dt_dtype)((int)(fz_u8(f) % 10) - 1);
    td.ndim = (int)(fz_u8(f) % 12) - 2;
    for (i = 0; i < DT_MAX_DIMS; i++) {
        unsigned k = fz_u8(f);
        if (k < 200) td.shape[i] = (int64_t)(k % 20) - 2;
        else { uint64_t v = 0; int j; for (j = 0; j < 8; j++) v = v << 8 | fz_u8(f); td.shape[i] = (int64_t)v; }
    }
    for (i = 0; i < 64; i++) { /* sizes arrays: small, negative, huge */
        unsigned k = fz_u8(f);
        gsizes[i] = k < 220 ? (int64_t)(k % 24) - 2 : k < 250 ? INT64_MAX - (int64_t)(k % 4) : -(int64_t)((uint64_t)fz_u16(f) << 40);
    }
    for (i = 0; i < DT_MAX_MESH_DIMS; i++) {
        unsigned k;
        td.placements[i].kind = (uint8_t)(fz_u8(f) % 5);
        td.placements[i].dim = (int8_t)fz_u8(f);
        td.placements[i].reduce = (uint8_t)(fz_u8(f) % 6);
        k = fz_u8(f); /* the split fields: mostly plausible, sometimes garbage */
        if (k >= 128) {
            td.placements[i].split = (uint8_t)(k < 240 ? k % 5 : k);
            k = fz_u8(f);
            td.placements[i].block = k < 200 ? (int64_t)(k % 8) - 1 : k < 250 ? (int64_t)fz_u16(f) << (k % 40) : INT64_MIN + (int64_t)(k % 3);
            td.placements[i].sizes = (fz_u8(f) & 3) ? gsizes + fz_below(f, 8) : NULL;
        }
    }
    td.device = (fz_u8(f) % 8) == 0 ? (int)(fz_u8(f)) - 3 : 0;
    for (i = 0; i < DT_MAX_MESH_DIMS; i++) coord[i] = (int)(fz_u8(f) % 20) - 2;
    st = dt_layout(mesh, &td, coord, ls, lo);
    if (st == DT_OK) {
        /* accepted: the shape is bounded and the boxes are inside it */
        size_t numel = 1;
        int d;
        FZ_ASSERT(td.ndim >= 0 && td.ndim <= DT_MAX_DIMS, "accepted ndim %d", td.ndim);
        for (d = 0; d < td.ndim; d++) {
            FZ_ASSERT(lo[d] >= 0 && ls[d] >= 0 && lo[d] + ls[d] <= td.shape[d], "box outside the tensor");
            numel *= (size_t)ls[d];
        }
        if (numel * dt_dtype_size(td.dtype) <= ((size_t)1 << 22) && dt_mesh_rank(mesh) >= 0) {
            st = dt_tensor_empty(mesh, &td, &t);
            FZ_ASSERT(st == DT_OK || st == DT_ERR_NOMEM, "dt_tensor_empty after dt_layout accepted: %s", dt_last_error());
        }
    } else {
        FZ_ASSERT(st == DT_ERR_ARG || st == DT_ERR_SHAPE || st == DT_ERR_PLACEMENT || st == DT_ERR_DTYPE ||
                  st == DT_ERR_DEVICE, "dt_layout status %d: %s", (int)st, dt_last_error());
        FZ_ASSERT(dt_last_error()[0] != 0, "no message");
        /* dt_tensor_empty must refuse it too (unless only coord was wrong) */
        if (st != DT_ERR_ARG) {
            st = dt_tensor_empty(mesh, &td, &t);
            FZ_ASSERT(st != DT_OK, "dt_tensor_empty accepted a desc dt_layout refused");
        }
    }
    dt_tensor_destroy(t);
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    f.p = data; f.n = size; f.i = 0;
    fz_quiet();
    if (size == 0) return 0;
    if (fz_u8(&f) < 200) check_layout(&f);
    else check_garbage(&f);
    return 0;
}

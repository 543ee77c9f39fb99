/* tests/fuzz/fuzz_layout.c -- libFuzzer target: where every shard sits.

   Input bytes -> a mesh (1-4 dims, 1..16 ranks each, at most 1024 ranks), a
   global shape (0-8 dims, zero-size, uneven, sometimes large, sometimes near
   INT64_MAX: u8, or beside a 0, whose chunk arithmetic must not overflow) and placements
   (Shard(d) with negative d, the same dim sharded on several mesh dims,
   Replicate, Partial). Checks, for every mesh coordinate:
   - dt_layout equals an independent torch.chunk layout (ceil-div chunks,
     trailing parts empty and placed at the end of their parent);
   - the boxes tile the global box: inside it, replicas (coordinates that
     differ only on non-Shard mesh dims) identical, distinct shards pairwise
     disjoint, their sizes adding up to the global size;
   - on a simulated rank r of N (dt_comm_custom), dt_tensor_empty's
     dt_tensor_local_shape / _offset / _numel agree, and the normalised desc
     has non-negative Shard dims.
   A second mode feeds garbage dt_tensor_desc / dt_mesh_desc fields to the
   public validation (dt_layout, dt_tensor_empty, dt_mesh_create): it must
   return a status, never crash, and what it accepts must be consistent. */
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

static void check_layout(fz *f) {
    dt_mesh_desc md;
    dt_tensor_desc td;
    dt_comm *comm = NULL;
    dt_mesh *mesh = NULL;
    dt_tensor *t = NULL;
    sim_world w;
    int mnd, ms[DT_MAX_MESH_DIMS], nranks = 1, i, d, r, sharded[DT_MAX_MESH_DIMS];
    int coord[DT_MAX_MESH_DIMS];
    int64_t gnumel = 1, sum = 0, nz = 1;
    int big = 0;
    ref_box *boxes;
    int *shard_ids, nshard = 0;
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
    td.dtype = (dt_dtype)fz_below(f, DT_NUM_DTYPES);
    td.ndim = fz_below(f, 9);
    if (td.ndim > 4 && (fz_u8(f) & 1)) td.ndim -= 4; /* favour small ranks */
    for (d = 0; d < td.ndim; d++) td.shape[d] = fz_dim(f);
    for (i = 0; i < mnd; i++) {
        unsigned k = fz_u8(f) % 4;
        if (k == 1 || k == 3) {
            if (td.ndim == 0) continue;
            td.placements[i] = dt_shard(fz_below(f, 2 * td.ndim) - td.ndim);
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

    /* every coordinate: the library's layout against the reference */
    boxes = (ref_box *)calloc((size_t)nranks, sizeof *boxes);
    shard_ids = (int *)calloc((size_t)nranks, sizeof *shard_ids);
    for (i = 0; i < mnd; i++) sharded[i] = td.placements[i].kind == DT_SHARD;
    for (r = 0; r < nranks; r++) {
        int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS];
        ref_box *b = &boxes[r];
        int base[DT_MAX_MESH_DIMS], b0 = 0;
        ref_coord(mnd, ms, r, coord);
        st = dt_layout(mesh, &td, coord, ls, lo);
        if (big && st == DT_ERR_SHAPE) goto done; /* overflowing global size: refused, fine */
        FZ_ASSERT(st == DT_OK, "dt_layout refused a valid desc: %s", dt_last_error());
        ref_layout(td.ndim, td.shape, mnd, ms, coord, td.placements, b);
        for (d = 0; d < td.ndim; d++) {
            FZ_ASSERT(ls[d] == b->ext[d] && lo[d] == b->lo[d],
                      "rank %d dim %d: dt_layout [%lld +%lld), reference [%lld +%lld)", r, d, (long long)lo[d],
                      (long long)ls[d], (long long)b->lo[d], (long long)b->ext[d]);
            FZ_ASSERT(b->lo[d] >= 0 && b->ext[d] >= 0 && b->lo[d] + b->ext[d] <= td.shape[d], "box outside");
        }
        /* replicas: the coordinate with the non-Shard mesh dims at 0 has the same box */
        for (i = 0; i < mnd; i++) base[i] = sharded[i] ? coord[i] : 0;
        for (i = 0; i < mnd; i++) b0 = b0 * ms[i] + base[i];
        if (b0 != r) {
            FZ_ASSERT(b0 < r, "replica order");
            for (d = 0; d < td.ndim; d++)
                FZ_ASSERT(boxes[b0].lo[d] == b->lo[d] && boxes[b0].ext[d] == b->ext[d],
                          "replicas %d and %d differ on dim %d", b0, r, d);
        } else {
            shard_ids[nshard++] = r;
        }
    }
    /* distinct shards: disjoint, adding up to the global box */
    if (!big) {
        for (i = 0; i < nshard; i++) sum += ref_numel(td.ndim, &boxes[shard_ids[i]]);
        FZ_ASSERT(sum == gnumel, "shards hold %lld elements, the tensor has %lld", (long long)sum, (long long)gnumel);
        if (nshard <= MAX_PAIRWISE) {
            int j;
            for (i = 0; i < nshard; i++)
                for (j = 0; j < i; j++)
                    if (ref_numel(td.ndim, &boxes[shard_ids[i]]))
                        FZ_ASSERT(ref_overlap(td.ndim, &boxes[shard_ids[i]], &boxes[shard_ids[j]]) == 0,
                                  "shards %d and %d overlap", shard_ids[i], shard_ids[j]);
        }
    }

    /* the public API on this simulated rank */
    {
        ref_box *b = &boxes[dt_mesh_rank(mesh)];
        size_t bytes = (size_t)ref_numel(td.ndim, b) * dt_dtype_size(td.dtype);
        if (!big && bytes <= ((size_t)1 << 22)) {
            int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS];
            const dt_tensor_desc *nd;
            st = dt_tensor_empty(mesh, &td, &t);
            FZ_ASSERT(st == DT_OK, "dt_tensor_empty: %s", dt_last_error());
            dt_tensor_local_shape(t, ls);
            dt_tensor_local_offset(t, lo);
            for (d = 0; d < td.ndim; d++)
                FZ_ASSERT(ls[d] == b->ext[d] && lo[d] == b->lo[d], "dt_tensor_local_shape/offset dim %d", d);
            FZ_ASSERT(dt_tensor_local_numel(t) == (size_t)ref_numel(td.ndim, b), "local numel");
            nd = dt_tensor_get_desc(t);
            for (i = 0; i < mnd; i++)
                if (nd->placements[i].kind == DT_SHARD)
                    FZ_ASSERT(nd->placements[i].dim >= 0 && nd->placements[i].dim < td.ndim, "normalised dim");
        }
    }
done:
    free(boxes);
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
    for (i = 0; i < DT_MAX_MESH_DIMS; i++) {
        td.placements[i].kind = (uint8_t)(fz_u8(f) % 5);
        td.placements[i].dim = (int8_t)fz_u8(f);
        td.placements[i].reduce = (uint8_t)(fz_u8(f) % 6);
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

/* bench/ghosted.h -- what bench/halo.c and bench/stencil.c share: the
   closed-form field, the 5-point update as a dt_stencil_apply callback, and
   the hand-written MPI face exchange on a 2-D ghosted array they both time
   dtensor against (MPI_Type_vector faces, 4 Irecv + 4 Isend per exchange
   on a periodic Cartesian grid, a local copy where the neighbour is this
   rank). Include after bench/bench.h. */
#ifndef DT_BENCH_GHOSTED_H
#define DT_BENCH_GHOSTED_H
#include <string.h>

static inline double val(int64_t i, int64_t j, int64_t n) { return (double)((i * n + j) % 1021) * 0.25; }

/* the 5-point update u + r * (sum of the 4 neighbours - 4u) on the cells of b (dim 1 has stride 1);
   user: the double r */
static inline void five(const dt_stencil_block *b, void *user) {
    const double r = *(const double *)user;
    const int64_t s = b->in_stride[0];
    int64_t i, j;
    for (i = b->lo[0]; i < b->lo[0] + b->ext[0]; i++) {
        const double *c = (const double *)b->in + (i + b->width[0]) * s + b->lo[1] + b->width[1];
        double *o = (double *)b->out + i * b->out_stride[0] + b->lo[1];
        for (j = 0; j < b->ext[1]; j++) {
            double u = c[j];
            o[j] = u + r * (((c[j - s] + c[j + s]) + (c[j - 1] + c[j + 1])) - 4.0 * u);
        }
    }
}

/* a p0 x p1 mesh on comm and the F64 n x n [Shard(0), Shard(1)] descriptor both benches distribute */
static inline dt_mesh *grid_mesh(dt_comm *comm, int p0, int p1, int64_t n, dt_tensor_desc *td) {
    dt_mesh_desc md;
    dt_mesh *mesh;
    memset(&md, 0, sizeof md);
    md.ndim = 2; md.shape[0] = p0; md.shape[1] = p1;
    CHECK(dt_mesh_create(comm, &md, &mesh));
    memset(td, 0, sizeof *td);
    td->dtype = DT_F64; td->ndim = 2; td->shape[0] = td->shape[1] = n;
    td->placements[0] = dt_shard(0); td->placements[1] = dt_shard(1);
    return mesh;
}

/* ---------------------------------------------------------------- hand-written exchange */

typedef struct hand {
    int64_t lx, ly, w, gy;         /* local interior, ghost width, ghosted row length ly + 2w */
    int nb[2][2];                  /* neighbours: [dim][0 = lower, 1 = upper]                */
    MPI_Datatype row, col;         /* a face along dim 0 (w rows), along dim 1 (w columns)   */
    MPI_Comm cart;
    int me;
} hand;

static inline void hand_init(hand *h, MPI_Comm cart, int64_t lx, int64_t ly, int64_t w) {
    h->lx = lx; h->ly = ly; h->w = w; h->gy = ly + 2 * w;
    h->cart = cart;
    MPI_Comm_rank(cart, &h->me);
    MPI_Cart_shift(cart, 0, 1, &h->nb[0][0], &h->nb[0][1]);
    MPI_Cart_shift(cart, 1, 1, &h->nb[1][0], &h->nb[1][1]);
    MPI_Type_vector((int)w, (int)ly, (int)h->gy, MPI_DOUBLE, &h->row);
    MPI_Type_commit(&h->row);
    MPI_Type_vector((int)lx, (int)w, (int)h->gy, MPI_DOUBLE, &h->col);
    MPI_Type_commit(&h->col);
}

static inline void hand_free(hand *h) {
    MPI_Type_free(&h->row);
    MPI_Type_free(&h->col);
}

/* a ghosted array of h's size, (lx + 2w) x gy doubles, zero */
static inline double *hand_array(const hand *h) {
    return (double *)xmalloc((size_t)((h->lx + 2 * h->w) * h->gy) * sizeof(double));
}

#define AT(h, g, i, j) ((g) + ((i) + (h)->w) * (h)->gy + (j) + (h)->w)   /* interior coordinates */

/* a local periodic wrap when the neighbour is this rank */
static inline void hand_self(const hand *h, double *g, int d) {
    int64_t i, w = h->w;
    if (d == 0) {
        for (i = 0; i < w; i++) {
            memcpy(AT(h, g, -w + i, 0), AT(h, g, h->lx - w + i, 0), (size_t)h->ly * sizeof(double));
            memcpy(AT(h, g, h->lx + i, 0), AT(h, g, i, 0), (size_t)h->ly * sizeof(double));
        }
    } else {
        for (i = 0; i < h->lx; i++) {
            memcpy(AT(h, g, i, -w), AT(h, g, i, h->ly - w), (size_t)w * sizeof(double));
            memcpy(AT(h, g, i, h->ly), AT(h, g, i, 0), (size_t)w * sizeof(double));
        }
    }
}

/* fill the face ghosts of the ghosted array g (no corners) */
static inline void hand_exchange(const hand *h, double *g) {
    MPI_Request rq[8];
    MPI_Status st[8];  /* not MPI_STATUSES_IGNORE: gcc 12 -O2 -Wstringop-overflow false positive */
    int n = 0, d;
    int64_t w = h->w;
    for (d = 0; d < 2; d++) {
        MPI_Datatype t = d == 0 ? h->row : h->col;
        /* receive into the lower ghosts from the lower neighbour (its top face), and v.v. */
        double *rlo = d == 0 ? AT(h, g, -w, 0) : AT(h, g, 0, -w);
        double *rhi = d == 0 ? AT(h, g, h->lx, 0) : AT(h, g, 0, h->ly);
        double *slo = AT(h, g, 0, 0);
        double *shi = d == 0 ? AT(h, g, h->lx - w, 0) : AT(h, g, 0, h->ly - w);
        if (h->nb[d][0] == h->me && h->nb[d][1] == h->me) { hand_self(h, g, d); continue; }
        MPI_Irecv(rlo, 1, t, h->nb[d][0], 10 + 2 * d, h->cart, &rq[n++]);
        MPI_Irecv(rhi, 1, t, h->nb[d][1], 11 + 2 * d, h->cart, &rq[n++]);
        MPI_Isend(shi, 1, t, h->nb[d][1], 10 + 2 * d, h->cart, &rq[n++]);
        MPI_Isend(slo, 1, t, h->nb[d][0], 11 + 2 * d, h->cart, &rq[n++]);
    }
    MPI_Waitall(n, rq, st);
}
#endif

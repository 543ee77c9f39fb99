/* montecarlo.c -- pi and a random walk from sharded random tensors, with the
   same answer, bit for bit, at every rank count.

       make run-montecarlo NP=4                  (MPI=openmpi for Open MPI)
       make run-montecarlo NP=3 ARGS="--samples 33554432 --seed 7"

   1. pi: batches of B points, a tensor [B, 2] F64 (row = (x, y)) sharded by
      rows over a 1-D mesh of all ranks, filled by dt_tensor_rand. Each rank
      marks its own rows inside the quarter circle (x^2 + y^2 < 1) in an I64
      tensor [B, 2] with the same sharding -- column 0 the 0/1 mark, column 1
      a fingerprint of the row's bits (the top 32 bits of x plus those of y)
      -- and dt_sum over the rows gives a Partial(SUM) [2], made Replicate:
      the count and the fingerprint. Integer sums are exact in any order, so
      they cannot depend on how the points were split.
   2. a random walk: W walkers, T steps of +-1 (dt_randint_ in [0, 2), then
      2s - 1, dt_add into the positions, all I64 [W] Shard(0)); the sum of
      squared displacements (dt_mul, dt_sum) is exact, its mean ~ T.
   3. the check: dtensor.h's RNG gives element g of a random op the Philox
      words at offset + w*g whatever the sharding, so every number above is
      the same at 1, 2, 3, ... ranks. Rank 0 then repeats the whole run on a
      one-rank mesh (dt_comm_self) and compares (--no-check skips it).

   Everything but the "ranks" line is identical at every rank count:
       for n in 1 2 3 4; do make -s run-montecarlo NP=$n | grep -v ranks; done | uniq -c */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct result {
    int64_t inside, fingerprint;   /* points inside, sum of the top 32 bits of x and y */
    uint64_t x0, y0;               /* the bits of point 0                               */
    int64_t msd_sum, max_dist;     /* sum of squared displacements, max |position|      */
    uint64_t offset;               /* the RNG offset at the end                         */
} result;

typedef struct params { int64_t samples, batch, walkers, steps; uint64_t seed; } params;

static uint64_t bits(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static double dbl(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }

/* the value of a 0-d or 1-d tensor with any placement, on every rank */
static void fetch(dt_tensor *t, int64_t *v) {
    dt_placement rep[DT_MAX_MESH_DIMS];
    dt_tensor *r = NULL;
    memset(rep, 0, sizeof rep);                           /* [Replicate, ...] */
    DT_CHECK(dt_tensor_redistribute(t, rep, &r));            /* Partial(SUM) -> Replicate */
    DT_CHECK(dt_tensor_gather(r, v));
    dt_tensor_destroy(r);
}

static void run(dt_mesh *m, const params *p, result *res) {
    dt_tensor_desc dx = {0}, ds = {0};
    dt_tensor *x = NULL, *stats = NULL, *tot = NULL;
    int64_t done, shape[2], off[2], v[2];
    int dim0 = 0;
    memset(res, 0, sizeof *res);
    DT_CHECK(dt_manual_seed(m, p->seed));

    /* 1. pi */
    dx.dtype = DT_F64;  dx.ndim = 2;  dx.shape[0] = p->batch;  dx.shape[1] = 2;
    dx.placements[0] = dt_shard(0);                       /* rows split over the ranks */
    ds = dx;  ds.dtype = DT_I64;
    DT_CHECK(dt_tensor_empty(m, &ds, &stats));
    for (done = 0; done < p->samples; done += p->batch) {
        const double *xy;
        int64_t *st, i;
        DT_CHECK(dt_tensor_rand(m, &dx, &x));                /* *out reused after batch 1 */
        dt_tensor_local_shape(x, shape);
        dt_tensor_local_offset(x, off);
        xy = (const double *)dt_tensor_data(x);
        st = (int64_t *)dt_tensor_data(stats);
        for (i = 0; i < shape[0]; i++) {                  /* my rows only */
            double a = xy[2 * i], b = xy[2 * i + 1];
            st[2 * i] = a * a + b * b < 1.0;
            st[2 * i + 1] = (int64_t)(bits(a) >> 32) + (int64_t)(bits(b) >> 32);
        }
        if (done == 0) {                                  /* point 0, wherever it lives */
            dt_tensor *row0 = NULL;
            double p0[2];
            DT_CHECK(dt_narrow(x, 0, 0, 1, &row0));          /* [1, 2] */
            DT_CHECK(dt_tensor_gather(row0, p0));
            res->x0 = bits(p0[0]);  res->y0 = bits(p0[1]);
            dt_tensor_destroy(row0);
        }
        DT_CHECK(dt_sum(stats, 1, &dim0, 0, &tot));          /* [2], Partial(SUM) */
        fetch(tot, v);
        res->inside += v[0];
        res->fingerprint += v[1];
    }
    dt_tensor_destroy(tot);  tot = NULL;
    dt_tensor_destroy(stats);
    dt_tensor_destroy(x);

    /* 2. random walk */
    {
        dt_tensor_desc dw = {0};
        dt_tensor *pos = NULL, *step = NULL, *sq = NULL;
        int64_t t;
        dw.dtype = DT_I64;  dw.ndim = 1;  dw.shape[0] = p->walkers;
        dw.placements[0] = dt_shard(0);
        DT_CHECK(dt_tensor_zeros(m, &dw, &pos));
        DT_CHECK(dt_tensor_empty(m, &dw, &step));
        for (t = 0; t < p->steps; t++) {
            DT_CHECK(dt_randint_(step, 0, 2));               /* 0 or 1 */
            DT_CHECK(dt_scale(step, 2, &step));              /* in place: 0 or 2 */
            DT_CHECK(dt_shift(step, -1, &step));             /* -1 or +1 */
            DT_CHECK(dt_add(pos, step, &pos));               /* in place */
        }
        DT_CHECK(dt_mul(pos, pos, &sq));
        DT_CHECK(dt_sum(sq, 0, NULL, 0, &tot));              /* 0-d, Partial(SUM) */
        fetch(tot, v);
        res->msd_sum = v[0];
        dt_tensor_destroy(tot);  tot = NULL;
        DT_CHECK(dt_abs(pos, &sq));
        DT_CHECK(dt_max(sq, 0, NULL, 0, &tot));              /* 0-d, Partial(MAX) */
        fetch(tot, v);
        res->max_dist = v[0];
        dt_tensor_destroy(tot);
        dt_tensor_destroy(sq);
        dt_tensor_destroy(step);
        dt_tensor_destroy(pos);
    }
    {
        uint64_t seed;
        DT_CHECK(dt_rng_get_state(m, &seed, &res->offset));
    }
}

static int64_t arg(int argc, char **argv, const char *name, int64_t def) {
    int i;
    for (i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return strtoll(argv[i + 1], NULL, 0);
    return def;
}

int main(int argc, char **argv) {
    int rank, nranks, i, check = 1, same = 1;
    dt_comm *comm;  dt_mesh *mesh;
    dt_mesh_desc md = {0};
    params p;
    result r, r1;
    double t0, t1, pi;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    p.samples = arg(argc, argv, "--samples", 1 << 23);
    p.batch = arg(argc, argv, "--batch", 1 << 20);
    p.walkers = arg(argc, argv, "--walkers", 1 << 16);
    p.steps = arg(argc, argv, "--steps", 256);
    p.seed = (uint64_t)arg(argc, argv, "--seed", 2024);
    for (i = 1; i < argc; i++) if (strcmp(argv[i], "--no-check") == 0) check = 0;
    if (p.batch > p.samples) p.batch = p.samples;
    if (p.batch < 1 || p.samples % p.batch != 0 || p.walkers < 1 || p.steps < 0) {
        if (rank == 0) fprintf(stderr, "montecarlo: --samples must be a positive multiple of --batch\n");
        MPI_Finalize();
        return 2;
    }

    DT_CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    md.ndim = 1;  md.shape[0] = nranks;  md.names[0] = "x";
    DT_CHECK(dt_mesh_create(comm, &md, &mesh));
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    run(mesh, &p, &r);
    t1 = MPI_Wtime() - t0;

    if (check) {                                          /* the same on one rank */
        if (rank == 0) {
            dt_comm *self;  dt_mesh *one;
            dt_mesh_desc m1 = {0};
            m1.ndim = 1;  m1.shape[0] = 1;
            DT_CHECK(dt_comm_self(&self));
            DT_CHECK(dt_mesh_create(self, &m1, &one));
            run(one, &p, &r1);
            same = memcmp(&r, &r1, sizeof r) == 0;
            dt_mesh_destroy(one);
            dt_comm_destroy(self);
        }
        MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }

    pi = 4.0 * (double)r.inside / (double)p.samples;
    if (rank == 0) {
        printf("montecarlo: seed %llu, %lld points in batches of [%lld, 2] f64 Shard(0)\n",
               (unsigned long long)p.seed, (long long)p.samples, (long long)p.batch);
        printf("  inside the quarter circle: %lld\n", (long long)r.inside);
        printf("  pi ~ %.6f  (error %+.1e, standard error %.1e)\n", pi, pi - 3.14159265358979323846,
               4.0 * sqrt(pi / 4 * (1 - pi / 4) / (double)p.samples));
        printf("  point 0: (%.17g, %.17g)\n", dbl(r.x0), dbl(r.y0));
        printf("  fingerprint of every point's bits: 0x%016llx\n", (unsigned long long)r.fingerprint);
        printf("random walk: %lld walkers x %lld steps of +-1, i64 [%lld] Shard(0)\n", (long long)p.walkers,
               (long long)p.steps, (long long)p.walkers);
        printf("  sum of squared displacements %lld: mean %.4f (theory %lld), farthest %lld\n",
               (long long)r.msd_sum, (double)r.msd_sum / (double)p.walkers, (long long)p.steps,
               (long long)r.max_dist);
        printf("rng offset at the end: %llu\n", (unsigned long long)r.offset);
        printf("ranks: %d, %.3f s\n", nranks, t1);
        if (check) printf("identical to a one-rank run: %s\n", same ? "yes" : "NO");
        else printf("identical to a one-rank run: not checked (--no-check)\n");
    }
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
    MPI_Finalize();
    return same ? 0 : 1;
}

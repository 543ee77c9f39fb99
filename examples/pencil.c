/* pencil.c -- a distributed complex 3-D FFT on pencils: its redistributions
   timed against FFTW-MPI's transpose, the transform itself checked against
   its closed form, and a batch of transforms whose redistributions overlap
   the other fields' FFTs (dt_tensor_redistribute_begin / _end).

       make run-pencil NP=4 MPI=openmpi            (FFTW-MPI comparison)
       make run-pencil NP=4 ARGS="--n 192 --reps 7"
       make run-pencil NP=2                        (MPICH: dtensor only)
       make run-pencil NP=2 ARGS="--batch 8 --bn 64"

       ./pencil [--n N] [--n0 N0 --n1 N1 --n2 N2] [--reps R] [--batch B] [--bn NB]
         --n N         the array u[N,N,N] (default 128); --n0/--n1/--n2 one dim each
         --reps R      timed repetitions, the median reported (default 9)
         --batch B     the overlap part: B independent fields (default 4; 0: skip it)
         --bn NB       their size, NB x NB x NB c128 (default 48)

   A complex C128 array u[N0,N1,N2] (DT_C128: (re, im) pairs of doubles, the
   layout of C99 double _Complex, fftw_complex and Fortran
   complex(c_double_complex)), u[i,j,k] = ((i N1 + j) N2 + k) - (i + j + k) i,
   exact in F64, so every step is checked element by element on every rank.
   The steps, each a dt_tensor_redistribute:

     slab          1-D mesh (P):      [Shard(0)]           -> [Shard(1)]
                   the transpose of a slab-decomposed FFT (FFTW-MPI's own)
     slab->pencil  2-D mesh (pr x pc): [Shard(0), Shard(0)] -> [Shard(0), Shard(1)]
     pencil z->y   [Shard(0), Shard(1)] -> [Shard(0), Shard(2)]   (within mesh rows)
     pencil y->x   [Shard(0), Shard(2)] -> [Shard(1), Shard(2)]   (within mesh columns)

   (z-pencil: dim 2 whole on each rank; y: dim 1; x: dim 0 -- the 1-D FFTs
   run along the whole dim between the steps.) Each step is a transpose of
   an n0 x n1 matrix of `howmany`-element tuples over the ranks of one
   communicator (the whole mesh, or one mesh dim's), which is what
   fftw_mpi_plan_many_transpose does: FFTW gets the same communicator, the
   same block sizes (its default block ceil(n/P) is torch.chunk's), the same
   bytes per rank, and its own layout (rows of the matrix outermost, the
   tuple innermost: for slab and y->x the same layout as dtensor's, for the
   other two the batch dim moved inside). Its output is checked too. Times:
   median over --reps of the slowest rank, after a warm-up; ratio =
   dtensor / FFTW (< 1: dtensor faster). FFTW plans with FFTW_MEASURE,
   out of place, as dtensor is; it moves the complex elements as 2-double
   tuples.

   Then the transform: a plane wave plus a constant, u = 1 + exp(2 pi i (a i/N0
   + b j/N1 + c k/N2)), on z-pencils; 1-D FFTs along dim 2, the z->y
   redistribution, FFTs along dim 1, y->x, FFTs along dim 0 (the library's
   redistributions and this file's own mixed-radix FFT, any length). Its
   DFT is N0 N1 N2 at (0,0,0) and at (a,b,c), zero elsewhere: every element
   of every rank's x-pencil is checked.

   Then overlap (--batch B): B independent fields, each a wave of its own
   frequencies on an NB^3 grid, each transformed as above -- once with the
   blocking dt_tensor_redistribute (fill and FFTs along z, z->y, FFTs along
   y, y->x, FFTs along x, for one field after another) and once as a pipeline in which every z->y and y->x is begun
   (dt_tensor_redistribute_begin) as soon as its source is ready, stays in
   flight while the FFTs of other fields run (which call
   dt_tensor_redistribute_test every few lines to move it on), and is
   ended (dt_tensor_redistribute_end) just before its result is needed
   (see batch_overlapped). Printed: ms per batch, the median over --reps
   of the slowest rank, for both, with the time inside the redistributions
   (blocking) or inside begin and end (overlapped), and overlapped/blocking
   (< 1: the overlap saved time). Every element of every field is checked
   against its closed form in both runs, and the overlapped x-pencils must
   equal the blocking run's byte for byte. Where the message copies are
   made by the same cores that run the FFTs (ranks on one node, every core
   busy), expect no gain: overlap pays where something else moves the data
   (a network card, MPI's progress thread on an idle core).

   FFTW-MPI (Debian: libfftw3-mpi-dev) is built against Open MPI only, so the
   comparison is compiled with -DHAVE_FFTW_MPI (the Makefile does that for
   MPI=openmpi); without it the dtensor part runs and the comparison is
   reported as skipped. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_FFTW_MPI
#include <fftw3-mpi.h>
#endif

static int64_t N0, N1, N2;
static int reps;

static int64_t arg(int argc, char **argv, const char *name, int64_t def) {
    int i;
    for (i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return strtoll(argv[i + 1], NULL, 0);
    return def;
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* out of memory: every rank stops */
static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "pencil: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
        exit(1);
    }
    return p;
}

/* median over the reps of the slowest rank's time */
static double median(double *t, int n) {
    qsort(t, (size_t)n, sizeof(double), cmpd);
    return t[n / 2];
}

/* u's real and imaginary parts (C128 elements: p[0] + p[1] i) */
static double ure(int64_t i, int64_t j, int64_t k) { return (double)((i * N1 + j) * N2 + k); }
static double uim(int64_t i, int64_t j, int64_t k) { return -(double)(i + j + k); }

/* every element of t's local box == u */
static int check(const dt_tensor *t) {
    int64_t sh[3], off[3], i, j, k;
    const double *p = (const double *)dt_tensor_data(t);
    dt_tensor_local_shape(t, sh);
    dt_tensor_local_offset(t, off);
    for (i = 0; i < sh[0]; i++)
        for (j = 0; j < sh[1]; j++)
            for (k = 0; k < sh[2]; k++, p += 2)
                if (p[0] != ure(off[0] + i, off[1] + j, off[2] + k) || p[1] != uim(off[0] + i, off[1] + j, off[2] + k))
                    return 0;
    return 1;
}

/* each rank writes u into its own box */
static void fill(dt_tensor *t) {
    int64_t sh[3], off[3], i, j, k;
    double *p = (double *)dt_tensor_data(t);
    dt_tensor_local_shape(t, sh);
    dt_tensor_local_offset(t, off);
    for (i = 0; i < sh[0]; i++)
        for (j = 0; j < sh[1]; j++)
            for (k = 0; k < sh[2]; k++, p += 2) {
                p[0] = ure(off[0] + i, off[1] + j, off[2] + k);
                p[1] = uim(off[0] + i, off[1] + j, off[2] + k);
            }
}

/* ---- the transform ---- */

#define TWO_PI 6.28318530717958647692

/* out = the forward DFT (e^{-2 pi i jk/n}) of x[0], x[s], ..., x[(n-1)s]
   (complex pairs), mixed radix: n's smallest factor p splits it into p
   DFTs of n/p (recursively, into out), combined through the twiddles of the
   top length N (w[j] = e^{-2 pi i j/N}; this level's j-th is w[j N/n]) in
   tmp, n pairs that the recursion shares (the children finish first). A
   prime n is the plain sum. */
static void fft_rec(const double *x, int64_t n, int64_t s, double *out, const double *w, int64_t N, double *tmp) {
    int64_t p = 2, m, r, k, q;
    if (n == 1) {
        out[0] = x[0], out[1] = x[1];
        return;
    }
    while (n % p) p++;
    m = n / p;
    for (r = 0; r < p; r++) fft_rec(x + 2 * r * s, m, s * p, out + 2 * r * m, w, N, tmp);
    for (k = 0; k < m; k++)
        for (q = 0; q < p; q++) {
            int64_t j = k + q * m;
            double sr = 0, si = 0;
            for (r = 0; r < p; r++) {
                int64_t e = (r * j % n) * (N / n);
                double c = w[2 * e], sn = w[2 * e + 1], fr = out[2 * (r * m + k)], fi = out[2 * (r * m + k) + 1];
                sr += fr * c - fi * sn;
                si += fr * sn + fi * c;
            }
            tmp[2 * j] = sr, tmp[2 * j + 1] = si;
        }
    memcpy(out, tmp, (size_t)(2 * n) * sizeof(double));
}

/* the redistributions in flight (begun, not yet ended), in the order begun;
   secs: the time spent inside the begin and end calls */
typedef struct inflight { dt_tensor *t[2]; int n; double secs; } inflight;

/* moves their messages on: over MPI a message moves only inside MPI calls
   (unless the MPI runs a progress thread), so the FFTs call this between
   lines */
static void progress(const inflight *fl) {
    int k, done;
    for (k = 0; fl && k < fl->n; k++) DT_CHECK(dt_tensor_redistribute_test(fl->t[k], &done));
}

/* 1-D FFTs along tensor dim `dim`, whole on this rank, of t's local box;
   every 8 lines, progress(fly) (fly NULL: nothing in flight) */
static void fft_along(dt_tensor *t, int dim, const inflight *fly) {
    int64_t sh[3], n, stride = 1, outer = 1, o, in, e, lines = 0;
    double *p = (double *)dt_tensor_data(t), *line, *out, *tmp, *w;
    int d;
    dt_tensor_local_shape(t, sh);
    n = sh[dim];
    for (d = dim + 1; d < 3; d++) stride *= sh[d];
    for (d = 0; d < dim; d++) outer *= sh[d];
    if (n == 0 || stride == 0 || outer == 0) return;
    line = (double *)xcalloc((size_t)(8 * n), sizeof(double));
    out = line + 2 * n, tmp = out + 2 * n, w = tmp + 2 * n;
    for (e = 0; e < n; e++) w[2 * e] = cos(-TWO_PI * (double)e / (double)n), w[2 * e + 1] = sin(-TWO_PI * (double)e / (double)n);
    for (o = 0; o < outer; o++)
        for (in = 0; in < stride; in++) {
            double *base = p + 2 * (o * n * stride + in);
            for (e = 0; e < n; e++) line[2 * e] = base[2 * e * stride], line[2 * e + 1] = base[2 * e * stride + 1];
            fft_rec(line, n, 1, out, w, n, tmp);
            for (e = 0; e < n; e++) base[2 * e * stride] = out[2 * e], base[2 * e * stride + 1] = out[2 * e + 1];
            if (fly && ++lines % 8 == 0) progress(fly);
        }
    free(line);
}

/* a plane wave plus a constant on an n[0] x n[1] x n[2] grid, frequencies f[] */
typedef struct wave { int64_t n[3], f[3]; } wave;

/* u = 1 + exp(2 pi i (a i/n0 + b j/n1 + c k/n2)) into t's box */
static void fill_wave(dt_tensor *t, const wave *w) {
    int64_t sh[3], off[3], i, j, k;
    double *p = (double *)dt_tensor_data(t);
    dt_tensor_local_shape(t, sh);
    dt_tensor_local_offset(t, off);
    for (i = 0; i < sh[0]; i++)
        for (j = 0; j < sh[1]; j++)
            for (k = 0; k < sh[2]; k++, p += 2) {
                double ph = TWO_PI * ((double)((w->f[0] * (off[0] + i)) % w->n[0]) / (double)w->n[0] +
                                      (double)((w->f[1] * (off[1] + j)) % w->n[1]) / (double)w->n[1] +
                                      (double)((w->f[2] * (off[2] + k)) % w->n[2]) / (double)w->n[2]);
                p[0] = 1.0 + cos(ph);
                p[1] = sin(ph);
            }
}

/* the DFT of the wave: n0 n1 n2 at (0,0,0) and (a,b,c), 0 elsewhere, within a rounding bound */
static int check_wave(const dt_tensor *t, const wave *w) {
    int64_t sh[3], off[3], i, j, k;
    const double *p = (const double *)dt_tensor_data(t);
    double n = (double)(w->n[0] * w->n[1] * w->n[2]), tol = 1e-9 * n;
    dt_tensor_local_shape(t, sh);
    dt_tensor_local_offset(t, off);
    for (i = 0; i < sh[0]; i++)
        for (j = 0; j < sh[1]; j++)
            for (k = 0; k < sh[2]; k++, p += 2) {
                int64_t gi = off[0] + i, gj = off[1] + j, gk = off[2] + k;
                double want = ((gi == 0 && gj == 0 && gk == 0) ? n : 0.0) +
                              ((gi == w->f[0] && gj == w->f[1] && gk == w->f[2]) ? n : 0.0);
                if (fabs(p[0] - want) > tol || fabs(p[1]) > tol) return 0;
            }
    return 1;
}

typedef struct step {
    const char *name;
    double dt_ms, fftw_ms;   /* fftw_ms < 0: not run */
    int ok, fftw_ok;
    double mib;              /* MiB received by the busiest rank, dtensor */
} step;

/* time dt_tensor_redistribute(src -> pl) and check the result; *dst is reused */
static void time_dt(const dt_tensor *src, const dt_placement *pl, dt_tensor **dst, dt_comm *comm, step *s) {
    double *t = (double *)malloc((size_t)reps * sizeof(double));
    dt_comm_stats st;
    int r, ok;
    DT_CHECK(dt_tensor_redistribute(src, pl, dst)); /* warm-up: plan, buffers */
    ok = check(*dst);
    MPI_Allreduce(&ok, &s->ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    dt_comm_reset_stats(comm);
    DT_CHECK(dt_tensor_redistribute(src, pl, dst));
    dt_comm_get_stats(comm, &st);
    s->mib = (double)st.bytes_recv / 1048576.0;
    MPI_Allreduce(MPI_IN_PLACE, &s->mib, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (r = 0; r < reps; r++) {
        double t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        DT_CHECK(dt_tensor_redistribute(src, pl, dst));
        t[r] = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    s->dt_ms = 1e3 * median(t, reps);
    free(t);
}

/* FFTW-MPI: transpose an n0 x n1 matrix of howmany-tuples, rows distributed
   over `comm` in blocks of ceil(n0/P), into n1 x n0 (blocks of ceil(n1/P)).
   The input is (r*n1 + c)*howmany + h at row r, column c, tuple element h;
   the output is checked, then the transpose timed. */
static void time_fftw(MPI_Comm comm, int64_t n0, int64_t n1, int64_t howmany, step *s) {
#ifdef HAVE_FFTW_MPI
    ptrdiff_t ln0, l0s, ln1, l1s, alloc, b0, b1, i, j, h;
    int p, r, ok = 1;
    double *in, *out, *t = (double *)malloc((size_t)reps * sizeof(double));
    fftw_plan plan;
    ptrdiff_t n[2];
    MPI_Comm_size(comm, &p);
    b0 = (ptrdiff_t)((n0 + p - 1) / p);
    b1 = (ptrdiff_t)((n1 + p - 1) / p);
    n[0] = (ptrdiff_t)n0;
    n[1] = (ptrdiff_t)n1;
    alloc = fftw_mpi_local_size_many_transposed(2, n, (ptrdiff_t)howmany, b0, b1, comm, &ln0, &l0s, &ln1, &l1s);
    if (alloc < 1) alloc = 1;
    in = fftw_alloc_real((size_t)alloc);
    out = fftw_alloc_real((size_t)alloc);
    plan = fftw_mpi_plan_many_transpose(n[0], n[1], (ptrdiff_t)howmany, b0, b1, in, out, comm, FFTW_MEASURE);
    if (!plan) { fprintf(stderr, "pencil: fftw_mpi_plan_many_transpose failed\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
    for (i = 0; i < ln0; i++)   /* after planning: FFTW_MEASURE overwrites the arrays */
        for (j = 0; j < n[1]; j++)
            for (h = 0; h < howmany; h++) in[(i * n[1] + j) * howmany + h] = (double)(((l0s + i) * n[1] + j) * howmany + h);
    fftw_mpi_execute_r2r(plan, in, out);
    for (j = 0; j < ln1; j++)   /* out: n1 x n0, my rows l1s.. */
        for (i = 0; i < n[0]; i++)
            for (h = 0; h < howmany; h++)
                if (out[(j * n[0] + i) * howmany + h] != (double)((i * n[1] + l1s + j) * howmany + h)) ok = 0;
    MPI_Allreduce(&ok, &s->fftw_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    fftw_mpi_execute_r2r(plan, in, out); /* warm-up */
    for (r = 0; r < reps; r++) {
        double t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        fftw_mpi_execute_r2r(plan, in, out);
        t[r] = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    s->fftw_ms = 1e3 * median(t, reps);
    fftw_destroy_plan(plan);
    fftw_free(in);
    fftw_free(out);
    free(t);
#else
    (void)comm; (void)n0; (void)n1; (void)howmany;
    s->fftw_ms = -1;
    s->fftw_ok = 1;
#endif
}

/* the extent of part `r` of n split k ways (torch.chunk) */
static int64_t chunk(int64_t n, int k, int r) {
    int64_t c = (n + k - 1) / k, lo = r * c, hi = (r + 1) * c < n ? (r + 1) * c : n;
    return hi > lo ? hi - lo : 0;
}

/* ---- the batch: B independent fields, their redistributions overlapped ----
   Field f is a wave of its own frequencies on an NB^3 grid; its transform
   is three compute stages with a redistribution between each two:
     Z(f): fill z-pencil pz[f], FFTs along dim 2    zy(f): pz[f] -> py[f]
     Y(f): FFTs along dim 1 of py[f]                yx(f): py[f] -> px[f]
     X(f): FFTs along dim 0 of px[f]
   Blocking: Z, zy, Y, yx, X of field 0, then of field 1, ... with
   dt_tensor_redistribute. Overlapped: a software pipeline, iteration i
   doing Z(i), Y(i-1), X(i-2); each redistribution begun as soon as its
   source is ready and ended just before its result is needed, so it is in
   flight across three stages of other fields:
     Z(i)    [zy(i-1), yx(i-2) in flight]    end zy(i-1); begin zy(i)
     Y(i-1)  [zy(i), yx(i-2)]                end yx(i-2); begin yx(i-1)
     X(i-2)  [zy(i), yx(i-1)]
   A stage writes only its own field's tensors, none of which a
   redistribution in flight reads or writes (between begin and end the
   source is not written, the result not read). Every rank makes the same
   calls in the same order, as collectives need. */
typedef struct bfield {
    wave w;                    /* its wave */
    dt_tensor *pz, *py, *px;   /* its z-, y- and x-pencils */
    double *ref;               /* the blocking run's x-pencil (local bytes) */
} bfield;

typedef struct batch {
    int nb;
    bfield *fl;                /* nb fields */
    size_t bytes;              /* of one x-pencil */
    dt_placement zy[2], yx[2]; /* the y- and x-pencil placements */
} batch;

static void stage_z(batch *b, int f, const inflight *fl) {
    fill_wave(b->fl[f].pz, &b->fl[f].w);
    fft_along(b->fl[f].pz, 2, fl);
}

static void fly_begin(inflight *fl, const dt_tensor *src, const dt_placement *pl, dt_tensor **out) {
    double t0 = MPI_Wtime();
    DT_CHECK(dt_tensor_redistribute_begin(src, pl, out));
    fl->secs += MPI_Wtime() - t0;
    fl->t[fl->n++] = *out;
}

static void fly_end(inflight *fl, dt_tensor *out) {
    int k = 0;
    double t0 = MPI_Wtime();
    DT_CHECK(dt_tensor_redistribute_end(out));
    fl->secs += MPI_Wtime() - t0;
    while (k < fl->n && fl->t[k] != out) k++;
    for (; k + 1 < fl->n; k++) fl->t[k] = fl->t[k + 1];
    fl->n--;
}

/* the batch without overlap; *t_redist: the seconds spent in the redistributions */
static void batch_blocking(batch *b, double *t_redist) {
    int f;
    *t_redist = 0;
    for (f = 0; f < b->nb; f++) {
        double t0;
        stage_z(b, f, NULL);
        t0 = MPI_Wtime();
        DT_CHECK(dt_tensor_redistribute(b->fl[f].pz, b->zy, &b->fl[f].py));
        *t_redist += MPI_Wtime() - t0;
        fft_along(b->fl[f].py, 1, NULL);
        t0 = MPI_Wtime();
        DT_CHECK(dt_tensor_redistribute(b->fl[f].py, b->yx, &b->fl[f].px));
        *t_redist += MPI_Wtime() - t0;
        fft_along(b->fl[f].px, 0, NULL);
    }
}

/* the batch overlapped (the pipeline above); *t_calls: the seconds spent
   inside the begin and end calls */
static void batch_overlapped(batch *b, double *t_calls) {
    inflight fl;
    int i, n = b->nb;
    fl.n = 0;
    fl.secs = 0;
    for (i = 0; i < n + 2; i++) {
        if (i < n) stage_z(b, i, &fl);
        if (i >= 1 && i - 1 < n) fly_end(&fl, b->fl[i - 1].py);
        if (i < n) fly_begin(&fl, b->fl[i].pz, b->zy, &b->fl[i].py);
        if (i >= 1 && i - 1 < n) fft_along(b->fl[i - 1].py, 1, &fl);
        if (i >= 2) fly_end(&fl, b->fl[i - 2].px);
        if (i >= 1 && i - 1 < n) fly_begin(&fl, b->fl[i - 1].py, b->yx, &b->fl[i - 1].px);
        if (i >= 2) fft_along(b->fl[i - 2].px, 0, &fl);
    }
    *t_calls = fl.secs;
}

/* every field's every element against its closed form; with save, the
   x-pencils kept as the reference, else compared with it byte for byte */
static int batch_check(batch *b, int save) {
    int f, ok = 1;
    for (f = 0; f < b->nb; f++) {
        ok &= check_wave(b->fl[f].px, &b->fl[f].w);
        if (!b->bytes) continue;   /* (an empty x-pencil: more ranks than planes) */
        if (save) memcpy(b->fl[f].ref, dt_tensor_data(b->fl[f].px), b->bytes);
        else ok &= memcmp(b->fl[f].ref, dt_tensor_data(b->fl[f].px), b->bytes) == 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return ok;
}

/* runs both, a warm-up and `reps` timed runs each (alternating), every run
   checked; times: the median over the reps of the slowest rank, ms */
static int batch_run(dt_mesh *m2, int nb, int64_t n, double *ms_block, double *ms_redist, double *ms_ovl,
                     double *ms_calls) {
    batch b;
    dt_tensor_desc d;
    int f, r, ok = 1;
    int64_t sh[3];
    double *tb = (double *)xcalloc((size_t)(4 * reps), sizeof(double)), *tr = tb + reps, *to = tr + reps,
           *tc = to + reps;
    memset(&b, 0, sizeof b);
    memset(&d, 0, sizeof d);
    b.nb = nb;
    b.fl = (bfield *)xcalloc((size_t)nb, sizeof *b.fl);
    b.zy[0] = dt_shard(0), b.zy[1] = dt_shard(2);
    b.yx[0] = dt_shard(1), b.yx[1] = dt_shard(2);
    d.dtype = DT_C128, d.ndim = 3, d.shape[0] = d.shape[1] = d.shape[2] = n;
    d.placements[0] = dt_shard(0), d.placements[1] = dt_shard(1);
    for (f = 0; f < nb; f++) {   /* each field its own frequencies */
        b.fl[f].w.n[0] = b.fl[f].w.n[1] = b.fl[f].w.n[2] = n;
        b.fl[f].w.f[0] = (n / 3 + f) % n, b.fl[f].w.f[1] = (1 + 2 * f) % n, b.fl[f].w.f[2] = (n - 1 + 5 * f) % n;
        DT_CHECK(dt_tensor_empty(m2, &d, &b.fl[f].pz));
    }
    for (r = -1; r < reps; r++) {   /* r = -1: the warm-up (makes py, px; posts the first begins) */
        double t0, t_redist, t_calls;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        batch_blocking(&b, &t_redist);
        t0 = MPI_Wtime() - t0;
        if (r < 0) {   /* the x-pencils exist now: room for the reference */
            dt_tensor_local_shape(b.fl[0].px, sh);
            b.bytes = (size_t)(sh[0] * sh[1] * sh[2]) * 16;
            for (f = 0; f < nb; f++) b.fl[f].ref = (double *)xcalloc(b.bytes, 1);
        }
        ok &= batch_check(&b, 1);
        if (r >= 0) {
            tb[r] = t0, tr[r] = t_redist;
            MPI_Allreduce(MPI_IN_PLACE, &tb[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, &tr[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        for (f = 0; f < nb && b.bytes; f++) memset(dt_tensor_data(b.fl[f].px), 0, b.bytes);   /* nothing left over */
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        batch_overlapped(&b, &t_calls);
        t0 = MPI_Wtime() - t0;
        ok &= batch_check(&b, 0);
        if (r >= 0) {
            to[r] = t0, tc[r] = t_calls;
            MPI_Allreduce(MPI_IN_PLACE, &to[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, &tc[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
    }
    *ms_block = 1e3 * median(tb, reps);
    *ms_redist = 1e3 * median(tr, reps);
    *ms_ovl = 1e3 * median(to, reps);
    *ms_calls = 1e3 * median(tc, reps);
    for (f = 0; f < nb; f++) {
        dt_tensor_destroy(b.fl[f].pz), dt_tensor_destroy(b.fl[f].py), dt_tensor_destroy(b.fl[f].px);
        free(b.fl[f].ref);
    }
    free(b.fl);
    free(tb);
    return ok;
}

int main(int argc, char **argv) {
    int rank, nranks, pr = 1, pc, r, i, all_ok = 1, coord[2], fft_ok, nbatch, batch_ok = 1;
    int64_t bn;
    double t_fft, ms_block = 0, ms_redist = 0, ms_ovl = 0, ms_calls = 0;
    wave w0;
    dt_comm *comm;  dt_mesh *m1, *m2;
    dt_mesh_desc md = {0};
    dt_tensor_desc d = {0};
    dt_tensor *slab = NULL, *s1 = NULL, *p0 = NULL, *pz = NULL, *py = NULL, *px = NULL;
    dt_placement pl[2];
    MPI_Comm rowc, colc;  /* my mesh row (mesh dim 1 varies), my mesh column (dim 0 varies) */
    step st[4];
    MPI_Init(&argc, &argv);
#ifdef HAVE_FFTW_MPI
    fftw_mpi_init();
#endif
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    N0 = arg(argc, argv, "--n", 128);
    N1 = arg(argc, argv, "--n1", N0);
    N2 = arg(argc, argv, "--n2", N0);
    N0 = arg(argc, argv, "--n0", N0);
    reps = (int)arg(argc, argv, "--reps", 9);
    nbatch = (int)arg(argc, argv, "--batch", 4);
    bn = arg(argc, argv, "--bn", 48);
    if (N0 < 1 || N1 < 1 || N2 < 1 || reps < 1 || N0 * N1 * N2 > ((int64_t)1 << 40) || nbatch < 0 || nbatch > 4096 ||
        bn < 1 || bn > 4096) {
        if (rank == 0) fprintf(stderr, "pencil: bad sizes\n");
        MPI_Finalize();
        return 2;
    }
    for (r = 1; r * r <= nranks; r++) if (nranks % r == 0) pr = r;
    pc = nranks / pr;
    memset(st, 0, sizeof st);
    st[1].name = "slab->pencil  [S(0),S(0)] -> [S(0),S(1)]";
    st[2].name = "pencil z->y   [S(0),S(1)] -> [S(0),S(2)]";
    st[3].name = "pencil y->x   [S(0),S(2)] -> [S(1),S(2)]";
    st[0].name = "slab          [S(0)] -> [S(1)]";

    DT_CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    md.ndim = 1;  md.shape[0] = nranks;  md.names[0] = "p";
    DT_CHECK(dt_mesh_create(comm, &md, &m1));
    md.ndim = 2;  md.shape[0] = pr;  md.shape[1] = pc;  md.names[0] = "pr";  md.names[1] = "pc";
    DT_CHECK(dt_mesh_create(comm, &md, &m2));
    dt_mesh_coordinate(m2, coord);
    MPI_Comm_split(MPI_COMM_WORLD, coord[0], coord[1], &rowc);
    MPI_Comm_split(MPI_COMM_WORLD, coord[1], coord[0], &colc);

    /* the slab-decomposed array, filled from the closed form by each rank */
    d.dtype = DT_C128;  d.ndim = 3;  d.shape[0] = N0;  d.shape[1] = N1;  d.shape[2] = N2;
    d.placements[0] = dt_shard(0);
    DT_CHECK(dt_tensor_empty(m1, &d, &slab));
    fill(slab);
    /* 1. slab transpose on the 1-D mesh; FFTW: N0 x N1 matrix of N2-tuples */
    pl[0] = dt_shard(1);
    time_dt(slab, pl, &s1, comm, &st[0]);
    time_fftw(MPI_COMM_WORLD, N0, N1, 2 * N2, &st[0]); /* (a C128 element: 2 doubles) */

    /* 2. on the 2-D mesh: slabs as [S(0), S(0)] (dim 0 split over pr, each part
       over pc), to z-pencils.
       FFTW, in my mesh row: my row block of dim 0 (split over pc) x N1, N2-tuples */
    d.placements[0] = dt_shard(0);  d.placements[1] = dt_shard(0);
    DT_CHECK(dt_tensor_empty(m2, &d, &p0));
    fill(p0);
    pl[0] = dt_shard(0);  pl[1] = dt_shard(1);
    time_dt(p0, pl, &pz, comm, &st[1]);
    time_fftw(rowc, chunk(N0, pr, coord[0]), N1, 2 * N2, &st[1]);
    /* 3. z -> y pencils in my mesh row: dim 1 gathered, dim 2 split over pc.
       FFTW: N1 x N2 matrix of (my dim-0 block)-tuples */
    pl[0] = dt_shard(0);  pl[1] = dt_shard(2);
    time_dt(pz, pl, &py, comm, &st[2]);
    time_fftw(rowc, N1, N2, 2 * chunk(N0, pr, coord[0]), &st[2]);
    /* 4. y -> x pencils in my mesh column: dim 0 gathered, dim 1 split over pr.
       FFTW: N0 x N1 matrix of (my dim-2 block)-tuples */
    pl[0] = dt_shard(1);  pl[1] = dt_shard(2);
    time_dt(py, pl, &px, comm, &st[3]);
    time_fftw(colc, N0, N1, 2 * chunk(N2, pc, coord[1]), &st[3]);

    /* 5. the 3-D FFT of the wave: z-pencils, FFT dim 2; y-pencils, dim 1; x-pencils, dim 0 */
    w0.n[0] = N0, w0.n[1] = N1, w0.n[2] = N2;
    w0.f[0] = N0 / 3, w0.f[1] = N1 > 1 ? 1 : 0, w0.f[2] = N2 - 1;
    MPI_Barrier(MPI_COMM_WORLD);
    t_fft = MPI_Wtime();
    fill_wave(pz, &w0);
    fft_along(pz, 2, NULL);
    pl[0] = dt_shard(0);  pl[1] = dt_shard(2);
    DT_CHECK(dt_tensor_redistribute(pz, pl, &py));
    fft_along(py, 1, NULL);
    pl[0] = dt_shard(1);  pl[1] = dt_shard(2);
    DT_CHECK(dt_tensor_redistribute(py, pl, &px));
    fft_along(px, 0, NULL);
    t_fft = MPI_Wtime() - t_fft;
    MPI_Allreduce(MPI_IN_PLACE, &t_fft, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    fft_ok = check_wave(px, &w0);
    MPI_Allreduce(MPI_IN_PLACE, &fft_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    all_ok &= fft_ok;

    /* 6. a batch of independent fields, without and with overlap */
    if (nbatch > 0) batch_ok = batch_run(m2, nbatch, bn, &ms_block, &ms_redist, &ms_ovl, &ms_calls);
    all_ok &= batch_ok;

    if (rank == 0) {
        printf("pencil: u[%lld,%lld,%lld] c128 (%.1f MiB), %d ranks: 1-D mesh %d, 2-D mesh %dx%d; median of %d\n",
               (long long)N0, (long long)N1, (long long)N2, (double)(N0 * N1 * N2) * 16 / 1048576.0, nranks,
               nranks, pr, pc, reps);
        printf("  %-42s %8s %8s %10s %6s  %s\n", "step", "MiB/rank", "dt ms", "FFTW ms", "dt/FFTW", "check");
    }
    for (i = 0; i < 4; i++) {
        all_ok &= st[i].ok && st[i].fftw_ok;
        if (rank != 0) continue;
        if (st[i].fftw_ms >= 0)
            printf("  %-42s %8.2f %8.3f %10.3f %6.2f   %s\n", st[i].name, st[i].mib, st[i].dt_ms, st[i].fftw_ms,
                   st[i].dt_ms / st[i].fftw_ms, st[i].ok && st[i].fftw_ok ? "OK" : "FAILED");
        else
            printf("  %-42s %8.2f %8.3f %10s %6s   %s\n", st[i].name, st[i].mib, st[i].dt_ms, "-", "-",
                   st[i].ok ? "OK" : "FAILED");
    }
    if (rank == 0) {
        printf("  %-42s %8s %8.3f %10s %6s   %s\n", "fft3d         z, y, x pencils (plane wave)", "", 1e3 * t_fft, "-",
               "-", fft_ok ? "OK" : "FAILED");
        if (nbatch > 0) {
            printf("  overlap: %d fields u[%lld,%lld,%lld], each the 3-D FFT above; ms per batch (median, slowest rank)\n",
                   nbatch, (long long)bn, (long long)bn, (long long)bn);
            printf("    %-40s %8.3f ms  (in the redistributions: %.3f ms)  %s\n", "blocking", ms_block, ms_redist,
                   batch_ok ? "OK" : "FAILED");
            printf("    %-40s %8.3f ms  (in begin and end: %.3f ms)  %s\n", "overlapped (begin ... other FFTs ... end)",
                   ms_ovl, ms_calls, batch_ok ? "OK" : "FAILED");
            printf("    overlapped/blocking %.2f  (every element checked, and identical to the blocking run's)\n",
                   ms_ovl / ms_block);
        }
#ifdef HAVE_FFTW_MPI
        printf("  (dt/FFTW < 1: dtensor faster; both checked element by element)\n");
#else
        printf("  FFTW-MPI comparison skipped (built without -DHAVE_FFTW_MPI: Debian's FFTW-MPI is Open MPI only; "
               "make run-pencil MPI=openmpi)\n");
#endif
        printf("pencil: %s\n", all_ok ? "OK" : "FAILED");
    }
    dt_tensor_destroy(px);  dt_tensor_destroy(py);  dt_tensor_destroy(pz);  dt_tensor_destroy(p0);
    dt_tensor_destroy(s1);  dt_tensor_destroy(slab);
    dt_mesh_destroy(m2);  dt_mesh_destroy(m1);
    dt_comm_destroy(comm);
    MPI_Comm_free(&rowc);  MPI_Comm_free(&colc);
#ifdef HAVE_FFTW_MPI
    fftw_mpi_cleanup();
#endif
    MPI_Finalize();
    return all_ok ? 0 : 1;
}

/* heat2d.c -- the explicit heat equation on a 2-D mesh with halo exchange;
   a checkpoint at step k, a restart on a different rank count, and a final
   field bitwise identical to an uninterrupted run; output snapshots whose
   redistribution overlaps the next time step.

       make build/mpich/heat2d && mpiexec.mpich -n 4 ./build/mpich/heat2d
       mpicc -std=c99 -O2 -I. examples/heat2d.c -o heat2d -lblis -lm && mpiexec -n 4 ./heat2d

       ./heat2d [--nx NX] [--ny NY] [--steps S] [--at K] [--ckpt PATH] [--keep]
                [--out-every E] [--reps R]
       ./heat2d --save-at K --ckpt PATH [--nx NX --ny NY]     first invocation: run to K, save, stop
       ./heat2d --restart PATH [--steps S]                     second invocation: load, run on to S

         --out-every E  part (o): a snapshot every E steps (default 20; 0: skip part (o))
         --reps R       part (o): timed runs of each kind, the median reported (default 5)

   The field u is F64 [NX, NY] (default 512 x 384) on a near-square 2-D
   mesh of all ranks (P0 x P1, P0 >= P1, P0 * P1 = ranks) with placements
   [Shard(0), Shard(1)]. u0 is a closed form (a hot Gaussian plus a sine
   product) and every step is the explicit 5-point update

       u'[i,j] = u[i,j] + r * (((u[i-1,j] + u[i+1,j]) + (u[i,j-1] + u[i,j+1])) - 4 u[i,j]),  r = 0.2

   with the boundary PERIODIC along x (dim 0, rows wrap around) and fixed
   u = 0 along y (dim 1: DT_BOUNDARY_CONSTANT, fill 0, i.e. zero Dirichlet
   walls just outside columns 0 and NY-1).

   The code is written the way a stencil code already is before it meets
   the library, and keeps that shape: each rank OWNS its field, two
   ghosted arrays of (lx + 2) x (ly + 2) doubles (one ghost cell on every
   side; calloc'd here, not by the library), and updates it with its OWN
   loop over the interior (heat(), plain C on the arrays). The library is
   asked only for what is hard to write by hand, and each array is handed
   to it in place:
   - the layout: dt_layout gives this rank's lx x ly block and its global
     offset for [Shard(0), Shard(1)] on the mesh (uneven splits included);
   - the exchange: each array is wrapped once, dt_tensor_from_local(
     DT_BORROW, desc.local_ghost = {1, 1}) (`local` = the array's start),
     and given a halo of width 1 (no corners: a star stencil); then
     dt_halo_exchange writes the ghost cells in the array itself, no copy
     of the interior. A step is dt_halo_exchange_begin, the inner cells
     (the ones that read no ghost) while the messages fly, _end, the rim;
     then the two arrays swap;
   - checkpoints: dt_tensor_save_npy of the wrapped ghosted array itself
     (the interior is written; the ghost cells are not part of the tensor);
     a restart dt_tensor_load_npy's the file (a contiguous tensor on any
     mesh) and dt_tensor_redistribute's it INTO the run's own ghosted array
     (*out = the wrapped array, same placements: its interior is written in
     place, no loop of ours);
   - gathers: dt_tensor_gather of the wrapped array (staged through one
     contiguous copy) for the final comparison.

   One run, by default (what `make run-heat2d NP=4` shows):
     (a) S steps uninterrupted on the 2-D mesh (default S = 200); as it
         passes step K (default 120) it saves u (as
         above) with dt_tensor_save_npy to PATH (default
         /tmp/heat2d-<pid>.npy) and the step number, NX and NY to
         PATH.meta.npy (an I64 [3], also with dt_tensor_save_npy);
     (b) a restart: dt_tensor_load_npy of PATH onto a DIFFERENT mesh, a 1-D
         mesh over ranks 1 .. n-1 (n-1 ranks; rank 0 is outside it, gets
         0 x 0 arrays and follows along) with placement [Shard(1)] (column
         slabs instead of 2-D blocks), which runs steps K .. S;
     (o) output overlapped with compute (--out-every E, default 20): S steps
         from u0 again, writing a snapshot every E steps: the field
         redistributed to [Replicate, Shard(1)] (whole columns: every x of
         this rank's y block; one allgather along mesh dim 0) and kept in
         memory (where a real code would write it). Three kinds of run,
         --reps R each (in turn): no output; blocking (dt_tensor_redistribute
         after step s); overlapped (dt_tensor_redistribute_begin after step
         s, step s+1 computed -- it only reads step s's array, and calls
         dt_tensor_redistribute_test between bands of rows -- then
         dt_tensor_redistribute_end and the snapshot kept). Printed: ms/step
         of each (median, slowest rank) and overlapped/blocking (< 1: the
         overlap saved time); checked: the overlapped run's snapshots equal
         the blocking run's byte for byte, the last one (at step S when E
         divides S) equals (a)'s final field, and every run's final field
         is (a)'s. On ranks that share the cores doing the copies, expect
         little or no gain: the numbers are what was measured.
     (c) both final fields gathered, compared byte for byte (and by a 64-bit
         FNV-1a hash of their bytes, their sum and max): "identical: yes/no";
         the exit status is 1 if not, or if a check of (o) fails. The files
         are removed unless --keep.
   With one rank the restart runs on that rank as a 1-D mesh.

   Why bitwise identity holds: every cell's new value is computed from the
   same five operands in the same order, by the same code (heat(), for the
   inner cells and the rim alike), whichever rank owns the cell and
   wherever the shard edges are (a ghost holds the very double its owner
   holds; the .npy file holds the exact bytes). No
   reduction crosses ranks, so nothing depends on the partition. (The
   build must not contract a*b+c into FMAs differently in different loops:
   gcc -std=c99 on x86-64 does not contract, and without -march there is
   no FMA instruction anyway.)

   Checked with Open MPI (mpiexec.openmpi --allow-run-as-root --oversubscribe
   -n N ./build/openmpi/heat2d) at N = 1, 2, 3, 4, 6, 8 (meshes 1x1, 2x1,
   3x1, 2x2, 3x2, 4x2; restarts on 1, 1, 2, 3, 5, 7 ranks): "identical: yes"
   at every N, and the same final checksum at every N:
       fnv1a64 0xb745d8576ba957ed  sum 30883.112391442  max 9.45371958923945
       (512 x 384, 200 steps; MPICH at 1, 2, 4 ranks: the same; at 2 ranks
       under -fsanitize=address,undefined: the same, no report)
   Two invocations (run to 120 and save on 4 ranks, restart on 3):
       mpiexec.openmpi ... -n 4 ./build/openmpi/heat2d --save-at 120 --ckpt /tmp/h.npy
       mpiexec.openmpi ... -n 3 ./build/openmpi/heat2d --restart /tmp/h.npy
   prints the same final checksum. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int wrank, wsize;
static const double R = 0.2;
static const double PI = 3.14159265358979323846;

/* ---------------------------------------------------------------- the physics */

/* u0 at global cell (i, j) */
static double u0(int64_t i, int64_t j, int64_t nx, int64_t ny) {
    double x = (i + 0.5) / (double)nx, y = (j + 0.5) / (double)ny;
    double g = exp(-((x - 0.3) * (x - 0.3) + (y - 0.6) * (y - 0.6)) / 0.005);
    return 10.0 * g + sin(2 * PI * x) * sin(PI * y);
}

/* the 5-point update of interior cells [i0, i1) x [j0, j1): plain C on the
   ghosted arrays (row length gy = ly + 2; interior cell (i, j) sits at
   (i + 1) * gy + j + 1, its neighbours one row or one element away) */
static void heat(const double *u, double *v, int64_t gy, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    int64_t i, j;
    for (i = i0; i < i1; i++) {
        const double *c = u + (i + 1) * gy + 1;
        double *o = v + (i + 1) * gy + 1;
        for (j = j0; j < j1; j++) {
            double uc = c[j];
            o[j] = uc + R * (((c[j - gy] + c[j + gy]) + (c[j - 1] + c[j + 1])) - 4.0 * uc);
        }
    }
}

static dt_halo_desc heat_halo(void) {
    dt_halo_desc h;
    memset(&h, 0, sizeof h);
    h.width[0] = 1; h.boundary[0] = DT_BOUNDARY_PERIODIC;   /* x: wraps around    */
    h.width[1] = 1; h.boundary[1] = DT_BOUNDARY_CONSTANT;   /* y: u = 0 outside   */
    h.fill = 0.0;
    h.corners = 0;                                          /* a star stencil     */
    return h;
}

/* ---------------------------------------------------------------- the field */

/* The code's own storage: two ghosted arrays (lx + 2) x (ly + 2), one ghost
   cell on every side, each wrapped once as a tensor (DT_BORROW, local_ghost
   {1, 1}) that carries the halo plan. a[cur] is the current field. */
typedef struct field {
    double *a[2];
    dt_tensor *t[2];
    int64_t lx, ly, gy, off[2];
    int cur;
} field;

/* the arrays for [nx, ny] on mesh m with placements pl: the local shape and
   offset from dt_layout (a rank outside m: 0 x 0), wrapped, with halos.
   The interior is left for the caller to fill. */
static void field_make(field *f, dt_mesh *m, int64_t nx, int64_t ny, const dt_placement *pl) {
    static const int64_t ghost[2] = {1, 1};
    dt_tensor_desc td;
    dt_halo_desc h = heat_halo();
    int64_t ls[2] = {0, 0};
    int coord[DT_MAX_MESH_DIMS], k;
    memset(f, 0, sizeof *f);
    memset(&td, 0, sizeof td);
    td.dtype = DT_F64; td.ndim = 2; td.shape[0] = nx; td.shape[1] = ny;
    memcpy(td.placements, pl, DT_MAX_MESH_DIMS * sizeof *pl);
    if (dt_mesh_coordinate(m, coord)) DT_CHECK(dt_layout(m, &td, coord, ls, f->off));
    f->lx = ls[0]; f->ly = ls[1]; f->gy = ls[1] + 2;
    td.local_shape = ls;                     /* the interior, checked against the rule */
    td.local_ghost = ghost;                  /* `local` is the array's start */
    for (k = 0; k < 2; k++) {
        f->a[k] = (double *)calloc((size_t)((f->lx + 2) * f->gy), sizeof(double));
        if (!f->a[k]) { fprintf(stderr, "heat2d: out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
        td.local_alloc = f->a[k];            /* the allocation: the wrap checks it reads inside it */
        td.local_alloc_bytes = (int64_t)((size_t)((f->lx + 2) * f->gy) * sizeof(double));
        DT_CHECK(dt_tensor_from_local(m, &td, f->a[k], DT_BORROW, &f->t[k]));
        DT_CHECK(dt_tensor_set_halo(f->t[k], &h));   /* width 1 <= the ghost room: in place */
    }
}

static void field_free(field *f) {
    int k;
    for (k = 0; k < 2; k++) { dt_tensor_destroy(f->t[k]); free(f->a[k]); }
}

/* u0 on the 2-D mesh */
static void field_initial(field *f, dt_mesh *m, int64_t nx, int64_t ny) {
    dt_placement pl[DT_MAX_MESH_DIMS];
    int64_t i, j;
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(0); pl[1] = dt_shard(1);
    field_make(f, m, nx, ny, pl);
    for (i = 0; i < f->lx; i++)
        for (j = 0; j < f->ly; j++) f->a[0][(i + 1) * f->gy + j + 1] = u0(f->off[0] + i, f->off[1] + j, nx, ny);
}

/* one step: u's ghosts by the library, the update by our loop. Split phase:
   the cells whose stencil stays inside the interior are updated while the
   messages fly, then, once the ghosts are in, the rim (row 0 and row lx-1,
   then columns 0 and ly-1 of the rows between). fly: a redistribution in
   flight (NULL: none), moved on (dt_tensor_redistribute_test) after every
   band of 32 inner rows. */
static void step(field *f, dt_tensor *fly) {
    const double *u = f->a[f->cur];
    double *v = f->a[1 - f->cur];
    int64_t lx = f->lx, ly = f->ly, gy = f->gy, i;
    int done;
    DT_CHECK(dt_halo_exchange_begin(f->t[f->cur]));
    for (i = 1; i < lx - 1; i += 32) {                  /* inner cells: no ghost read */
        heat(u, v, gy, i, i + 32 < lx - 1 ? i + 32 : lx - 1, 1, ly - 1);
        if (fly) DT_CHECK(dt_tensor_redistribute_test(fly, &done));
    }
    DT_CHECK(dt_halo_exchange_end(f->t[f->cur]));
    if (lx > 0) heat(u, v, gy, 0, 1, 0, ly);            /* the rim */
    if (lx > 1) heat(u, v, gy, lx - 1, lx, 0, ly);
    if (lx > 2 && ly > 0) heat(u, v, gy, 1, lx - 1, 0, 1);
    if (lx > 2 && ly > 1) heat(u, v, gy, 1, lx - 1, ly - 1, ly);
    f->cur = 1 - f->cur;                                 /* swap */
}

static dt_tensor *field_tensor(const field *f) { return f->t[f->cur]; }

/* steps from f's current field. Returns the seconds per step (max over all
   ranks; a rank outside f's mesh follows along with empty arrays). */
static double run_steps(field *f, int steps) {
    double t0, t;
    int s;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (s = 0; s < steps; s++) step(f, NULL);
    t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return steps ? t / steps : 0.0;
}

/* a 2-D mesh of all ranks, P0 >= P1 */
static dt_mesh *mesh_2d(dt_comm *comm, int *p0, int *p1) {
    dt_mesh_desc md;
    dt_mesh *m;
    int a, b = 1;
    for (a = 1; a * a <= wsize; a++) if (wsize % a == 0) b = a;
    memset(&md, 0, sizeof md);
    md.ndim = 2; md.shape[0] = wsize / b; md.shape[1] = b;
    md.names[0] = "x"; md.names[1] = "y";
    DT_CHECK(dt_mesh_create(comm, &md, &m));
    *p0 = md.shape[0]; *p1 = md.shape[1];
    return m;
}

/* ---------------------------------------------------------------- checkpoints */

static void meta_path(const char *path, char *out, size_t n) { snprintf(out, n, "%s.meta.npy", path); }

/* the field (the ghosted array as wrapped: its interior) and [step, nx, ny]
   (I64, replicated) */
static void save(const field *f, const char *path, int64_t step) {
    dt_tensor_desc md;
    dt_tensor *meta;
    dt_tensor *u = field_tensor(f);
    const dt_tensor_desc *d = dt_tensor_get_desc(u);
    int64_t v[3];
    char mp[4096];
    v[0] = step; v[1] = d->shape[0]; v[2] = d->shape[1];
    memset(&md, 0, sizeof md);
    md.dtype = DT_I64; md.ndim = 1; md.shape[0] = 3;            /* placements: Replicate */
    DT_CHECK(dt_tensor_distribute(dt_tensor_mesh(u), &md, v, DT_SRC_ALL, &meta));
    DT_CHECK(dt_tensor_save_npy(u, path));
    meta_path(path, mp, sizeof mp);
    DT_CHECK(dt_tensor_save_npy(meta, mp));
    dt_tensor_destroy(meta);
}

/* the step, nx and ny saved with path (every rank of m: gathered) */
static void load_meta(dt_mesh *m, const char *path, int64_t *v) {
    dt_placement pl[DT_MAX_MESH_DIMS];
    dt_tensor *meta = NULL;
    char mp[4096];
    memset(pl, 0, sizeof pl);
    meta_path(path, mp, sizeof mp);
    DT_CHECK(dt_tensor_load_npy(m, mp, pl, &meta));
    DT_CHECK(dt_tensor_gather(meta, v));
    dt_tensor_destroy(meta);
}

/* the field saved at path onto mesh m with placements pl: loaded as a
   contiguous tensor, then redistributed into f's wrapped ghosted array (an
   existing *out of the same spec is written in place) */
static void field_load(field *f, dt_mesh *m, const char *path, int64_t nx, int64_t ny, const dt_placement *pl) {
    dt_tensor *c = NULL;
    int64_t ls[2] = {0, 0};
    dt_tensor *into;
    DT_CHECK(dt_tensor_load_npy(m, path, pl, &c));
    field_make(f, m, nx, ny, pl);
    dt_tensor_local_shape(c, ls);
    if (dt_mesh_rank(m) >= 0 && (dt_tensor_get_desc(c)->shape[0] != nx || dt_tensor_get_desc(c)->shape[1] != ny ||
                                 ls[0] != f->lx || ls[1] != f->ly)) {
        fprintf(stderr, "[%d] heat2d: %s is not %lld x %lld (or its shard is not %lld x %lld)\n", wrank, path,
                (long long)nx, (long long)ny, (long long)f->lx, (long long)f->ly);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    into = field_tensor(f);
    DT_CHECK(dt_tensor_redistribute(c, pl, &into));
    if (into != field_tensor(f)) {
        fprintf(stderr, "[%d] heat2d: the restart did not land in the ghosted array\n", wrank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    dt_tensor_destroy(c);
}

/* ---------------------------------------------------------------- checksums */

typedef struct summary { uint64_t hash; double sum, max; } summary;

static summary summarize(const double *a, size_t n) {
    summary s;
    const unsigned char *b = (const unsigned char *)a;
    size_t i;
    s.hash = 14695981039346656037ull;
    for (i = 0; i < n * sizeof *a; i++) { s.hash ^= b[i]; s.hash *= 1099511628211ull; }
    s.sum = 0; s.max = -HUGE_VAL;
    for (i = 0; i < n; i++) { s.sum += a[i]; if (a[i] > s.max) s.max = a[i]; }
    return s;
}

static void print_summary(const char *what, summary s) {
    printf("  %-22s fnv1a64 0x%016llx  sum %.15g  max %.15g\n", what, (unsigned long long)s.hash, s.sum, s.max);
}

/* ---------------------------------------------------------------- output, overlapped */

/* Every `every` steps the field is written out as a snapshot of whole
   columns: redistributed from [Shard(0), Shard(1)] to [Replicate, Shard(1)]
   (every x of this rank's block of y; one allgather along mesh dim 0) and
   kept, in hist (where a real code would write it to a file). Blocking:
   dt_tensor_redistribute after the step. Overlapped: begun after step s
   (the field of step s is u = a[cur], which step s+1 only reads: its halo
   exchange writes ghost cells, not elements, and its update writes the
   other array), moved on inside step s+1 (dt_tensor_redistribute_test
   between bands; the halo exchange's MPI calls move it too), ended after
   it and only then kept. */
typedef struct output {
    dt_placement pl[DT_MAX_MESH_DIMS]; /* [Replicate, Shard(1)] */
    dt_tensor *snap;                   /* the redistributed field (made once, reused) */
    char *hist;                        /* the snapshots written so far, local bytes */
    size_t bytes;                      /* of one */
    int n, cap;
} output;

static void output_write(output *o) {
    if (o->n < o->cap && o->bytes) memcpy(o->hist + (size_t)o->n * o->bytes, dt_tensor_data(o->snap), o->bytes);
    o->n++;
}

/* mode 0: no output, 1: blocking, 2: overlapped. Runs `steps` steps from u0
   on m; returns the seconds per step (the slowest rank); *ok &= the final
   field is `full` (the uninterrupted run's, gathered) */
static double run_output(dt_mesh *m, int64_t nx, int64_t ny, int steps, int every, int mode, output *o,
                         const double *full, int *ok) {
    field f;
    int s, pending = 0, same = 1;
    int64_t i;
    double t0, t;
    field_initial(&f, m, nx, ny);
    o->n = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (s = 1; s <= steps; s++) {
        step(&f, pending ? o->snap : NULL);
        if (pending) {                                   /* the one begun after the step before */
            DT_CHECK(dt_tensor_redistribute_end(o->snap));
            output_write(o);
            pending = 0;
        }
        if (mode == 0 || s % every) continue;
        if (mode == 1) {
            DT_CHECK(dt_tensor_redistribute(field_tensor(&f), o->pl, &o->snap));
            output_write(o);
        } else {
            DT_CHECK(dt_tensor_redistribute_begin(field_tensor(&f), o->pl, &o->snap));
            pending = 1;
        }
    }
    if (pending) {                                       /* after the last step: nothing left to overlap */
        DT_CHECK(dt_tensor_redistribute_end(o->snap));
        output_write(o);
    }
    t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (i = 0; i < f.lx; i++)
        same &= memcmp(f.a[f.cur] + (i + 1) * f.gy + 1, full + (f.off[0] + i) * ny + f.off[1],
                       (size_t)f.ly * sizeof(double)) == 0;
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    *ok &= same;
    field_free(&f);
    return steps ? t / steps : 0.0;
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the three modes, `reps` timed runs each (in turn); ms[mode]:
   the median of the ms per step. Checks: every run's final field is
   `full`; the overlapped run's snapshots are the blocking run's, byte for
   byte; and the last one, when taken after the last step, is `full`'s
   columns. Returns 1 when all hold. */
static int output_runs(dt_mesh *m, int64_t nx, int64_t ny, int steps, int every, int reps, const double *full,
                       double *ms, int *nsnap) {
    output o;
    dt_tensor_desc td;
    int coord[DT_MAX_MESH_DIMS], r, k, ok = 1, same = 1;
    int64_t ls[2] = {0, 0}, off[2] = {0, 0};
    double *t = (double *)malloc((size_t)(3 * reps) * sizeof *t);
    char *ref;
    memset(&o, 0, sizeof o);
    memset(&td, 0, sizeof td);
    o.pl[0] = dt_replicate(); o.pl[1] = dt_shard(1);
    td.dtype = DT_F64; td.ndim = 2; td.shape[0] = nx; td.shape[1] = ny;
    memcpy(td.placements, o.pl, sizeof o.pl);
    if (dt_mesh_coordinate(m, coord)) DT_CHECK(dt_layout(m, &td, coord, ls, off));
    o.bytes = (size_t)(ls[0] * ls[1]) * sizeof(double);
    o.cap = steps / every;
    o.hist = (char *)malloc((size_t)o.cap * o.bytes + 1);
    ref = (char *)malloc((size_t)o.cap * o.bytes + 1);
    if (!t || !o.hist || !ref) { fprintf(stderr, "heat2d: out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 1); exit(1); }
    for (r = 0; r < reps; r++)
        for (k = 0; k < 3; k++) {
            t[k * reps + r] = run_output(m, nx, ny, steps, every, k, &o, full, &ok);
            if (k == 1) memcpy(ref, o.hist, (size_t)o.cap * o.bytes);
            if (k == 2) same &= o.n == o.cap && memcmp(ref, o.hist, (size_t)o.cap * o.bytes) == 0;
        }
    if (o.cap && steps % every == 0) {                   /* the last snapshot: the final field's columns */
        int64_t i;
        for (i = 0; i < ls[0]; i++)
            same &= memcmp(o.hist + (size_t)(o.cap - 1) * o.bytes + (size_t)(i * ls[1]) * sizeof(double),
                           full + (off[0] + i) * ny + off[1], (size_t)ls[1] * sizeof(double)) == 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    for (k = 0; k < 3; k++) {
        qsort(t + k * reps, (size_t)reps, sizeof *t, cmpd);
        ms[k] = 1e3 * t[k * reps + reps / 2];
    }
    *nsnap = o.cap;
    dt_tensor_destroy(o.snap);
    free(o.hist); free(ref); free(t);
    return ok && same;
}

/* ---------------------------------------------------------------- main */

static void usage(void) {
    if (wrank == 0)
        fprintf(stderr, "usage: heat2d [--nx N] [--ny N] [--steps S] [--at K] [--ckpt PATH] [--keep]\n"
                        "              [--out-every K] [--reps R]\n"
                        "       heat2d --save-at K --ckpt PATH [--nx N] [--ny N]\n"
                        "       heat2d --restart PATH [--steps S]\n");
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv) {
    int64_t nx = 512, ny = 384, n;
    int steps = 200, at = 120, save_at = -1, keep = 0, p0, p1, i, ok = 1, every = 20, reps = 5, out_ok = 1, nsnap = 0;
    double out_ms[3] = {0, 0, 0};
    const char *ckpt = NULL, *restart = NULL;
    char defpath[256];
    dt_comm *comm;
    dt_mesh *m2;
    field f;
    double *full;
    double t_a;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    for (i = 1; i < argc; i++) {
        int more = i + 1 < argc;
        if (!strcmp(argv[i], "--nx") && more) nx = strtoll(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--ny") && more) ny = strtoll(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--steps") && more) steps = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--at") && more) at = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--save-at") && more) save_at = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--ckpt") && more) ckpt = argv[++i];
        else if (!strcmp(argv[i], "--restart") && more) restart = argv[++i];
        else if (!strcmp(argv[i], "--keep")) keep = 1;
        else if (!strcmp(argv[i], "--out-every") && more) every = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reps") && more) reps = (int)strtol(argv[++i], NULL, 10);
        else usage();
    }
    if (nx < 1 || ny < 1 || steps < 0 || at < 0 || at > steps || (save_at >= 0 && !ckpt) || every < 0 ||
        reps < 1)
        usage();
    /* one path for every rank: rank 0's pid */
    {
        long pid = (long)getpid();
        MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        snprintf(defpath, sizeof defpath, "/tmp/heat2d-%ld.npy", pid);
    }
    if (!ckpt) ckpt = defpath;

    DT_CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    m2 = mesh_2d(comm, &p0, &p1);

    /* ---- the two-invocation modes ---- */
    if (save_at >= 0 || restart) {
        int64_t meta[3] = {0, nx, ny}, from = 0;
        double t;
        summary s;
        if (restart) {
            dt_placement pl[DT_MAX_MESH_DIMS];
            load_meta(m2, restart, meta);
            from = meta[0]; nx = meta[1]; ny = meta[2];
            if (from > steps) { if (!wrank) fprintf(stderr, "heat2d: the checkpoint is at step %lld > --steps %d\n",
                                                    (long long)from, steps); MPI_Abort(MPI_COMM_WORLD, 2); }
            memset(pl, 0, sizeof pl);
            pl[0] = dt_shard(0); pl[1] = dt_shard(1);
            field_load(&f, m2, restart, nx, ny, pl);
        } else {
            field_initial(&f, m2, nx, ny);
        }
        n = nx * ny;
        t = run_steps(&f, (int)((restart ? steps : save_at) - from));
        if (!restart) save(&f, ckpt, save_at);
        full = (double *)malloc((size_t)n * sizeof *full);
        if (!full) { fprintf(stderr, "heat2d: out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
        DT_CHECK(dt_tensor_gather(field_tensor(&f), full));   /* ghosted source: staged */
        s = summarize(full, (size_t)n);
        if (wrank == 0) {
            printf("heat2d: %lld x %lld F64, mesh %d x %d [Shard(0), Shard(1)], %s\n", (long long)nx, (long long)ny,
                   p0, p1, restart ? "restarted" : "from u0");
            printf("  steps %lld .. %d: %.3f ms/step\n", (long long)from, restart ? steps : save_at, t * 1e3);
            if (!restart) printf("  saved step %d to %s (+ .meta.npy)\n", save_at, ckpt);
            print_summary(restart ? "final field" : "field at the save", s);
        }
        free(full);
        field_free(&f);
        dt_mesh_destroy(m2); dt_comm_destroy(comm);
        MPI_Finalize();
        return 0;
    }

    /* ---- (a) uninterrupted, saving at step `at` as it passes ---- */
    n = nx * ny;
    full = (double *)malloc((size_t)n * sizeof *full);
    double *full_b = (double *)malloc((size_t)n * sizeof *full_b);
    if (!full || !full_b) { fprintf(stderr, "heat2d: out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
    field_initial(&f, m2, nx, ny);
    t_a = run_steps(&f, at) * at;
    save(&f, ckpt, at);
    t_a += run_steps(&f, steps - at) * (steps - at);
    DT_CHECK(dt_tensor_gather(field_tensor(&f), full));
    summary sa = summarize(full, (size_t)n);
    field_free(&f);

    /* ---- output every `every` steps: none, blocking, overlapped with the next step ---- */
    if (every > 0 && steps > 0) out_ok = output_runs(m2, nx, ny, steps, every, reps, full, out_ms, &nsnap);

    /* ---- (b) restart on a 1-D mesh of ranks 1 .. n-1, [Shard(1)] ---- */
    int nr = wsize > 1 ? wsize - 1 : 1;
    int *ranks = (int *)malloc((size_t)nr * sizeof *ranks);
    for (i = 0; i < nr; i++) ranks[i] = wsize > 1 ? i + 1 : 0;
    dt_mesh_desc md;
    dt_mesh *m1;
    memset(&md, 0, sizeof md);
    md.ndim = 1; md.shape[0] = nr; md.names[0] = "y"; md.ranks = ranks;
    DT_CHECK(dt_mesh_create(comm, &md, &m1));
    dt_placement pl1[DT_MAX_MESH_DIMS];
    memset(pl1, 0, sizeof pl1);
    pl1[0] = dt_shard(1);
    int64_t meta[3];
    load_meta(m1, ckpt, meta);              /* outside m1 (rank 0): untouched, so from m1's rank 0: */
    MPI_Bcast(meta, 3, MPI_INT64_T, ranks[0], MPI_COMM_WORLD);
    field_load(&f, m1, ckpt, meta[1], meta[2], pl1);  /* rank 0 outside m1: empty arrays */
    double t_b = run_steps(&f, steps - at);
    DT_CHECK(dt_tensor_gather(field_tensor(&f), full_b));     /* on m1's ranks */
    if (wsize > 1) {                        /* m1's rank 0 (world rank 1) -> world rank 0 */
        if (wrank == 1) MPI_Send(full_b, (int)n, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
        if (wrank == 0) MPI_Recv(full_b, (int)n, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }

    /* ---- (c) compare ---- */
    if (wrank == 0) {
        summary sb = summarize(full_b, (size_t)n);
        ok = meta[0] == at && meta[1] == nx && meta[2] == ny && memcmp(full, full_b, (size_t)n * sizeof *full) == 0 &&
             sa.hash == sb.hash;
        printf("heat2d: %lld x %lld F64, r = %g, periodic in x (dim 0), u = 0 outside y (dim 1), %d steps\n",
               (long long)nx, (long long)ny, R, steps);
        printf("  (a) mesh %d x %d [Shard(0), Shard(1)], steps 0 .. %d: %.3f ms/step; saved step %d to %s\n", p0, p1,
               steps, steps ? t_a / steps * 1e3 : 0.0, at, ckpt);
        printf("  (b) restart from step %lld on a 1-D mesh of %d rank%s (ranks %d..%d) [Shard(1)], steps %d .. %d: "
               "%.3f ms/step\n", (long long)meta[0], nr, nr > 1 ? "s" : "", ranks[0], ranks[nr - 1], at, steps,
               t_b * 1e3);
        if (every > 0 && steps > 0) {
            printf("  (o) output every %d steps (%d snapshots): the field to [Replicate, Shard(1)] (whole columns), "
                   "kept;\n      ms/step, median of %d, slowest rank: no output %.3f, blocking %.3f, overlapped %.3f "
                   "(begun after a step, ended after the next); overlapped/blocking %.2f\n", every, nsnap, reps,
                   out_ms[0], out_ms[1], out_ms[2], out_ms[2] / out_ms[1]);
            printf("      snapshots identical to the blocking run's, the last one to (a)'s final field, every run's "
                   "final field to (a)'s: %s\n", out_ok ? "yes" : "no");
        }
        print_summary("(a) uninterrupted", sa);
        print_summary("(b) restarted", sb);
        printf("  identical: %s\n", ok ? "yes" : "no");
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    ok &= out_ok;
    field_free(&f);
    dt_mesh_destroy(m1); dt_mesh_destroy(m2);
    dt_comm_destroy(comm);
    if (!keep && wrank == 0) {
        char mp[4096];
        meta_path(ckpt, mp, sizeof mp);
        remove(ckpt);
        remove(mp);
    } else if (keep && wrank == 0) {
        printf("  kept %s and its .meta.npy\n", ckpt);
    }
    free(ranks); free(full); free(full_b);
    MPI_Finalize();
    return ok ? 0 : 1;
}

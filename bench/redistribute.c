/* bench/redistribute.c -- dt_tensor_redistribute against the raw MPI
   collective that moves the same bytes, on a 1-D mesh of all ranks.

       make bench-redistribute NP=2 BENCHARGS="--max-mib 64 --reps 10"
       mpiexec -n 2 ./build/mpich/bench_redistribute [--max-mib N] [--min-kib N]
                                                     [--reps N] [--csv FILE] [--mem]

   Transitions (F32, 2-D global shape rows x cols, both divisible by the
   number of ranks n, total bytes 1 KiB .. --max-mib MiB, x4 per step):

     S(0)->R       vs MPI_Allgather of the shard (bytes/n per rank)
     S(0)->S(1)    vs MPI_Alltoall of bytes/n^2 per pair, and vs what a
                   hand-written transpose does: pack the n column blocks of
                   the row shard into one buffer, then MPI_Alltoall ("hand")
     P(sum)->R     vs MPI_Allreduce of the full tensor
     P(sum)->S(0)  vs MPI_Reduce_scatter_block of the full tensor
     R->S(0)       local (no communication): our time only

   and, with ragged parts (rows and cols one more than the shape above, so
   neither divides evenly; family raw-mpi-v, target at >= 1 MiB):

     Sbal(0)->R          dt_shard_balanced(0) -> R vs MPI_Allgatherv of the
                         same parts (counts = each part's bytes)
     Ssz(0)->R           dt_shard_sizes(0, sizes) -> R vs MPI_Allgatherv;
                         sizes alternate base + base/8, base - base/8 (the
                         last takes the rest)
     Sbal(0)->Sbal(1)    balanced rows -> balanced columns vs MPI_Alltoallv
                         of rows_r x cols_s elements from rank r to rank s
     Ssz(0)->Ssz(1)      the same with the sizes above on both dims
                         (both also vs pack + MPI_Alltoallv: hand-mpi)

   Method: one untimed warm-up of each side (which also checks our result),
   then --reps repetitions alternating ours and raw; each timing is preceded
   by a barrier, taken with MPI_Wtime and reduced to the max over ranks; the
   table shows the median of each side and ratio = ours / raw. The output
   tensor is reused across repetitions (the same *out is passed back).

   --csv FILE appends the harness's raw rows (bench/bench.sh, bench/report.py):
   family,case,size,side,value,unit with family raw-mpi (ours vs the raw
   collective), raw-mpi-v (the ragged ones vs the v-collective), hand-mpi
   (S(0)->S(1) vs pack + MPI_Alltoall) and local (R->S(0), ours only);
   size = the tensor's bytes, value = median ms.

   The shared-memory path (dt_comm_set_shm; family shm-*): a second mesh
   over the same ranks, made with the path on, holds a copy of the source;
   for the gather and all-to-all transitions (S(0)->R, S(0)->S(1) and the
   four ragged ones) each repetition also times dt_tensor_redistribute on
   it ("shm"), alternated with the others, and the table adds shm ms,
   shm / raw (family shm-raw: target <= 1.00 from 1 MiB), shm / hand
   (shm-hand, where a hand-written side exists: target <= 0.80 from 1 MiB)
   and shm / ours (shm-mpi: the shared path against the MPI path). Where the
   ranks span nodes (or the MPI has no shared windows) the second mesh has
   no arena and the shm column times the MPI path again. --no-shm leaves the
   second mesh out. The arena is sized for the largest tensor
   (DTENSOR_SHM_ARENA, unless set).

   --mem: instead of the timings, the peak memory per rank of one cold
   redistribution (a new mesh, so no cached scratch; the output allocated by
   the call) for every transition at sizes >= 1 MiB, and of the raw
   collective (its receive buffer untouched before the call): writing "5" to
   /proc/self/clear_refs resets the peak resident set (VmHWM) just before
   the call; the peak minus the resident set before it (VmRSS), max over
   ranks, divided by the rank's destination shard bytes, is the reported
   multiple (family memory, unit x). It counts everything the call makes
   resident: the output, scratch, and MPI's own buffers. */
#define _POSIX_C_SOURCE 200112L /* setenv */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench/bench.h"

#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <malloc.h>
#include <limits.h>

enum { S0_R, S0_S1, P_R, P_S0, R_S0, NTRANS_EVEN, SB_R = NTRANS_EVEN, SZ_R, SB_SB, SZ_SZ, NTRANS };
static const char *trans_name[NTRANS] = { "S(0)->R", "S(0)->S(1)", "P(sum)->R",
                                          "P(sum)->S(0)", "R->S(0)", "Sbal(0)->R", "Ssz(0)->R",
                                          "Sbal(0)->Sbal(1)", "Ssz(0)->Ssz(1)" };
/* the ragged transitions: a v-collective moves the same bytes */
static int ragged(int trans) { return trans >= NTRANS_EVEN; }
static int to_replicate(int trans) { return trans == S0_R || trans == P_R || trans == SB_R || trans == SZ_R; }




/* the global value at (i, j); small integers, exact in f32 even when summed */
static float val(int64_t i, int64_t j, int64_t cols) { return (float)((i * cols + j) % 251); }

/* fill a tensor's local part with val (+ rank for Partial inputs) */
static void fill(dt_tensor *t, int64_t cols, float add) {
    int64_t sh[2], off[2];
    dt_tensor_local_shape(t, sh);
    dt_tensor_local_offset(t, off);
    float *p = (float *)dt_tensor_data(t);
    for (int64_t i = 0; i < sh[0]; i++)
        for (int64_t j = 0; j < sh[1]; j++) p[i * sh[1] + j] = val(off[0] + i, off[1] + j, cols) + add;
}

/* check a tensor's local part against val * mul + add */
static int check(const dt_tensor *t, int64_t cols, float mul, float add) {
    int64_t sh[2], off[2];
    dt_tensor_local_shape(t, sh);
    dt_tensor_local_offset(t, off);
    const float *p = (const float *)dt_tensor_data(t);
    for (int64_t i = 0; i < sh[0]; i++)
        for (int64_t j = 0; j < sh[1]; j++)
            if (p[i * sh[1] + j] != val(off[0] + i, off[1] + j, cols) * mul + add) return 0;
    return 1;
}

/* a square-ish rows x cols with both divisible by nranks, close to nominal bytes */
static void shape_for(size_t nominal, int64_t *rows, int64_t *cols) {
    int64_t numel = (int64_t)(nominal / 4), n = nranks;
    *rows = (int64_t)llround(sqrt((double)numel) / (double)n) * n;
    if (*rows < n) *rows = n;
    *cols = (int64_t)llround((double)numel / (double)*rows / (double)n) * n;
    if (*cols < n) *cols = n;
}

/* the parts of n over the ranks: balanced, or the alternating sizes */
#define MAX_RAGGED_RANKS 1024 /* the ragged transitions' size arrays */
static int64_t row_sizes[MAX_RAGGED_RANKS], col_sizes[MAX_RAGGED_RANKS];
static void parts(int sizes_rule, int64_t len, int64_t *out) {
    int64_t n = nranks, base = len / n, sum = 0;
    for (int c = 0; c < nranks; c++) {
        out[c] = sizes_rule ? base + (c % 2 ? -(base / 8) : base / 8) : base + (c < len % n);
        if (c == nranks - 1 && sizes_rule) out[c] = len - sum;
        sum += out[c];
    }
}

static void placements_for(int trans, dt_tensor_desc *td, dt_placement *dst) {
    switch (trans) {
    case SB_R:  td->placements[0] = dt_shard_balanced(0); dst[0] = dt_replicate(); break;
    case SZ_R:  td->placements[0] = dt_shard_sizes(0, row_sizes); dst[0] = dt_replicate(); break;
    case SB_SB: td->placements[0] = dt_shard_balanced(0); dst[0] = dt_shard_balanced(1); break;
    case SZ_SZ: td->placements[0] = dt_shard_sizes(0, row_sizes); dst[0] = dt_shard_sizes(1, col_sizes); break;
    case S0_R:  td->placements[0] = dt_shard(0);        dst[0] = dt_replicate(); break;
    case S0_S1: td->placements[0] = dt_shard(0);        dst[0] = dt_shard(1);    break;
    case P_R:   td->placements[0] = dt_partial(DT_SUM); dst[0] = dt_replicate(); break;
    case P_S0:  td->placements[0] = dt_partial(DT_SUM); dst[0] = dt_shard(0);    break;
    default:    td->placements[0] = dt_replicate();     dst[0] = dt_shard(0);    break;
    }
}

typedef struct result { int trans; size_t bytes; int64_t rows, cols; double ours, raw, hand, shm; } result;

/* the transitions the shared path serves (one gather or all-to-all step) */
static int shm_trans(int trans) { return trans == S0_R || trans == S0_S1 || ragged(trans); }

/* the v-collective's counts and displacements (in floats), from the parts */
static int *vcounts(const int64_t *per, int64_t mul, int **displs) {
    int *c = (int *)xmalloc(sizeof(int) * (size_t)nranks);
    int64_t off = 0;
    *displs = (int *)xmalloc(sizeof(int) * (size_t)nranks);
    for (int i = 0; i < nranks; i++) {
        int64_t v = per[i] * mul;
        if (v > INT_MAX || off > INT_MAX) {
            if (rank == 0) fprintf(stderr, "size too large for an int count\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        c[i] = (int)v;
        (*displs)[i] = (int)off;
        off += v;
    }
    return c;
}

/* the hand-written S(0) -> S(1): pack my rows' n column blocks, then alltoall */
static void hand_transpose(const float *local, int64_t lrows, int64_t cols, float *packed, float *rbuf, int cnt) {
    int64_t cb = cols / nranks;
    for (int j = 0; j < nranks; j++)
        for (int64_t i = 0; i < lrows; i++)
            memcpy(packed + (size_t)(j * lrows * cb + i * cb), local + (size_t)(i * cols + j * cb), (size_t)cb * 4);
    MPI_Alltoall(packed, cnt, MPI_FLOAT, rbuf, cnt, MPI_FLOAT, MPI_COMM_WORLD);
}

/* the same with ragged column blocks (col_sizes), then alltoallv */
static void hand_transpose_v(const float *local, int64_t lrows, int64_t cols, float *packed, float *rbuf,
                             const int *scount, const int *sdispl, const int *rcount, const int *rdispl) {
    int64_t c0 = 0;
    for (int j = 0; j < nranks; j++) {
        int64_t w = col_sizes[j];
        for (int64_t i = 0; i < lrows; i++)
            memcpy(packed + (size_t)sdispl[j] + (size_t)(i * w), local + (size_t)(i * cols + c0), (size_t)w * 4);
        c0 += w;
    }
    MPI_Alltoallv(packed, scount, sdispl, MPI_FLOAT, rbuf, rcount, rdispl, MPI_FLOAT, MPI_COMM_WORLD);
}

static result run_one(dt_mesh *mesh, dt_mesh *smesh, int trans, size_t nominal, int reps) {
    int64_t rows, cols, n = nranks;
    shape_for(nominal, &rows, &cols);
    if (ragged(trans) && n > 1) { rows++; cols++; }  /* neither divides evenly */
    parts(trans == SZ_R || trans == SZ_SZ, rows, row_sizes);
    parts(trans == SZ_R || trans == SZ_SZ, cols, col_sizes);
    size_t total = (size_t)(rows * cols), shard = total / (size_t)n;
    result r = { trans, total * 4, rows, cols, 0, -1, -1, -1 };

    dt_tensor_desc td = {0};
    td.dtype = DT_F32;  td.ndim = 2;  td.shape[0] = rows;  td.shape[1] = cols;
    dt_placement dst[1];
    float add = 0, mul = 1, sum_ranks = (float)(n * (n - 1) / 2);
    placements_for(trans, &td, dst);
    dt_tensor *in, *out = NULL;
    CHECK(dt_tensor_empty(mesh, &td, &in));
    dt_tensor *sin = NULL, *sout = NULL; /* the same on the shared-path mesh */
    if (smesh && !shm_trans(trans)) smesh = NULL;
    if (smesh) {
        CHECK(dt_tensor_empty(smesh, &td, &sin));
        fill(sin, cols, 0);
    }
    if (td.placements[0].kind == DT_PARTIAL) {  /* rank r holds val + r: sum = n*val + n(n-1)/2 */
        fill(in, cols, (float)rank);
        mul = (float)n;  add = sum_ranks;
    } else {
        fill(in, cols, 0);
    }

    /* raw buffers: the same bytes per rank as ours */
    size_t sbytes = 0, rbytes = 0;
    switch (trans) {
    case S0_R:  sbytes = shard * 4; rbytes = total * 4; break;
    case S0_S1: sbytes = shard * 4; rbytes = shard * 4; break;
    case P_R:   sbytes = total * 4; rbytes = total * 4; break;
    case P_S0:  sbytes = total * 4; rbytes = shard * 4; break;
    default:    /* ragged: this rank's rows of every column, then its part */
        sbytes = (size_t)(row_sizes[rank] * cols) * 4;
        rbytes = to_replicate(trans) ? total * 4 : (size_t)(rows * col_sizes[rank]) * 4;
        break;
    }
    int *scount = NULL, *sdispl = NULL, *rcount = NULL, *rdispl = NULL;
    if (ragged(trans) && to_replicate(trans)) {
        rcount = vcounts(row_sizes, cols, &rdispl);
    } else if (ragged(trans)) {
        scount = vcounts(col_sizes, row_sizes[rank], &sdispl);
        rcount = vcounts(row_sizes, col_sizes[rank], &rdispl);
    }
    float *sbuf = sbytes ? (float *)xmalloc(sbytes) : NULL, *rbuf = rbytes ? (float *)xmalloc(rbytes) : NULL;
    if (sbuf) memcpy(sbuf, dt_tensor_data(in), sbytes < dt_tensor_local_numel(in) * 4 ? sbytes
                                                       : dt_tensor_local_numel(in) * 4);
    int cnt = (int)(trans == S0_S1 ? shard / (size_t)n : ragged(trans) ? (size_t)row_sizes[rank] * (size_t)cols : shard);
    if (!ragged(trans) && (size_t)cnt != (trans == S0_S1 ? shard / (size_t)n : shard)) {
        if (rank == 0) fprintf(stderr, "size too large for an int count\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    double *t_ours = (double *)xmalloc(sizeof(double) * (size_t)reps);
    double *t_raw = (double *)xmalloc(sizeof(double) * (size_t)reps);
    double *t_max = (double *)xmalloc(sizeof(double) * (size_t)reps);
    double *t_hand = (double *)xmalloc(sizeof(double) * (size_t)reps);
    double *t_shm = (double *)xmalloc(sizeof(double) * (size_t)reps);
    int hand_v = trans == SB_SB || trans == SZ_SZ;
    float *packed = trans == S0_S1 ? (float *)xmalloc(shard * 4) : hand_v ? (float *)xmalloc(sbytes + 4) : NULL;

    for (int rep = -1; rep < reps; rep++) {  /* rep -1: warm-up */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        CHECK(dt_tensor_redistribute(in, dst, &out));
        double t1 = MPI_Wtime() - t0;
        if (rep < 0) {
            int ok = check(out, cols, mul, add), all;
            MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
            if (!all) {
                if (rank == 0) fprintf(stderr, "%s: wrong result at %zu bytes\n", trans_name[trans], r.bytes);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        } else {
            t_ours[rep] = t1;
        }
        if (smesh) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            CHECK(dt_tensor_redistribute(sin, dst, &sout));
            t1 = MPI_Wtime() - t0;
            if (rep >= 0) t_shm[rep] = t1;
            else {
                int ok = check(sout, cols, mul, add), all;
                MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
                if (!all) {
                    if (rank == 0) fprintf(stderr, "%s (shared path): wrong result at %zu bytes\n", trans_name[trans], r.bytes);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
        }
        if (trans == R_S0) continue;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        switch (trans) {
        case S0_R:  MPI_Allgather(sbuf, cnt, MPI_FLOAT, rbuf, cnt, MPI_FLOAT, MPI_COMM_WORLD); break;
        case S0_S1: MPI_Alltoall(sbuf, cnt, MPI_FLOAT, rbuf, cnt, MPI_FLOAT, MPI_COMM_WORLD); break;
        case P_R:   MPI_Allreduce(sbuf, rbuf, (int)total, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
        case P_S0:  MPI_Reduce_scatter_block(sbuf, rbuf, cnt, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
        case SB_R: case SZ_R:
            MPI_Allgatherv(sbuf, cnt, MPI_FLOAT, rbuf, rcount, rdispl, MPI_FLOAT, MPI_COMM_WORLD);
            break;
        case SB_SB: case SZ_SZ:
            MPI_Alltoallv(sbuf, scount, sdispl, MPI_FLOAT, rbuf, rcount, rdispl, MPI_FLOAT, MPI_COMM_WORLD);
            break;
        default: break;
        }
        if (rep >= 0) t_raw[rep] = MPI_Wtime() - t0;
        if (trans != S0_S1 && !hand_v) continue;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (hand_v)
            hand_transpose_v((const float *)dt_tensor_data(in), row_sizes[rank], cols, packed, rbuf, scount, sdispl,
                             rcount, rdispl);
        else
            hand_transpose((const float *)dt_tensor_data(in), rows / n, cols, packed, rbuf, cnt);
        if (rep >= 0) t_hand[rep] = MPI_Wtime() - t0;
    }
    MPI_Allreduce(t_ours, t_max, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    r.ours = median(t_max, reps);
    if (trans != R_S0) {
        MPI_Allreduce(t_raw, t_max, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        r.raw = median(t_max, reps);
    }
    if (trans == S0_S1 || hand_v) {
        MPI_Allreduce(t_hand, t_max, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        r.hand = median(t_max, reps);
    }
    if (smesh) {
        MPI_Allreduce(t_shm, t_max, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        r.shm = median(t_max, reps);
    }
    dt_tensor_destroy(sout);
    dt_tensor_destroy(sin);
    free(t_shm);
    free(t_ours); free(t_raw); free(t_max); free(t_hand); free(packed); free(sbuf); free(rbuf);
    free(scount); free(sdispl); free(rcount); free(rdispl);
    dt_tensor_destroy(out);
    dt_tensor_destroy(in);
    return r;
}

/* the harness's raw rows (see the top comment) */
static void csv_rows(FILE *fc, const result *r) {
    const char *c = trans_name[r->trans];
    if (r->raw < 0) {
        fprintf(fc, "local,%s,%zu,ours,%.6f,ms\n", c, r->bytes, r->ours * 1e3);
        return;
    }
    const char *fam = ragged(r->trans) ? "raw-mpi-v" : "raw-mpi";
    fprintf(fc, "%s,%s,%zu,ours,%.6f,ms\n%s,%s,%zu,peer,%.6f,ms\n", fam, c, r->bytes, r->ours * 1e3, fam, c,
            r->bytes, r->raw * 1e3);
    if (r->hand >= 0)
        fprintf(fc, "hand-mpi,%s,%zu,ours,%.6f,ms\nhand-mpi,%s,%zu,peer,%.6f,ms\n", c, r->bytes, r->ours * 1e3,
                c, r->bytes, r->hand * 1e3);
    if (r->shm < 0) return;
    fprintf(fc, "shm-raw,%s,%zu,ours,%.6f,ms\nshm-raw,%s,%zu,peer,%.6f,ms\n", c, r->bytes, r->shm * 1e3, c, r->bytes,
            r->raw * 1e3);
    fprintf(fc, "shm-mpi,%s,%zu,ours,%.6f,ms\nshm-mpi,%s,%zu,peer,%.6f,ms\n", c, r->bytes, r->shm * 1e3, c, r->bytes,
            r->ours * 1e3);
    if (r->hand >= 0)
        fprintf(fc, "shm-hand,%s,%zu,ours,%.6f,ms\nshm-hand,%s,%zu,peer,%.6f,ms\n", c, r->bytes, r->shm * 1e3, c,
                r->bytes, r->hand * 1e3);
}

/* a field of /proc/self/status in bytes (VmRSS, VmHWM); -1 if unreadable */
static double proc_status_bytes(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double v = -1;
    size_t n = strlen(field);
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':') { v = atof(line + n + 1) * 1024.0; break; }
    fclose(f);
    return v;
}

static int reset_peak_rss(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return 0;
    int ok = fputs("5", f) >= 0;
    return (fclose(f) == 0) && ok;
}

/* one cold redistribution on a new mesh: the peak resident bytes it adds,
   as a multiple of this rank's destination shard, max over ranks */
/* the same for the raw collective, its receive buffer untouched before the call */
static double raw_peak_multiple(int trans, const dt_tensor *in, int64_t rows, int64_t cols, double dst_bytes) {
    size_t total = (size_t)(rows * cols), shard = total / (size_t)nranks, sbytes = dt_tensor_local_numel(in) * 4;
    size_t rbytes = trans == S0_R || trans == P_R ? total * 4 : shard * 4;
    int cnt = (int)(trans == S0_S1 ? shard / (size_t)nranks : shard);
    float *sbuf = (float *)xmalloc(sbytes), *rbuf = (float *)xmalloc(rbytes);
    memcpy(sbuf, dt_tensor_data(in), sbytes);
    MPI_Barrier(MPI_COMM_WORLD);
    double before = proc_status_bytes("VmRSS");
    int ok = before >= 0 && reset_peak_rss();
    switch (trans) {
    case S0_R:  MPI_Allgather(sbuf, cnt, MPI_FLOAT, rbuf, cnt, MPI_FLOAT, MPI_COMM_WORLD); break;
    case S0_S1: MPI_Alltoall(sbuf, cnt, MPI_FLOAT, rbuf, cnt, MPI_FLOAT, MPI_COMM_WORLD); break;
    case P_R:   MPI_Allreduce(sbuf, rbuf, (int)total, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    default:    MPI_Reduce_scatter_block(sbuf, rbuf, cnt, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    }
    double peak = proc_status_bytes("VmHWM");
    double m = ok && peak >= 0 ? (peak - before) / dst_bytes : -1;
    if (m < 0 && ok) m = 0;
    free(sbuf);
    free(rbuf);
    return max_over_ranks(ok ? m : 1e300);
}

static void peak_multiples(dt_comm *comm, const dt_mesh_desc *md, int trans, size_t nominal, size_t *bytes,
                           double *ours, double *raw) {
    int64_t rows, cols;
    shape_for(nominal, &rows, &cols);
    *bytes = (size_t)(rows * cols) * 4;
    dt_mesh *mesh;
    CHECK(dt_mesh_create(comm, md, &mesh));
    dt_tensor_desc td = {0};
    td.dtype = DT_F32;  td.ndim = 2;  td.shape[0] = rows;  td.shape[1] = cols;
    dt_placement dst[1];
    placements_for(trans, &td, dst);
    dt_tensor *in, *out = NULL;
    CHECK(dt_tensor_empty(mesh, &td, &in));
    fill(in, cols, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    double before = proc_status_bytes("VmRSS");
    int ok = before >= 0 && reset_peak_rss();
    CHECK(dt_tensor_redistribute(in, dst, &out));
    double peak = proc_status_bytes("VmHWM");
    double shard = (double)dt_tensor_local_numel(out) * 4.0;
    double m = ok && peak >= 0 && shard > 0 ? (peak - before) / shard : -1;
    if (m < 0 && ok) m = 0;
    *ours = max_over_ranks(ok ? m : 1e300);
    dt_tensor_destroy(out);
    *raw = trans == R_S0 ? -1 : raw_peak_multiple(trans, in, rows, cols, shard);
    dt_tensor_destroy(in);
    dt_mesh_destroy(mesh);
}

static void memory_pass(dt_comm *comm, const dt_mesh_desc *md, double min_kib, double max_mib, FILE *fc) {
    if (rank == 0) printf("# peak memory of one cold call, per rank, x its destination shard (max over ranks)\n"
                          "%-13s %12s %10s %10s\n", "transition", "bytes", "ours", "raw MPI");
    for (int trans = 0; trans < NTRANS_EVEN; trans++) {
        for (double b = min_kib * 1024; b <= max_mib * 1048576 + 0.5; b *= 4) {
            if (b < 1048576) continue;  /* below a MiB the page-granular peak is mostly noise */
            size_t bytes;
            double m, raw;
            peak_multiples(comm, md, trans, (size_t)b, &bytes, &m, &raw);
            if (rank != 0) continue;
            if (m > 1e299) { printf("%-13s %12zu %10s\n", trans_name[trans], bytes, "n/a"); continue; }
            printf("%-13s %12zu %10.2f %10.2f\n", trans_name[trans], bytes, m, raw);
            if (fc) fprintf(fc, "memory,%s,%zu,ours,%.4f,x\n", trans_name[trans], bytes, m);
            if (fc && raw >= 0) fprintf(fc, "memory,%s,%zu,peer,%.4f,x\n", trans_name[trans], bytes, raw);
        }
    }
    fflush(stdout);
}

/* ---- --overlap: compute hidden behind a redistribution (begin / test / end) ----
   S(0)->S(1) of the given size: R = the blocking call, C = a compute loop
   (streaming passes over a private buffer, calibrated once to take about R),
   O = begin, the same compute in 16 pieces with dt_tensor_redistribute_test
   between them, end. Each the median of reps (max over ranks), alternated;
   target O <= 1.1 max(C, R). "serial" = R + C measured back to back. */
static volatile double overlap_sink;
static void compute(double *w, size_t n, int passes) {
    for (int p = 0; p < passes; p++)
        for (size_t i = 0; i < n; i++) w[i] = w[i] * 0.999 + 1e-3;
    overlap_sink = w[n / 2];
}

static double median_of(double *v, int n) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) { double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t; }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double timed_max(double t0) {
    double t = MPI_Wtime() - t0, m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static void overlap_pass(dt_mesh *mesh, double min_kib, double max_mib, int reps_arg) {
    if (rank == 0) {
        printf("\n# overlap: S(0)->S(1) with compute of about the same time; O = begin + 16 pieces of compute with "
               "dt_tensor_redistribute_test between + end; target O / max(C, R) <= 1.10\n");
        printf("%-12s %12s %9s %9s %9s %9s %11s %9s\n", "transition", "bytes", "R ms", "C ms", "R+C ms", "O ms",
               "O/max(C,R)", "O/(R+C)");
    }
    for (double b = (min_kib * 1024 > 1048576 ? min_kib * 1024 : 1048576); b <= max_mib * 1048576 + 0.5; b *= 4) {
        int64_t rows, cols;
        int reps = reps_arg ? reps_arg : 9, passes = 1, k;
        shape_for((size_t)b, &rows, &cols);
        dt_tensor_desc td = {0};
        dt_placement dst[1];
        td.dtype = DT_F32;  td.ndim = 2;  td.shape[0] = rows;  td.shape[1] = cols;
        placements_for(S0_S1, &td, dst);
        dt_tensor *in = NULL, *out = NULL;
        CHECK(dt_tensor_empty(mesh, &td, &in));
        fill(in, cols, 0);
        size_t nw = (size_t)(rows * cols) / (size_t)nranks / 2 + 1; /* the shard's bytes, as doubles */
        double *w = malloc(nw * sizeof *w), *tr = malloc(reps * sizeof(double)), *tc = malloc(reps * sizeof(double));
        double *to = malloc(reps * sizeof(double)), *ts = malloc(reps * sizeof(double));
        for (size_t i = 0; i < nw; i++) w[i] = (double)i;
        CHECK(dt_tensor_redistribute(in, dst, &out)); /* warm: out kept */
        double t0;
        MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime();
        CHECK(dt_tensor_redistribute(in, dst, &out));
        double r1 = timed_max(t0);
        MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime();
        compute(w, nw, 1);
        double c1 = timed_max(t0);
        passes = c1 > 0 ? (int)(r1 / c1 + 0.5) : 1; /* the same on every rank: both are max-reduced */
        if (passes < 1) passes = 1;
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime();
            CHECK(dt_tensor_redistribute(in, dst, &out));
            tr[r] = timed_max(t0);
            MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime();
            compute(w, nw, passes);
            tc[r] = timed_max(t0);
            MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime();
            CHECK(dt_tensor_redistribute(in, dst, &out));
            compute(w, nw, passes);
            ts[r] = timed_max(t0);
            MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime();
            CHECK(dt_tensor_redistribute_begin(in, dst, &out));
            for (k = 0; k < 16; k++) {
                int done = 0;
                size_t lo = nw * (size_t)k / 16, hi = nw * (size_t)(k + 1) / 16;
                compute(w + lo, hi - lo, passes);
                CHECK(dt_tensor_redistribute_test(out, &done));
            }
            CHECK(dt_tensor_redistribute_end(out));
            to[r] = timed_max(t0);
        }
        if (!check(out, cols, 1, 0)) { fprintf(stderr, "[%d] overlap: wrong result\n", rank); MPI_Abort(MPI_COMM_WORLD, 1); }
        double R = median_of(tr, reps), C = median_of(tc, reps), S = median_of(ts, reps), O = median_of(to, reps);
        if (rank == 0) {
            printf("%-12s %12zu %9.3f %9.3f %9.3f %9.3f %11.2f %9.2f\n", "S(0)->S(1)", (size_t)(rows * cols) * 4,
                   R * 1e3, C * 1e3, S * 1e3, O * 1e3, O / (C > R ? C : R), O / S);
            fflush(stdout);
        }
        free(w); free(tr); free(tc); free(to); free(ts);
        dt_tensor_destroy(out);
        dt_tensor_destroy(in);
    }
}

static void usage(void) {
    if (rank == 0)
        fprintf(stderr, "usage: bench_redistribute [--max-mib N (256)] [--min-kib N (1)] "
                        "[--reps N (auto: 30 up to 4 MiB, 10 up to 64 MiB, else 5)] [--csv FILE] [--mem] [--no-shm] "
                        "[--overlap]\n");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    double max_mib = 256, min_kib = 1;
    int reps_arg = 0, mem = 0, shm = 1, overlap = 0;
    const char *csv = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--max-mib") && i + 1 < argc) max_mib = atof(argv[++i]);
        else if (!strcmp(argv[i], "--min-kib") && i + 1 < argc) min_kib = atof(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps_arg = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
        else if (!strcmp(argv[i], "--mem")) mem = 1;
        else if (!strcmp(argv[i], "--no-shm")) shm = 0;
        else if (!strcmp(argv[i], "--overlap")) overlap = 1;
        else { usage(); MPI_Finalize(); return 2; }
    }
    if (max_mib <= 0 || min_kib <= 0 || reps_arg < 0) { usage(); MPI_Finalize(); return 2; }
    /* --mem: fixed thresholds, so big blocks are mmapped and unmapped on free
       and the heap is trimmed: freed memory does not stay resident and hide
       a later call's peak (glibc otherwise raises the mmap threshold on the
       fly). Only for --mem: it makes every large temporary a fresh mmap, which
       would slow the timed runs (MPI's own temporaries included). */
    if (mem) {
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
        mallopt(M_TRIM_THRESHOLD, 128 * 1024);
    }

    dt_comm *comm;  dt_mesh *mesh;
    CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    dt_mesh_desc md = {0};
    md.ndim = 1;  md.shape[0] = nranks;  md.names[0] = "x";
    CHECK(dt_comm_set_shm(comm, 0)); /* the MPI path, whatever DTENSOR_SHM says */
    CHECK(dt_mesh_create(comm, &md, &mesh));
    dt_mesh *smesh = NULL;
    if (shm && !mem) {
        char arena[32]; /* room for the largest source and destination (S(0)->R: the whole tensor) */
        snprintf(arena, sizeof arena, "%.0f", max_mib * 1048576.0 * 2.5 + (64 << 20));
        if (!getenv("DTENSOR_SHM_ARENA")) setenv("DTENSOR_SHM_ARENA", arena, 1);
        CHECK(dt_comm_set_shm(comm, 1));
        CHECK(dt_mesh_create(comm, &md, &smesh));
        CHECK(dt_comm_set_shm(comm, -1));
    }

    FILE *fc = NULL;
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        mpi_library(lib);
        printf("# dtensor.h %d.%d.%d redistribute benchmark: %d rank(s), 1-D mesh, f32\n# MPI: %s\n",
               DTENSOR_VERSION_MAJOR, DTENSOR_VERSION_MINOR, DTENSOR_VERSION_PATCH, nranks, lib);
        printf("# times: median over reps of the max over ranks; ratio = ours / raw; "
               "vs hand = ours / (pack + MPI_Alltoall)\n");
        printf("# shm = the same call on a mesh with the shared-memory path (dt_comm_set_shm); ours = the MPI path\n");
        printf("%-16s %12s %13s %5s %11s %11s %7s %11s %7s %11s %7s %8s %7s\n", "transition", "bytes", "shape", "reps",
               "ours ms", "raw ms", "ratio", "hand ms", "vs hand", "shm ms", "shm/raw", "shm/hand", "shm/ours");
        if (csv && !(fc = fopen(csv, "a"))) fprintf(stderr, "cannot open %s\n", csv);
        fflush(stdout);
    }
    if (overlap) { /* only the overlap table */
        overlap_pass(mesh, min_kib, max_mib, reps_arg);
        mem = -1;
    }
    for (int trans = 0; trans < NTRANS && !mem; trans++) {
        if (ragged(trans) && nranks > MAX_RAGGED_RANKS) continue;
        for (double b = min_kib * 1024; b <= max_mib * 1048576 + 0.5; b *= 4) {
            size_t bytes = (size_t)b;
            int reps = reps_arg ? reps_arg : bytes <= (4u << 20) ? 30 : bytes <= (64u << 20) ? 10 : 5;
            result r = run_one(mesh, smesh, trans, bytes, reps);
            if (rank == 0) {
                char shape[48], raw[16] = "-", ratio[16] = "-", hand[16] = "-", rhand[16] = "-";
                snprintf(shape, sizeof shape, "%lldx%lld", (long long)r.rows, (long long)r.cols);
                if (r.raw >= 0) {
                    snprintf(raw, sizeof raw, "%.5f", r.raw * 1e3);
                    snprintf(ratio, sizeof ratio, "%.2f", r.raw > 0 ? r.ours / r.raw : 0.0);
                }
                if (r.hand >= 0) {
                    snprintf(hand, sizeof hand, "%.5f", r.hand * 1e3);
                    snprintf(rhand, sizeof rhand, "%.2f", r.hand > 0 ? r.ours / r.hand : 0.0);
                }
                char sh[16] = "-", sraw[16] = "-", shand[16] = "-", sours[16] = "-";
                if (r.shm >= 0) {
                    snprintf(sh, sizeof sh, "%.5f", r.shm * 1e3);
                    if (r.raw > 0) snprintf(sraw, sizeof sraw, "%.2f", r.shm / r.raw);
                    if (r.hand > 0) snprintf(shand, sizeof shand, "%.2f", r.shm / r.hand);
                    if (r.ours > 0) snprintf(sours, sizeof sours, "%.2f", r.shm / r.ours);
                }
                printf("%-16s %12zu %13s %5d %11.5f %11s %7s %11s %7s %11s %7s %8s %7s\n", trans_name[trans], r.bytes,
                       shape, reps, r.ours * 1e3, raw, ratio, hand, rhand, sh, sraw, shand, sours);
                fflush(stdout);
                if (fc) csv_rows(fc, &r);
            }
        }
    }
    if (mem > 0) memory_pass(comm, &md, min_kib, max_mib, fc);
    if (fc) fclose(fc);
    dt_mesh_destroy(smesh);
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
    MPI_Finalize();
    return 0;
}

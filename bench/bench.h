/* bench/bench.h -- what the benchmarks share: the rank globals, checked
   allocation and calls (CHECK) and the statistics they report (medians,
   max over ranks).
   Include after dtensor.h (it needs <mpi.h>). */
#ifndef DT_BENCH_H
#define DT_BENCH_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

static inline void *xmalloc(size_t n) {
    void *p = calloc(n ? n : 1, 1);
    if (!p) { fprintf(stderr, "[%d] out of memory (%zu bytes)\n", rank, n); MPI_Abort(MPI_COMM_WORLD, 1); }
    return p;
}

/* a dtensor call that must succeed: else the message and MPI_Abort */
#define CHECK(call) do { dt_status s_ = (call); if (s_ != DT_OK) {               \
    fprintf(stderr, "[%d] %s failed: %s\n", rank, #call, dt_last_error());      \
    MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

/* the first line of MPI_Get_library_version, in ver (for the results' "# MPI:" header line) */
static inline const char *mpi_library(char ver[MPI_MAX_LIBRARY_VERSION_STRING]) {
    int len;
    char *nl;
    MPI_Get_library_version(ver, &len);
    nl = strchr(ver, '\n');
    if (nl) *nl = 0;
    return ver;
}

/* the numbers of a list argument ("256 1024") into dst, at most cap of them; returns how many were read */
static inline int parse_list(const char *s, int64_t *dst, int cap) {
    int cnt = 0;
    char *e;
    for (;;) {
        long long v = strtoll(s, &e, 10);
        if (e == s) break;
        if (cnt < cap) dst[cnt++] = v;
        s = e;
    }
    return cnt;
}

static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* sorts v */
static inline double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline double max_over_ranks(double x) {
    double y;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return y;
}

/* e.g. the failures of all ranks */
static inline int sum_over_ranks(int x) {
    int y;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return y;
}

/* --csv FILE of the `make bench` harness: raw rows, no header, appended by
   rank 0, one per measured (case, size, side):
       family,case,size,side,value,unit
   side "ours" (dtensor.h) or "peer"; value a median in ms. Collective: every
   rank returns 0 if rank 0 cannot open the file (then the caller exits),
   1 otherwise; *f is the open file on rank 0 and NULL elsewhere. */
static inline int bench_csv_open(const char *path, FILE **f) {
    int ok = 1;
    *f = NULL;
    if (path && rank == 0) {
        *f = fopen(path, "a");
        if (!*f) { fprintf(stderr, "cannot open %s for appending\n", path); ok = 0; }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok;
}

/* one row (rank 0; f may be NULL). No field may contain a comma. */
static inline void bench_csv_row(FILE *f, const char *family, const char *cs, long long size, const char *side,
                                 double ms) {
    if (!f) return;
    fprintf(f, "%s,%s,%lld,%s,%.6f,ms\n", family, cs, size, side, ms);
    fflush(f);
}
#endif

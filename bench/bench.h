/* bench/bench.h -- what the benchmarks share: the rank globals, checked
   allocation and the statistics they report (medians, max over ranks).
   Include after dtensor.h (it needs <mpi.h>). */
#ifndef DT_BENCH_H
#define DT_BENCH_H
#include <stdio.h>
#include <stdlib.h>

static int rank, nranks;

static inline void *xmalloc(size_t n) {
    void *p = calloc(n ? n : 1, 1);
    if (!p) { fprintf(stderr, "[%d] out of memory (%zu bytes)\n", rank, n); MPI_Abort(MPI_COMM_WORLD, 1); }
    return p;
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
#endif

/* tests/standin/cublas_v2.h -- the cuBLAS GEMMs dtensor_cuda.h calls, as
   column-major loops on the stand-in's device memory (see cuda_runtime.h
   here). Products accumulate in double and are rounded once to the output
   type (cuBLAS's own order and precision differ within the tolerance the
   tests allow); beta = 0 does not read C, as cuBLAS. Each matrix must lie
   inside one device allocation (CUBLAS_STATUS_INVALID_VALUE otherwise:
   cuBLAS would read or write past it), and the shapes and leading
   dimensions must satisfy cuBLAS's rules. The GEMM is checked at the call
   and queued on the handle's stream (cublasSetStream), alpha and beta read
   at the call (host pointer mode), as every device op of the stand-in. */
#ifndef DTCU_STANDIN_CUBLAS_V2_H
#define DTCU_STANDIN_CUBLAS_V2_H

#include "cuda_runtime.h"

typedef enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_EXECUTION_FAILED = 13
} cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 } cublasOperation_t;
typedef enum { CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_R_16BF = 14 } cudaDataType_t;
typedef cudaDataType_t cudaDataType;
typedef enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_64F = 70 } cublasComputeType_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1 } cublasGemmAlgo_t;

struct dtcu_blas { cudaStream_t stream; };
typedef struct dtcu_blas *cublasHandle_t;

static inline const char *cublasGetStatusString(cublasStatus_t s) {
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    }
    return "CUBLAS_STATUS_UNKNOWN";
}

static inline cublasStatus_t cublasCreate(cublasHandle_t *h) {
    if (!h) return CUBLAS_STATUS_INVALID_VALUE;
    if (dtcu_injected("cublasCreate")) return CUBLAS_STATUS_NOT_INITIALIZED;
    *h = (cublasHandle_t)calloc(1, sizeof **h);
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}
static inline cublasStatus_t cublasDestroy(cublasHandle_t h) {
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}
static inline cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) {
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    h->stream = s;
    return CUBLAS_STATUS_SUCCESS;
}

static inline double dtcb_ld(cudaDataType_t t, const void *p, size_t i) {
    switch (t) {
    case CUDA_R_64F: return ((const double *)p)[i];
    case CUDA_R_32F: return ((const float *)p)[i];
    case CUDA_R_16BF: return dtcu_b2f(((const uint16_t *)p)[i]);
    default: return dtcu_h2f(((const uint16_t *)p)[i]);
    }
}

/* double -> float -> half/bfloat16, round to nearest even at each step */
static inline void dtcb_st(cudaDataType_t t, void *p, size_t i, double v) {
    switch (t) {
    case CUDA_R_64F: ((double *)p)[i] = v; break;
    case CUDA_R_32F: ((float *)p)[i] = (float)v; break;
    case CUDA_R_16BF: ((uint16_t *)p)[i] = dtcu_f2b((float)v); break;
    default: ((uint16_t *)p)[i] = dtcu_f2h((float)v); break;
    }
}

static inline size_t dtcb_es(cudaDataType_t t) { return t == CUDA_R_64F ? 8 : t == CUDA_R_32F ? 4 : 2; }

/* an rows x cols column-major matrix (ld) lies inside one device allocation */
static inline int dtcb_inside(const void *p, cudaDataType_t t, int rows, int cols, int ld) {
    if (rows == 0 || cols == 0) return 1;
    return dtcu_range(p, (((size_t)cols - 1) * (size_t)ld + (size_t)rows) * dtcb_es(t)) == 1;
}

static inline cublasStatus_t dtcb_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                       int k, double alpha, const void *a, cudaDataType_t at, int lda, const void *b,
                                       cudaDataType_t bt, int ldb, double beta, void *c, cudaDataType_t ct, int ldc) {
    int ar = ta == CUBLAS_OP_N ? m : k, ac = ta == CUBLAS_OP_N ? k : m;
    int br = tb == CUBLAS_OP_N ? k : n, bc = tb == CUBLAS_OP_N ? n : k;
    struct dtcu_stream *s;
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (m < 0 || n < 0 || k < 0 || lda < (ar > 1 ? ar : 1) || ldb < (br > 1 ? br : 1) || ldc < (m > 1 ? m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (!dtcb_inside(c, ct, m, n, ldc) || (k && (!dtcb_inside(a, at, ar, ac, lda) || !dtcb_inside(b, bt, br, bc, ldb)))) {
        fprintf(stderr, "tests/standin: gemm m=%d n=%d k=%d lda=%d ldb=%d ldc=%d: a matrix is not inside one device "
                        "allocation\n", m, n, k, lda, ldb, ldc);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (dtcu_injected("cublasGemm")) return CUBLAS_STATUS_EXECUTION_FAILED;
    if (!(s = dtcu_stream_of(h->stream))) return CUBLAS_STATUS_EXECUTION_FAILED;
    dtcu_enqueue(s, [=]() {
        int i, j, l;
        for (j = 0; j < n; j++)
            for (i = 0; i < m; i++) {
                double acc = 0;
                for (l = 0; l < k; l++) {
                    size_t ia = ta == CUBLAS_OP_N ? (size_t)l * lda + i : (size_t)i * lda + l;
                    size_t ib = tb == CUBLAS_OP_N ? (size_t)j * ldb + l : (size_t)l * ldb + j;
                    acc += dtcb_ld(at, a, ia) * dtcb_ld(bt, b, ib);
                }
                acc *= alpha;
                if (beta != 0) acc += beta * dtcb_ld(ct, c, (size_t)j * ldc + i);
                dtcb_st(ct, c, (size_t)j * ldc + i, acc);
            }
    });
    return CUBLAS_STATUS_SUCCESS;
}

static inline cublasStatus_t cublasDgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const double *alpha, const double *a, int lda, const double *b, int ldb,
                                         const double *beta, double *c, int ldc) {
    return dtcb_gemm(h, ta, tb, m, n, k, *alpha, a, CUDA_R_64F, lda, b, CUDA_R_64F, ldb, *beta, c, CUDA_R_64F, ldc);
}
static inline cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float *alpha, const float *a, int lda, const float *b, int ldb,
                                         const float *beta, float *c, int ldc) {
    return dtcb_gemm(h, ta, tb, m, n, k, *alpha, a, CUDA_R_32F, lda, b, CUDA_R_32F, ldb, *beta, c, CUDA_R_32F, ldc);
}
/* alpha and beta are floats (CUBLAS_COMPUTE_32F, the only compute type dtensor_cuda.h asks for) */
static inline cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void *alpha, const void *a, cudaDataType_t at, int lda,
                                          const void *b, cudaDataType_t bt, int ldb, const void *beta, void *c,
                                          cudaDataType_t ct, int ldc, cublasComputeType_t compute,
                                          cublasGemmAlgo_t algo) {
    (void)algo;
    if (compute != CUBLAS_COMPUTE_32F) return CUBLAS_STATUS_INVALID_VALUE;
    return dtcb_gemm(h, ta, tb, m, n, k, *(const float *)alpha, a, at, lda, b, bt, ldb, *(const float *)beta, c, ct,
                     ldc);
}

#endif /* DTCU_STANDIN_CUBLAS_V2_H */

/* dtensor_cuda.h -- CUDA device tensors and an NCCL backend for dtensor.h

   HOW TO USE
   In ONE .cu file of a GPU code:

       #define DTENSOR_IMPLEMENTATION
       #include "dtensor_cuda.h"      (includes dtensor.h; do not include
                                       dtensor.h before it in this file)

   compile it with nvcc and link -lnccl -lcublas (and MPI, BLIS as for
   dtensor.h). Other files include dtensor.h or dtensor_cuda.h without the
   define. Tensors whose desc has `device = DT_CUDA` keep their shard in
   device memory; every dtensor.h call works on them.

   SYNCHRONISATION CONTRACT
   - dtensor's kernels, copies and NCCL calls are enqueued on ONE stream per
     process, dt_cuda_stream() (default: the legacy default stream 0).
     dt_comm_nccl(comm, stream, ...) makes `stream` that stream.
   - Calls that only enqueue device work return before it has run: ops,
     redistributions over NCCL, random fills. Work the caller enqueues on the
     same stream afterwards sees their results; work on another stream must
     wait for an event recorded on dt_cuda_stream().
   - Calls that hand data to the host synchronise the stream before they
     return: dt_tensor_gather / dt_tensor_distribute with host `full`,
     dt_tensor_from_local with DT_COPY from host memory, redistributions
     staged through MPI, the .npy functions.
   - Asynchronous kernel faults surface as DT_ERR_DEVICE from the next call
     that synchronises, with the CUDA error string in dt_last_error().
*/
#ifndef DTENSOR_CUDA_H
#define DTENSOR_CUDA_H

#include <cuda_runtime.h>
#include <nccl.h>

#if defined(DTENSOR_IMPLEMENTATION) && defined(DTENSOR_IMPLEMENTATION_DONE)
#error "dtensor_cuda.h: dtensor.h's implementation is already in this file; include dtensor_cuda.h instead of dtensor.h"
#endif
#ifdef DTENSOR_IMPLEMENTATION
#define DT__CUDA_BUILD 1
#endif
#include "dtensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>cuda-api ---------------------------------------------------------------- */

/* Optional device allocator (a caching pool, RMM, ...). Zero fields mean
   cudaMalloc / cudaFree. */
typedef struct dt_cuda_allocator {
    void *(*alloc)(size_t bytes, void *user); /* NULL on failure             */
    void (*free)(void *p, void *user);
    void *user;
} dt_cuda_allocator;
DT_API void dt_cuda_set_allocator(const dt_cuda_allocator *a); /* NULL: back to cudaMalloc */

/* the stream dtensor enqueues its device work on (see the contract above) */
DT_API void dt_cuda_set_stream(cudaStream_t s);
DT_API cudaStream_t dt_cuda_stream(void);

/* an NCCL communicator as a dtensor backend: device buffers only, all work
   on `stream` (which also becomes dt_cuda_stream()). The ncclComm_t stays
   the caller's; mesh sub-communicators come from ncclCommSplit and are
   destroyed with the dt_comm. */
DT_API dt_status dt_comm_nccl(ncclComm_t comm, cudaStream_t stream, dt_comm **out);

#ifdef __cplusplus
}
#endif
#endif /* DTENSOR_CUDA_H */

#if defined(DTENSOR_IMPLEMENTATION) && !defined(DTENSOR_CUDA_IMPLEMENTATION_DONE)
#define DTENSOR_CUDA_IMPLEMENTATION_DONE

/* >>cuda-device -------------------------------------------------------------
   memory, stream, allocator hook, errors: the dt__device of DT_CUDA */

/* >>cuda-kernels ------------------------------------------------------------
   the dt__kernels table on device memory */

/* >>nccl --------------------------------------------------------------------
   dt_comm_nccl */

#endif /* DTENSOR_IMPLEMENTATION */

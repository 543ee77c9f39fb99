/* dtensor_cuda.h's declarations only (make cuda-strict) */
#include "dtensor_cuda.h"
int dt_strict_decl_only(void);
int dt_strict_decl_only(void) { return dt_comm_nccl(NULL, dt_cuda_stream(), NULL) == DT_OK; }

/* dtensor_cuda.h's implementation in one translation unit (make cuda-strict) */
#define DTENSOR_IMPLEMENTATION
#include "dtensor_cuda.h"
int main(void) { return dt_status_string(DT_OK) == NULL; }

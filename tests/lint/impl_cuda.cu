/* dtensor_cuda.h's implementation in one translation unit (make cuda-strict) */
#define DTENSOR_IMPLEMENTATION
#include "dtensor_cuda.h"
#include "dtensor_layers.h" /* the layers too, in the same file (public API only) */
int main(void) { return dt_status_string(DT_OK) == NULL; }

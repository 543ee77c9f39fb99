/* the implementation in one translation unit (make strict builds it with every
   compiler and option set, as C, C++ and CUDA): dtensor.h's and the layers' */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dtensor_layers.h"
int main(void) { return dt_status_string(DT_OK) == NULL; }

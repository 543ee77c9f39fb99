/* tests/abi/impl.c -- the implementation, default options (tests/abi/run.sh) */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"

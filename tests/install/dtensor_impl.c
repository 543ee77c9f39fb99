/* tests/install/dtensor_impl.c -- the consumer's one file with the implementation */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"

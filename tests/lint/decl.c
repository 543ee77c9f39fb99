/* the declarations only (make strict): the public part compiles on its own;
   with -DDTENSOR_LAYERS_IMPLEMENTATION (decl_layers*), the layers'
   implementation on dtensor.h's public API alone */
#include "dtensor.h"
#include "dtensor_layers.h"
int dt_strict_decl_only(void);
int dt_strict_decl_only(void) { return (int)sizeof(dt_tensor_desc) + (int)sizeof(dt_tp_linear_desc); }

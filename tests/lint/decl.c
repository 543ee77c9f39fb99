/* the declarations only (make strict): the public part compiles on its own */
#include "dtensor.h"
int dt_strict_decl_only(void);
int dt_strict_decl_only(void) { return (int)sizeof(dt_tensor_desc); }

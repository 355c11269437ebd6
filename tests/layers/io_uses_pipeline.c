/* Layer violation: io/ may not include the pipeline's headers; this must fail to compile. */
#include "src/pipeline.h"

int h5g_layer_violation(void) { return 0; }

/* Layer violation: mpi/ may not include kernels/ headers; this must fail to compile. */
#include "kernels/kernels.h"

int h5g_layer_violation(void) { return 0; }

/* Layer violation: kernels/ knows nothing of MPI; this must fail to compile. */
#include <mpi.h>

int h5g_layer_violation() { return 0; }

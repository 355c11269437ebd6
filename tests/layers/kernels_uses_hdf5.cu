/* Layer violation: kernels/ knows nothing of HDF5; this must fail to compile. */
#include <hdf5.h>

int h5g_layer_violation() { return 0; }

/* A filter plugin for the real-file tests: HDF5 loads it from HDF5_PLUGIN_PATH as filter 32000
 * (h5py's LZF id). It stores chunks unchanged, as the fixture writer's in-process filter of that
 * id does (tests/check/h5gsort_fixtures.c), so a file written with it reads back through it. */
#include <H5PLextern.h>

static size_t passthrough(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                          size_t *buf_size, void **buf) {
  (void)flags, (void)cd_nelmts, (void)cd_values, (void)buf_size, (void)buf;
  return nbytes;
}

static const H5Z_class2_t filter = {H5Z_CLASS_T_VERS, (H5Z_filter_t)32000, 1, 1,
                                    "lzf (h5gsort test passthrough)", NULL, NULL, passthrough};

H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_FILTER; }
const void *H5PLget_plugin_info(void) { return &filter; }

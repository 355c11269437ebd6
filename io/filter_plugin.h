/* HDF5 filter plugins decoded by the I/O threads (internal to io/filters.c, whose table lists
 * the plugins whose decode functions were read and found reentrant: see io/filter_plugin.c).
 * Decode only: chunks of outputs with a plugin filter are encoded by HDF5. */
#ifndef H5G_IO_FILTER_PLUGIN_H
#define H5G_IO_FILTER_PLUGIN_H

#include <hdf5.h>
#include <stddef.h>

/* The filter callback of the plugin HDF5 1.10 would load for `id`: the first library named
 * lib*.so* in H5PL's search paths (HDF5_PLUGIN_PATH, else the default directory) whose
 * H5PLget_plugin_info gives a decoder of `id`. NULL when plugins are disabled or none loads.
 * Calling thread only (H5PL* calls); the library stays loaded, as HDF5 keeps its plugins. */
H5Z_func_t h5g_plugin_decoder(H5Z_filter_t id);

/* Runs `fn` backwards (H5Z_FLAG_REVERSE | flags, the ncd parameters HDF5 stored) on a malloc'd
 * copy of in (in_bytes), as HDF5's pipeline does, and copies its result into out (room for
 * cap bytes), *out_bytes set. Thread-safe when fn is. 0 on success; -1 with *why set (a static
 * reason) when the filter fails or its result does not fit. */
int h5g_plugin_decode(H5Z_func_t fn, unsigned flags, size_t ncd, const unsigned *cd,
                      const unsigned char *in, size_t in_bytes, unsigned char *out, size_t cap,
                      size_t *out_bytes, const char **why);

#endif

/* CHECK_H5 for code that calls HDF5 itself (io/, tools/): HDF5 calls return a negative value on
 * failure; that becomes one user-facing runtime error with the message given (printf-style),
 * since HDF5's own error stack is silenced (h5g_io_quiet). Needs base/error.h's H5G_FAIL. */
#ifndef H5G_IO_H5CHECK_H
#define H5G_IO_H5CHECK_H

#include "base/error.h"

#define CHECK_H5(call, ...)                                                                       \
  do {                                                                                            \
    if ((call) < 0) H5G_FAIL(H5G_ERR_RUNTIME, __VA_ARGS__);                                       \
  } while (0)

#endif

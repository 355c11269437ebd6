/* CHECK_H5 for code that calls HDF5 itself (io/, tools/): HDF5 calls return a negative value on
 * failure; that becomes one user-facing runtime error with the message given (printf-style),
 * since HDF5's own error stack is silenced (h5g_io_quiet). Needs base/error.h's H5G_FAIL. Also
 * CLOSE_ID and WHERE_MAX (the length of a "file:dataset" in messages). */
#ifndef H5G_IO_H5CHECK_H
#define H5G_IO_H5CHECK_H

#include "base/error.h"

#define CHECK_H5(call, ...)                                                                       \
  do {                                                                                            \
    if ((call) < 0) H5G_FAIL(H5G_ERR_RUNTIME, __VA_ARGS__);                                       \
  } while (0)

/* Closes an HDF5 id that was opened (cleanup labels of io/ and tools/). */
#define CLOSE_ID(closer, id)                                                                      \
  do {                                                                                            \
    if ((id) >= 0) closer(id);                                                                    \
  } while (0)

#define WHERE_MAX 1024

#endif

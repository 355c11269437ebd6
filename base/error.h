/* Status codes, error records and the CHECK macros used by every layer.
 *
 * Every non-trivial function returns an int status: H5G_OK, H5G_ERR_RUNTIME or H5G_ERR_USAGE
 * (the process exit codes: README, "Exit status"). The first error raised on a rank is kept with
 * the file:line and failing call where it happened; later ones only add to the trace. Functions
 * keep one cleanup label, `done:`, reached by the CHECK macros with `rc` set. */
#ifndef H5G_ERROR_H
#define H5G_ERROR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { H5G_OK = 0, H5G_ERR_RUNTIME = 1, H5G_ERR_USAGE = 2 };

#define H5G_MSG_MAX 512

/* Records an error (first one wins) and returns `code`. The message is what the user reads;
 * file:line are shown with --verbose. */
int h5g_error_set(int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Adds "file:line: call" to the trace of the current error (for propagation through CHECK). */
void h5g_error_trace(const char *file, int line, const char *call);
/* The first error's message, "" if none. */
const char *h5g_error_message(void);
/* The first error's origin and trace ("file:line: call\n..."), "" if none. */
const char *h5g_error_origin(void);
int h5g_error_code(void);
/* Writes `prefix` and `text` to `out` as one line in one write: control characters of `text` (a
 * newline or escape in a file name) as \n, \t, \r or \xHH, so that an error is always one line a
 * script can read. */
void h5g_error_put_line(const char *prefix, const char *text, FILE *out);
/* Replaces the local record, e.g. with the message agreed across ranks. */
void h5g_error_adopt(int code, const char *message);
void h5g_error_clear(void);

#define H5G_FAIL(code, ...)                                                                       \
  do {                                                                                            \
    rc = h5g_error_set((code), __FILE__, __LINE__, __VA_ARGS__);                                  \
    goto done;                                                                                    \
  } while (0)

#define CHECK(call)                                                                               \
  do {                                                                                            \
    int check_status_ = (call);                                                                   \
    if (check_status_ != H5G_OK) {                                                                \
      h5g_error_trace(__FILE__, __LINE__, #call);                                                 \
      rc = check_status_;                                                                         \
      goto done;                                                                                  \
    }                                                                                             \
  } while (0)

#define CHECK_ALLOC(ptr, bytes)                                                                   \
  do {                                                                                            \
    if ((ptr) == NULL && (bytes) != 0)                                                            \
      H5G_FAIL(H5G_ERR_RUNTIME, "out of host memory allocating %zu bytes", (size_t)(bytes));      \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif

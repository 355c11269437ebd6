#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One record per thread: a helper thread (src/transport.c) hands its error over explicitly. */
static _Thread_local struct {
  int code;
  char message[H5G_MSG_MAX];
  char origin[2048];
} g_error;

int h5g_error_set(int code, const char *file, int line, const char *fmt, ...) {
  if (g_error.code == H5G_OK) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_error.message, sizeof g_error.message, fmt, ap);
    va_end(ap);
    g_error.code = code;
    snprintf(g_error.origin, sizeof g_error.origin, "%s:%d", file, line);
  }
  return code;
}

void h5g_error_trace(const char *file, int line, const char *call) {
  size_t used = strlen(g_error.origin);
  if (used + 1 < sizeof g_error.origin)
    snprintf(g_error.origin + used, sizeof g_error.origin - used, "\n  from %s:%d: %s", file, line,
             call);
}

const char *h5g_error_message(void) { return g_error.message; }
const char *h5g_error_origin(void) { return g_error.origin; }
int h5g_error_code(void) { return g_error.code; }

void h5g_error_adopt(int code, const char *message) {
  g_error.code = code;
  snprintf(g_error.message, sizeof g_error.message, "%s", message);
}

void h5g_error_clear(void) { memset(&g_error, 0, sizeof g_error); }

void h5g_error_put_line(const char *prefix, const char *text, FILE *out) {
  size_t lead = strlen(prefix), n = lead;
  /* one write: the line is never split between writes (a launcher's own lines land between
   * two writes of an unbuffered stderr) */
  char *line = malloc(lead + 4 * strlen(text) + 2);
  if (!line) {
    fprintf(out, "%s%s\n", prefix, text);
    return;
  }
  memcpy(line, prefix, lead);
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*p == '\n' || *p == '\t' || *p == '\r') {
      line[n++] = '\\';
      line[n++] = *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r';
    } else if (*p < 0x20 || *p == 0x7f) {
      n += (size_t)snprintf(line + n, 5, "\\x%02x", *p);
    } else {
      line[n++] = (char)*p;
    }
  }
  line[n++] = '\n';
  fwrite(line, 1, n, out);
  free(line);
}

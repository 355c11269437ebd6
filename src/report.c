#include "src/report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

static const char *const phase_names[H5G_PHASE_COUNT] = {
    "validate", "setup", "connect", "buffers", "read", "transform", "local_sort", "splitters", "exchange", "merge", "write",
    "carry", "verify"};

const char *h5g_phase_name(h5g_phase phase) { return phase_names[phase]; }

/* JSON string body: quotes, backslashes and control characters escaped. */
static void put_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

int h5g_report_write_json(const h5g_report *rep, const char *path) {
  int rc = H5G_OK;
  FILE *f = fopen(path, "w");
  if (!f) H5G_FAIL(H5G_ERR_RUNTIME, "cannot write report: %s (%s)", strerror(errno), path);
  double rate = rep->total_seconds > 0 ? (double)rep->n / rep->total_seconds : 0.0;
  fprintf(f, "{\n  \"tool\": \"h5gsort\",\n  \"version\": \"%s\",\n", H5G_VERSION);
  fprintf(f, "  \"ranks\": %d,\n  \"backend\": ", rep->ranks);
  put_json_string(f, rep->backend);
  fputs(",\n  \"exchange\": ", f);
  put_json_string(f, rep->exchange);
  fputs(",\n  \"devices\": ", f);
  put_json_string(f, rep->devices);
  fputs(",\n  \"type\": ", f);
  put_json_string(f, rep->type_name);
  fprintf(f,
          ",\n  \"keys\": %llu,\n  \"bytes\": %llu,\n  \"exchanged_bytes\": %llu,\n"
          "  \"runs_per_rank\": %llu,\n  \"verified\": %s,\n  \"seconds\": {\n",
          (unsigned long long)rep->n, (unsigned long long)rep->bytes,
          (unsigned long long)rep->exchanged_bytes, (unsigned long long)rep->runs_per_rank,
          rep->verified ? "true" : "false");
  for (int p = 0; p < H5G_PHASE_COUNT; p++)
    fprintf(f, "    \"%s\": %.6f,\n", phase_names[p], rep->seconds[p]);
  fprintf(f, "    \"total\": %.6f\n  },\n", rep->total_seconds);
  fprintf(f, "  \"gpu_copy_seconds\": {\"h2d\": %.6f, \"d2h\": %.6f},\n", rep->h2d_seconds,
          rep->d2h_seconds);
  fprintf(f, "  \"gpu_overlap_seconds\": {\"kernels\": %.6f, \"host_waited\": %.6f, \"hidden\": %.6f},\n",
          rep->kernel_seconds, rep->waited_seconds, rep->hidden_seconds);
  fprintf(f, "  \"keys_per_second\": %.1f\n}\n", rate);
  if (fclose(f) != 0) {
    f = NULL;
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot write report: %s (%s)", strerror(errno), path);
  }
  f = NULL;
done:
  if (f) fclose(f);
  return rc;
}

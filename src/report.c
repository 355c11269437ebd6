#include "src/report.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/cpus.h"
#include "base/error.h"
#include "mpi/agree.h"
#include "mpi/launch.h"
#include "src/report_gather.h"

static const char *const phase_names[H5G_PHASE_COUNT] = {
    "validate", "setup", "connect", "buffers", "read", "transform", "local_sort",
    "splitters", "exchange", "merge", "write", "carry", "verify"};

const char *h5g_phase_name(h5g_phase phase) { return phase_names[phase]; }

/* -1 until the first phase; lock-free, so that a signal handler may read it */
static atomic_int phase_now = -1;

void h5g_report_phase(h5g_phase phase) { atomic_store(&phase_now, (int)phase); }

const char *h5g_report_phase_now(void) {
  int phase = atomic_load(&phase_now);
  return phase < 0 ? "startup" : phase_names[phase];
}

void h5g_report_start(h5g_report *rep) {
  struct tm utc;
  time_t now = time(NULL);
  if (gmtime_r(&now, &utc))
    strftime(rep->start_time, sizeof rep->start_time, "%Y-%m-%dT%H:%M:%SZ", &utc);
}

void h5g_report_put_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

/* What ran: the command line, the files and datasets, and how it ended ("succeeded", "failed",
 * "interrupted"). */
static void put_provenance(FILE *f, const h5g_report *rep, const h5g_options *opt,
                           int exit_status, const char *status) {
  fprintf(f, "{\n  \"tool\": \"h5gsort\",\n  \"version\": \"%s\",\n  \"command\": [", H5G_VERSION);
  for (int i = 0; i < opt->argc; i++) {
    if (i) fputs(", ", f);
    h5g_report_put_json_string(f, opt->argv[i]);
  }
  fputs("],\n  \"input\": {\"file\": ", f);
  h5g_report_put_json_string(f, opt->input ? opt->input : "");
  fputs(", \"dataset\": ", f);
  h5g_report_put_json_string(f, opt->dataset ? opt->dataset : "");
  fputs(", \"keys\": [", f); /* in priority order */
  for (int i = 0; opt->dataset && i < h5g_options_key_count(opt); i++) {
    h5g_key_source k = h5g_options_key(opt, i);
    fputs(i ? ", {\"dataset\": " : "{\"dataset\": ", f);
    h5g_report_put_json_string(f, k.dataset);
    if (k.field) {
      fputs(", \"field\": ", f);
      h5g_report_put_json_string(f, k.field);
    }
    if (k.column >= 0) fprintf(f, ", \"column\": %d", k.column);
    fprintf(f, ", \"order\": \"%s\"", k.descending ? "desc" : "asc");
    /* NaN's place: floating-point keys only, or any before the types are known */
    int floating = !rep->type_name[0] || (rep->float_keys >> i & 1u);
    if (k.na && floating)
      fprintf(f, ", \"na_position\": \"%s\"", k.na == H5G_NA_FIRST ? "first" : "last");
    fputc('}', f);
  }
  fputs("]},\n  \"output\": {\"file\": ", f);
  h5g_report_put_json_string(f, opt->output ? opt->output : "");
  fputs(", \"dataset\": ", f);
  h5g_report_put_json_string(f, opt->output_dataset ? opt->output_dataset : "");
  fputs("},\n  \"start_time\": ", f);
  h5g_report_put_json_string(f, rep->start_time);
  fprintf(f, ",\n  \"exit_status\": %d,\n  \"status\": \"%s\",\n", exit_status, status);
}

/* Per rank: host, CPUs and I/O threads. */
static void put_ranks(FILE *f, const h5g_report *rep) {
  fputs("  \"rank_detail\": [", f);
  for (int i = 0; rep->rank_info && i < rep->ranks; i++) {
    const h5g_rank_info *info = &rep->rank_info[i];
    fprintf(f, "%s\n    {\"rank\": %d, \"host\": ", i ? "," : "", i);
    h5g_report_put_json_string(f, info->host);
    fputs(", \"cpus\": ", f);
    h5g_report_put_json_string(f, info->cpu_list);
    fprintf(f, ", \"cpu_count\": %d, \"node_cpus\": %d, \"ranks_on_node\": %d, \"io_threads\": %d}",
            info->cpus, info->cpus_online, info->ranks_on_node, info->io_threads);
  }
  fputs("\n  ],\n", f);
}

int h5g_report_write_json(const h5g_report *rep, const h5g_options *opt, int exit_status,
                          const char *path) {
  int rc = H5G_OK;
  FILE *f = fopen(path, "w");
  if (!f) H5G_FAIL(H5G_ERR_RUNTIME, "cannot write report: %s (%s)", strerror(errno), path);
  put_provenance(f, rep, opt, exit_status, exit_status ? "failed" : "succeeded");
  if (exit_status != 0) { /* what ran, where and why it failed; no figures */
    fputs("  \"phase\": ", f);
    h5g_report_put_json_string(f, h5g_report_phase_now());
    fputs(",\n  \"error\": ", f);
    h5g_report_put_json_string(f, h5g_error_message());
    fputs("\n}\n", f);
    goto close;
  }
  double rate = rep->total_seconds > 0 ? (double)rep->n / rep->total_seconds : 0.0;
  put_ranks(f, rep);
  fprintf(f, "  \"ranks\": %d,\n  \"nodes\": %d,\n  \"backend\": ", rep->ranks, rep->nodes);
  h5g_report_put_json_string(f, rep->backend);
  fputs(",\n  \"exchange\": ", f);
  h5g_report_put_json_string(f, rep->exchange);
  fputs(",\n  \"io_policy\": ", f);
  h5g_report_put_json_string(f, rep->io_policy);
  char library[128];
  h5g_mpi_library(library, sizeof library);
  fputs(",\n  \"mpi_library\": ", f);
  h5g_report_put_json_string(f, library);
  fputs(",\n  \"devices\": ", f);
  h5g_report_put_json_string(f, rep->devices);
  fputs(",\n  \"type\": ", f);
  h5g_report_put_json_string(f, rep->type_name);
  fprintf(f,
          ",\n  \"keys\": %llu,\n  \"rows_written\": %llu,\n  \"bytes\": %llu,\n"
          "  \"exchanged_bytes\": %llu,\n  \"spilled_ranks\": %d,\n"
          "  \"runs_per_rank\": %llu,\n  \"streamed\": %s,\n  \"carried_on_gpu\": %s,\n"
          "  \"sort_passes\": %d,\n  \"verified\": %s,\n"
          "  \"seconds\": {\n",
          (unsigned long long)rep->n, (unsigned long long)rep->rows_written,
          (unsigned long long)rep->bytes,
          (unsigned long long)rep->exchanged_bytes, rep->spilled_ranks,
          (unsigned long long)rep->runs_per_rank, rep->ring_slots ? "true" : "false",
          rep->carried_on_gpu ? "true" : "false", rep->sort_passes,
          rep->verified ? "true" : "false");
  for (int p = 0; p < H5G_PHASE_COUNT; p++)
    fprintf(f, "    \"%s\": %.6f,\n", phase_names[p], rep->seconds[p]);
  fprintf(f, "    \"total\": %.6f\n  },\n", rep->total_seconds);
  fprintf(f, "  \"startup_seconds\": {\"mpi_init\": %.6f, \"gpu_context\": %.6f, "
          "\"gpu_context_waited\": %.6f},\n", rep->startup.mpi_init, rep->startup.context,
          rep->startup.context_waited);
  fprintf(f, "  \"teardown_seconds\": {\"input_close\": %.6f, \"unpin\": %.6f, "
          "\"unpin_waited\": %.6f},\n", rep->teardown.input_close, rep->teardown.unpin,
          rep->teardown.unpin_waited);
  fprintf(f, "  \"gpu_copy_seconds\": {\"h2d\": %.6f, \"d2h\": %.6f},\n", rep->h2d_seconds,
          rep->d2h_seconds);
  fprintf(f, "  \"gpu_overlap_seconds\": {\"kernels\": %.6f, \"host_waited\": %.6f, "
          "\"hidden\": %.6f},\n", rep->kernel_seconds, rep->waited_seconds, rep->hidden_seconds);
  fprintf(f, "  \"keys_per_second\": %.1f\n}\n", rate);
close:
  if (fclose(f) != 0) {
    f = NULL;
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot write report: %s (%s)", strerror(errno), path);
  }
  f = NULL;
done:
  if (f) fclose(f);
  return rc;
}

char *h5g_report_interrupted_head(const h5g_report *rep, const h5g_options *opt) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  put_provenance(f, rep, opt, 1, "interrupted");
  fputs("  \"phase\": \"", f);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

int h5g_report_starved_ranks(const h5g_report *rep) {
  int starved = 0;
  for (int i = 0; rep->rank_info && i < rep->ranks; i++) {
    const h5g_rank_info *info = &rep->rank_info[i];
    starved += info->cpus == 1 && info->cpus_online > info->ranks_on_node;
  }
  return starved;
}

void h5g_report_nodes(const h5g_report *rep, char *text, size_t len) {
  size_t used = 0;
  text[0] = '\0';
  for (int i = 0; rep->rank_info && i < rep->ranks && used < len; i++) {
    int first = 1, ranks = 0;
    for (int j = 0; j < rep->ranks; j++)
      if (strcmp(rep->rank_info[j].host, rep->rank_info[i].host) == 0) {
        first &= j >= i;
        ranks++;
      }
    if (first)
      used += (size_t)snprintf(text + used, len - used, "%s%s (%d rank%s)", used ? ", " : "",
                               rep->rank_info[i].host, ranks, ranks == 1 ? "" : "s");
  }
}

void h5g_report_free(h5g_report *rep) {
  free(rep->rank_info);
  rep->rank_info = NULL;
}

/* Collective: every rank's host, CPUs and I/O threads, to rank 0 (its buffer agreed on first). */
static int gather_rank_info(const h5g_run *r, const h5g_plan *plan, h5g_report *rep) {
  int rc = H5G_OK;
  h5g_rank_info mine;
  size_t bytes = r->rank == 0 ? (size_t)r->size * sizeof mine : 0;
  memset(&mine, 0, sizeof mine);
  if (gethostname(mine.host, sizeof mine.host - 1) != 0) snprintf(mine.host, sizeof mine.host, "?");
  h5g_cpus_list(mine.cpu_list, sizeof mine.cpu_list);
  mine.cpus = plan->cpus;
  mine.cpus_online = h5g_cpus_online();
  mine.ranks_on_node = plan->ranks_on_node;
  mine.io_threads = plan->io_threads;
  if (bytes) rep->rank_info = malloc(bytes);
  CHECK(h5g_agree_alloc(r->comm, rep->rank_info != NULL, bytes));
  CHECK_MPI(MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, rep->rank_info, (int)sizeof mine,
                       MPI_BYTE, 0, r->comm));
  for (int i = 0; rep->rank_info && i < r->size; i++) {
    int first = 1;
    for (int j = 0; j < i && first; j++)
      first = strcmp(rep->rank_info[j].host, rep->rank_info[i].host) != 0;
    rep->nodes += first;
  }
done:
  return rc;
}

/* Collective: the slowest rank's phase times, start-up and tear-down so far and GPU figures, the
 * bytes sent, the distinct device names and every rank's CPUs (gathered by rank 0, whose buffers
 * are agreed on first). */
int h5g_report_gather(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                      const h5g_extent *e, double total_seconds, h5g_report *rep) {
  int rc = H5G_OK;
  const h5g_backend *be = r->be;
  enum { NAME = sizeof be->device_name };
  char *names = NULL;
  size_t names_bytes = r->rank == 0 ? (size_t)r->size * NAME : 0;
  char start_time[sizeof rep->start_time]; /* main's (h5g_report_start) */
  memcpy(start_time, rep->start_time, sizeof start_time);
  memset(rep, 0, sizeof *rep);
  memcpy(rep->start_time, start_time, sizeof start_time);
  CHECK(gather_rank_info(r, plan, rep));
  CHECK_MPI(MPI_Reduce(r->metrics.seconds, rep->seconds, H5G_PHASE_COUNT, MPI_DOUBLE, MPI_MAX, 0,
                       r->comm));
  CHECK_MPI(MPI_Reduce(&total_seconds, &rep->total_seconds, 1, MPI_DOUBLE, MPI_MAX, 0, r->comm));
  const h5g_startup *up = &r->metrics.startup;
  const h5g_teardown *down = &r->metrics.teardown;
  double edges[6] = {up->mpi_init, up->context, up->context_waited, down->input_close, down->unpin,
                     down->unpin_waited},
         slowest_edges[6] = {0, 0, 0, 0, 0, 0};
  CHECK_MPI(MPI_Reduce(edges, slowest_edges, 6, MPI_DOUBLE, MPI_MAX, 0, r->comm));
  rep->startup = (h5g_startup){slowest_edges[0], slowest_edges[1], slowest_edges[2]};
  rep->teardown.input_close = slowest_edges[3];
  rep->teardown.unpin = slowest_edges[4];
  rep->teardown.unpin_waited = slowest_edges[5];
  double device = be->h2d_seconds + be->d2h_seconds + be->kernel_seconds;
  double gpu[5] = {be->h2d_seconds, be->d2h_seconds, be->kernel_seconds, be->waited_seconds,
                   device > be->waited_seconds ? device - be->waited_seconds : 0},
         slowest[5] = {0, 0, 0, 0, 0};
  CHECK_MPI(MPI_Reduce(gpu, slowest, 5, MPI_DOUBLE, MPI_MAX, 0, r->comm));
  rep->h2d_seconds = slowest[0];
  rep->d2h_seconds = slowest[1];
  rep->kernel_seconds = slowest[2];
  rep->waited_seconds = slowest[3];
  rep->hidden_seconds = slowest[4];
  CHECK_MPI(MPI_Reduce(&r->metrics.exchanged_bytes, &rep->exchanged_bytes, 1, MPI_UINT64_T,
                       MPI_SUM, 0, r->comm));
  CHECK_MPI(MPI_Reduce(&plan->spills, &rep->spilled_ranks, 1, MPI_INT, MPI_SUM, 0, r->comm));
  CHECK_MPI(MPI_Reduce(&r->metrics.carried_on_gpu, &rep->carried_on_gpu, 1, MPI_INT, MPI_MAX, 0,
                       r->comm));
  if (names_bytes) names = malloc(names_bytes);
  CHECK(h5g_agree_alloc(r->comm, names != NULL, names_bytes));
  CHECK_MPI(MPI_Gather(be->device_name, NAME, MPI_CHAR, names, NAME, MPI_CHAR, 0, r->comm));
  for (int i = 0; names && i < r->size; i++) {
    const char *name = names + (size_t)i * NAME;
    if (strstr(rep->devices, name)) continue;
    size_t used = strlen(rep->devices);
    snprintf(rep->devices + used, sizeof rep->devices - used, "%s%s", used ? ", " : "", name);
  }
  rep->n = v->info.n;
  rep->rows_written = e->out_total;
  rep->width = plan->ks.width;
  rep->bytes = rep->n * rep->width;
  rep->runs_per_rank = plan->nruns;
  rep->ring_slots = plan->streamed ? H5G_RING_SLOTS : 0; /* one rank */
  rep->slot_bytes = plan->slot_elems * plan->ks.width;
  rep->sort_passes = v->composed ? v->layout.words : 1;
  rep->ranks = r->size;
  rep->verified = r->opt->verify;
  snprintf(rep->type_name, sizeof rep->type_name, "%s", v->info.type_name);
  rep->float_keys = 0;
  for (int i = 0; i < v->layout.count; i++)
    if (v->layout.key[i].cls == H5G_KEY_FLOAT) rep->float_keys |= 1u << i;
  snprintf(rep->backend, sizeof rep->backend, "%s", be->name);
  snprintf(rep->exchange, sizeof rep->exchange, "%s", h5g_transport_name(r->transport));
  snprintf(rep->io_policy, sizeof rep->io_policy, "%s", h5g_io_policy_name(plan->io_policy));
done:
  free(names);
  return rc;
}

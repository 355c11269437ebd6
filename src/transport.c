#include "src/transport.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpi/agree.h"
#include "mpi/exchange.h"
#include "base/error.h"
#ifdef H5G_HAVE_NCCL
#include "kernels/nccl_exchange.h"
#endif

struct h5g_transport {
  MPI_Comm comm;
  int host_via_nccl; /* host buffers too go through NCCL (--exchange nccl) */
  int used_device;   /* an exchange of device buffers took place */
  int uses_nccl;      /* NCCL chosen: connected, or being connected by `connector` */
#ifdef H5G_HAVE_NCCL
  h5g_nccl *nccl;
  /* the connection, made in the background while the pipeline reads its slice */
  pthread_t connector;
  int connecting, connect_rc, rank, size, device;
  uint64_t staging_bytes;
  char id[256], connect_error[H5G_MSG_MAX];
#endif
};

#ifdef H5G_HAVE_NCCL
static void *connect_in_background(void *arg) {
  h5g_transport *t = arg;
  t->connect_rc = h5g_nccl_create(&t->nccl, t->id, t->rank, t->size, t->device, t->staging_bytes);
  if (t->connect_rc != H5G_OK) /* errors are per thread: hand it over */
    snprintf(t->connect_error, sizeof t->connect_error, "%s", h5g_error_message());
  return NULL;
}

/* Rank 0 makes the NCCL id, every rank receives it and starts joining the communicator in a
 * background thread: NCCL's set-up, long next to the read
 * (bench/RESULTS.md, "Third run: device-resident path"), then overlaps the reading of the slice.
 * It uses no MPI; h5g_transport_wait collects its status. */
static int connect_nccl(h5g_transport *t, int device, uint64_t staging_bytes) {
  int rc = H5G_OK;
  MPI_Comm_rank(t->comm, &t->rank);
  MPI_Comm_size(t->comm, &t->size);
  t->device = device;
  t->staging_bytes = staging_bytes;
  if (h5g_nccl_id_bytes() > sizeof t->id) H5G_FAIL(H5G_ERR_RUNTIME, "NCCL id larger than expected");
  CHECK(h5g_agree(t->comm, t->rank == 0 ? h5g_nccl_make_id(t->id) : H5G_OK));
  CHECK_MPI(MPI_Bcast(t->id, (int)h5g_nccl_id_bytes(), MPI_BYTE, 0, t->comm));
  t->uses_nccl = 1;
  t->connecting = pthread_create(&t->connector, NULL, connect_in_background, t) == 0;
  if (!t->connecting) connect_in_background(t); /* no thread: connect now */
done:
  return rc;
}
#endif

int h5g_transport_wait(h5g_transport *t) {
  int rc = H5G_OK;
#ifdef H5G_HAVE_NCCL
  if (t->connecting) pthread_join(t->connector, NULL);
  t->connecting = 0;
  if (t->uses_nccl && t->connect_rc != H5G_OK)
    H5G_FAIL(t->connect_rc, "%s", t->connect_error);
done:
#endif
  (void)t;
  return rc;
}

int h5g_transport_open(MPI_Comm comm, h5g_exchange_choice choice, int gpu_per_rank,
                       int device_buffers, int device, uint64_t staging_bytes,
                       h5g_transport **out) {
  int rc = H5G_OK, size;
  MPI_Comm_size(comm, &size);
  h5g_transport *t = calloc(1, sizeof *t);
  CHECK(h5g_agree(comm, t ? H5G_OK : h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                                   "out of host memory")));
  t->comm = comm;
#ifdef H5G_HAVE_NCCL
  if (choice == H5G_EXCHANGE_NCCL && !gpu_per_rank)
    H5G_FAIL(H5G_ERR_USAGE, "--exchange nccl needs the CUDA backend on every rank, each rank on a "
             "GPU of its own");
  /* auto: NCCL for keys that stay on the GPUs (the pipeline asks for it across nodes), MPI for
   * host buffers, which NCCL would stage through the GPUs, slower than MPI on one node
   * (bench/RESULTS.md, "End to end (bench/e2e.sh)": its first run, 2026-11-22). One rank
   * exchanges nothing: no communicator to build. */
  t->host_via_nccl = choice == H5G_EXCHANGE_NCCL;
  if (size > 1 && (choice == H5G_EXCHANGE_NCCL ||
                   (choice == H5G_EXCHANGE_AUTO && gpu_per_rank && device_buffers)))
    CHECK(connect_nccl(t, device, staging_bytes));
#else
  (void)gpu_per_rank;
  (void)device_buffers;
  (void)device;
  (void)staging_bytes;
  if (choice == H5G_EXCHANGE_NCCL)
    H5G_FAIL(H5G_ERR_USAGE, "this h5gsort was built without NCCL; use --exchange mpi or auto");
#endif
  *out = t;
  t = NULL;
done:
  h5g_transport_close(t);
  return rc;
}

int h5g_transport_exchange(h5g_transport *t, const void *send, const uint64_t *send_counts,
                           void *recv, const uint64_t *recv_counts, size_t elem_size) {
#ifdef H5G_HAVE_NCCL
  if (t->uses_nccl && t->host_via_nccl) {
    int rc = h5g_transport_wait(t);
    return rc != H5G_OK ? rc : h5g_nccl_exchange(t->nccl, send, send_counts, recv, recv_counts, elem_size);
  }
#endif
  return h5g_exchange(t->comm, send, send_counts, recv, recv_counts, elem_size);
}

int h5g_transport_moves_device_buffers(const h5g_transport *t) { return t->uses_nccl; }

int h5g_transport_exchange_device(h5g_transport *t, const void *send, const uint64_t *send_counts,
                                  void *recv, const uint64_t *recv_counts, size_t elem_size) {
  int rc = H5G_OK;
#ifdef H5G_HAVE_NCCL
  if (t->uses_nccl) {
    t->used_device = 1;
    CHECK(h5g_transport_wait(t));
    return h5g_nccl_exchange_device(t->nccl, send, send_counts, recv, recv_counts, elem_size);
  }
#endif
  (void)send, (void)send_counts, (void)recv, (void)recv_counts, (void)elem_size;
  H5G_FAIL(H5G_ERR_RUNTIME, "internal error: the %s transport cannot move device buffers",
           h5g_transport_name(t));
done:
  return rc;
}

const char *h5g_transport_name(const h5g_transport *t) {
  return t && (t->host_via_nccl || t->used_device) ? "nccl" : "mpi";
}

void h5g_transport_close(h5g_transport *t) {
  if (!t) return;
#ifdef H5G_HAVE_NCCL
  if (t->connecting) pthread_join(t->connector, NULL);
  h5g_nccl_destroy(t->nccl);
#endif
  free(t);
}

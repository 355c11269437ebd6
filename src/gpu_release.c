/* The GPU given back behind the write (issue 30). The context's release (cudaDeviceReset, 0.057 s
 * for a 4 GiB run on the H100) ran after the report, beside MPI_Finalize, and the user waited for
 * it; the device's last work, the copy back of the sorted keys, ends early in the write. The
 * unpinning must come first (an unpin after the release would make a context again), so one
 * thread does both, in that order. */
#include "src/gpu_release.h"

#include "mpi/launch.h"

/* Whether the GPU may go before MPI_Finalize: the backend has a device, and nothing but it uses
 * the context (MPI built for GPU memory, or NCCL's communicator, would use it to the end). */
static int may_release_early(const h5g_run *r) {
  return r->be && r->be->release_device && !h5g_mpi_may_use_gpu() &&
         !(r->transport && h5g_transport_moves_device_buffers(r->transport));
}

static double seconds_since(double start) { return MPI_Wtime() - start; }

static void *release_in_background(void *arg) {
  h5g_gpu_release *g = arg;
  g->unpin = h5g_buffers_unpin_wait(g->set);
  pthread_mutex_lock(&g->lock);
  while (!g->go) pthread_cond_wait(&g->told, &g->lock);
  pthread_mutex_unlock(&g->lock);
  double start = MPI_Wtime();
  g->be->release_device(g->be);
  g->release = seconds_since(start);
  return NULL;
}

void h5g_gpu_release_begin(h5g_run *r, h5g_buffer_set *set) {
  h5g_gpu_release *g = &r->release;
  h5g_buffers_unpin_start(set);
  g->set = set;
  g->begun = 1;
  if (!may_release_early(r)) return;
  g->be = r->be;
  pthread_mutex_init(&g->lock, NULL);
  pthread_cond_init(&g->told, NULL);
  g->running = pthread_create(&g->thread, NULL, release_in_background, g) == 0;
  if (!g->running) { /* the context then goes at the exit, as before */
    pthread_cond_destroy(&g->told);
    pthread_mutex_destroy(&g->lock);
  }
}

void h5g_gpu_release_go(h5g_run *r) {
  h5g_gpu_release *g = &r->release;
  if (!g->running) return;
  pthread_mutex_lock(&g->lock);
  g->go = 1;
  pthread_cond_signal(&g->told);
  pthread_mutex_unlock(&g->lock);
}

void h5g_gpu_release_end(h5g_run *r) {
  h5g_gpu_release *g = &r->release;
  h5g_teardown *t = &r->metrics.teardown;
  if (!g->begun) return;
  double start = MPI_Wtime();
  if (g->running) {
    h5g_gpu_release_go(r);
    pthread_join(g->thread, NULL);
    g->running = 0;
    pthread_cond_destroy(&g->told);
    pthread_mutex_destroy(&g->lock);
  } else {
    g->unpin = h5g_buffers_unpin_wait(g->set);
  }
  g->begun = 0;
  t->unpin = g->unpin;
  t->gpu_release = g->release;
  t->unpin_waited = seconds_since(start);
}

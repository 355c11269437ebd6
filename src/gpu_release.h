/* The host buffers unpinned and the GPU given back behind the write (src/gpu_release.c): what the
 * process's exit would do, done while the output is still being written. */
#ifndef H5G_SRC_GPU_RELEASE_H
#define H5G_SRC_GPU_RELEASE_H

#include "src/run.h"

/* Starts unpinning the host buffers (no GPU copy is issued from or into them any more) and, where
 * the GPU may go before MPI_Finalize (the backend has a device, and neither MPI nor NCCL may use
 * it), a thread that gives it back after the unpinning, once h5g_gpu_release_go says that no
 * device work is left. */
void h5g_gpu_release_begin(h5g_run *r, h5g_buffer_set *set);
/* No device work is left on this rank: every copy back was waited for. Safe to repeat, and
 * before h5g_gpu_release_begin (then nothing happens). */
void h5g_gpu_release_go(h5g_run *r);
/* Waits for both (telling the thread to go: any work under way is waited for first), and puts
 * how long each took in r->metrics.teardown. Safe to repeat, and without a begin. */
void h5g_gpu_release_end(h5g_run *r);

#endif

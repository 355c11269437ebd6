/* The CUDA backend as the pipeline sees it (a C header: no CUDA types): the backend's creation,
 * its context made in a thread while the host does work that needs no GPU, and device queries.
 * Implemented in backend_context.cu, or by the stand-ins of cuda_absent.c in a build without
 * CUDA, which answer that there is no GPU. */
#ifndef H5G_KERNELS_CUDA_BACKEND_H
#define H5G_KERNELS_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "base/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `local_rank` picks the GPU (local rank modulo device count); mem_budget 0 means "most of the
 * free device memory". Returns H5G_ERR_RUNTIME with a message when the build has no CUDA or no
 * GPU is visible. */
int h5g_backend_cuda_create(h5g_backend **out, int local_rank, uint64_t mem_budget);
/* Sets the CUDA driver's settings this process wants where the user set none
 * (CUDA_DEVICE_MAX_CONNECTIONS: kernels/tuning.cuh, DEVICE_CONNECTIONS). Call before any thread
 * starts (setenv must not race a getenv) and before any CUDA call; nothing without CUDA. */
void h5g_cuda_environment(void);
/* The CUDA context of this rank's GPU, made in a background thread while rank 0 inspects the
 * input (src/pipeline.c), so that the driver's start overlaps the validation.
 * start: the GPU is the one the backend picks for `local_rank`; *w is NULL where nothing was
 * started (no CUDA in this build, or no thread could be made: the backend then makes it).
 * finish: joins and frees it (safe with NULL); its error when `needed` (the run uses the GPU: a
 * context that cannot be made stops it), else H5G_OK; *seconds (unless NULL) is how long the
 * making took. */
typedef struct h5g_cuda_warmup h5g_cuda_warmup;
int h5g_cuda_warmup_start(int local_rank, h5g_cuda_warmup **w);
int h5g_cuda_warmup_finish(h5g_cuda_warmup *w, int needed, double *seconds);
/* Number of visible CUDA devices (0 without CUDA support or without a GPU). */
int h5g_cuda_device_count(void);
/* Free memory of CUDA device `device` in bytes (0 without CUDA support or without a GPU). */
uint64_t h5g_cuda_free_memory(int device);
/* What --version says of the CUDA backend built: 1 and "CUDA runtime 12.4, architectures 90"
 * (the runtime's headers and CMAKE_CUDA_ARCHITECTURES of the build) in buf; 0 and "" in a
 * build without CUDA. */
int h5g_cuda_build(char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif

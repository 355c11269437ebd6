/* Host buffers that are resident before they are used: 2 MiB-aligned, advised to use transparent
 * huge pages, and first touched by several threads at once. A slice buffer of the pipeline is
 * written in full anyway (the read), so making it resident up front costs nothing extra, and done
 * this way it is cheap enough to pin afterwards (bench/host_buffers.cu, H200 machine, 4 GiB:
 * cudaMallocHost 1.40 s; this + cudaHostRegister 0.15 s). */
#ifndef H5G_HOST_MEMORY_H
#define H5G_HOST_MEMORY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* *p = a resident buffer of `bytes` (NULL for 0 bytes). Returns an h5g status. */
int h5g_resident_alloc(size_t bytes, void **p);
void h5g_resident_free(void *p);

#ifdef __cplusplus
}
#endif
#endif

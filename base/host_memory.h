/* Host buffers that are resident before they are used: 2 MiB-aligned, advised to use transparent
 * huge pages, and first touched by several threads at once. A slice buffer of the pipeline is
 * written in full anyway (the read), so making it resident up front costs nothing extra, and done
 * this way it is cheap enough to pin afterwards: this and cudaHostRegister take a small part of
 * what cudaMallocHost takes (bench/RESULTS.md, "Host slice buffers (bench/host_buffers.cu)"). */
#ifndef H5G_HOST_MEMORY_H
#define H5G_HOST_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Pinned buffers are registered in pieces of this many bytes (a power of two), each starting at a
 * multiple of it in the address space, so that a GPU copy split where h5g_pin_span says never
 * spans two registrations. 128 MiB, the read's piece, unless H5GSORT_PIN_PIECE_BYTES says
 * otherwise (read once; a power of two from 4096 to 2^36, other values ignored; the tests' many
 * small pieces). */
size_t h5g_pin_piece_bytes(void);
/* The bytes of [p, p + bytes) before the next registration boundary (at most `bytes`). */
size_t h5g_pin_span(const void *p, size_t bytes);

/* *p = a resident buffer of `bytes` (NULL for 0 bytes), touched by this process's share of the
 * cores when `ranks_on_node` processes of the node make buffers at once. Returns an h5g status. */
int h5g_resident_alloc(size_t bytes, int ranks_on_node, void **p);
/* *p = a buffer of `bytes` on huge pages where the system has them, not touched ahead: its first
 * writers (the threads of a read into it) make it resident as they go, two megabytes a fault.
 * Anonymous memory even while the run spills (as malloc's would be): a transient buffer of a
 * read, not one of the buffers that spill. */
int h5g_untouched_alloc(size_t bytes, void **p);
/* Releases what h5g_resident_alloc or h5g_untouched_alloc made of `bytes` (safe with NULL). */
void h5g_resident_free(void *p, size_t bytes);

/* A buffer that grows with the rows but is not touched ahead (the route of carried rows): on
 * huge pages (the C library's below one), or from a scratch file while the run spills
 * (base/scratch_memory.h), so that it spills with the buffers; its first writer (often MPI's one
 * thread) faults it in two megabytes a fault. NULL when none can be had; h5g_bulk_free (safe
 * with NULL) knows which it is. */
void *h5g_bulk_alloc(size_t bytes);
void h5g_bulk_free(void *p);

/* Buffers made ready in a background thread, in order, so the pipeline reads into the first
 * pieces while the rest is still being made resident and pinned (which takes about as long as
 * reading them). Buffer i holds bufs[i].n elements of bufs[i].elem_bytes.
 * It is made resident in pieces of at most piece_bytes; with `pin` also pinned piece by piece, in
 * pieces of h5g_pin_piece_bytes() (one registration each, released by `unpin`), so that the GPU
 * copies of its first pieces run while the rest is still being made ready (pinned whole, 4 GiB
 * were pinned only as the read ended, and went up after it:
 * bench/RESULTS.md, "Host buffers pinned in pieces"). */
typedef struct {
  size_t n, elem_bytes;
  void *p; /* set by h5g_buffers_start (NULL for n == 0); not to be touched before it is ready */
  /* Its first writer (the read's threads) makes it resident as it goes: not touched ahead unless
   * it is to be pinned. With few cores a touch thread beside the read's threads made the read
   * much slower than a raw pread into fresh memory
   * (bench/RESULTS.md, "CPU backend read phase"). */
  int filled_in_place;
  /* While the run spills: the scratch file it is (a run that can be resumed, src/resume.h), kept
   * as it is with reuse_file, else of no name until h5g_buffers_name_scratch; NULL: a file of no
   * name */
  const char *scratch_file;
  int reuse_file;
} h5g_buffer_spec;
typedef int (*h5g_pin_fn)(void *ctx, void *p, size_t bytes);
typedef void (*h5g_unpin_fn)(void *ctx, void *p);
typedef struct h5g_buffer_set h5g_buffer_set;

int h5g_buffers_start(h5g_buffer_spec *bufs, int count, size_t piece_bytes, int ranks_on_node,
                      h5g_pin_fn pin, h5g_unpin_fn unpin, void *ctx, h5g_buffer_set **set);
/* Blocks until the first `upto` elements of buffer `which` are resident (they may be written);
 * returns the helper's error, if it failed. */
int h5g_buffers_wait(h5g_buffer_set *set, int which, size_t upto);
/* True once the first `upto` elements of buffer `which` are pinned (a GPU copy may use them);
 * never blocks. */
int h5g_buffers_pinned(h5g_buffer_set *set, int which, size_t upto);
/* Blocks until the first `upto` elements of buffer `which` are resident and pinned. */
int h5g_buffers_wait_pinned(h5g_buffer_set *set, int which, size_t upto);
/* Blocks until every buffer is resident and pinned. */
int h5g_buffers_wait_all(h5g_buffer_set *set);
/* Starts unpinning every buffer in a background thread, once no GPU copy is issued from or into
 * them any more (after h5g_buffers_wait_all; the unpin waits for copies under way): the memory
 * stays, to be read and written. Unpinning large buffers takes a while, and leaving them pinned
 * to the process's exit (or _exit) costs the exit as much. Behind the write of the output none
 * of it is waited for; it slows the write a little, and whole runs end sooner
 * (bench/RESULTS.md, "Start-up and tear-down"). Safe with NULL. */
void h5g_buffers_unpin_start(h5g_buffer_set *set);
/* Waits for that; returns how long the unpinning took (0 when none ran). Safe with NULL. */
double h5g_buffers_unpin_wait(h5g_buffer_set *set);
/* The buffers' new scratch files named (their scratch_file): a state is recorded in them. An h5g
 * status. */
int h5g_buffers_name_scratch(h5g_buffer_set *set);
/* Waits for the helper, unpins and frees every buffer. Safe with NULL. */
void h5g_buffers_free(h5g_buffer_set *set);

#ifdef __cplusplus
}
#endif
#endif

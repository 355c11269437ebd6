/* Work split among threads: the caller's thread takes part 0, each other part runs on a worker
 * thread (kept between calls: base/parallel.c), and a part for which no worker can be had runs
 * on the caller's, so a failed pthread_create only slows the work down. Calls may be made from
 * several threads at once. */
#ifndef H5G_PARALLEL_H
#define H5G_PARALLEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { H5G_MAX_PARTS = 256 };

/* fn(ctx, part, parts) for every part in [0, parts) (clamped to 1..H5G_MAX_PARTS), in parallel;
 * returns when all are done. */
void h5g_parallel(int parts, void (*fn)(void *ctx, int part, int parts), void *ctx);

/* Part `part` of `parts` of n units (rows, pages, bytes): [*begin, *end), the parts' sizes
 * differing by one unit at most, every unit in exactly one part. */
static inline void h5g_share(size_t n, int part, int parts, size_t *begin, size_t *end) {
  *begin = n * (size_t)part / (size_t)parts;
  *end = n * (size_t)(part + 1) / (size_t)parts;
}

/* Parts for n units, each taking at least `least` of them, at most `threads` (and at least 1). */
static inline int h5g_parts(size_t n, size_t least, int threads) {
  size_t most = n / least;
  return most < 1 ? 1 : threads < 1 ? 1 : (size_t)threads < most ? threads : (int)most;
}
/* n elements of `width` bytes copied from src, one every src_stride bytes, to dst, one every
 * dst_stride bytes (a field of rows taken out, or put in), each byte-swapped when `swap`, with
 * up to `threads` threads. */
void h5g_parallel_strided(void *dst, size_t dst_stride, const void *src, size_t src_stride,
                          size_t width, size_t n, int swap, int threads);
/* n rows of `count` fields made from columns: field j (widths[j] bytes) of row i taken from
 * columns + (widths[0] + ... + widths[j-1]) * n + i * widths[j]; up to `threads` threads. Rows
 * are made in blocks that stay in the cache, so each row's line is fetched once, not per field. */
void h5g_parallel_interleave(void *rows, const void *columns, const size_t *widths, int count,
                             size_t n, int threads);
/* Its inverse: the n rows split into their columns. */
void h5g_parallel_split(void *columns, const void *rows, const size_t *widths, int count,
                        size_t n, int threads);
/* One contiguous copy of a gathered copy. */
typedef struct {
  void *dst;
  const void *src;
  size_t bytes;
} h5g_copy_segment;

/* Copies every segment (none overlapping another) with up to `threads` threads, each taking an
 * equal share of the bytes of all of them together, whatever their sizes. */
void h5g_parallel_copy(const h5g_copy_segment *segments, size_t count, int threads);

#ifdef __cplusplus
}
#endif
#endif

/* Issue 30, measured before it is built: a 1-GPU run's data path (the dataset's bytes read, sent
 * to the GPU, brought back, written) with and without a slice-sized pinned host buffer. No HDF5,
 * no MPI, no sort: the bytes' way alone, beside the fastest raw copy (bench_raw_io mmap) in
 * bench/e2e.sh.
 *   bench_staged_io slice|ring IN OFFSET BYTES OUT [THREADS [SLOT_MIB [SLOTS [verify]]]]
 *                                                   (16 threads, 128 MiB, 4 slots)
 *   slice  today's path: the whole slice in a host buffer made resident by THREADS threads and
 *          registered in SLOT_MIB pieces; each piece read (THREADS threads of pread) and sent
 *          up; then every piece sent back into it, each copied into a shared mapping of OUT
 *          once it is back; then unregistered (h5gsort unpins behind the write, which that
 *          slows: its whole is the measure there)
 *   ring   SLOTS pinned slots of SLOT_MIB: each piece read into the next slot once the slot's
 *          last copy up is done, and sent up from it; then the pieces come back into the slots
 *          SLOTS ahead of the copy into the mapping, each slot refilled once copied out
 * The output mapping is made as io/direct.c makes it (fallocate, MAP_SHARED, MADV_HUGEPAGE).
 * Prints the seconds of each step; `verify` then compares OUT with the input's bytes (outside
 * the steps, not in a timed run). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "base/parallel.h"
#include "tests/support/check_cuda.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum Move { TOUCH, READ, COPY };

/* One piece moved by the threads: each takes an equal share of its 4 KiB pages. */
struct PieceMove {
  Move what;
  int fd;
  char *dst;
  const char *src;
  size_t bytes;
  off_t offset; /* READ: where the piece lies in the file */
  int error;    /* READ: an errno value */
};

static void move_part(void *ctx, int part, int parts) {
  PieceMove *m = (PieceMove *)ctx;
  size_t begin, end;
  h5g_share((m->bytes + 4095) / 4096, part, parts, &begin, &end);
  begin *= 4096;
  end = end * 4096 < m->bytes ? end * 4096 : m->bytes;
  if (m->what == TOUCH) {
    for (size_t i = begin; i < end; i += 4096) m->dst[i] = 0;
  } else if (m->what == COPY) {
    memcpy(m->dst + begin, m->src + begin, end - begin);
  } else {
    for (size_t at = begin; at < end;) {
      ssize_t n = pread(m->fd, m->dst + at, end - at, m->offset + (off_t)at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        m->error = n < 0 ? errno : EIO; /* a race between parts is harmless: any error stops */
        return;
      }
      at += (size_t)n;
    }
  }
}

static int move_piece(Move what, int fd, char *dst, const char *src, size_t bytes, off_t offset,
                      int threads) {
  PieceMove m = {what, fd, dst, src, bytes, offset, 0};
  h5g_parallel(threads, move_part, &m);
  return m.error;
}

/* Anonymous memory aligned to `align` (a power of two), advised to use huge pages. */
static char *map_aligned(size_t bytes, size_t align) {
  char *base = (char *)mmap(NULL, bytes + align, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return NULL;
  char *p = (char *)(((uintptr_t)base + align - 1) & ~(uintptr_t)(align - 1));
  madvise(p, bytes, MADV_HUGEPAGE);
  return p; /* the room before and after stays mapped: the process ends soon */
}

static int verify(const char *in_path, off_t offset, const char *out_path, size_t bytes) {
  const size_t chunk = (size_t)64 << 20;
  char *a = (char *)malloc(chunk), *b = (char *)malloc(chunk);
  int in = open(in_path, O_RDONLY), out = open(out_path, O_RDONLY), same = a && b && in >= 0 && out >= 0;
  for (size_t at = 0; same && at < bytes; at += chunk) {
    size_t n = bytes - at < chunk ? bytes - at : chunk;
    same = pread(in, a, n, offset + (off_t)at) == (ssize_t)n &&
           pread(out, b, n, (off_t)at) == (ssize_t)n && memcmp(a, b, n) == 0;
  }
  free(a);
  free(b);
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  return same;
}

int main(int argc, char **argv) {
  if (argc < 6 || argc > 10 || (strcmp(argv[1], "slice") != 0 && strcmp(argv[1], "ring") != 0)) {
    fprintf(stderr, "usage: bench_staged_io slice|ring IN OFFSET BYTES OUT [THREADS [SLOT_MIB "
                    "[SLOTS [verify]]]]\n");
    return 2;
  }
  const bool ring = strcmp(argv[1], "ring") == 0;
  const off_t offset = (off_t)strtoll(argv[3], NULL, 10);
  const size_t bytes = (size_t)strtoull(argv[4], NULL, 10);
  const int threads = argc > 6 && atoi(argv[6]) > 0 ? atoi(argv[6]) : 16;
  const size_t slot = (argc > 7 && atoi(argv[7]) > 0 ? (size_t)atoi(argv[7]) : 128) << 20;
  const size_t slots_wanted = argc > 8 && atoi(argv[8]) > 0 ? (size_t)atoi(argv[8]) : 4;
  const bool check = argc > 9 && strcmp(argv[9], "verify") == 0;
  const size_t pieces = (bytes + slot - 1) / slot;
  if (bytes == 0) return 2;
  const size_t slots = ring ? (slots_wanted < pieces ? slots_wanted : pieces) : pieces;
  double t[6];
  t[0] = now();
  MUST_CUDA(cudaFree(0));
  char *dev = NULL;
  MUST_CUDA(cudaMalloc(&dev, bytes));
  cudaStream_t stream;
  MUST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t *done = (cudaEvent_t *)calloc(slots, sizeof *done);
  for (size_t i = 0; i < slots; i++)
    MUST_CUDA(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
  t[1] = now();

  /* the host memory: resident, then registered (the slice in slot-sized pieces) */
  const size_t host_bytes = ring ? slots * slot : bytes;
  char *host = map_aligned(host_bytes, slot);
  if (!host) return 1;
  move_piece(TOUCH, -1, host, NULL, host_bytes, 0, threads);
  for (size_t at = 0; at < host_bytes; at += slot)
    MUST_CUDA(cudaHostRegister(host + at, host_bytes - at < slot ? host_bytes - at : slot,
                               cudaHostRegisterDefault));
  t[2] = now();

  /* read + H2D: piece k through slot k (the slice) or k % slots (the ring) */
  int in = open(argv[2], O_RDONLY);
  if (in < 0) return 1;
  for (size_t k = 0; k < pieces; k++) {
    const size_t s = k % slots, len = bytes - k * slot < slot ? bytes - k * slot : slot;
    if (k >= slots) MUST_CUDA(cudaEventSynchronize(done[s])); /* the slot's copy up is done */
    int error = move_piece(READ, in, host + s * slot, NULL, len, offset + (off_t)(k * slot), threads);
    if (error) {
      fprintf(stderr, "bench_staged_io: read: %s\n", strerror(error));
      return 1;
    }
    MUST_CUDA(cudaMemcpyAsync(dev + k * slot, host + s * slot, len, cudaMemcpyHostToDevice, stream));
    MUST_CUDA(cudaEventRecord(done[s], stream));
  }
  MUST_CUDA(cudaStreamSynchronize(stream));
  close(in);
  t[3] = now();

  /* D2H + write into the output's mapping, piece k once it is back */
  int out = open(argv[5], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (out < 0 || fallocate(out, 0, 0, (off_t)bytes) != 0) return 1;
  char *mapped = (char *)mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, out, 0);
  if (mapped == MAP_FAILED) return 1;
  madvise(mapped, bytes, MADV_HUGEPAGE);
  for (size_t k = 0; k < slots; k++) { /* the first `slots` pieces (the slice: all) start back */
    const size_t len = bytes - k * slot < slot ? bytes - k * slot : slot;
    MUST_CUDA(cudaMemcpyAsync(host + k * slot, dev + k * slot, len, cudaMemcpyDeviceToHost, stream));
    MUST_CUDA(cudaEventRecord(done[k], stream));
  }
  for (size_t k = 0; k < pieces; k++) {
    const size_t s = k % slots, len = bytes - k * slot < slot ? bytes - k * slot : slot;
    MUST_CUDA(cudaEventSynchronize(done[s]));
    move_piece(COPY, -1, mapped + k * slot, host + s * slot, len, 0, threads);
    const size_t next = k + slots; /* the ring: the slot takes the piece `slots` ahead */
    if (next < pieces) {
      const size_t next_len = bytes - next * slot < slot ? bytes - next * slot : slot;
      MUST_CUDA(cudaMemcpyAsync(host + s * slot, dev + next * slot, next_len,
                                cudaMemcpyDeviceToHost, stream));
      MUST_CUDA(cudaEventRecord(done[s], stream));
    }
  }
  munmap(mapped, bytes);
  if (close(out) != 0) return 1;
  t[4] = now();

  for (size_t at = 0; at < host_bytes; at += slot) MUST_CUDA(cudaHostUnregister(host + at));
  MUST_CUDA(cudaFree(dev));
  t[5] = now();
  const bool same = !check || verify(argv[2], offset, argv[5], bytes);
  printf("%s: context+device %.3f host %.3f read+h2d %.3f d2h+write %.3f unpin+free %.3f total "
         "%.3f; %zu bytes, %zu MiB slots x %zu, %d threads%s\n", argv[1], t[1] - t[0], t[2] - t[1],
         t[3] - t[2], t[4] - t[3], t[5] - t[4], t[5] - t[0], bytes, slot >> 20, slots, threads,
         !check ? "" : same ? ", output verified" : ", OUTPUT DIFFERS from the input");
  return same ? 0 : 1;
}

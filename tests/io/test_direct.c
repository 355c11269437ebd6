/* io/direct.c on its own: what a direct transfer writes (pwrite and mapped) reads back byte for
 * byte, at file offsets that are not page-aligned, in pieces and split among 1 to 16 threads,
 * for sizes whose split leaves a remainder (bytes = 16 * 4096 * k + 8 on 16 threads lost its last
 * 8 bytes once); the bytes around the range stay; a mapped write whose file is cut short under it
 * (SIGBUS) fails with an error instead of killing the process, and leaves SIGBUS's action and
 * the thread's signal mask as they were. Argument: a path prefix for its file, removed at the
 * end. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "io/direct.h"
#include "tests/support/check.h"

static char path[4096];

static void fill_file(size_t bytes, unsigned char value) {
  FILE *f = fopen(path, "wb");
  unsigned char block[4096];
  memset(block, value, sizeof block);
  for (size_t done = 0; f && done < bytes; done += sizeof block)
    fwrite(block, 1, bytes - done < sizeof block ? bytes - done : sizeof block, f);
  if (f) fclose(f);
}

static int read_file(unsigned char *out, size_t bytes) {
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(out, 1, bytes, f) : 0;
  if (f) fclose(f);
  return got == bytes;
}

static void round_trip(h5g_direct_how how, off_t offset, uint64_t rows, size_t row_bytes,
                       int threads) {
  size_t bytes = rows * row_bytes, total = (size_t)offset + bytes + 100;
  unsigned char *data = malloc(bytes), *file = malloc(total), *back = malloc(bytes);
  EXPECT(data && file && back, "out of memory");
  if (!data || !file || !back) goto done;
  uint64_t state = rows * 31 + (uint64_t)offset;
  for (size_t i = 0; i < bytes; i++) data[i] = (unsigned char)test_rand(&state);
  fill_file(total, 0xEE);
  int rc = h5g_direct_transfer(path, offset, (char *)data, rows, row_bytes, how, threads,
                               h5g_io_piece_bytes(), NULL, NULL, "test");
  EXPECT(rc == H5G_OK, "write (how %d, offset %lld, %llu rows, %d threads): %s", (int)how,
         (long long)offset, (unsigned long long)rows, threads, h5g_error_message());
  EXPECT(read_file(file, total), "file shorter than %zu bytes", total);
  int around = 1;
  for (size_t i = 0; i < (size_t)offset; i++) around &= file[i] == 0xEE;
  for (size_t i = (size_t)offset + bytes; i < total; i++) around &= file[i] == 0xEE;
  EXPECT(around, "bytes around the range changed (how %d, offset %lld, %llu rows)", (int)how,
         (long long)offset, (unsigned long long)rows);
  EXPECT(memcmp(file + offset, data, bytes) == 0, "written bytes differ (how %d, offset %lld, "
         "%llu rows of %zu, %d threads)", (int)how, (long long)offset, (unsigned long long)rows,
         row_bytes, threads);
  memset(back, 0, bytes);
  rc = h5g_direct_transfer(path, offset, (char *)back, rows, row_bytes, H5G_DIRECT_READ, threads,
                           h5g_io_piece_bytes(), NULL, NULL, "test");
  EXPECT(rc == H5G_OK && memcmp(back, data, bytes) == 0,
         "read back differs (offset %lld, %llu rows of %zu, %d threads)", (long long)offset,
         (unsigned long long)rows, row_bytes, threads);
done:
  free(data);
  free(file);
  free(back);
}

/* Cuts the file to its first page once the first piece is written. */
static int cut_after_first(void *ctx, uint64_t first, uint64_t count, int moved) {
  (void)count;
  if (moved && first == 0) EXPECT(truncate(path, 4096) == 0, "truncate");
  (void)ctx;
  return H5G_OK;
}

static void cut_short_under_mapping(void) {
  uint64_t rows = 1 << 20; /* 8 MiB of u8 in pieces of 1 MiB (H5GSORT_IO_PIECE_BYTES) */
  uint64_t *data = calloc(rows, sizeof *data);
  struct sigaction before, after;
  sigset_t mask;
  EXPECT(data != NULL, "out of memory");
  if (!data) return;
  fill_file(4096, 0);
  sigaction(SIGBUS, NULL, &before);
  int rc = h5g_direct_transfer(path, 4096, (char *)data, rows, sizeof *data, H5G_DIRECT_MAPPED, 4,
                               h5g_io_piece_bytes(), cut_after_first, NULL, "test");
  EXPECT(rc != H5G_OK && strstr(h5g_error_message(), "cannot write the dataset"),
         "a file cut short under the mapping: rc %d, \"%s\"", rc, h5g_error_message());
  sigaction(SIGBUS, NULL, &after);
  EXPECT(after.sa_handler == before.sa_handler && after.sa_flags == before.sa_flags,
         "SIGBUS's action was not given back");
  pthread_sigmask(SIG_BLOCK, NULL, &mask);
  EXPECT(!sigismember(&mask, SIGBUS), "SIGBUS left blocked after the jump");
  free(data);
}

int main(int argc, char **argv) {
  snprintf(path, sizeof path, "%s.bin", argc > 1 ? argv[1] : "test_direct");
  setenv("H5GSORT_IO_PIECE_BYTES", "1048576", 1);
  const h5g_direct_how writes[] = {H5G_DIRECT_PWRITE, H5G_DIRECT_MAPPED};
  const off_t offsets[] = {0, 2048, 4096 + 8};
  for (int w = 0; w < 2; w++)
    for (int o = 0; o < 3; o++) {
      round_trip(writes[w], offsets[o], 8193, 8, 16);     /* 65544 bytes: 16 pages + 8 */
      round_trip(writes[w], offsets[o], 131073, 8, 16);   /* a full piece, then 8 bytes */
      round_trip(writes[w], offsets[o], 300001, 4, 3);
      round_trip(writes[w], offsets[o], 1, 8, 16);
      round_trip(writes[w], offsets[o], 1000, 27, 1);
    }
  cut_short_under_mapping();
  unlink(path);
  return test_summary("test_direct");
}

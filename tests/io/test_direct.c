/* io/direct.c on its own: what a direct transfer writes (pwrite and mapped) reads back byte for
 * byte, at file offsets that are not page-aligned, in pieces and split among 1 to 16 threads,
 * for sizes whose split leaves a remainder (bytes = 16 * 4096 * k + 8 on 16 threads lost its last
 * 8 bytes once); the bytes around the range stay; a mapped write whose file is cut short under it
 * (SIGBUS) fails with an error instead of killing the process, and leaves SIGBUS's action and
 * the thread's signal mask as they were. A SHARED write (the multi-node policy) aligns every
 * thread's pwrite to its unit (checked against fake block sizes) and writes what the piece
 * callback made of each piece before calling it back. Argument: a path prefix for its file,
 * removed at the end. */
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

/* The SHARED unit for a file system's block size: a multiple of it, at least 1 MiB, not more
 * than needed. */
static void shared_unit(void) {
  const long blocks[] = {0, -1, 512, 3000, 4096, 65536, 1 << 20, 1572864, 4 << 20, 16 << 20};
  for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++) {
    long b = blocks[i] > 0 ? blocks[i] : 4096;
    off_t unit = h5g_direct_shared_unit(blocks[i]);
    EXPECT(unit % b == 0 && unit >= H5G_DIRECT_SHARED_MIN_BYTES &&
           unit < H5G_DIRECT_SHARED_MIN_BYTES + b, "block %ld: unit %lld", blocks[i],
           (long long)unit);
  }
}

/* The file ranges a SHARED write of rows [0, rows) at `offset` makes, as h5g_direct_transfer
 * makes them (pieces of `piece` rows, each written up to h5g_direct_written_end, split among
 * `threads`): together [offset, end) once, in order, and every range starts and ends on a
 * multiple of the unit but at offset and end. */
static void shared_pieces_aligned(long block, off_t offset, uint64_t rows, size_t row_bytes,
                                  uint64_t piece, int threads) {
  off_t unit = h5g_direct_shared_unit(block), end = offset + (off_t)(rows * row_bytes);
  off_t written = offset, covered = offset;
  int aligned = 1;
  for (uint64_t first = 0; first < rows; first += piece) {
    uint64_t count = rows - first < piece ? rows - first : piece;
    off_t to = h5g_direct_written_end(offset + (off_t)((first + count) * row_bytes), end, unit);
    for (int p = 0; to > written && p < threads; p++) {
      off_t from, upto;
      h5g_direct_split(written, (size_t)(to - written), unit, p, threads, &from, &upto);
      if (upto == from) continue;
      aligned &= from == covered && (from == offset || from % unit == 0) &&
                 (upto == end || upto % unit == 0);
      covered = upto;
    }
    if (to > written) written = to;
  }
  EXPECT(aligned && covered == end, "block %ld, offset %lld, %llu rows of %zu in pieces of %llu "
         "rows, %d threads: a range off the unit, or [%lld, %lld) not covered once",
         block, (long long)offset, (unsigned long long)rows, row_bytes, (unsigned long long)piece,
         threads, (long long)offset, (long long)end);
}

/* What a SHARED write's callback sees: each piece turned into the file's form before it is
 * written (here: every byte inverted) and back once it is in the file, as src/write.c converts
 * keys to a big-endian output's order. */
typedef struct {
  unsigned char *data;
  size_t row_bytes;
  uint64_t moved_rows; /* rows called back as moved, in order */
  int ok;
} inverting;

static int invert_piece(void *ctx, uint64_t first, uint64_t count, int moved) {
  inverting *w = ctx;
  unsigned char *rows = w->data + first * w->row_bytes, *file = malloc(count * w->row_bytes);
  FILE *f = moved ? fopen(path, "rb") : NULL;
  if (moved) { /* in the file by now, inverted, and called back once, in order */
    w->ok &= f && file && first == w->moved_rows &&
             fseeko(f, (off_t)(first * w->row_bytes), SEEK_SET) == 0 &&
             fread(file, w->row_bytes, count, f) == count;
    for (size_t i = 0; w->ok && i < count * w->row_bytes; i++)
      w->ok &= file[i] == rows[i];
    w->moved_rows += count;
  }
  for (size_t i = 0; i < count * w->row_bytes; i++) rows[i] = (unsigned char)~rows[i];
  if (f) fclose(f);
  free(file);
  return H5G_OK;
}

static void shared_write_calls_back(uint64_t rows, size_t row_bytes, uint64_t piece_bytes) {
  size_t bytes = rows * row_bytes;
  unsigned char *data = malloc(bytes), *copy = malloc(bytes);
  EXPECT(data && copy, "out of memory");
  if (!data || !copy) goto done;
  uint64_t state = rows;
  for (size_t i = 0; i < bytes; i++) copy[i] = data[i] = (unsigned char)test_rand(&state);
  fill_file(0, 0);
  inverting w = {data, row_bytes, 0, 1};
  int rc = h5g_direct_transfer(path, 0, (char *)data, rows, row_bytes, H5G_DIRECT_SHARED, 3,
                               piece_bytes, invert_piece, &w, "test");
  EXPECT(rc == H5G_OK && w.ok && w.moved_rows == rows && memcmp(data, copy, bytes) == 0,
         "SHARED write of %llu rows of %zu in pieces of %llu bytes: rc %d, %llu rows called back "
         "(%s), buffer %s", (unsigned long long)rows, row_bytes, (unsigned long long)piece_bytes,
         rc, (unsigned long long)w.moved_rows, w.ok ? "in the file" : "NOT in the file first",
         memcmp(data, copy, bytes) == 0 ? "restored" : "CHANGED");
done:
  free(data);
  free(copy);
}

int main(int argc, char **argv) {
  snprintf(path, sizeof path, "%s.bin", argc > 1 ? argv[1] : "test_direct");
  setenv("H5GSORT_IO_PIECE_BYTES", "1048576", 1);
  const h5g_direct_how writes[] = {H5G_DIRECT_PWRITE, H5G_DIRECT_MAPPED, H5G_DIRECT_SHARED};
  const off_t offsets[] = {0, 2048, 4096 + 8};
  for (int w = 0; w < 3; w++)
    for (int o = 0; o < 3; o++) {
      round_trip(writes[w], offsets[o], 8193, 8, 16);     /* 65544 bytes: 16 pages + 8 */
      round_trip(writes[w], offsets[o], 131073, 8, 16);   /* a full piece, then 8 bytes */
      round_trip(writes[w], offsets[o], 300001, 4, 3);
      round_trip(writes[w], offsets[o], 1, 8, 16);
      round_trip(writes[w], offsets[o], 1000, 27, 1);
    }
  cut_short_under_mapping();
  shared_unit();
  const long blocks[] = {4096, 3000, 1572864, 4 << 20};
  for (int b = 0; b < 4; b++)
    for (int o = 0; o < 3; o++)
      for (int threads = 1; threads <= 16; threads *= 4) {
        shared_pieces_aligned(blocks[b], offsets[o], 3000001, 4, 1 << 20, threads);
        shared_pieces_aligned(blocks[b], offsets[o], 3000001, 4, 77777, threads); /* < a unit */
        shared_pieces_aligned(blocks[b], offsets[o], 100003, 27, 5000, threads);
        shared_pieces_aligned(blocks[b], offsets[o], 1000, 8, 64, threads); /* inside one unit */
      }
  shared_write_calls_back(1000003, 4, 1 << 20);
  shared_write_calls_back(1000003, 4, 100000); /* pieces smaller than the unit */
  shared_write_calls_back(77777, 12, 4096);
  unlink(path);
  return test_summary("test_direct");
}

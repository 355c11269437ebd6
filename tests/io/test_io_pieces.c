/* io/'s collective transfers in pieces (io/h5io.h), run at 1..4 ranks. Each rank moves its slice
 * [r*N/P, (r+1)*N/P) of datasets of 1-, 2-, 4- and 8-byte elements and of 2-D rows (3 x int16),
 * for N = 0, 1, 2, 3 (N < P), 10, 101 and 1000 rows, in pieces of 1, 3 and 7 rows
 * (H5GSORT_IO_PIECE_BYTES, also a size that is not a whole number of rows) and the default.
 *  - h5g_io_write_each / h5g_io_read_each call back before and after each piece: the pieces
 *    cover exactly the slice, in order, before/after in pairs, count > 0, each as long as the
 *    piece size allows; a read's rows are still untouched before their piece and hold the data
 *    after it; a write takes the rows the caller fills in its before-callback;
 *  - h5g_io_read gives back what was written, and so does a serial HDF5 read on rank 0 at the
 *    end (the reference: the test's own generated values, never io/'s reading);
 *  - a callback that fails, on any rank, before or after any piece, fails the transfer on every
 *    rank with the callback's status and message, and no rank goes on to a later piece or is left
 *    waiting in a collective call (each such transfer runs under a 60 s alarm);
 *  - the datasets come from a file made by plain HDF5 on rank 0 and from h5g_io_create_file +
 *    h5g_io_create_index; no HDF5 object is left open.
 * Usage: test_io_pieces PREFIX (files PREFIX_plain.h5 and PREFIX_index.h5, removed at the end). */
#include <hdf5.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "io/h5io.h"
#include "tests/support/check_mpi.h"
#include "tests/support/keys.h"

static int rank, size;

/* --- datasets and their contents ------------------------------------------------------------ */

typedef struct {
  const char *name;
  unsigned width, row_elems;
} layout;

static const layout layouts[] = {{"u8", 1, 1}, {"u16", 2, 1}, {"u32", 4, 1}, {"u64", 8, 1},
                                 {"i16x3", 2, 3}};
enum { NLAYOUTS = sizeof layouts / sizeof layouts[0], INDEX_LAYOUT = 3 /* uint64, 1-D */ };

static const uint64_t sizes[] = {0, 1, 2, 3, 10, 101, 1000};
enum { NSIZES = sizeof sizes / sizeof sizes[0] };

static hid_t file_type(const layout *l) {
  if (l->row_elems > 1) return H5T_STD_I16LE;
  return l->width == 1 ? H5T_STD_U8LE : l->width == 2 ? H5T_STD_U16LE : l->width == 4 ? H5T_STD_U32LE : H5T_STD_U64LE;
}

static size_t row_bytes(const layout *l) { return (size_t)l->width * l->row_elems; }

/* Element e of dataset `ds` as written by generation `gen` (each write changes every value). */
static uint64_t value_at(unsigned ds, unsigned gen, uint64_t e) {
  uint64_t state = ((uint64_t)ds << 48) ^ ((uint64_t)gen << 32) ^ e;
  return test_rand(&state);
}

/* Rows [row, row + count) of dataset `ds`, generation `gen`, as raw little-endian bytes. */
static void fill_rows(uint8_t *buf, const layout *l, unsigned ds, unsigned gen, uint64_t row,
                      uint64_t count) {
  for (uint64_t i = 0; i < count * l->row_elems; i++)
    test_store(buf, i, l->width, value_at(ds, gen, row * l->row_elems + i));
}

/* The first of `count` rows (file rows from `row`) that differs from generation `gen`. */
static uint64_t first_wrong_row(const uint8_t *buf, const layout *l, unsigned ds, unsigned gen,
                                uint64_t row, uint64_t count) {
  for (uint64_t i = 0; i < count * l->row_elems; i++)
    if (test_load_key(buf, i, l->width) != (value_at(ds, gen, row * l->row_elems + i) & test_width_mask(l->width)))
      return i / l->row_elems;
  return count;
}

enum { POISON = 0xee };

static int untouched(const uint8_t *buf, size_t bytes) {
  for (size_t i = 0; i < bytes; i++)
    if (buf[i] != POISON) return 0;
  return 1;
}

/* --- the callback --------------------------------------------------------------------------- */

/* What one transfer's callbacks saw, and the failure to inject (fail_rank -1: none). */
typedef struct {
  int reading;      /* read: check the rows; write: fill them in the before-callback */
  uint8_t *buf;     /* this rank's slice */
  const layout *l;
  unsigned ds, gen;
  uint64_t row, rows, piece_rows; /* the slice and the rows one piece holds */
  uint64_t next;                  /* first row of the next piece */
  uint64_t open_first, open_count;
  int open;                       /* between a piece's before and after */
  uint64_t pieces, last_piece;    /* pieces completed; index of the last one seen */
  int fail_rank, fail_moved, fail_code, failed;
  uint64_t fail_piece;
  const char *what;
} piece_log;

static void log_start(piece_log *c, int reading, uint8_t *buf, const layout *l, unsigned ds,
                      unsigned gen, uint64_t row, uint64_t rows, uint64_t piece_rows, const char *what) {
  memset(c, 0, sizeof *c);
  c->reading = reading;
  c->buf = buf;
  c->l = l;
  c->ds = ds;
  c->gen = gen;
  c->row = row;
  c->rows = rows;
  c->piece_rows = piece_rows;
  c->fail_rank = -1;
  c->what = what;
}

static int on_piece(void *ctx, uint64_t first, uint64_t count, int moved) {
  piece_log *c = ctx;
  const size_t rb = row_bytes(c->l);
  const uint64_t piece = first / c->piece_rows;
  EXPECT(!c->failed, "%s: callback at row %llu after the callback failed", c->what, (unsigned long long)first);
  EXPECT(moved == 0 || moved == 1, "%s: moved = %d", c->what, moved);
  if (count == 0 || first > c->rows || count > c->rows - first) {
    EXPECT(0, "%s: piece [%llu, +%llu) outside the slice of %llu rows", c->what,
           (unsigned long long)first, (unsigned long long)count, (unsigned long long)c->rows);
    return H5G_OK;
  }
  c->last_piece = piece;
  if (!moved) {
    const uint64_t left = c->rows - first;
    EXPECT(!c->open, "%s: before-callback of row %llu inside the piece at %llu", c->what,
           (unsigned long long)first, (unsigned long long)c->open_first);
    EXPECT(first == c->next, "%s: piece starts at row %llu, not %llu", c->what,
           (unsigned long long)first, (unsigned long long)c->next);
    EXPECT(count == (left < c->piece_rows ? left : c->piece_rows), "%s: piece at %llu has %llu rows "
           "(pieces of %llu, %llu left)", c->what, (unsigned long long)first, (unsigned long long)count,
           (unsigned long long)c->piece_rows, (unsigned long long)left);
    c->open = 1;
    c->open_first = first;
    c->open_count = count;
    if (c->reading)
      EXPECT(untouched(c->buf + first * rb, count * rb), "%s: rows [%llu, +%llu) read before their piece",
             c->what, (unsigned long long)first, (unsigned long long)count);
    else
      fill_rows(c->buf + first * rb, c->l, c->ds, c->gen, c->row + first, count);
  } else {
    EXPECT(c->open && first == c->open_first && count == c->open_count,
           "%s: after-callback [%llu, +%llu) without its before-callback", c->what,
           (unsigned long long)first, (unsigned long long)count);
    c->open = 0;
    c->next = first + count;
    c->pieces++;
    if (c->reading) {
      uint64_t wrong = first_wrong_row(c->buf + first * rb, c->l, c->ds, c->gen, c->row + first, count);
      EXPECT(wrong == count, "%s: row %llu wrong after its piece was read", c->what,
             (unsigned long long)(first + wrong));
    }
  }
  if (rank == c->fail_rank && piece == c->fail_piece && moved == c->fail_moved) {
    c->failed = 1;
    return h5g_error_set(c->fail_code, __FILE__, __LINE__, "injected failure %s piece %llu",
                         moved ? "after" : "before", (unsigned long long)piece);
  }
  return H5G_OK;
}

/* After a transfer that succeeded: the pieces covered the slice. */
static void check_covered(const piece_log *c) {
  const uint64_t pieces = (c->rows + c->piece_rows - 1) / c->piece_rows;
  EXPECT(!c->open && c->next == c->rows && c->pieces == pieces,
         "%s: pieces covered rows [0, %llu) in %llu pieces, not [0, %llu) in %llu", c->what,
         (unsigned long long)c->next, (unsigned long long)c->pieces, (unsigned long long)c->rows,
         (unsigned long long)pieces);
}

/* --- transfers ------------------------------------------------------------------------------ */

static uint64_t slice_begin(int r, uint64_t n) { return (uint64_t)r * n / (uint64_t)size; }

/* H5GSORT_IO_PIECE_BYTES for `setting` (0: unset; else that many bytes) and the rows it gives. */
static uint64_t set_piece_bytes(uint64_t bytes, size_t rb) {
  char text[32];
  if (bytes) {
    snprintf(text, sizeof text, "%llu", (unsigned long long)bytes);
    setenv("H5GSORT_IO_PIECE_BYTES", text, 1);
  } else {
    unsetenv("H5GSORT_IO_PIECE_BYTES");
  }
  const uint64_t expected = bytes ? bytes : (uint64_t)1 << 30;
  EXPECT(h5g_io_piece_bytes() == expected, "piece bytes %llu with H5GSORT_IO_PIECE_BYTES=%llu",
         (unsigned long long)h5g_io_piece_bytes(), (unsigned long long)bytes);
  return expected / rb ? expected / rb : 1;
}

/* Writes generation `gen` of this rank's slice with h5g_io_write_each, then reads it back with
 * h5g_io_read and with h5g_io_read_each, under every piece size. */
static void check_transfers(h5g_dset *d, const layout *l, unsigned ds, unsigned *gen, uint64_t n) {
  const size_t rb = row_bytes(l);
  const uint64_t row = slice_begin(rank, n), rows = slice_begin(rank + 1, n) - row;
  /* piece sizes in bytes: 1 (one row), 3 rows, just under 4 rows (3), 7 rows, the default */
  const uint64_t settings[] = {1, 3 * rb, 4 * rb - 1, 7 * rb, 0};
  uint8_t *buf = malloc(rows * rb + 1);
  char what[160];
  EXPECT(h5g_io_row_bytes(d) == rb, "%s: row bytes %zu, not %zu", l->name, h5g_io_row_bytes(d), rb);
  for (size_t s = 0; s < sizeof settings / sizeof *settings; s++) {
    if (n > 101 && settings[s] && settings[s] < 7 * rb) continue; /* hundreds of collective calls */
    const uint64_t piece_rows = set_piece_bytes(settings[s], rb);
    piece_log c;
    ++*gen;
    snprintf(what, sizeof what, "%s N=%llu pieces of %llu rows, rank %d: write", l->name,
             (unsigned long long)n, (unsigned long long)piece_rows, rank);
    memset(buf, POISON, rows * rb + 1);
    log_start(&c, 0, buf, l, ds, *gen, row, rows, piece_rows, what);
    EXPECT(h5g_io_write_each(d, row, rows, buf, on_piece, &c) == H5G_OK, "%s: %s", what, h5g_error_message());
    check_covered(&c);

    memset(buf, POISON, rows * rb + 1);
    EXPECT(h5g_io_read(d, row, rows, buf) == H5G_OK, "%s: read: %s", what, h5g_error_message());
    uint64_t wrong = first_wrong_row(buf, l, ds, *gen, row, rows);
    EXPECT(wrong == rows, "%s, then read: row %llu differs", what, (unsigned long long)(row + wrong));
    EXPECT(buf[rows * rb] == POISON, "%s: read past the slice", what);

    snprintf(what, sizeof what, "%s N=%llu pieces of %llu rows, rank %d: read_each", l->name,
             (unsigned long long)n, (unsigned long long)piece_rows, rank);
    memset(buf, POISON, rows * rb + 1);
    log_start(&c, 1, buf, l, ds, *gen, row, rows, piece_rows, what);
    EXPECT(h5g_io_read_each(d, row, rows, buf, on_piece, &c) == H5G_OK, "%s: %s", what, h5g_error_message());
    check_covered(&c);
    wrong = first_wrong_row(buf, l, ds, *gen, row, rows);
    EXPECT(wrong == rows, "%s: row %llu differs", what, (unsigned long long)(row + wrong));
    h5g_error_clear();
  }
  free(buf);
}

/* The failure case under way, for the alarm to name. */
static char failure_case[200];
static size_t failure_case_len;

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "test_io_pieces: FAILED: a transfer did not return within 60 s (a rank "
                            "left waiting in a collective call): ";
  if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0 ||
      write(STDERR_FILENO, failure_case, failure_case_len) < 0 || write(STDERR_FILENO, "\n", 1) < 0)
    _exit(3);
  _exit(3);
}

/* A callback failing on `fail_rank` before or after piece `fail_piece` of a write (rewriting
 * generation `gen`, so the data stays as it was) or a read: every rank fails, none hangs. */
static void check_failure(h5g_dset *d, const layout *l, unsigned ds, unsigned gen, uint64_t n,
                          int reading, int fail_rank, uint64_t fail_piece, int fail_moved, int code) {
  const size_t rb = row_bytes(l);
  const uint64_t row = slice_begin(rank, n), rows = slice_begin(rank + 1, n) - row;
  const uint64_t piece_rows = set_piece_bytes(3 * rb, rb);
  uint8_t *buf = malloc(rows * rb + 1);
  char *what = failure_case;
  snprintf(what, sizeof failure_case, "%s N=%llu: %s failing on rank %d %s piece %llu with status "
           "%d, rank %d", l->name, (unsigned long long)n, reading ? "read" : "write", fail_rank,
           fail_moved ? "after" : "before", (unsigned long long)fail_piece, code, rank);
  failure_case_len = strlen(what);
  memset(buf, POISON, rows * rb + 1);
  piece_log c;
  log_start(&c, reading, buf, l, ds, gen, row, rows, piece_rows, what);
  c.fail_rank = fail_rank;
  c.fail_piece = fail_piece;
  c.fail_moved = fail_moved;
  c.fail_code = code;
  alarm(60);
  int status = reading ? h5g_io_read_each(d, row, rows, buf, on_piece, &c)
                       : h5g_io_write_each(d, row, rows, buf, on_piece, &c);
  alarm(0);
  int *all = malloc(sizeof(int) * (size_t)size);
  MUST_MPI(MPI_Allgather(&status, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
  for (int r = 0; r < size; r++)
    EXPECT(all[r] == code, "%s: rank %d returned %d", what, r, all[r]);
  EXPECT(rank != fail_rank || c.failed, "%s: the callback did not fail", what);
  /* every rank holds the failing rank's error, so any rank can report it */
  EXPECT(strstr(h5g_error_message(), "injected failure") != NULL, "%s: message '%s'", what,
         h5g_error_message());
  /* The pieces move in lockstep: no rank goes past the piece that failed. */
  EXPECT(c.pieces == 0 || c.last_piece <= fail_piece, "%s: went on to piece %llu", what,
         (unsigned long long)c.last_piece);
  h5g_error_clear();
  free(all);
  free(buf);
}

/* Every failure point of a rank: its first and its last piece, before and after, both ways. */
static void check_failures(h5g_dset *d, const layout *l, unsigned ds, unsigned gen, uint64_t n) {
  const uint64_t piece_rows = 3;
  int fail_ranks[2] = {0, size - 1};
  for (int k = 0; k < 2 && (k == 0 || size > 1); k++) {
    const int r = fail_ranks[k];
    const uint64_t rows = slice_begin(r + 1, n) - slice_begin(r, n);
    if (rows == 0) continue; /* no piece, no callback */
    const uint64_t last = (rows + piece_rows - 1) / piece_rows - 1;
    for (int reading = 0; reading <= 1; reading++)
      for (int moved = 0; moved <= 1; moved++)
        for (uint64_t piece = 0; piece <= last; piece += last ? last : 1) {
          check_failure(d, l, ds, gen, n, reading, r, piece, moved, H5G_ERR_RUNTIME);
          check_failure(d, l, ds, gen, n, reading, r, piece, moved, H5G_ERR_USAGE);
        }
  }
}

/* --- files ---------------------------------------------------------------------------------- */

static void dataset_name(char *name, size_t len, const layout *l, uint64_t n) {
  snprintf(name, len, "/%s/n%llu", l->name, (unsigned long long)n);
}

/* Rank 0 alone, with plain HDF5: every layout at every size, contiguous. */
static int create_plain(const char *path) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  int ok = f >= 0 && lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0;
  for (int k = 0; ok && k < NLAYOUTS; k++)
    for (int s = 0; ok && s < NSIZES; s++) {
      char name[64];
      hsize_t dims[2] = {sizes[s], layouts[k].row_elems};
      dataset_name(name, sizeof name, &layouts[k], sizes[s]);
      hid_t space = H5Screate_simple(layouts[k].row_elems > 1 ? 2 : 1, dims, NULL);
      hid_t dset = space < 0 ? -1 : H5Dcreate2(f, name, file_type(&layouts[k]), space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
      ok = dset >= 0;
      if (dset >= 0) H5Dclose(dset);
      if (space >= 0) H5Sclose(space);
    }
  if (lcpl >= 0) H5Pclose(lcpl);
  if (f >= 0 && H5Fclose(f) < 0) ok = 0;
  return ok;
}

/* Rank 0 alone, with plain HDF5: the whole dataset holds generation `gen`. */
static void check_serially(const char *path, const char *name, const layout *l, unsigned ds,
                           unsigned gen, uint64_t n) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t dset = f < 0 ? -1 : H5Dopen2(f, name, H5P_DEFAULT);
  uint8_t *buf = malloc(n * row_bytes(l) + 1);
  int read_ok = dset >= 0 && H5Dread(dset, file_type(l), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0;
  EXPECT(read_ok, "%s:%s: serial read failed", path, name);
  if (read_ok) {
    uint64_t wrong = first_wrong_row(buf, l, ds, gen, 0, n);
    EXPECT(wrong == n, "%s:%s: row %llu differs from what was written last", path, name,
           (unsigned long long)wrong);
  }
  free(buf);
  if (dset >= 0) H5Dclose(dset);
  if (f >= 0) H5Fclose(f);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  h5g_io_quiet();
  signal(SIGALRM, on_alarm);
  const char *prefix = argc > 1 ? argv[1] : "test_io_pieces";
  char plain_path[1024], index_path[1024];
  snprintf(plain_path, sizeof plain_path, "%s_plain.h5", prefix);
  snprintf(index_path, sizeof index_path, "%s_index.h5", prefix);
  unsigned gens[NLAYOUTS][NSIZES] = {{0}}, index_gens[NSIZES] = {0};

  /* The environment variable is read at every call: junk and 0 give the default. */
  setenv("H5GSORT_IO_PIECE_BYTES", "junk", 1);
  EXPECT(h5g_io_piece_bytes() == (uint64_t)1 << 30, "H5GSORT_IO_PIECE_BYTES=junk");
  setenv("H5GSORT_IO_PIECE_BYTES", "0", 1);
  EXPECT(h5g_io_piece_bytes() == (uint64_t)1 << 30, "H5GSORT_IO_PIECE_BYTES=0");

  int created = rank == 0 ? create_plain(plain_path) : 1;
  MUST_MPI(MPI_Bcast(&created, 1, MPI_INT, 0, MPI_COMM_WORLD));
  if (!created) {
    if (rank == 0) fprintf(stderr, "test_io_pieces: cannot create %s\n", plain_path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  h5g_file *f = NULL;
  MUST_OK(h5g_io_open_file(MPI_COMM_WORLD, plain_path, 1, &f));
  for (int k = 0; k < NLAYOUTS; k++)
    for (int s = 0; s < NSIZES; s++) {
      char name[64];
      h5g_dset *d = NULL;
      dataset_name(name, sizeof name, &layouts[k], sizes[s]);
      MUST_OK(h5g_io_open_rows(f, name, &d));
      check_transfers(d, &layouts[k], (unsigned)k, &gens[k][s], sizes[s]);
      if (k == 2 && (sizes[s] == 1 || sizes[s] == 101)) check_failures(d, &layouts[k], (unsigned)k, gens[k][s], sizes[s]);
      if (k == 4 && sizes[s] == 10) check_failures(d, &layouts[k], (unsigned)k, gens[k][s], sizes[s]);
      EXPECT(h5g_io_close(d) == H5G_OK, "close %s: %s", name, h5g_error_message());
    }
  EXPECT(h5g_io_close_file(f) == H5G_OK, "close %s: %s", plain_path, h5g_error_message());

  /* Datasets that io/ creates: uint64 indexes in groups of a new file. */
  MUST_OK(h5g_io_create_file(MPI_COMM_WORLD, index_path, &f));
  for (int s = 0; s < NSIZES; s++) {
    char name[64];
    h5g_dset *d = NULL;
    snprintf(name, sizeof name, "/index/n%llu", (unsigned long long)sizes[s]);
    MUST_OK(h5g_io_create_index(f, name, sizes[s], &d));
    check_transfers(d, &layouts[INDEX_LAYOUT], NLAYOUTS, &index_gens[s], sizes[s]);
    EXPECT(h5g_io_close(d) == H5G_OK, "close %s: %s", name, h5g_error_message());
  }
  EXPECT(h5g_io_close_file(f) == H5G_OK, "close %s: %s", index_path, h5g_error_message());
  EXPECT(h5g_io_open_objects() == 0, "rank %d: %ld HDF5 objects left open", rank, h5g_io_open_objects());
  MUST_MPI(MPI_Barrier(MPI_COMM_WORLD));

  if (rank == 0) {
    for (int k = 0; k < NLAYOUTS; k++)
      for (int s = 0; s < NSIZES; s++) {
        char name[64];
        dataset_name(name, sizeof name, &layouts[k], sizes[s]);
        check_serially(plain_path, name, &layouts[k], (unsigned)k, gens[k][s], sizes[s]);
      }
    for (int s = 0; s < NSIZES; s++) {
      char name[64];
      snprintf(name, sizeof name, "/index/n%llu", (unsigned long long)sizes[s]);
      check_serially(index_path, name, &layouts[INDEX_LAYOUT], NLAYOUTS, index_gens[s], sizes[s]);
    }
    remove(plain_path);
    remove(index_path);
  }
  int rc = test_summary_mpi(MPI_COMM_WORLD, "test_io_pieces");
  MPI_Finalize();
  return rc;
}

/* Phase "verify" (--verify): the written share is read back piece by piece and checked for
 * order (within and across ranks), count and the order-independent checksum against the
 * input's (src/verify.h); --unique: no key repeated, and the counts add up to the input's. Each
 * piece is read by the rank's I/O threads where the storage allows (io/h5io.h,
 * h5g_io_allow_direct) and checked by its threads. */
#include <stdlib.h>

#include "base/error.h"
#include "mpi/agree.h"
#include "mpi/reduce_u64.h"
#include "src/verify_output.h"
#include "src/verify.h"

/* Bytes of each word's keys a piece of the read-back holds: a bounded buffer instead of one of
 * the share's size, large enough that each piece's collective read is noise. */
#define VERIFY_PIECE_BYTES ((uint64_t)32 << 20)

/* Rows of each piece of a share of `rows` rows (at least one): of VERIFY_PIECE_BYTES of each
 * word's keys, or of the I/O piece where that is smaller (H5GSORT_IO_PIECE_BYTES: tests put the
 * pieces' boundaries where they check them). */
static uint64_t piece_rows(const h5g_plan *plan, uint64_t rows) {
  uint64_t bytes = h5g_io_piece_bytes() < VERIFY_PIECE_BYTES ? h5g_io_piece_bytes()
                                                             : VERIFY_PIECE_BYTES;
  uint64_t piece = bytes / plan->ks.width;
  if (piece > rows) piece = rows;
  return piece ? piece : 1;
}

static int words_of(const h5g_verdict *v) { return v->composed ? v->layout.words : 1; }

uint64_t h5g_verify_output_bytes(const h5g_options *opt, const h5g_verdict *v,
                                 const h5g_plan *plan, uint64_t rows) {
  if (!opt->verify) return 0;
  uint64_t piece = piece_rows(plan, rows), part = 0;
  /* h5g_keyset_read's own: a key's rows (a table's or 2-D dataset's whole rows) and a column */
  for (int i = 0; v->composed && i < v->layout.count; i++)
    if (v->layout.key[i].row_bytes + v->layout.key[i].width > part)
      part = v->layout.key[i].row_bytes + v->layout.key[i].width;
  return piece * ((uint64_t)words_of(v) * plan->ks.width + part);
}

static int check_share(const h5g_run *r, const h5g_verdict *v, const h5g_extent *e,
                       const h5g_verify_result *res) {
  int rc = H5G_OK;
  const char *file = r->opt->output, *dataset = r->opt->output_dataset;
  /* --top and --unique keep a part of the keys, whose checksum the input's does not tell */
  int every_key = !r->opt->unique && e->out_total == v->info.n;
  if (res->n != e->out_total)
    H5G_FAIL(H5G_ERR_RUNTIME, "verify failed: %llu keys written, %llu expected (%s:%s)",
             (unsigned long long)res->n, (unsigned long long)e->out_total, file, dataset);
  if (res->out_of_order)
    H5G_FAIL(H5G_ERR_RUNTIME,
             "verify failed: %llu keys out of order%s, the first at index %llu (%s:%s)",
             (unsigned long long)res->out_of_order, r->opt->unique ? " or repeated" : "",
             (unsigned long long)res->first_bad, file, dataset);
  if (every_key && res->checksum != r->metrics.checksum_in)
    H5G_FAIL(H5G_ERR_RUNTIME,
             "verify failed: checksum of the output differs from the input (%s:%s)",
             file, dataset);
done:
  return rc;
}

/* Collective: pieces of `piece` rows that every rank reads (the most any rank's `rows` take:
 * each read is collective, a rank with fewer rows reads none in the last ones). */
static int agree_pieces(MPI_Comm comm, uint64_t rows, uint64_t piece, uint64_t *pieces) {
  int rc = H5G_OK;
  uint64_t mine = (rows + piece - 1) / piece;
  CHECK(h5g_allreduce_u64(comm, &mine, pieces, 1, H5G_REDUCE_MAX));
done:
  return rc;
}

/* Rows [first, first + *count) of `rows`, piece i of `piece` rows (*count 0 past the end). */
static uint64_t piece_at(uint64_t i, uint64_t piece, uint64_t rows, uint64_t *count) {
  uint64_t first = i * piece < rows ? i * piece : rows;
  *count = rows - first < piece ? rows - first : piece;
  return first;
}

/* Collective, --unique --counts without --top: the counts written add up to the input's N,
 * read back in pieces through `buf` (buf_bytes). */
static int check_counts(h5g_run *r, const h5g_verdict *v, const h5g_extent *e, void *buf,
                        uint64_t buf_bytes) {
  int rc = H5G_OK;
  h5g_dset *written = NULL;
  uint64_t *counts = buf, mine = 0, sum = 0, pieces = 0, count;
  uint64_t piece = buf_bytes / sizeof(uint64_t) ? buf_bytes / sizeof(uint64_t) : 1;
  CHECK(h5g_io_open_keys(r->out_file, r->opt->counts, NULL, &written));
  h5g_io_allow_direct(written);
  CHECK(agree_pieces(r->comm, e->out_n, piece, &pieces));
  for (uint64_t i = 0; i < pieces; i++) {
    uint64_t first = piece_at(i, piece, e->out_n, &count);
    CHECK(h5g_io_read(written, e->out_offset + first, count, counts));
    for (uint64_t j = 0; j < count; j++) mine += counts[j];
  }
  CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, r->comm));
  if (sum != v->info.n) /* the same on every rank */
    H5G_FAIL(H5G_ERR_RUNTIME, "verify failed: the counts add up to %llu, the input has %llu keys "
             "(%s:%s)", (unsigned long long)sum, (unsigned long long)v->info.n,
             r->opt->output, r->opt->counts);
done:
  if (h5g_io_close(written) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  return rc;
}

/* Collective: the written keys' datasets, opened for reading by the rank's threads. */
static int open_written(h5g_run *r, const h5g_verdict *v, h5g_dset **written) {
  int rc = H5G_OK;
  if (v->composed)
    CHECK(h5g_keyset_open(r->comm, r->opt, r->out_file, 1, written));
  else
    CHECK(h5g_io_open_keys(r->out_file, r->opt->output_dataset, r->opt->key_field, &written[0]));
  for (int i = 0; i < H5G_MAX_KEYS && written[i]; i++) h5g_io_allow_direct(written[i]);
done:
  return rc;
}

/* Collective: the share read back piece by piece into keys[0..words) (`piece` rows each) and
 * checked (--unique: no two neighbours equal; composed keys: numpy's equality). */
static int read_and_check(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                          const h5g_extent *e, h5g_dset *const *written, void *const *keys,
                          uint64_t piece, h5g_verify_result *res) {
  int rc = H5G_OK;
  h5g_verify_state s;
  uint64_t pieces = 0, count;
  int words = words_of(v);
  h5g_verify_begin(&s, words, e->out_offset, &plan->ks, r->opt->unique, plan->io_threads);
  CHECK(agree_pieces(r->comm, e->out_n, piece, &pieces));
  for (uint64_t i = 0; i < pieces; i++) {
    uint64_t row = e->out_offset + piece_at(i, piece, e->out_n, &count);
    for (int word = 0; v->composed && word < words; word++)
      CHECK(h5g_keyset_read(r->comm, r->opt, &v->layout, written, word, row, count,
                            plan->ks.width, keys[word], plan->io_threads, NULL, 0));
    if (!v->composed) CHECK(h5g_io_read(written[0], row, count, keys[0]));
    h5g_verify_piece(&s, keys, count);
  }
  CHECK(h5g_verify_end(r->comm, &s, res));
done:
  return rc;
}

int h5g_verify_output(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                      const h5g_extent *e) {
  int rc = H5G_OK;
  h5g_verify_result res;
  h5g_dset *written[H5G_MAX_KEYS] = {0};
  void *keys[H5G_MAX_KEYS] = {0};
  int words = words_of(v);
  uint64_t piece = piece_rows(plan, e->out_n), bytes = piece * words * plan->ks.width;
  char *buf = malloc(bytes);
  STEP(r, H5G_PHASE_VERIFY, h5g_agree_alloc(r->comm, buf != NULL, bytes));
  for (int k = 0; k < words; k++) keys[k] = buf + (size_t)k * piece * plan->ks.width;
  STEP(r, H5G_PHASE_VERIFY, open_written(r, v, written));
  STEP(r, H5G_PHASE_VERIFY, read_and_check(r, v, plan, e, written, keys, piece, &res));
  STEP(r, H5G_PHASE_VERIFY, check_share(r, v, e, &res));
  if (r->opt->counts && r->opt->top < 0)
    STEP(r, H5G_PHASE_VERIFY, check_counts(r, v, e, buf, bytes));
done:
  if (h5g_keyset_close(written) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  free(buf);
  return rc;
}

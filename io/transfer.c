/* Moving rows (io/h5io.h: h5g_io_read, h5g_io_write): by the rank's threads straight from and to
 * the file where the storage allows (contiguous bytes, io/direct.h; chunks, io/chunked.h), else
 * through HDF5 in collective pieces, every piece agreed. */
#include "io/h5io_pkg.h"

#include <errno.h>
#include <hdf5.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/h5check.h"
#include "mpi/agree.h"
#include "mpi/reduce_u64.h"
#include <sys/types.h>

#include "io/chunked.h"
#include "io/direct.h"
#include "io/superblock.h"
#include "mpi/topology.h"

void h5g_io_allow_direct(h5g_dset *d) { d->direct = 1; }

/* What every direct transfer of `d` needs but the types (io/h5io.h: h5g_io_allow_direct):
 * allowed, in this file (through an external link the data lie in another one), which has no
 * user block. */
static int direct_place_allowed(const h5g_dset *d) {
  hid_t fcpl = H5I_INVALID_HID;
  hsize_t userblock = 1;
  H5O_info_t in_dset, in_file;
  int allowed = d->direct && h5g_io_config_internal.direct &&
                H5Oget_info2(d->id, &in_dset, H5O_INFO_BASIC) >= 0 &&
                H5Oget_info2(d->file->id, &in_file, H5O_INFO_BASIC) >= 0 &&
                in_dset.fileno == in_file.fileno &&
                (fcpl = H5Fget_create_plist(d->file->id)) >= 0 &&
                H5Pget_userblock(fcpl, &userblock) >= 0 && userblock == 0;
  CLOSE_ID(H5Pclose, fcpl);
  return allowed;
}

/* ... and rows stored as in memory, or, reading, converted to it by the threads (*convert set,
 * none writing: a written dataset takes its rows in the file's form, h5g_io_file_form). */
static int direct_types(const h5g_dset *d, int writing, h5g_convert *convert) {
  *convert = (h5g_convert){0};
  return writing ? H5Tequal(d->file_type, d->mem_type) > 0
                 : h5g_convert_plan(d->file_type, d->mem_type, convert);
}

/* 1 when bytes [address, address + bytes) lie inside the end of file HDF5 reads up to (the
 * superblock's): past it HDF5 reads nothing, and neither may we. */
int h5g_io_inside_file_end_internal(const h5g_dset *d, haddr_t address, hsize_t bytes) {
  haddr_t eoa = 0;
  return address != HADDR_UNDEF && h5g_superblock_eoa(d->file->path, &eoa) == 0 &&
         address <= eoa && bytes <= eoa - address;
}

/* The file offset of a contiguous dataset (creation properties dcpl) that a direct transfer may
 * move, or -1. A file being written has its end in the superblock only once HDF5 flushes it:
 * that bound is for reads. */
static off_t contiguous_offset(const h5g_dset *d, hid_t dcpl, int writing) {
  haddr_t address = HADDR_UNDEF;
  if (H5Pget_external_count(dcpl) == 0 && H5Pget_nfilters(dcpl) == 0)
    address = H5Dget_offset(d->id);
  if (!writing && !h5g_io_inside_file_end_internal(d, address, H5Dget_storage_size(d->id)))
    address = HADDR_UNDEF;
  return address == HADDR_UNDEF ? (off_t)-1 : (off_t)address;
}

/* A direct read's piece callback that first converts each piece read (moved) to the memory
 * type, with the rank's threads, then calls the caller's. */
typedef struct {
  h5g_io_piece_fn each;
  void *ctx;
  const h5g_convert *convert;
  char *buf;
  size_t row_bytes;
  int threads;
} converting_fn;

static int convert_piece(void *arg, uint64_t first, uint64_t count, int moved) {
  converting_fn *f = arg;
  if (moved)
    h5g_convert_apply_threads(f->convert, f->buf + first * f->row_bytes, count * f->row_bytes,
                              f->threads);
  return f->each ? f->each(f->ctx, first, count, moved) : H5G_OK;
}

/* Rows [row, row + rows) through HDF5, independently: a direct chunked read's chunks that HDF5
 * never wrote (their fill value is HDF5's to give). */
static int read_rows_independent(void *ctx, uint64_t row, uint64_t rows, void *buf) {
  int rc = H5G_OK;
  h5g_dset *d = ctx;
  hid_t file_space = H5I_INVALID_HID, mem_space = H5I_INVALID_HID;
  hsize_t start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK], mem_len = rows * d->row_elems;
  start[0] = row;
  count[0] = rows;
  for (int k = 1; k < d->rank; k++) count[k] = d->dims[k];
  CHECK_H5(file_space = H5Dget_space(d->id), "cannot read the shape (%s)", d->where);
  CHECK_H5(mem_space = H5Screate_simple(1, &mem_len, NULL), "cannot read the dataset (%s)",
           d->where);
  CHECK_H5(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL),
           "cannot read the dataset (%s)", d->where);
  CHECK_H5(H5Dread(d->id, d->mem_type, mem_space, file_space, d->dxpl, buf),
           "cannot read the dataset (%s)", d->where);
done:
  CLOSE_ID(H5Sclose, mem_space);
  CLOSE_ID(H5Sclose, file_space);
  return rc;
}

/* 1 when the transfers of a chunked dataset `d` (creation properties dcpl) that a direct
 * transfer may move go through io/chunked.h, *src filled but for its conversion: chunks that
 * hold whole rows, written with filters io/filters.h encodes, read with filters it decodes. */
static int chunked_source(h5g_dset *d, hid_t dcpl, int writing, h5g_chunked_source *src) {
  hsize_t chunk[H5S_MAX_RANK];
  unsigned chunk_opts = 0;
  int ours = 0, eligible =
      d->dims[0] > 0 && H5Pget_chunk(dcpl, d->rank, chunk) == d->rank &&
      /* an edge chunk stored unfiltered says so in the layout, not in its filter mask */
      H5Pget_chunk_opts(dcpl, &chunk_opts) >= 0 &&
      !(chunk_opts & H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS) &&
      (writing || h5g_superblock_eoa(d->file->path, &src->eoa) == 0) &&
      h5g_filters_from_dcpl(dcpl, d->file_type, &src->pipeline, &ours, d->where) == H5G_OK &&
      ours && (!writing || h5g_filters_encodable(&src->pipeline));
  for (int k = 1; eligible && k < d->rank; k++) eligible = chunk[k] == d->dims[k];
  if (eligible) {
    src->dset = d->id;
    src->path = d->file->path;
    src->rows_total = d->dims[0];
    src->chunk_rows = chunk[0];
    src->row_bytes = h5g_io_row_bytes(d);
    src->fallback = read_rows_independent;
    src->fallback_ctx = d;
    src->where = d->where;
    src->max_piece_bytes = h5g_io_piece_bytes();
  }
  return eligible;
}

/* Chunks one call through HDF5 touches at most: HDF5 keeps a few KiB for each until the call
 * returns (bench/RESULTS.md, "Small chunks through HDF5"). */
enum { CHUNKS_PER_CALL = 256 };

/* How a transfer of `d` may move its rows, from one look at its creation properties. Direct
 * transfers (h5g_io_allow_direct) take a dataset of this file (no user block), written with no
 * conversion, read with one io/convert.h makes (or none). Anything else, or any HDF5 query that
 * fails, leaves the transfer to HDF5. */
typedef struct {
  off_t offset;                /* contiguous bytes: their file offset, else -1 */
  int chunks;                  /* chunks io/chunked.h moves: `chunked` filled */
  int filtered;                /* filters (a written dataset's size is known once written) */
  uint64_t chunk_rows;         /* chunked: rows a chunk spans, else 0 */
  uint64_t chunks_across;      /* chunked: chunks across a row (the other dimensions) */
  h5g_convert convert;         /* reading directly: the conversion the threads make */
  h5g_chunked_source chunked;
} route;

static void find_route(h5g_dset *d, int writing, route *rt) {
  int had_error = h5g_error_code() != H5G_OK;
  hid_t dcpl = H5Dget_create_plist(d->id);
  H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
  int direct = direct_types(d, writing, &rt->convert) && direct_place_allowed(d);
  rt->filtered = dcpl >= 0 && H5Pget_nfilters(dcpl) > 0;
  hsize_t chunk[H5S_MAX_RANK] = {0};
  int chunked = layout == H5D_CHUNKED && H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk) == d->rank;
  rt->chunk_rows = chunked ? chunk[0] : 0;
  rt->chunks_across = 1;
  for (int k = 1; chunked && k < d->rank; k++)
    rt->chunks_across *= (d->dims[k] + chunk[k] - 1) / chunk[k];
  rt->offset = direct && layout == H5D_CONTIGUOUS ? contiguous_offset(d, dcpl, writing) : -1;
  rt->chunks = direct && layout == H5D_CHUNKED && chunked_source(d, dcpl, writing, &rt->chunked);
  if (rt->chunks) rt->chunked.convert = rt->convert;
  CLOSE_ID(H5Pclose, dcpl);
  if (!had_error) h5g_error_clear(); /* a failed query above only means: HDF5 moves them */
}

/* 1 when rows [row, row + rows) are whole chunks of `src` (the last one may end the dataset). */
static int whole_chunks(const h5g_chunked_source *src, uint64_t row, uint64_t rows) {
  uint64_t end = row + rows;
  return row % src->chunk_rows == 0 && (end == src->rows_total || end % src->chunk_rows == 0);
}

/* Collective, once per dataset read by chunks: 1 when its chunk index adds up (io/chunked.h),
 * each rank looking up the chunks that start in an even share of the rows. */
static int chunk_index_adds_up(h5g_dset *d, const h5g_chunked_source *src) {
  int rc = H5G_OK, size, rank;
  h5g_chunk_index *index = NULL;
  uint64_t counted = 0, total = 0;
  MPI_Comm comm = d->file->comm;
  CHECK_MPI(MPI_Comm_size(comm, &size));
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  uint64_t begin = h5g_share_begin((uint64_t)rank, d->dims[0], (uint64_t)size);
  uint64_t share = h5g_share_begin((uint64_t)rank + 1, d->dims[0], (uint64_t)size) - begin;
  int had_error = h5g_error_code() != H5G_OK;
  int looked_up = h5g_chunked_index(src, begin, share, &index, &counted) == H5G_OK, all_looked_up;
  if (!had_error) h5g_error_clear(); /* a failed look-up only means: HDF5 reads it */
  CHECK_MPI(MPI_Allreduce(&looked_up, &all_looked_up, 1, MPI_INT, MPI_MIN, comm));
  CHECK_MPI(MPI_Allreduce(&counted, &total, 1, MPI_UINT64_T, MPI_SUM, comm));
  int adds_up = all_looked_up && (int64_t)total == h5g_chunked_allocated(src), all_add_up;
  CHECK_MPI(MPI_Allreduce(&adds_up, &all_add_up, 1, MPI_INT, MPI_MIN, comm));
  d->chunk_index = all_add_up ? 1 : -1;
done:
  h5g_chunked_index_free(index);
  return rc;
}

/* Collective transfer of rows [row, row + rows) in pieces of at most h5g_io_piece_bytes().
 * Every rank makes the same number of H5Dread/H5Dwrite calls (empty selections where it has
 * nothing left) and the ranks agree after each piece, so a failure on one rank never leaves the
 * others waiting inside the next collective call; every rank then holds the failing rank's
 * error. */
/* One rank's status for a piece: the caller's own error (already recorded), else HDF5's. */
static int piece_status(int failed, int piece_rc, int writing, const char *reason,
                        const char *where) {
  if (!failed) return H5G_OK;
  return h5g_error_set(piece_rc != H5G_OK ? piece_rc : H5G_ERR_RUNTIME, __FILE__, __LINE__,
                       "cannot %s the dataset%s (%s)", writing ? "write" : "read", reason, where);
}

/* A filtered output's size is known only as its chunks are written, and HDF5 1.10 cannot close
 * a file whose write failed for want of room (the library then crashes at exit, in
 * H5F__close_cb: a segfault under ulimit -f). So before each piece of such a write the room it
 * may take is checked (the raw bytes of every rank's piece, plus 1 MiB for metadata): a full
 * disk or the file-size limit fails the run there, named, with the file still whole. The rank's
 * own encoders (one rank) check through this wrapper of the piece callback; HDF5's collective
 * pieces in transfer(), summed over the ranks. */
typedef struct {
  h5g_io_piece_fn each;
  void *ctx;
  const char *path;
  size_t row_bytes;
} room_check;

static int check_room(void *arg, uint64_t first, uint64_t count, int moved) {
  room_check *c = arg;
  unsigned long long need = (unsigned long long)count * c->row_bytes + (1ull << 20);
  int rc = moved ? H5G_OK : h5g_files_check_growth(c->path, need);
  return rc == H5G_OK && c->each ? c->each(c->ctx, first, count, moved) : rc;
}

/* Rows [row, row + rows) of a filtered output kept for rank 0 to store (io/gathered.h). */
static int keep_chunks(h5g_dset *d, const h5g_chunked_source *src, uint64_t row, uint64_t rows,
                       const void *buf, h5g_io_piece_fn each, void *ctx) {
  int rc = H5G_OK;
  ssize_t len = H5Iget_name(d->id, NULL, 0);
  char *path = len > 0 ? malloc((size_t)len + 1) : NULL;
  if (len <= 0 || !path || H5Iget_name(d->id, path, (size_t)len + 1) != len)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot name the dataset (%s)", d->where);
  CHECK(h5g_gathered_add(&d->file->gathered, path, src, row, rows, buf,
                         h5g_io_config_internal.threads, each, ctx));
done:
  free(path);
  return rc;
}

/* H5GSORT_IO_TRACE set: one line on stderr per transfer saying how its rows moved, and for
 * chunks read by threads, their filters and conversion (tests check that threads ran). */
static void trace(const h5g_dset *d, int writing, const char *how, const h5g_chunked_source *src) {
  char detail[256] = "";
  if (!getenv("H5GSORT_IO_TRACE")) return;
  if (src) {
    size_t used = (size_t)snprintf(detail, sizeof detail, " (filters:");
    for (int i = 0; i < src->pipeline.count && used < sizeof detail; i++)
      used += (size_t)snprintf(detail + used, sizeof detail - used, " %s",
                               h5g_filter_name(src->pipeline.filter[i].id));
    if (used < sizeof detail)
      snprintf(detail + used, sizeof detail - used, "%s; conversion: %s)",
               src->pipeline.count ? "" : " none", h5g_convert_name(&src->convert));
  }
  fprintf(stderr, "h5gsort: io: %s %s: %s%s\n", writing ? "write" : "read", d->where, how, detail);
}

static int transfer(h5g_dset *d, uint64_t row, uint64_t rows, void *buf, int writing,
                    h5g_io_piece_fn each, void *ctx) {
  int rc = H5G_OK;
  MPI_Comm comm = d->file->comm;
  hid_t file_space = H5I_INVALID_HID, mem_space = H5I_INVALID_HID;
  h5g_chunk_index *index = NULL;
  size_t row_bytes = h5g_io_row_bytes(d);
  const h5g_io_config *cfg = &h5g_io_config_internal;
  if (row_bytes == 0) goto done; /* rows of zero elements: nothing to move, on every rank */
  /* direct transfers when every rank can make them: no collective call inside, one agreement
   * at the end. Filtered chunks are written directly by a run of one rank that writes whole
   * chunks (io/chunked.h); otherwise they are kept for rank 0 to store (io/gathered.h). */
  enum { THROUGH_HDF5, CONTIGUOUS_BYTES, CHUNKS, GATHERED };
  int ranks;
  CHECK_MPI(MPI_Comm_size(comm, &ranks));
  route rt;
  find_route(d, writing, &rt);
  h5g_chunked_source *chunked = &rt.chunked;
  int needs_room = writing && rt.filtered, mode = THROUGH_HDF5;
  if (rt.offset >= 0)
    mode = CONTIGUOUS_BYTES;
  else if (rt.chunks && !writing)
    mode = CHUNKS;
  else if (rt.chunks && chunked->pipeline.count > 0)
    mode = ranks == 1 && whole_chunks(chunked, row, rows) ? CHUNKS
           : h5g_filters_bound(&chunked->pipeline, chunked->chunk_rows * chunked->row_bytes) <=
                   H5G_GATHERED_CHUNK_MAX
               ? GATHERED
               : THROUGH_HDF5;
  int modes[2] = {mode, -mode}, agreed[2];
  CHECK_MPI(MPI_Allreduce(modes, agreed, 2, MPI_INT, MPI_MIN, comm));
  if (agreed[0] != -agreed[1]) mode = THROUGH_HDF5;
  if (mode == CONTIGUOUS_BYTES) {
    trace(d, writing, rt.convert.active ? "contiguous bytes by threads, converted there"
                                     : "contiguous bytes by threads", NULL);
    h5g_direct_how how = writing ? cfg->write : H5G_DIRECT_READ;
    converting_fn conv = {each, ctx, &rt.convert, buf, row_bytes, cfg->threads};
    CHECK(h5g_agree(comm, h5g_direct_transfer(d->file->path, rt.offset + (off_t)(row * row_bytes),
                                              buf, rows, row_bytes, how, cfg->threads,
                                              h5g_io_piece_bytes(),
                                              rt.convert.active ? convert_piece : each,
                                              rt.convert.active ? (void *)&conv : ctx, d->where)));
    goto done;
  }
  if (mode == CHUNKS && writing) {
    room_check room = {each, ctx, d->file->path, row_bytes};
    h5g_io_piece_fn check = needs_room ? check_room : each;
    void *check_ctx = needs_room ? (void *)&room : ctx;
    trace(d, writing, "chunks by threads", chunked);
    CHECK(h5g_agree(comm, h5g_chunked_write(chunked, row, rows, buf, cfg->threads, NULL,
                                            check, check_ctx)));
    goto done;
  }
  if (mode == GATHERED) { /* the room is checked as rank 0 stores the chunks */
    trace(d, writing, "chunks by threads, stored by rank 0", chunked);
    CHECK(h5g_agree(comm, keep_chunks(d, chunked, row, rows, buf, each, ctx)));
    goto done;
  }
  if (mode == CHUNKS && d->chunk_index == 0) CHECK(chunk_index_adds_up(d, chunked));
  if (mode == CHUNKS && d->chunk_index > 0) {
    uint64_t counted;
    trace(d, writing, "chunks by threads", chunked);
    int status = h5g_chunked_index(chunked, row, rows, &index, &counted);
    if (status == H5G_OK)
      status = h5g_chunked_read(chunked, index, row, rows, buf, cfg->threads, each, ctx);
    CHECK(h5g_agree(comm, status));
    goto done;
  }
  trace(d, writing, "through HDF5", NULL);
  uint64_t piece = h5g_io_piece_bytes() / row_bytes;
  /* chunked: at most CHUNKS_PER_CALL chunks a call, or one slab of chunks along the rows */
  uint64_t slabs = rt.chunks_across < CHUNKS_PER_CALL ? CHUNKS_PER_CALL / rt.chunks_across : 1;
  if (rt.chunk_rows && piece / rt.chunk_rows > slabs) piece = slabs * rt.chunk_rows;
  if (piece == 0) piece = 1;
  uint64_t my_pieces = (rows + piece - 1) / piece, pieces = 0;
  CHECK(h5g_allreduce_u64(comm, &my_pieces, &pieces, 1, H5G_REDUCE_MAX));
  file_space = H5Dget_space(d->id);
  CHECK(h5g_agree(comm, piece_status(file_space < 0, H5G_OK, writing, "", d->where)));
  for (uint64_t i = 0; i < pieces; i++) {
    uint64_t done_rows = i * piece;
    uint64_t len = done_rows < rows ? (rows - done_rows < piece ? rows - done_rows : piece) : 0;
    hsize_t start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK];
    start[0] = row + done_rows;
    count[0] = len;
    for (int k = 1; k < d->rank; k++) count[k] = d->dims[k];
    hsize_t mem_len = len ? len * d->row_elems : 1;
    int failed = 0;
    mem_space = H5Screate_simple(1, &mem_len, NULL);
    if (mem_space < 0) failed = 1;
    if (!failed && len == 0)
      failed = H5Sselect_none(mem_space) < 0 || H5Sselect_none(file_space) < 0;
    if (!failed && len > 0)
      failed = H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL) < 0;
    char *ptr = (char *)buf + (len ? done_rows * row_bytes : 0);
    static char dummy[64];
    int piece_rc = H5G_OK; /* the caller's own status for this piece, its error already recorded */
    if (needs_room) { /* every rank's share of this collective piece of a filtered output */
      uint64_t mine = len * row_bytes, all = 0;
      CHECK_MPI(MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, comm));
      if (!failed && all)
        failed = (piece_rc = h5g_files_check_growth(d->file->path, all + (1ull << 20))) != H5G_OK;
    }
    if (!failed && each && len) failed = (piece_rc = each(ctx, done_rows, len, 0)) != H5G_OK;
    /* every rank, or none, makes the collective call */
    CHECK(h5g_agree(comm, piece_status(failed, piece_rc, writing, "", d->where)));
    void *data = len ? ptr : dummy;
    herr_t st = writing ? H5Dwrite(d->id, d->mem_type, mem_space, file_space, d->dxpl, data)
                        : H5Dread(d->id, d->mem_type, mem_space, file_space, d->dxpl, data);
    failed = st < 0;
    /* HDF5 keeps the reason to itself: errno as the failed write left it, or the disk now */
    const char *reason =
        failed && writing ? h5g_io_write_reason_internal(d->file->path, errno) : "";
    if (!failed && each && len) failed = (piece_rc = each(ctx, done_rows, len, 1)) != H5G_OK;
    H5Sclose(mem_space);
    mem_space = H5I_INVALID_HID;
    CHECK(h5g_agree(comm, piece_status(failed, piece_rc, writing, reason, d->where)));
  }
done:
  h5g_chunked_index_free(index);
  CLOSE_ID(H5Sclose, mem_space);
  CLOSE_ID(H5Sclose, file_space);
  return rc;
}

int h5g_io_read(h5g_dset *d, uint64_t row, uint64_t rows, void *buf) {
  return transfer(d, row, rows, buf, 0, NULL, NULL);
}

int h5g_io_write(h5g_dset *d, uint64_t row, uint64_t rows, const void *buf) {
  return transfer(d, row, rows, (void *)buf, 1, NULL, NULL);
}

int h5g_io_read_each(h5g_dset *d, uint64_t row, uint64_t rows, void *buf, h5g_io_piece_fn each,
                     void *ctx) {
  return transfer(d, row, rows, buf, 0, each, ctx);
}

int h5g_io_write_each(h5g_dset *d, uint64_t row, uint64_t rows, const void *buf,
                      h5g_io_piece_fn each, void *ctx) {
  return transfer(d, row, rows, (void *)buf, 1, each, ctx);
}

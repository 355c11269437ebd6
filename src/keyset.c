/* Several keys sorted as one: src/keyset.h. */
#include "src/keyset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/compose.h"
#include "base/error.h"
#include "base/host_memory.h"
#include "base/parallel.h"
#include "mpi/agree.h"

int h5g_keyset_inspect(const h5g_options *opt, const char *file, h5g_key_layout *layout,
                       h5g_dataset_info *composed) {
  int rc = H5G_OK;
  unsigned bytes = 0;
  memset(layout, 0, sizeof *layout);
  memset(composed, 0, sizeof *composed);
  layout->count = h5g_options_key_count(opt);
  for (int i = 0; i < layout->count; i++) {
    h5g_key_source k = h5g_options_key(opt, i);
    CHECK(h5g_io_inspect(file, k.dataset, k.field, k.column, &layout->key[i]));
    if (layout->key[i].n != layout->key[0].n)
      H5G_FAIL(H5G_ERR_USAGE, "the keys differ in length: %llu in %s, %llu in %s (%s)",
               (unsigned long long)layout->key[0].n, opt->dataset,
               (unsigned long long)layout->key[i].n, k.dataset, file);
    bytes += layout->key[i].width;
  }
  /* words filled in priority order, the first key in the highest bits of word 0 */
  for (int i = 0, used = 0; i < layout->count; i++) {
    if (used + layout->key[i].width > H5G_COMPOSE_MAX_BYTES) {
      layout->words++;
      used = 0;
    }
    layout->word[i] = layout->words;
    used += (int)layout->key[i].width;
  }
  layout->words++;
  for (int i = layout->count - 1, shift = 0; i >= 0; i--) {
    if (i == layout->count - 1 || layout->word[i] != layout->word[i + 1]) shift = 0;
    layout->shift[i] = (unsigned)shift;
    shift += 8 * (int)layout->key[i].width;
  }
  composed->width = layout->words > 1 ? H5G_COMPOSE_MAX_BYTES : h5g_compose_width(bytes);
  composed->n = layout->key[0].n;
  composed->cls = H5G_KEY_UNSIGNED;
  /* "uint16+int32", for "sorted N uint16+int32 keys" */
  for (int i = 0, used = 0; i < layout->count && used < (int)sizeof composed->type_name; i++)
    used += snprintf(composed->type_name + used, sizeof composed->type_name - (size_t)used, "%s%s",
                     i ? "+" : "", layout->key[i].type_name);
done:
  return rc;
}

int h5g_keyset_fetched(const h5g_key_layout *layout, int i) {
  return layout->words > 1 || layout->key[i].cls == H5G_KEY_FLOAT;
}

int h5g_keyset_by_index(const h5g_key_layout *layout) {
  for (int i = 0; i < layout->count; i++)
    if (h5g_keyset_fetched(layout, i)) return 1;
  return 0;
}

int h5g_keyset_open(MPI_Comm comm, const h5g_options *opt, h5g_file *f, int output, h5g_dset **d) {
  int rc = H5G_OK;
  int count = opt->nkey_columns ? 1 : h5g_options_key_count(opt);
  if (opt->nkey_fields) { /* the table as raw rows, when every field can be taken from them */
    int plain = 1, every = 0, big;
    size_t offset;
    CHECK(h5g_io_open_rows(f, output ? opt->output_dataset : opt->dataset, &d[0]));
    for (int i = 0; i < opt->nkey_fields; i++)
      plain &= h5g_io_plain_field(d[0], opt->key_fields[i], &offset, &big);
    CHECK_MPI(MPI_Allreduce(&plain, &every, 1, MPI_INT, MPI_MIN, comm));
    if (every) goto done;
    rc = h5g_io_close(d[0]);
    d[0] = NULL;
    CHECK(rc);
  }
  for (int i = 0; i < count; i++) {
    h5g_key_source k = h5g_options_key(opt, i);
    const char *path = !output ? k.dataset
                       : k.field || k.column >= 0 ? opt->output_dataset
                                                  : h5g_options_key_output(opt, i);
    CHECK(h5g_io_open_keys(f, path, k.field, &d[i]));
  }
done:
  return rc;
}

int h5g_keyset_close(h5g_dset **d) {
  int rc = H5G_OK;
  for (int i = 0; i < H5G_MAX_KEYS; i++) {
    if (h5g_io_close(d[i]) != H5G_OK) rc = H5G_ERR_RUNTIME;
    d[i] = NULL;
  }
  return rc;
}

/* Key i's bytes in a row of d (a 2-D row, or a raw table row). */
static size_t key_offset(const h5g_options *opt, const h5g_key_layout *layout, const h5g_dset *d,
                         int i, int *swap) {
  h5g_key_source k = h5g_options_key(opt, i);
  size_t offset = (size_t)(k.column >= 0 ? k.column : 0) * layout->key[i].width;
  int big = 0;
  *swap = 0;
  if (k.field && h5g_io_plain_field(d, k.field, &offset, &big))
    *swap = big != (*(const unsigned char *)&(uint16_t){1} == 0);
  return offset;
}

int h5g_keyset_read(MPI_Comm comm, const h5g_options *opt, const h5g_key_layout *layout,
                    h5g_dset *const *d, int word, uint64_t row, uint64_t rows, unsigned width,
                    void *composed, int threads, void *scratch, size_t scratch_bytes) {
  int rc = H5G_OK;
  void *part = NULL, *own = NULL, *column = NULL;
  /* a 2-D dataset's or a raw table's rows hold every key: read once */
  int whole_rows = opt->nkey_columns || (opt->nkey_fields && h5g_io_unconverted(d[0]) && !d[1]);
  size_t part_bytes = 0, column_bytes = 0;
  for (int i = 0; i < layout->count; i++) {
    if (rows * layout->key[i].width > part_bytes) part_bytes = rows * layout->key[i].width;
    if (rows * layout->key[i].width > column_bytes) column_bytes = rows * layout->key[i].width;
  }
  if (whole_rows) part_bytes = rows * h5g_io_row_bytes(d[0]);
  /* on huge pages, made resident by the read's threads: small pages' faults cost more than the
   * read of a table's rows itself */
  int in_scratch = scratch && part_bytes <= scratch_bytes;
  int made = in_scratch || h5g_untouched_alloc(part_bytes, &own) == H5G_OK;
  part = in_scratch ? scratch : own;
  if (made && whole_rows) made = h5g_untouched_alloc(column_bytes, &column) == H5G_OK;
  CHECK(h5g_agree_alloc(comm, made, part_bytes + column_bytes));
  if (rows) memset(composed, 0, rows * width); /* composed is NULL on a rank without rows */
  if (whole_rows) CHECK(h5g_io_read(d[0], row, rows, part)); /* once, for every key */
  for (int i = 0; i < layout->count; i++) {
    h5g_key_source k = h5g_options_key(opt, i);
    h5g_keyspec ks = {layout->key[i].cls, layout->key[i].width, k.descending, k.na};
    if (layout->word[i] != word) continue;
    if (whole_rows) {
      int swap;
      size_t offset = key_offset(opt, layout, d[0], i, &swap);
      h5g_parallel_strided(column, ks.width, (char *)part + offset, h5g_io_row_bytes(d[0]),
                           ks.width, rows, swap, threads);
      h5g_compose_add(composed, width, column, rows, &ks, layout->shift[i], threads);
    } else {
      CHECK(h5g_io_read(d[i], row, rows, part));
      h5g_compose_add(composed, width, part, rows, &ks, layout->shift[i], threads);
    }
  }
done:
  h5g_resident_free(column, column_bytes);
  h5g_resident_free(own, part_bytes);
  return rc;
}

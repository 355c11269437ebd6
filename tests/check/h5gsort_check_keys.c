/* h5gsort_check_keys: an independent checker of h5gsort's sorts by several keys.
 *
 *   h5gsort_check_keys IN.h5 OUT.h5 -d PATH [-d PATH ...] [--key-field A,B] [--key-column J,K]
 *       [--order asc|desc,...] [--descending] [--output-dataset PATH]
 *       [--carry INPATH[:OUTPATH][,...]]... [--index PATH] [--top K] [--unique [--counts PATH]]
 *
 * The keys, in priority order (the first is the primary key), are read from IN:
 * - several -d: 1-D integer or float datasets of equal length, one key each;
 * - one -d with --key-field: those numeric fields of a 1-D compound table;
 * - one -d with --key-column: those columns (0-based) of a 2-D integer or float dataset N x M.
 * Each key is ascending unless --order (one asc|desc per key) or --descending (all) says
 * otherwise. The reference permutation perm (output row i comes from input row perm[i]) is the
 * one numpy.lexsort gives with a stable sort: rows compare key by key with numpy.sort's order
 * (check_common.h: -0.0 == +0.0, NaNs equal to each other and after +inf; a descending key is the
 * exact mirror, NaNs first), and rows whose keys all compare equal keep their input order. It is
 * computed here by a merge sort on row numbers. Being stable, perm is unique, so the checks are
 * byte for byte:
 * - several -d: every key dataset in OUT (same path) has IN's type and shape and its element i
 *   is byte-identical to IN's element perm[i];
 * - --key-field / --key-column: the dataset at OUT's --output-dataset (default: the -d path) has
 *   IN's type and shape and its row i (whole record / whole row) is byte-identical to IN's row
 *   perm[i];
 * - every --carry dataset (any integer or float type, N-D; a row is [i, ...]) has IN's type and
 *   shape (and N rows) and its output row i is byte-identical to input row perm[i]; OUTPATH
 *   defaults to INPATH;
 * - the --index dataset is 1-D uint64 of N elements and equals perm;
 * - the attributes of every key dataset (and of every carried one) are on their outputs.
 * --unique keeps, of each group of rows whose keys all compare equal, its first row of perm (the
 * earliest in the input); --counts PATH is then 1-D uint64 and holds each group's size. --top K
 * keeps the first K rows of perm (after --unique). Every output then has that many rows.
 * The first failure is printed with its row, the expected and the actual values.
 * Datasets are read whole with serial HDF5 as raw file bytes (the file type as memory type).
 * It shares no code with h5gsort. Exit 0 all good, 1 a check failed, 2 usage. */
#include <hdf5.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_common.h"

const char *const check_program = "h5gsort_check_keys";

#define MAX_KEYS 16
#define MAX_CARRY 64

typedef struct {
  const char *in, *out; /* paths in IN.h5 and OUT.h5 */
} path_pair;

/* One key: where it lies in a row of its dataset, its type and direction. */
typedef struct {
  const raw_dataset *d; /* the input dataset holding it */
  size_t offset;        /* byte offset of the key in a row */
  value_type vt;
  int descending;
  char name[128]; /* for messages: the path, field or column */
} key_source;

typedef struct {
  const char *files[2];
  const char *datasets[MAX_KEYS];
  int ndatasets;
  const char *fields[MAX_KEYS];
  int nfields;
  int columns[MAX_KEYS];
  int ncolumns;
  int order[MAX_KEYS]; /* 1 descending */
  int norder, descending;
  const char *output_dataset, *index, *counts;
  long long top; /* -1: every row */
  int unique;
  path_pair carry[MAX_CARRY];
  int ncarry;
} check_options;

typedef struct {
  hid_t in, out;
  const char *in_name, *out_name;
} file_pair;


/* ---- the keys ------------------------------------------------------------------------------ */

static uint64_t key_at(const key_source *k, const unsigned char *raw, size_t row_bytes,
                       uint64_t row) {
  return raw_element(raw + row * row_bytes + k->offset, 0, &k->vt);
}

static uint64_t key_bits(const key_source *k, uint64_t row) {
  return key_at(k, k->d->raw, k->d->row_bytes, row);
}

/* A numeric type of a key (integer or float of a supported width). */
static int describe_key_type(hid_t type, const char *what, value_type *vt) {
  H5T_class_t cls = H5Tget_class(type);
  if (cls != H5T_INTEGER && cls != H5T_FLOAT) return fail("key %s is not an integer or float", what);
  return describe_type(type, vt);
}

/* Several -d: each a 1-D numeric dataset, all of one length. */
static int describe_dataset_keys(const check_options *o, const raw_dataset *in, key_source *keys) {
  for (int i = 0; i < o->ndatasets; i++) {
    key_source *k = &keys[i];
    k->d = &in[i];
    k->offset = 0;
    snprintf(k->name, sizeof k->name, "%s", o->datasets[i]);
    if (in[i].ndims != 1) return fail("key %s is not 1-D (rank %d)", o->datasets[i], in[i].ndims);
    if (describe_key_type(in[i].type, o->datasets[i], &k->vt)) return 1;
    if (in[i].rows != in[0].rows)
      return fail("keys %s and %s differ in length: %" PRIu64 " vs %" PRIu64, o->datasets[0],
                  o->datasets[i], in[0].rows, in[i].rows);
  }
  return 0;
}

/* --key-field: the named numeric fields of a 1-D compound. */
static int describe_field_keys(const check_options *o, const raw_dataset *in, key_source *keys) {
  if (in->ndims != 1) return fail("%s is not 1-D (rank %d)", o->datasets[0], in->ndims);
  if (H5Tget_class(in->type) != H5T_COMPOUND) return fail("%s is not a compound", o->datasets[0]);
  for (int i = 0; i < o->nfields; i++) {
    key_source *k = &keys[i];
    k->d = in;
    snprintf(k->name, sizeof k->name, "field %s", o->fields[i]);
    int index = H5Tget_member_index(in->type, o->fields[i]);
    if (index < 0) return fail("no field '%s' in %s", o->fields[i], o->datasets[0]);
    hid_t member = H5Tget_member_type(in->type, (unsigned)index);
    if (member < 0) return fail("cannot read field '%s'", o->fields[i]);
    int bad = describe_key_type(member, k->name, &k->vt);
    H5Tclose(member);
    if (bad) return 1;
    k->offset = H5Tget_member_offset(in->type, (unsigned)index);
  }
  return 0;
}

/* --key-column: columns of a 2-D numeric dataset. */
static int describe_column_keys(const check_options *o, const raw_dataset *in, key_source *keys) {
  if (in->ndims != 2) return fail("%s is not 2-D (rank %d)", o->datasets[0], in->ndims);
  for (int i = 0; i < o->ncolumns; i++) {
    key_source *k = &keys[i];
    k->d = in;
    snprintf(k->name, sizeof k->name, "column %d", o->columns[i]);
    if ((hsize_t)o->columns[i] >= in->dims[1])
      return fail("column %d is out of range: %s has %llu columns", o->columns[i], o->datasets[0],
                  (unsigned long long)in->dims[1]);
    if (describe_key_type(in->type, o->datasets[0], &k->vt)) return 1;
    k->offset = (size_t)o->columns[i] * H5Tget_size(in->type);
  }
  return 0;
}

/* ---- the reference permutation ------------------------------------------------------------- */

typedef struct {
  const key_source *keys;
  int nkeys;
  uint64_t *bits[MAX_KEYS]; /* bits[k][row]: key k of each input row, host order */
} sort_context;

/* <0, 0, >0: row a before, tied with, after row b (keys only, not the row numbers). */
static int compare_rows(const sort_context *c, uint64_t a, uint64_t b) {
  for (int k = 0; k < c->nkeys; k++) {
    int r = compare_values(c->bits[k][a], c->bits[k][b], &c->keys[k].vt);
    if (r != 0) return c->keys[k].descending ? -r : r;
  }
  return 0;
}

/* Stable merge sort of idx[0..n) by compare_rows; tmp holds n elements. */
static void merge_sort(const sort_context *c, uint64_t *idx, uint64_t *tmp, uint64_t n) {
  for (uint64_t width = 1; width < n; width *= 2) {
    for (uint64_t lo = 0; lo < n; lo += 2 * width) {
      uint64_t mid = lo + width < n ? lo + width : n;
      uint64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      uint64_t i = lo, j = mid, t = lo;
      while (i < mid && j < hi) tmp[t++] = compare_rows(c, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
      while (i < mid) tmp[t++] = idx[i++];
      while (j < hi) tmp[t++] = idx[j++];
    }
    memcpy(idx, tmp, n * sizeof *idx);
  }
}

static int reference_permutation(const key_source *keys, int nkeys, uint64_t n, uint64_t *perm) {
  sort_context c = {keys, nkeys, {NULL}};
  uint64_t *tmp = malloc(n * sizeof *tmp + 1);
  int bad = tmp == NULL;
  for (int k = 0; k < nkeys && !bad; k++) {
    c.bits[k] = malloc(n * sizeof *c.bits[k] + 1);
    if (c.bits[k] == NULL) {
      bad = 1;
      break;
    }
    for (uint64_t i = 0; i < n; i++) c.bits[k][i] = key_bits(&keys[k], i);
  }
  if (bad) {
    bad = fail("out of memory");
  } else {
    for (uint64_t i = 0; i < n; i++) perm[i] = i;
    merge_sort(&c, perm, tmp, n);
    /* the result is sorted and stable: a cheap self-check of the merge sort */
    for (uint64_t i = 1; i < n && !bad; i++) {
      int r = compare_rows(&c, perm[i - 1], perm[i]);
      if (r > 0 || (r == 0 && perm[i - 1] > perm[i]))
        bad = fail("internal error: the reference sort is wrong at row %" PRIu64, i);
    }
  }
  for (int k = 0; k < MAX_KEYS; k++) free(c.bits[k]);
  free(tmp);
  return bad;
}

/* --unique: perm[0..kept) becomes the first row of each group of rows whose keys all compare
 * equal (perm is sorted and stable, so that row is the group's earliest), counts[] the group
 * sizes. Returns kept. */
static uint64_t keep_first_of_groups(const key_source *keys, int nkeys, uint64_t *perm,
                                     uint64_t *counts, uint64_t n) {
  sort_context c = {keys, nkeys, {NULL}};
  uint64_t kept = 0;
  for (int k = 0; k < nkeys; k++) {
    c.bits[k] = malloc(n * sizeof *c.bits[k] + 1);
    if (c.bits[k] == NULL) {
      fail("out of memory");
      exit(1);
    }
    for (uint64_t i = 0; i < n; i++) c.bits[k][i] = key_bits(&keys[k], i);
  }
  for (uint64_t i = 0; i < n; i++) {
    if (kept && compare_rows(&c, perm[kept - 1], perm[i]) == 0) {
      counts[kept - 1]++;
      continue;
    }
    perm[kept] = perm[i];
    counts[kept++] = 1;
  }
  for (int k = 0; k < MAX_KEYS; k++) free(c.bits[k]);
  return kept;
}

/* ---- comparing outputs --------------------------------------------------------------------- */

/* Row `row` of raw (row_bytes per row) for messages: the keys that lie in it ("k=v, ...") or,
 * with no keys, its first elements when numeric, or its first bytes. */
static void describe_row(char *buf, size_t size, const raw_dataset *d, const unsigned char *raw,
                         uint64_t row, const key_source *keys, int nkeys) {
  size_t used = 0;
  buf[0] = '\0';
  if (nkeys > 0) {
    for (int k = 0; k < nkeys && used < size; k++) {
      char v[80];
      format_value(v, sizeof v, key_at(&keys[k], raw, d->row_bytes, row), &keys[k].vt);
      used += (size_t)snprintf(buf + used, size - used, "%s%s = %s", k ? ", " : "", keys[k].name, v);
    }
    return;
  }
  value_type vt;
  H5T_class_t cls = H5Tget_class(d->type);
  if ((cls == H5T_INTEGER || cls == H5T_FLOAT) && describe_type(d->type, &vt) == 0) {
    uint64_t per_row = d->row_bytes / vt.width, shown = per_row < 4 ? per_row : 4;
    used += (size_t)snprintf(buf + used, size - used, "[");
    for (uint64_t e = 0; e < shown && used < size; e++) {
      char v[80];
      format_value(v, sizeof v, raw_element(raw + row * d->row_bytes, e, &vt), &vt);
      used += (size_t)snprintf(buf + used, size - used, "%s%s", e ? ", " : "", v);
    }
    if (used < size) snprintf(buf + used, size - used, "%s]", shown < per_row ? ", ..." : "");
    return;
  }
  used += (size_t)snprintf(buf + used, size - used, "bytes");
  for (size_t b = 0; b < d->row_bytes && b < 16 && used < size; b++)
    used += (size_t)snprintf(buf + used, size - used, " %02x", raw[row * d->row_bytes + b]);
}

/* Output row i is byte-identical to input row perm[i], for every row. */
static int check_rows(const raw_dataset *in, const raw_dataset *out, const uint64_t *perm,
                      const char *what, const key_source *keys, int nkeys) {
  for (uint64_t i = 0; i < out->rows; i++) {
    if (memcmp(out->raw + i * out->row_bytes, in->raw + perm[i] * in->row_bytes, in->row_bytes) ==
        0)
      continue;
    char want[512], got[512];
    describe_row(want, sizeof want, in, in->raw, perm[i], keys, nkeys);
    describe_row(got, sizeof got, out, out->raw, i, keys, nkeys);
    return fail("%s: output row %" PRIu64 " should be input row %" PRIu64 ": expected %s, got %s",
                what, i, perm[i], want, got);
  }
  return 0;
}

/* A key or table dataset: same type and shape in OUT, rows permuted by perm, attributes copied. */
static int check_sorted_dataset(const raw_dataset *in, const file_pair *f, const char *out_path,
                                const uint64_t *perm, uint64_t rows, const key_source *keys,
                                int nkeys) {
  raw_dataset out;
  init_raw(&out);
  int bad = read_raw(f->out, f->out_name, out_path, &out);
  if (!bad) bad = check_same_layout(in, &out, rows, out_path);
  if (!bad) bad = check_rows(in, &out, perm, out_path, keys, nkeys);
  if (!bad) bad = check_attributes(in->dset, out.dset);
  close_raw(&out);
  return bad;
}

/* A carried dataset: numeric, N-D, n rows, same type and shape, rows permuted, attributes. */
static int check_carried(const file_pair *f, const path_pair *p, uint64_t n, const uint64_t *perm,
                         uint64_t rows) {
  raw_dataset in, out;
  value_type vt;
  init_raw(&in);
  init_raw(&out);
  int bad = read_raw(f->in, f->in_name, p->in, &in);
  if (!bad) bad = read_raw(f->out, f->out_name, p->out, &out);
  if (!bad && in.ndims < 1) bad = fail("carried %s is a scalar", p->in);
  if (!bad && H5Tget_class(in.type) != H5T_INTEGER && H5Tget_class(in.type) != H5T_FLOAT)
    bad = fail("carried %s is not numeric", p->in);
  if (!bad) bad = describe_type(in.type, &vt);
  if (!bad) bad = check_same_layout(&in, &out, rows, p->out);
  if (!bad && in.rows != n)
    bad = fail("carried %s has %" PRIu64 " rows, the keys %" PRIu64, p->in, in.rows, n);
  if (!bad) bad = check_rows(&in, &out, perm, p->out, NULL, 0);
  if (!bad) bad = check_attributes(in.dset, out.dset);
  close_raw(&out);
  close_raw(&in);
  return bad;
}

/* The --index (or --counts) dataset: 1-D uint64 of n elements, equal to perm. */
static int check_index(const file_pair *f, const char *path, uint64_t n, const uint64_t *perm) {
  raw_dataset d;
  value_type vt;
  init_raw(&d);
  int bad = read_raw(f->out, f->out_name, path, &d);
  if (!bad && (H5Tget_class(d.type) != H5T_INTEGER || H5Tget_sign(d.type) != H5T_SGN_NONE ||
               H5Tget_size(d.type) != 8))
    bad = fail("index %s is not a uint64 dataset", path);
  if (!bad && (d.ndims != 1 || d.rows != n))
    bad = fail("index %s is not 1-D with %" PRIu64 " elements", path, n);
  if (!bad) bad = describe_type(d.type, &vt);
  for (uint64_t i = 0; !bad && i < n; i++) {
    uint64_t got = raw_element(d.raw, i, &vt);
    if (got != perm[i])
      bad = fail("index %s: output row %" PRIu64 ": expected source row %" PRIu64 ", got %" PRIu64,
                 path, i, perm[i], got);
  }
  close_raw(&d);
  return bad;
}

static int check_keys(const check_options *o, const file_pair *f) {
  raw_dataset in[MAX_KEYS];
  key_source keys[MAX_KEYS];
  uint64_t *perm = NULL, *counts = NULL;
  int nkeys = o->nfields ? o->nfields : o->ncolumns ? o->ncolumns : o->ndatasets;
  int composite = o->nfields || o->ncolumns; /* one dataset holding every key */
  memset(keys, 0, sizeof keys);
  for (int i = 0; i < MAX_KEYS; i++) init_raw(&in[i]);
  int bad = 0;
  for (int i = 0; i < o->ndatasets && !bad; i++)
    bad = read_raw(f->in, f->in_name, o->datasets[i], &in[i]);
  if (!bad)
    bad = o->nfields    ? describe_field_keys(o, in, keys)
          : o->ncolumns ? describe_column_keys(o, in, keys)
                        : describe_dataset_keys(o, in, keys);
  for (int k = 0; k < nkeys; k++) keys[k].descending = o->descending || (o->norder && o->order[k]);
  const uint64_t n = in[0].rows;
  uint64_t rows = n;
  if (!bad) {
    perm = malloc(n * sizeof *perm + 1);
    counts = malloc(n * sizeof *counts + 1);
    bad = perm == NULL || counts == NULL ? fail("out of memory")
                                         : reference_permutation(keys, nkeys, n, perm);
  }
  if (!bad && o->unique) rows = keep_first_of_groups(keys, nkeys, perm, counts, n);
  if (!bad && o->top >= 0 && (uint64_t)o->top < rows) rows = (uint64_t)o->top;
  if (composite) {
    const char *out_path = o->output_dataset ? o->output_dataset : o->datasets[0];
    if (!bad) bad = check_sorted_dataset(&in[0], f, out_path, perm, rows, keys, nkeys);
  } else {
    for (int i = 0; i < o->ndatasets && !bad; i++)
      bad = check_sorted_dataset(&in[i], f, o->output_dataset ? o->output_dataset : o->datasets[i],
                                 perm, rows, &keys[i], 1);
  }
  for (int i = 0; i < o->ncarry && !bad; i++) bad = check_carried(f, &o->carry[i], n, perm, rows);
  if (!bad && o->index) bad = check_index(f, o->index, rows, perm);
  if (!bad && o->counts) bad = check_index(f, o->counts, rows, counts);
  if (!bad)
    printf("%s: ok: %" PRIu64 " of %" PRIu64 " rows, %d keys, %d carried datasets%s (%s -> %s)\n",
           check_program, rows, n, nkeys, o->ncarry, o->index ? ", index" : "", o->files[0],
           o->files[1]);
  free(perm);
  free(counts);
  for (int i = 0; i < MAX_KEYS; i++) close_raw(&in[i]);
  return bad;
}

/* ---- main ---------------------------------------------------------------------------------- */

static int usage(void) {
  fputs("usage: h5gsort_check_keys IN.h5 OUT.h5 -d PATH [-d PATH ...] [--key-field A,B]\n"
        "           [--key-column J,K] [--order asc|desc,...] [--descending]\n"
        "           [--output-dataset PATH] [--carry INPATH[:OUTPATH][,...]]... [--index PATH]\n"
        "           [--top K] [--unique [--counts PATH]]\n",
        stderr);
  return 2;
}

/* Splits a comma-separated list in place into list[*count...]; -1 on an empty item or too many. */
static int split_list(char *arg, const char **list, int max, int *count) {
  if (arg[0] == '\0' || arg[0] == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,")) return -1;
  for (char *save = NULL, *item = strtok_r(arg, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    if (*count == max) return -1;
    list[(*count)++] = item;
  }
  return 0;
}

static int parse_options(int argc, char **argv, check_options *o) {
  int nfiles = 0;
  const char *items[MAX_CARRY];
  memset(o, 0, sizeof *o);
  o->top = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (strcmp(a, "--descending") == 0) {
      o->descending = 1;
    } else if ((strcmp(a, "-d") == 0 || strcmp(a, "--dataset") == 0) && has_value) {
      if (o->ndatasets == MAX_KEYS) return 2;
      o->datasets[o->ndatasets++] = argv[++i];
    } else if (strcmp(a, "--key-field") == 0 && has_value) {
      if (o->nfields || split_list(argv[++i], o->fields, MAX_KEYS, &o->nfields)) return 2;
    } else if (strcmp(a, "--key-column") == 0 && has_value) {
      int count = 0;
      if (o->ncolumns || split_list(argv[++i], items, MAX_KEYS, &count)) return 2;
      for (int c = 0; c < count; c++) {
        char *end = NULL;
        long v = strtol(items[c], &end, 10);
        if (*end != '\0' || items[c][0] < '0' || items[c][0] > '9' || v > 1000000000L) return 2;
        o->columns[o->ncolumns++] = (int)v;
      }
    } else if (strcmp(a, "--order") == 0 && has_value) {
      int count = 0;
      if (o->norder || split_list(argv[++i], items, MAX_KEYS, &count)) return 2;
      for (int c = 0; c < count; c++) {
        if (strcmp(items[c], "asc") != 0 && strcmp(items[c], "desc") != 0) return 2;
        o->order[o->norder++] = strcmp(items[c], "desc") == 0;
      }
    } else if (strcmp(a, "--unique") == 0) {
      o->unique = 1;
    } else if (strcmp(a, "--counts") == 0 && has_value) {
      o->counts = argv[++i];
    } else if (strcmp(a, "--top") == 0 && has_value) {
      char *end = NULL;
      o->top = strtoll(argv[++i], &end, 10);
      if (*end != '\0' || o->top < 0) return 2;
    } else if (strcmp(a, "--output-dataset") == 0 && has_value) {
      o->output_dataset = argv[++i];
    } else if ((strcmp(a, "--index") == 0 || strcmp(a, "--index-out") == 0) && has_value) {
      o->index = argv[++i];
    } else if (strcmp(a, "--carry") == 0 && has_value) {
      int count = 0;
      if (split_list(argv[++i], items, MAX_CARRY - o->ncarry, &count)) return 2;
      for (int c = 0; c < count; c++) {
        path_pair *p = &o->carry[o->ncarry++];
        char *colon = strchr(items[c], ':');
        p->in = p->out = items[c];
        if (colon != NULL) {
          *colon = '\0';
          p->out = colon + 1;
        }
      }
    } else if (a[0] == '-') {
      return 2;
    } else if (nfiles < 2) {
      o->files[nfiles++] = a;
    } else {
      return 2;
    }
  }
  if (nfiles != 2 || o->ndatasets == 0 || (o->counts && !o->unique)) return 2;
  if ((o->nfields || o->ncolumns) && o->ndatasets != 1) {
    fputs("h5gsort_check_keys: --key-field and --key-column take one -d\n", stderr);
    return 2;
  }
  if (o->nfields && o->ncolumns) return 2;
  if (o->output_dataset && o->ndatasets != 1) {
    fputs("h5gsort_check_keys: --output-dataset takes one -d\n", stderr);
    return 2;
  }
  int nkeys = o->nfields ? o->nfields : o->ncolumns ? o->ncolumns : o->ndatasets;
  if (o->norder && (o->norder != nkeys || o->descending)) {
    fputs("h5gsort_check_keys: --order needs one direction per key, and no --descending\n", stderr);
    return 2;
  }
  return 0;
}

int main(int argc, char **argv) {
  check_options o;
  if (parse_options(argc, argv, &o) != 0) return usage();
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  file_pair f = {H5I_INVALID_HID, H5I_INVALID_HID, o.files[0], o.files[1]};
  f.in = H5Fopen(o.files[0], H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f.in >= 0) f.out = H5Fopen(o.files[1], H5F_ACC_RDONLY, H5P_DEFAULT);
  int bad;
  if (f.in < 0 || f.out < 0)
    bad = fail("cannot open %s", f.in < 0 ? o.files[0] : o.files[1]);
  else
    bad = check_keys(&o, &f);
  if (f.out >= 0) H5Fclose(f.out);
  if (f.in >= 0) H5Fclose(f.in);
  return bad ? 1 : 0;
}

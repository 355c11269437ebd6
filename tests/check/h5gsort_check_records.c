/* h5gsort_check_records: an independent checker of h5gsort's record sorts (--carry, --index-out,
 * --key-field).
 *
 *   h5gsort_check_records IN.h5 OUT.h5 -d INKEYS [-o OUTKEYS] [--key-field NAME] [--descending]
 *       [--carry INPATH[:OUTPATH]]... [--index PATH] [--row-id INPATH[:OUTPATH]]
 *       [--row-id-field NAME]
 *   h5gsort_check_records --identical A.h5 B.h5 PATH...
 *
 * The permutation perm (output row i came from input row perm[i]) is read from OUT: the
 * --index dataset (uint64, 1-D) and/or a carried "row id" (--row-id: a 1-D integer dataset
 * whose input holds 0, 1, 2, ...; --row-id-field: such a field of the --key-field table). At
 * least one is needed; when several are given they must agree. The checks:
 * - perm is a permutation of 0..N-1;
 * - the output keys are in numpy.sort order (descending: the exact reverse), by the shared
 *   comparator of check_common.h;
 * - out_key[i] is bit-identical to in_key[perm[i]]; with --key-field the whole output record i
 *   is byte-identical to input record perm[i];
 * - stability: among bit-identical keys, perm increases;
 * - every carried dataset (any numeric type, N-D: a row is [i, ...]) has the input's type and
 *   shape, and output row i is byte-identical to input row perm[i];
 * - the attributes of the key dataset and of every carried one are on their outputs.
 * --identical: each PATH has the same type, shape and bytes in A and B.
 * Datasets are read whole with serial HDF5 as raw file bytes (the file type as memory type).
 * It shares no code with h5gsort. Exit 0 all good, 1 a check failed (the first failure is
 * printed), 2 usage. */
#include <hdf5.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_common.h"

const char *const check_program = "h5gsort_check_records";

#define MAX_CARRY 64

typedef struct {
  const char *in, *out; /* paths in IN.h5 and OUT.h5 */
} path_pair;

/* One key per row: its bits (host order) and where it lies in the row. */
typedef struct {
  value_type vt;
  size_t offset; /* byte offset of the key in a row (a field of a compound) */
} key_layout;


static uint64_t key_bits(const raw_dataset *d, const key_layout *k, uint64_t row) {
  return raw_element(d->raw + row * d->row_bytes + k->offset, 0, &k->vt);
}

/* The key of a 1-D numeric dataset, or field `field` of a 1-D compound. */
static int describe_key(const raw_dataset *d, const char *field, key_layout *k) {
  if (d->ndims != 1) return fail("the key dataset is not 1-D (rank %d)", d->ndims);
  if (field == NULL) {
    k->offset = 0;
    return describe_type(d->type, &k->vt);
  }
  if (H5Tget_class(d->type) != H5T_COMPOUND) return fail("the key dataset is not a compound");
  int index = H5Tget_member_index(d->type, field);
  if (index < 0) return fail("no field '%s' in the key dataset", field);
  hid_t member = H5Tget_member_type(d->type, (unsigned)index);
  int bad = member < 0 ? fail("cannot read field '%s'", field) : describe_type(member, &k->vt);
  if (member >= 0) H5Tclose(member);
  k->offset = H5Tget_member_offset(d->type, (unsigned)index);
  return bad;
}

/* ---- the permutation ----------------------------------------------------------------------- */

/* Fills or compares perm (have = 1 after the first source) with source[i]. */
static int merge_permutation(uint64_t *perm, int *have, const uint64_t *source, uint64_t n,
                             const char *what) {
  for (uint64_t i = 0; i < n; i++) {
    if (*have && perm[i] != source[i])
      return fail("%s disagrees with the other permutation source at row %" PRIu64 ": %" PRIu64
                  " vs %" PRIu64, what, i, source[i], perm[i]);
    perm[i] = source[i];
  }
  *have = 1;
  return 0;
}

/* The --index dataset: uint64, 1-D, n elements. */
static int read_index(hid_t file, const char *path, uint64_t n, uint64_t *out) {
  raw_dataset d;
  value_type vt;
  init_raw(&d);
  int bad = read_raw(file, "the output", path, &d);
  if (!bad && (H5Tget_class(d.type) != H5T_INTEGER || H5Tget_sign(d.type) != H5T_SGN_NONE ||
               H5Tget_size(d.type) != 8))
    bad = fail("index %s is not a uint64 dataset", path);
  if (!bad && (d.ndims != 1 || d.rows != n))
    bad = fail("index %s is not 1-D with %" PRIu64 " elements", path, n);
  if (!bad) bad = describe_type(d.type, &vt);
  for (uint64_t i = 0; !bad && i < n; i++) out[i] = raw_element(d.raw, i, &vt);
  close_raw(&d);
  return bad;
}

/* Row ids: the input holds 0, 1, ..., n-1 and the output's values are the permutation. */
static int read_row_ids(const raw_dataset *in, const raw_dataset *out, const key_layout *k,
                        uint64_t *ids, const char *what) {
  if (k->vt.kind == KIND_FLOAT) return fail("row id %s is not an integer", what);
  uint64_t mask = k->vt.width == 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * k->vt.width)) - 1;
  if (mask != ~(uint64_t)0 && in->rows > mask + 1)
    return fail("row id %s is too narrow for %" PRIu64 " rows", what, in->rows);
  for (uint64_t i = 0; i < in->rows; i++) {
    if (key_bits(in, k, i) != (i & mask))
      return fail("row id %s: the input's row %" PRIu64 " holds %" PRIu64 ", not its row number",
                  what, i, key_bits(in, k, i));
    ids[i] = key_bits(out, k, i);
  }
  return 0;
}

static int check_permutation(const uint64_t *perm, uint64_t n) {
  unsigned char *seen = calloc(n + 1, 1);
  if (seen == NULL) return fail("out of memory");
  int bad = 0;
  for (uint64_t i = 0; i < n && !bad; i++) {
    if (perm[i] >= n)
      bad = fail("output row %" PRIu64 " claims source row %" PRIu64 ", out of range 0..%" PRIu64,
                 i, perm[i], n - 1);
    else if (seen[perm[i]]++)
      bad = fail("source row %" PRIu64 " appears twice (again at output row %" PRIu64 ")",
                 perm[i], i);
  }
  free(seen);
  return bad;
}

/* ---- keys ---------------------------------------------------------------------------------- */

static int check_keys(const raw_dataset *in, const raw_dataset *out, const key_layout *k,
                      const uint64_t *perm, int descending) {
  char a[80], b[80];
  for (uint64_t i = 0; i < out->rows; i++) {
    uint64_t got = key_bits(out, k, i), want = key_bits(in, k, perm[i]);
    if (got != want) {
      format_value(a, sizeof a, got, &k->vt);
      format_value(b, sizeof b, want, &k->vt);
      return fail("output key %" PRIu64 " is %s but input key %" PRIu64 " (its source) is %s", i, a,
                  perm[i], b);
    }
    if (i == 0) continue;
    int c = compare_values(key_bits(out, k, i - 1), got, &k->vt);
    if (descending ? c < 0 : c > 0) {
      format_value(a, sizeof a, key_bits(out, k, i - 1), &k->vt);
      format_value(b, sizeof b, got, &k->vt);
      return fail("output not in %s order at row %" PRIu64 ": [%" PRIu64 "] = %s, [%" PRIu64
                  "] = %s", descending ? "descending" : "ascending", i, i - 1, a, i, b);
    }
  }
  return 0;
}

typedef struct {
  uint64_t bits, row;
} keyed_row;

static int compare_keyed_rows(const void *a, const void *b) {
  const keyed_row *x = a, *y = b;
  if (x->bits != y->bits) return (x->bits > y->bits) - (x->bits < y->bits);
  return (x->row > y->row) - (x->row < y->row);
}

/* Among output rows with bit-identical keys (not necessarily adjacent: -0.0 and +0.0, or NaNs,
 * may interleave in numpy order), the source rows increase with the output row. */
static int check_stable(const raw_dataset *out, const key_layout *k, const uint64_t *perm) {
  keyed_row *rows = malloc(out->rows * sizeof *rows + 1);
  if (rows == NULL) return fail("out of memory");
  for (uint64_t i = 0; i < out->rows; i++) rows[i] = (keyed_row){key_bits(out, k, i), i};
  qsort(rows, out->rows, sizeof *rows, compare_keyed_rows);
  int bad = 0;
  for (uint64_t j = 1; j < out->rows && !bad; j++) {
    if (rows[j].bits == rows[j - 1].bits && perm[rows[j].row] < perm[rows[j - 1].row]) {
      char v[80];
      format_value(v, sizeof v, rows[j].bits, &k->vt);
      bad = fail("not stable: equal keys %s at output rows %" PRIu64 " and %" PRIu64
                 " come from input rows %" PRIu64 " and %" PRIu64 " (input order reversed)",
                 v, rows[j - 1].row, rows[j].row, perm[rows[j - 1].row], perm[rows[j].row]);
    }
  }
  free(rows);
  return bad;
}

/* Output row i is byte-identical to input row perm[i]. */
static int check_rows(const raw_dataset *in, const raw_dataset *out, const uint64_t *perm,
                      const char *what) {
  for (uint64_t i = 0; i < out->rows; i++) {
    if (memcmp(out->raw + i * out->row_bytes, in->raw + perm[i] * in->row_bytes, in->row_bytes) != 0)
      return fail("%s: output row %" PRIu64 " differs from input row %" PRIu64 " (its key's source)",
                  what, i, perm[i]);
  }
  return 0;
}

/* ---- modes --------------------------------------------------------------------------------- */

typedef struct {
  const char *files[2];
  path_pair keys;
  const char *key_field, *index, *row_id_field;
  path_pair row_id, carry[MAX_CARRY];
  int ncarry, descending, identical;
  const char *identical_paths[MAX_CARRY];
  int nidentical;
} check_options;

static int check_identical_paths(const check_options *o, hid_t a, hid_t b) {
  int bad = 0;
  for (int i = 0; i < o->nidentical && !bad; i++) {
    raw_dataset x, y;
    init_raw(&x);
    init_raw(&y);
    bad = read_raw(a, o->files[0], o->identical_paths[i], &x);
    if (!bad) bad = read_raw(b, o->files[1], o->identical_paths[i], &y);
    if (!bad) bad = check_same_layout(&x, &y, x.rows, o->identical_paths[i]);
    for (uint64_t r = 0; !bad && r < x.rows; r++)
      if (memcmp(x.raw + r * x.row_bytes, y.raw + r * y.row_bytes, x.row_bytes) != 0)
        bad = fail("%s: row %" PRIu64 " differs between %s and %s", o->identical_paths[i], r,
                   o->files[0], o->files[1]);
    close_raw(&y);
    close_raw(&x);
  }
  if (!bad) printf("%s: ok: %d datasets identical\n", check_program, o->nidentical);
  return bad;
}

typedef struct {
  hid_t in, out;
  const char *in_name, *out_name;
} file_pair;

/* A carried dataset: same type and shape, and either its rows follow perm (attributes copied)
 * or, with row_ids, it is a row id column whose output values are stored in row_ids. */
static int check_carried(const file_pair *f, const path_pair *p, uint64_t n, const uint64_t *perm,
                         uint64_t *row_ids) {
  raw_dataset in, out;
  value_type vt;
  key_layout k = {.offset = 0};
  init_raw(&in);
  init_raw(&out);
  int bad = read_raw(f->in, f->in_name, p->in, &in);
  if (!bad) bad = read_raw(f->out, f->out_name, p->out, &out);
  if (!bad && in.ndims < 1) bad = fail("carried %s is a scalar", p->in);
  if (!bad && H5Tget_class(in.type) != H5T_INTEGER && H5Tget_class(in.type) != H5T_FLOAT)
    bad = fail("carried %s is not numeric", p->in);
  if (!bad) bad = describe_type(in.type, &vt);
  if (!bad) bad = check_same_layout(&in, &out, in.rows, p->out);
  if (!bad && in.rows != n)
    bad = fail("carried %s has %" PRIu64 " rows, the keys %" PRIu64, p->in, in.rows, n);
  if (!bad && row_ids != NULL) {
    k.vt = vt;
    bad = in.ndims != 1 ? fail("row id %s is not 1-D", p->in)
                        : read_row_ids(&in, &out, &k, row_ids, p->out);
  }
  if (!bad && perm != NULL) bad = check_rows(&in, &out, perm, p->out);
  if (!bad && perm != NULL) bad = check_attributes(in.dset, out.dset);
  close_raw(&out);
  close_raw(&in);
  return bad;
}

static int check_records(const check_options *o, const file_pair *f) {
  raw_dataset in, out;
  key_layout k;
  uint64_t *perm = NULL, *source = NULL;
  int have_perm = 0;
  init_raw(&in);
  init_raw(&out);
  int bad = read_raw(f->in, f->in_name, o->keys.in, &in);
  if (!bad) bad = read_raw(f->out, f->out_name, o->keys.out, &out);
  if (!bad) bad = describe_key(&in, o->key_field, &k);
  if (!bad) bad = check_same_layout(&in, &out, in.rows, o->keys.out);
  const uint64_t n = in.rows;
  if (!bad) {
    perm = malloc(n * sizeof *perm + 1);
    source = malloc(n * sizeof *source + 1);
    if (perm == NULL || source == NULL) bad = fail("out of memory");
  }
  if (!bad && o->index) {
    bad = read_index(f->out, o->index, n, source);
    if (!bad) bad = merge_permutation(perm, &have_perm, source, n, o->index);
  }
  if (!bad && o->row_id.in) {
    bad = check_carried(f, &o->row_id, n, NULL, source);
    if (!bad) bad = merge_permutation(perm, &have_perm, source, n, o->row_id.out);
  }
  if (!bad && o->row_id_field) {
    key_layout id;
    bad = describe_key(&in, o->row_id_field, &id);
    if (!bad) bad = read_row_ids(&in, &out, &id, source, o->row_id_field);
    if (!bad) bad = merge_permutation(perm, &have_perm, source, n, o->row_id_field);
  }
  if (!bad) bad = check_permutation(perm, n);
  if (!bad) bad = check_keys(&in, &out, &k, perm, o->descending);
  if (!bad) bad = check_stable(&out, &k, perm);
  if (!bad && o->key_field) bad = check_rows(&in, &out, perm, "table records");
  if (!bad) bad = check_attributes(in.dset, out.dset);
  if (!bad && o->row_id.in) bad = check_carried(f, &o->row_id, n, perm, NULL);
  for (int i = 0; i < o->ncarry && !bad; i++) bad = check_carried(f, &o->carry[i], n, perm, NULL);
  if (!bad)
    printf("%s: ok: %" PRIu64 " records, %d carried datasets (%s:%s -> %s:%s)\n", check_program,
           n, o->ncarry, o->files[0], o->keys.in, o->files[1], o->keys.out);
  free(source);
  free(perm);
  close_raw(&out);
  close_raw(&in);
  return bad;
}

/* ---- main ---------------------------------------------------------------------------------- */

static int usage(void) {
  fputs("usage: h5gsort_check_records IN.h5 OUT.h5 -d INKEYS [-o OUTKEYS] [--key-field NAME]\n"
        "           [--descending] [--carry INPATH[:OUTPATH]]... [--index PATH]\n"
        "           [--row-id INPATH[:OUTPATH]] [--row-id-field NAME]\n"
        "       h5gsort_check_records --identical A.h5 B.h5 PATH...\n",
        stderr);
  return 2;
}

/* "IN[:OUT]" into a pair (OUT defaults to IN); modifies text. */
static void split_pair(char *text, path_pair *p) {
  char *colon = strchr(text, ':');
  p->in = text;
  p->out = text;
  if (colon != NULL) {
    *colon = '\0';
    p->out = colon + 1;
  }
}

static int parse_options(int argc, char **argv, check_options *o) {
  int nfiles = 0;
  memset(o, 0, sizeof *o);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (strcmp(a, "--identical") == 0)
      o->identical = 1;
    else if (strcmp(a, "--descending") == 0)
      o->descending = 1;
    else if (strcmp(a, "-d") == 0 && has_value)
      o->keys.in = argv[++i];
    else if (strcmp(a, "-o") == 0 && has_value)
      o->keys.out = argv[++i];
    else if (strcmp(a, "--key-field") == 0 && has_value)
      o->key_field = argv[++i];
    else if (strcmp(a, "--index") == 0 && has_value)
      o->index = argv[++i];
    else if (strcmp(a, "--row-id-field") == 0 && has_value)
      o->row_id_field = argv[++i];
    else if (strcmp(a, "--row-id") == 0 && has_value)
      split_pair(argv[++i], &o->row_id);
    else if (strcmp(a, "--carry") == 0 && has_value && o->ncarry < MAX_CARRY)
      split_pair(argv[++i], &o->carry[o->ncarry++]);
    else if (a[0] == '-')
      return 2;
    else if (nfiles < 2)
      o->files[nfiles++] = a;
    else if (o->identical && o->nidentical < MAX_CARRY)
      o->identical_paths[o->nidentical++] = a;
    else
      return 2;
  }
  if (nfiles != 2) return 2;
  if (o->identical) return o->nidentical > 0 ? 0 : 2;
  if (o->keys.in == NULL) return 2;
  if (o->keys.out == NULL) o->keys.out = o->keys.in;
  if (o->index == NULL && o->row_id.in == NULL && o->row_id_field == NULL) {
    fputs("h5gsort_check_records: needs --index, --row-id or --row-id-field\n", stderr);
    return 2;
  }
  if (o->row_id_field && !o->key_field) return 2;
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
  else if (o.identical)
    bad = check_identical_paths(&o, f.in, f.out);
  else
    bad = check_records(&o, &f);
  if (f.out >= 0) H5Fclose(f.out);
  if (f.in >= 0) H5Fclose(f.in);
  return bad ? 1 : 0;
}

/* References in a new OUTPUT (io/h5io.h: h5g_io_carry_references). A reference is a file
 * address: copied as bytes into another file it dangles or, worse, points at another object. So
 * every attribute that holds one is taken out of OUTPUT; dimension scales are attached anew
 * through the dimension-scale API (the scales that OUTPUT does not hold yet copied from INPUT);
 * object references to what OUTPUT holds are made anew; the rest is left out, one warning each.
 * Also the datasets that a copy of INPUT keeps in the input's order (h5g_io_inspect_unmoved). */
#include <hdf5.h>
#include <hdf5_hl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/h5check.h"
#include "io/h5io_pkg.h"
#include "io/references.h"

/* An attribute of OUTPUT that held references, taken out: to be made anew or told about. */
typedef struct {
  char *object, *name;
} removed_attribute;

typedef struct {
  hid_t in, out;
  const h5g_io_written *written;
  int count;
  haddr_t *written_at;  /* input address of written[i].from */
  haddr_t *copied_at;   /* input addresses of the scales copied as they are, at their own path */
  char **copied;
  int ncopied;
  removed_attribute *removed;
  int nremoved, cap_removed;
  FILE *warn;
} carry_pass;

/* One "h5gsort: warning:" line (none with -q). */
static void warn(const carry_pass *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(const carry_pass *p, const char *fmt, ...) {
  va_list args;
  if (!p->warn) return;
  va_start(args, fmt);
  fputs("h5gsort: warning: ", p->warn);
  vfprintf(p->warn, fmt, args);
  fputc('\n', p->warn);
  va_end(args);
}

/* The path in OUTPUT of the input object at `addr` (`name`, one of its input paths, `type`), or
 * NULL when OUTPUT does not hold it: a written dataset, a scale copied, or a group at the same
 * path (groups are made along the paths of what is written). */
static const char *output_path(const carry_pass *p, haddr_t addr, const char *name,
                               H5O_type_t type) {
  for (int i = 0; i < p->count; i++)
    if (p->written_at[i] == addr) return p->written[i].to;
  for (int i = 0; i < p->ncopied; i++)
    if (p->copied_at[i] == addr) return p->copied[i];
  H5O_info_t there;
  if (type == H5O_TYPE_GROUP && h5g_io_path_exists_internal(p->out, name) &&
      H5Oget_info_by_name2(p->out, name, &there, H5O_INFO_BASIC, H5P_DEFAULT) >= 0 &&
      there.type == H5O_TYPE_GROUP)
    return name;
  return NULL;
}

/* The input path of the object at OUTPUT's `path`. */
static const char *input_path(const carry_pass *p, const char *path) {
  for (int i = 0; i < p->count; i++)
    if (strcmp(p->written[i].to, path) == 0) return p->written[i].from;
  return path;
}

static int has_references(hid_t obj, const char *name) {
  hid_t attr = H5Aopen(obj, name, H5P_DEFAULT), type = attr >= 0 ? H5Aget_type(attr) : -1;
  int refs = type >= 0 ? H5Tdetect_class(type, H5T_REFERENCE) : -1;
  CLOSE_ID(H5Tclose, type);
  CLOSE_ID(H5Aclose, attr);
  return refs;
}

typedef struct {
  carry_pass *p;
  const char *object;
  int failed;
} strip_visit;

static herr_t note_reference_attribute(hid_t obj, const char *name, const H5A_info_t *ainfo,
                                       void *data) {
  (void)ainfo;
  strip_visit *v = data;
  carry_pass *p = v->p;
  int refs = has_references(obj, name);
  if (refs <= 0) return refs < 0 ? (v->failed = 1, -1) : 0;
  if (p->nremoved == p->cap_removed) {
    int cap = p->cap_removed ? 2 * p->cap_removed : 16;
    removed_attribute *more = realloc(p->removed, (size_t)cap * sizeof *more);
    if (!more) return v->failed = 1, -1;
    p->removed = more;
    p->cap_removed = cap;
  }
  removed_attribute *r = &p->removed[p->nremoved];
  r->object = strdup(v->object);
  r->name = strdup(name);
  p->nremoved++;
  return r->object && r->name ? 0 : (v->failed = 1, -1);
}

/* Notes every attribute of OUTPUT's object `path` that holds references, and deletes it. */
static int strip_object(carry_pass *p, const char *path) {
  int rc = H5G_OK;
  int first = p->nremoved;
  hid_t obj = H5I_INVALID_HID;
  strip_visit v = {p, path, 0};
  hsize_t idx = 0;
  CHECK_H5(obj = H5Oopen(p->out, path, H5P_DEFAULT), "cannot open %s in the output", path);
  if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, note_reference_attribute, &v) < 0 ||
      v.failed)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot read the attributes of %s in the output", path);
  for (int i = first; i < p->nremoved; i++)
    CHECK_H5(H5Adelete(obj, p->removed[i].name), "cannot remove attribute '%s' of %s",
             p->removed[i].name, path);
done:
  CLOSE_ID(H5Oclose, obj);
  return rc;
}

/* "/" + an object's name as H5Ovisit gives it (relative to the root, "." for the root),
 * malloced. */
static char *absolute_path(const char *name) {
  if (strcmp(name, ".") == 0) name = "";
  char *path = malloc(strlen(name) + 2);
  if (path) {
    path[0] = '/';
    strcpy(path + 1, name);
  }
  return path;
}

/* The name HDF5 gives an open object (one of its paths), malloced; NULL when none. */
static char *object_name(hid_t obj) {
  ssize_t len = H5Iget_name(obj, NULL, 0);
  char *name = len > 0 ? malloc((size_t)len + 1) : NULL;
  if (name && H5Iget_name(obj, name, (size_t)len + 1) != len) {
    free(name);
    name = NULL;
  }
  return name;
}

static herr_t strip_each(hid_t root, const char *name, const H5O_info_t *info, void *data) {
  (void)root;
  (void)info;
  carry_pass *p = data;
  char *path = absolute_path(name);
  int rc = path ? strip_object(p, path) : H5G_ERR_RUNTIME;
  free(path);
  return rc == H5G_OK ? 0 : -1;
}

/* A scale of a written dataset that OUTPUT does not hold: copied as it is, at its input path. */
static int copy_scale(carry_pass *p, const char *name, haddr_t addr, const char **path) {
  int rc = H5G_OK;
  hid_t lcpl = H5I_INVALID_HID;
  haddr_t *at = realloc(p->copied_at, (size_t)(p->ncopied + 1) * sizeof *at);
  CHECK_ALLOC(at, sizeof *at);
  p->copied_at = at;
  char **names = realloc(p->copied, (size_t)(p->ncopied + 1) * sizeof *names);
  CHECK_ALLOC(names, sizeof *names);
  p->copied = names;
  p->copied[p->ncopied] = NULL;
  CHECK_H5(lcpl = H5Pcreate(H5P_LINK_CREATE), "cannot create property list (%s)", name);
  CHECK_H5(H5Pset_create_intermediate_group(lcpl, 1), "cannot set up groups (%s)", name);
  CHECK_H5(H5Ocopy(p->in, name, p->out, name, H5P_DEFAULT, lcpl),
           "cannot copy the dimension scale %s to the output", name);
  CHECK(strip_object(p, name));
  p->copied_at[p->ncopied] = addr;
  p->copied[p->ncopied] = strdup(name);
  CHECK_ALLOC(p->copied[p->ncopied], strlen(name) + 1);
  *path = p->copied[p->ncopied++];
done:
  CLOSE_ID(H5Pclose, lcpl);
  return rc;
}

/* The length of dimension `dim` of dataset `d` (0 if unreadable). */
static hsize_t extent(hid_t d, unsigned dim) {
  hsize_t dims[H5S_MAX_RANK] = {0};
  hid_t space = H5Dget_space(d);
  int rank = space >= 0 ? H5Sget_simple_extent_dims(space, dims, NULL) : -1;
  CLOSE_ID(H5Sclose, space);
  return rank > (int)dim ? dims[dim] : 0;
}

typedef struct {
  carry_pass *p;
  hid_t target;       /* the written dataset in OUTPUT */
  const char *where;  /* its path there */
  int status;
} attach_visit;

static herr_t attach_scale(hid_t source, unsigned dim, hid_t scale, void *data) {
  (void)source;
  attach_visit *v = data;
  carry_pass *p = v->p;
  char *name = object_name(scale);
  H5O_info_t info;
  const char *path = NULL;
  hid_t there = H5I_INVALID_HID;
  if (!name || H5Oget_info2(scale, &info, H5O_INFO_BASIC) < 0) {
    v->status = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                              "cannot read a dimension scale of %s", v->where);
    goto done;
  }
  path = output_path(p, info.addr, name, info.type);
  if (!path && h5g_io_path_exists_internal(p->out, name)) {
    warn(p, "dimension scale %s of %s not attached: OUTPUT holds another object at %s", name,
         v->where, name);
    goto done;
  }
  int written = path != NULL;
  if (!path && (v->status = copy_scale(p, name, info.addr, &path)) != H5G_OK) goto done;
  there = H5Dopen2(p->out, path, H5P_DEFAULT);
  if (there >= 0 && extent(there, 0) != extent(v->target, dim)) {
    /* --top or --unique cut the rows, not this scale: netCDF refuses such a dimension */
    warn(p, "dimension scale %s of %s not attached: it has another length than %s's rows (the "
         "rows were cut: add it to --carry)", path, v->where, v->where);
    goto done;
  }
  if (!written && dim == 0)
    warn(p, "dimension scale %s of %s copied in the input's order: its values do not follow the "
         "sorted rows (%s: add it to --carry to permute it)", path, v->where, path);
  if (there < 0 || H5DSattach_scale(v->target, there, dim) < 0)
    v->status = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "cannot attach the dimension "
                              "scale %s to %s in the output", path, v->where);
done:
  CLOSE_ID(H5Dclose, there);
  free(name);
  return v->status == H5G_OK ? 0 : -1;
}

/* The dimension scales of written[i] in INPUT attached to it in OUTPUT. */
static int attach_scales(carry_pass *p, const h5g_io_written *w) {
  int rc = H5G_OK;
  hid_t from = H5I_INVALID_HID, to = H5I_INVALID_HID, space = H5I_INVALID_HID;
  CHECK_H5(from = H5Dopen2(p->in, w->from, H5P_DEFAULT), "cannot open %s in the input", w->from);
  CHECK_H5(to = H5Dopen2(p->out, w->to, H5P_DEFAULT), "cannot open %s in the output", w->to);
  CHECK_H5(space = H5Dget_space(from), "cannot read the shape of %s", w->from);
  if (H5DSis_scale(to) > 0) goto done; /* a scale has no scales of its own */
  int rank = H5Sget_simple_extent_ndims(space);
  for (int dim = 0; dim < rank; dim++) {
    attach_visit v = {p, to, w->to, H5G_OK};
    int scales = H5DSget_num_scales(from, (unsigned)dim);
    if (scales < 0)
      warn(p, "the dimension scales of %s cannot be read in the input: not attached", w->from);
    if (scales <= 0) continue;
    if (H5DSiterate_scales(from, (unsigned)dim, NULL, attach_scale, &v) < 0) {
      if (v.status != H5G_OK) CHECK(v.status);
      warn(p, "the dimension scales of %s cannot be read in the input: not attached", w->from);
    }
  }
done:
  CLOSE_ID(H5Sclose, space);
  CLOSE_ID(H5Dclose, to);
  CLOSE_ID(H5Dclose, from);
  return rc;
}

typedef struct {
  hid_t key;
  uint64_t rows;
  const haddr_t *moved; /* the addresses of the datasets moved */
  int nmoved;
  h5g_io_unmoved_fn each;
  void *ctx;
  int failed;
} unmoved_visit;

/* What netCDF-4 names a dimension that has no variable: a scale holding no values. */
static const char netcdf_dimension[] = "This is a netCDF dimension but not a netCDF variable";

static herr_t note_unmoved(hid_t root, const char *name, const H5O_info_t *info, void *data) {
  unmoved_visit *v = data;
  char scale_name[sizeof netcdf_dimension] = "";
  if (info->type != H5O_TYPE_DATASET) return 0;
  for (int i = 0; i < v->nmoved; i++)
    if (v->moved[i] == info->addr) return 0;
  hid_t d = H5Dopen2(root, name, H5P_DEFAULT);
  if (d < 0) return 0; /* not readable: nothing to say of its order */
  int scale = H5DSis_scale(d) > 0;
  if (scale) H5DSget_scale_name(d, scale_name, sizeof scale_name);
  if (extent(d, 0) == v->rows && !(scale && strcmp(scale_name, netcdf_dimension) == 0)) {
    char *path = absolute_path(name);
    if (path) v->each(v->ctx, path, scale && H5DSis_attached(v->key, d, 0) > 0);
    v->failed = !path;
    free(path);
  }
  H5Dclose(d);
  return v->failed ? -1 : 0;
}

int h5g_io_inspect_unmoved(const char *file, const char *key, uint64_t rows,
                           const char *const *moved, int count, h5g_io_unmoved_fn each,
                           void *ctx) {
  int rc = H5G_OK;
  unmoved_visit v = {H5I_INVALID_HID, rows, NULL, 0, each, ctx, 0};
  hid_t fid = H5I_INVALID_HID;
  H5O_info_t info;
  haddr_t *at = calloc((size_t)count + 1, sizeof *at);
  CHECK_ALLOC(at, ((size_t)count + 1) * sizeof *at);
  CHECK_H5(fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT), "cannot open the input (%s)", file);
  CHECK_H5(v.key = H5Dopen2(fid, key, H5P_DEFAULT), "cannot open %s in the input", key);
  for (int i = 0; i < count; i++)
    if (h5g_io_path_exists_internal(fid, moved[i]) &&
        H5Oget_info_by_name2(fid, moved[i], &info, H5O_INFO_BASIC, H5P_DEFAULT) >= 0)
      at[v.nmoved++] = info.addr;
  v.moved = at;
  /* an object HDF5 cannot visit has nothing to say of its order: only memory fails the run */
  if (H5Ovisit2(fid, H5_INDEX_NAME, H5_ITER_NATIVE, note_unmoved, &v, H5O_INFO_BASIC) < 0 &&
      v.failed)
    H5G_FAIL(H5G_ERR_RUNTIME, "out of host memory listing the datasets of the input (%s)", file);
done:
  CLOSE_ID(H5Dclose, v.key);
  CLOSE_ID(H5Fclose, fid);
  free(at);
  return rc;
}

typedef struct {
  const carry_pass *p;
  hobj_ref_t *refs;
  size_t next;
  const char *missing; /* the first referred object OUTPUT lacks */
  char *name;          /* its name (malloced) */
} translate_visit;

static int translate_one(void *ctx, H5R_type_t kind, const void *ref) {
  translate_visit *t = ctx;
  hobj_ref_t *out = &t->refs[t->next++];
  hid_t obj = H5I_INVALID_HID;
  H5O_info_t info;
  const char *path = NULL;
  *out = 0;
  if (kind != H5R_OBJECT) return t->missing = "a region of a dataset", 1;
  if ((obj = H5Rdereference2(t->p->in, H5P_DEFAULT, H5R_OBJECT, ref)) < 0) return 0; /* null */
  free(t->name);
  t->name = object_name(obj);
  if (H5Oget_info2(obj, &info, H5O_INFO_BASIC) >= 0 && t->name)
    path = output_path(t->p, info.addr, t->name, info.type);
  H5Oclose(obj);
  if (!path) return t->missing = t->name ? t->name : "an object", 1;
  return H5Rcreate(out, t->p->out, path, H5R_OBJECT, -1) < 0 ? (t->missing = t->name, 1) : 0;
}

/* An attribute of object references taken out of OUTPUT's `object`, made anew from the input's
 * when OUTPUT holds everything it refers to; else left out, with a warning. */
static int translate_attribute(carry_pass *p, const removed_attribute *r) {
  int rc = H5G_OK;
  const char *from = input_path(p, r->object);
  hid_t src = H5I_INVALID_HID, attr = H5I_INVALID_HID, type = H5I_INVALID_HID,
        space = H5I_INVALID_HID, dst = H5I_INVALID_HID, made = H5I_INVALID_HID;
  translate_visit t = {p, NULL, 0, NULL, NULL};
  CHECK_H5(src = H5Oopen(p->in, from, H5P_DEFAULT), "cannot open %s in the input", from);
  CHECK_H5(attr = H5Aopen(src, r->name, H5P_DEFAULT), "cannot read attribute '%s' of %s",
           r->name, from);
  CHECK_H5(type = H5Aget_type(attr), "cannot read attribute '%s' of %s", r->name, from);
  CHECK_H5(space = H5Aget_space(attr), "cannot read attribute '%s' of %s", r->name, from);
  if (H5Tget_class(type) != H5T_REFERENCE) {
    warn(p, "attribute '%s' of %s not written: it holds references inside a compound or sequence, "
         "which h5gsort does not carry to a new file", r->name, r->object);
    goto done;
  }
  hssize_t points = H5Sget_simple_extent_npoints(space);
  size_t bytes = (size_t)(points > 0 ? points : 1) * H5Tget_size(type);
  t.refs = calloc(1, bytes > sizeof(hobj_ref_t) ? bytes : sizeof(hobj_ref_t));
  CHECK_ALLOC(t.refs, bytes);
  if (h5g_io_attribute_references(src, r->name, translate_one, &t) < 0 && !t.missing)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot read attribute '%s' of %s", r->name, from);
  if (t.missing) {
    warn(p, "attribute '%s' of %s not written: it refers to %s, which OUTPUT does not hold",
         r->name, r->object, t.missing);
    goto done;
  }
  CHECK_H5(dst = H5Oopen(p->out, r->object, H5P_DEFAULT), "cannot open %s in the output",
           r->object);
  CHECK_H5(made = H5Acreate2(dst, r->name, H5T_STD_REF_OBJ, space, H5P_DEFAULT, H5P_DEFAULT),
           "cannot write attribute '%s' of %s", r->name, r->object);
  CHECK_H5(H5Awrite(made, H5T_STD_REF_OBJ, t.refs), "cannot write attribute '%s' of %s", r->name,
           r->object);
done:
  free(t.name);
  free(t.refs);
  CLOSE_ID(H5Aclose, made);
  CLOSE_ID(H5Oclose, dst);
  CLOSE_ID(H5Sclose, space);
  CLOSE_ID(H5Tclose, type);
  CLOSE_ID(H5Aclose, attr);
  CLOSE_ID(H5Oclose, src);
  return rc;
}

/* The dimension-scale lists are rebuilt by attaching; everything else is translated. */
static int scale_list(const char *name) {
  return strcmp(name, "DIMENSION_LIST") == 0 || strcmp(name, "REFERENCE_LIST") == 0;
}

int h5g_io_carry_references(const char *input, const char *output, const h5g_io_written *written,
                            int count, FILE *warnings) {
  int rc = H5G_OK;
  carry_pass p = {H5I_INVALID_HID, H5I_INVALID_HID, written, count, NULL, NULL, NULL, 0, NULL,
                  0, 0, warnings};
  H5O_info_t info;
  p.written_at = calloc((size_t)count + 1, sizeof *p.written_at);
  CHECK_ALLOC(p.written_at, (size_t)count + 1);
  CHECK_H5(p.in = H5Fopen(input, H5F_ACC_RDONLY, H5P_DEFAULT), "cannot open the input (%s)",
           input);
  CHECK_H5(p.out = H5Fopen(output, H5F_ACC_RDWR, H5P_DEFAULT), "cannot open the output (%s)",
           output);
  for (int i = 0; i < count; i++) {
    CHECK_H5(H5Oget_info_by_name2(p.in, written[i].from, &info, H5O_INFO_BASIC, H5P_DEFAULT),
             "cannot read %s in the input", written[i].from);
    p.written_at[i] = info.addr;
  }
  if (H5Ovisit2(p.out, H5_INDEX_NAME, H5_ITER_NATIVE, strip_each, &p, H5O_INFO_BASIC) < 0)
    H5G_FAIL(h5g_error_code() ? h5g_error_code() : H5G_ERR_RUNTIME,
             "cannot read the attributes of the output (%s)", output);
  for (int i = 0; i < count; i++) CHECK(attach_scales(&p, &written[i]));
  /* the copied scales' own attributes were noted after the others: translated too */
  for (int i = 0; i < p.nremoved; i++)
    if (!scale_list(p.removed[i].name)) CHECK(translate_attribute(&p, &p.removed[i]));
  CHECK_H5(H5Fclose(p.out), "cannot close the output (%s)", output);
  p.out = H5I_INVALID_HID;
done:
  CLOSE_ID(H5Fclose, p.out);
  CLOSE_ID(H5Fclose, p.in);
  for (int i = 0; i < p.nremoved; i++) free(p.removed[i].object), free(p.removed[i].name);
  for (int i = 0; i < p.ncopied; i++) free(p.copied[i]);
  free(p.removed);
  free(p.copied);
  free(p.copied_at);
  free(p.written_at);
  return rc;
}

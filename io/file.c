/* HDF5 files through MPI-IO (io/h5io.h): the process-wide I/O settings, and files opened and
 * created collectively, with the format bounds large attributes need. */
#include "io/h5io_pkg.h"

#include <errno.h>
#include <hdf5.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/h5check.h"
#include "mpi/agree.h"

h5g_io_config h5g_io_config_internal = {1, 0, H5G_DIRECT_MAPPED};

const char *h5g_io_policy_name(h5g_io_policy policy) {
  static const char *const names[] = {"one-node", "multinode", "multinode-forced", "mpio"};
  return names[policy];
}

int h5g_io_configure(int threads, int one_node, h5g_io_policy *policy) {
  int rc = H5G_OK;
  const char *io = getenv("H5GSORT_IO"), *asked = getenv("H5GSORT_IO_POLICY");
  int forced = asked && strcmp(asked, "multinode") == 0;
  if (asked && *asked && !forced && strcmp(asked, "auto") != 0)
    H5G_FAIL(H5G_ERR_USAGE, "H5GSORT_IO_POLICY=%s: expected auto or multinode", asked);
  *policy = io && strcmp(io, "mpio") == 0 ? H5G_IO_MPIO
            : forced                      ? H5G_IO_MULTINODE_FORCED
            : one_node                    ? H5G_IO_ONE_NODE
                                          : H5G_IO_MULTINODE;
  h5g_io_config_internal.threads = threads > 0 ? threads : 1;
  h5g_io_config_internal.direct = *policy != H5G_IO_MPIO;
  h5g_io_config_internal.write = *policy != H5G_IO_ONE_NODE           ? H5G_DIRECT_SHARED
                                 : io && strcmp(io, "pwrite") == 0 ? H5G_DIRECT_PWRITE
                                                                   : H5G_DIRECT_MAPPED;
done:
  return rc;
}

void h5g_io_quiet(void) {
  if (!getenv("H5GSORT_HDF5_ERRORS")) H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* debugging aid */
}

void h5g_io_library(char *buf, size_t size) {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
#ifdef H5_HAVE_PARALLEL
  const char *kind = "parallel";
#else
  const char *kind = "serial";
#endif
  snprintf(buf, size, "%u.%u.%u, %s (built with the headers of %d.%d.%d%s%s)", major, minor,
           release, kind, H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE,
           H5_VERS_SUBRELEASE[0] ? "-" : "", H5_VERS_SUBRELEASE);
}

uint64_t h5g_io_piece_bytes(void) {
  /* 1 GiB per call keeps every MPI-IO count far below 2^31 and measured no slower than
   * larger pieces (one collective call per GiB is noise next to the transfer). */
  const char *env = getenv("H5GSORT_IO_PIECE_BYTES");
  uint64_t bytes = env ? strtoull(env, NULL, 10) : 0;
  return bytes ? bytes : (uint64_t)1 << 30;
}

long h5g_io_open_objects(void) { return (long)H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL); }

hid_t h5g_io_collective_dxpl_internal(void) {
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  if (dxpl >= 0 && H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0) {
    H5Pclose(dxpl);
    return H5I_INVALID_HID;
  }
  return dxpl;
}

static hid_t mpio_fapl(MPI_Comm comm) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl >= 0 && H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) < 0) {
    H5Pclose(fapl);
    return H5I_INVALID_HID;
  }
  return fapl;
}

/* An attribute whose values take at least this many bytes may not fit one object header message
 * of the earliest file format (64 KiB with its name, datatype and shape): HDF5 stores it only
 * densely, in an object made under a lower library-version bound of 1.8 or later. */
#define LARGE_ATTRIBUTE_BYTES 60000

static herr_t find_large_attribute(hid_t obj, const char *name, const H5A_info_t *info,
                                   void *found) {
  (void)obj;
  (void)name;
  if (info->data_size < LARGE_ATTRIBUTE_BYTES) return 0;
  *(int *)found = 1;
  return 1;
}

/* 1 when an attribute that a new file may be given is large: one of a file, dataset or group
 * open in this process (the input's root and the datasets read), or of a group on such a
 * dataset's path. A failed query counts as none. */
static int open_objects_hold_large_attributes(void) {
  unsigned types = H5F_OBJ_FILE | H5F_OBJ_DATASET | H5F_OBJ_GROUP;
  ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, types);
  hid_t *ids = n > 0 ? calloc((size_t)n, sizeof *ids) : NULL;
  int found = 0;
  n = ids ? H5Fget_obj_ids(H5F_OBJ_ALL, types, (size_t)n, ids) : 0;
  for (ssize_t i = 0; i < n && !found; i++) {
    char path[WHERE_MAX];
    ssize_t len = H5Iget_type(ids[i]) == H5I_FILE ? 0 : H5Iget_name(ids[i], path, sizeof path);
    H5Aiterate2(ids[i], H5_INDEX_NAME, H5_ITER_NATIVE, NULL, find_large_attribute, &found);
    for (ssize_t k = len - 1; k > 0 && !found && (size_t)len < sizeof path; k--) {
      if (path[k] != '/') continue; /* the groups on the path, its root included */
      char keep = path[k + 1];
      path[k + 1] = '\0';
      H5Aiterate_by_name(ids[i], path, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, find_large_attribute,
                         &found, H5P_DEFAULT);
      path[k + 1] = keep;
    }
  }
  free(ids);
  return found;
}

/* Collective: a new file, or one opened for writing, takes 1.8 as its lower library-version bound
 * (dense attribute storage; readable by HDF5 1.8 and later) when it may be given a large
 * attribute; else the earliest format, as before. */
static int bounds_for_attributes(MPI_Comm comm, hid_t fapl, const char *path) {
  int rc = H5G_OK, mine = open_objects_hold_large_attributes(), any = 0;
  CHECK_MPI(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm));
  if (any)
    CHECK_H5(H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18),
             "cannot allow large attributes (%s)", path);
done:
  return rc;
}

/* A file opened for writing writes its metadata collectively (H5Pset_coll_metadata_write). Else
 * HDF5 1.10.8 flushes the metadata cache at a sync point met inside a collective write of
 * filtered chunks (the chunk index growing past 256 KiB of dirty metadata) one entry at a time
 * through the transfer's collective MPI-IO mode, each rank its own share: the ranks' collective
 * calls part ("mca_fbtl_posix_pwritev: error in writev: Bad address" then a hang at 2 ranks, 44k
 * gzip chunks of 64 u4 rows; a crash at 3 ranks). */
static int open_file(MPI_Comm comm, const char *path, int create, int writable, h5g_file **out) {
  int rc = H5G_OK;
  hid_t fapl = H5I_INVALID_HID;
  h5g_file *f = calloc(1, sizeof *f);
  /* every rank, or none, goes on to the collective open */
  CHECK(h5g_agree_alloc(comm, f != NULL, sizeof *f));
  f->comm = comm;
  f->id = H5I_INVALID_HID;
  if ((size_t)snprintf(f->path, sizeof f->path, "%s", path) >= sizeof f->path)
    H5G_FAIL(H5G_ERR_USAGE, "path too long (%s)", path);
  CHECK_H5(fapl = mpio_fapl(comm), "cannot set up MPI-IO (%s)", path);
  if (writable) CHECK_H5(H5Pset_coll_metadata_write(fapl, 1), "cannot set up MPI-IO (%s)", path);
  if (writable) CHECK(bounds_for_attributes(comm, fapl, path));
  if (create)
    CHECK_H5(f->id = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl),
             "cannot create output file (%s)", path);
  else
    CHECK_H5(f->id = H5Fopen(path, writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl),
             "cannot open file (%s)", path);
  *out = f;
  f = NULL;
done:
  CLOSE_ID(H5Pclose, fapl);
  h5g_io_close_file(f);
  return rc;
}

int h5g_io_open_file(MPI_Comm comm, const char *path, int writable, h5g_file **f) {
  return open_file(comm, path, 0, writable, f);
}

int h5g_io_create_file(MPI_Comm comm, const char *path, h5g_file **f) {
  return open_file(comm, path, 1, 1, f);
}

int h5g_io_close_file(h5g_file *f) {
  int rc = H5G_OK;
  if (!f) return rc;
  if (f->id >= 0 && H5Fclose(f->id) < 0)
    rc = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                       "cannot flush and close the file%s (%s)",
                       h5g_io_write_reason_internal(f->path, errno), f->path);
  h5g_gathered_free(f->gathered);
  free(f);
  return rc;
}

int h5g_io_finish_file(h5g_file *f) {
  int rc = H5G_OK;
  MPI_Comm comm = f->comm;
  char path[PATH_MAX];
  h5g_gathered *gathered = f->gathered;
  f->gathered = NULL;
  memcpy(path, f->path, sizeof path);
  rc = h5g_agree(comm, h5g_io_close_file(f));
  if (rc != H5G_OK) {
    h5g_gathered_free(gathered);
    return rc;
  }
  return h5g_gathered_write(comm, gathered, path); /* frees what was kept */
}

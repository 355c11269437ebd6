/* HDF5 filter plugins decoded in the I/O threads. HDF5 1.10.8 here is not thread-safe, so a
 * plugin's decoder may run beside the calling thread's HDF5 calls only when its decode path
 * touches no global mutable state and no HDF5 state. io/filters.c lists only the plugins whose
 * decode paths were read for that (HDF5-External-Filter-Plugins 49e3b65, Debian's
 * hdf5-filter-plugin, and the libraries they call, checked with nm and size -A):
 *  - bzip2 (307, H5Zbzip2.c): malloc, realloc, free, fprintf on errors and libbz2's stream API
 *    on a stream of its own. The plugin imports no HDF5 symbol; libbz2's only writable data are
 *    its CRC and randomisation tables, which it never writes.
 *  - lz4 (32004, H5Zlz4.c): LZ4_decompress_fast (liblz4 has no writable data), memcpy, printf
 *    on errors, and H5allocate_memory/H5free_memory: in 1.10.8 these are H5MM_malloc and
 *    H5MM_xfree, malloc and free themselves in Debian's builds (no allocation sanity checks;
 *    Debian's plugin binds them in libhdf5_serial, a thread-safe build, under its own lock).
 * Not listed, so read by HDF5: lzf (32000: h5py's lzf_filter.c reports a failed decode through
 * H5Epush1 into the process's HDF5; Debian's plugin does not even load, lacking liblzf) and
 * blosc (blosc_decompress keeps global state). Both listed decoders trust their input, as in
 * HDF5's own read: a truncated bzip2 stream makes its plugin wait forever, lz4's fast decoder
 * checks no bounds. */
#include "io/filter_plugin.h"

#include <H5PLextern.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef H5PL_type_t (*plugin_type_fn)(void);
typedef const void *(*plugin_info_fn)(void);

/* H5PL__open: the decoder of `id` in the library at `path`, NULL (library closed) otherwise. */
static H5Z_func_t open_plugin(const char *path, H5Z_filter_t id) {
  void *lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return NULL;
  plugin_type_fn type = (plugin_type_fn)dlsym(lib, "H5PLget_plugin_type");
  plugin_info_fn info = (plugin_info_fn)dlsym(lib, "H5PLget_plugin_info");
  const H5Z_class2_t *cls = type && info && type() == H5PL_TYPE_FILTER ? info() : NULL;
  /* HDF5 converts a version-1 class (id first); those old plugins are left to it */
  if (cls && cls->version == H5Z_CLASS_T_VERS && cls->id == id && cls->decoder_present &&
      cls->filter)
    return cls->filter;
  dlclose(lib);
  return NULL;
}

/* H5PL__find_plugin_in_path: the first library of `dir` (readdir's order) holding a decoder. */
static H5Z_func_t find_in_dir(const char *dir, H5Z_filter_t id) {
  DIR *d = opendir(dir);
  H5Z_func_t fn = NULL;
  struct dirent *e;
  while (d && !fn && (e = readdir(d))) {
    char path[4096];
    struct stat st;
    if (strncmp(e->d_name, "lib", 3) != 0 || !strstr(e->d_name, ".so")) continue;
    if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) fn = open_plugin(path, id);
  }
  if (d) closedir(d);
  return fn;
}

H5Z_func_t h5g_plugin_decoder(H5Z_filter_t id) {
  unsigned state = 0, paths = 0;
  H5Z_func_t fn = NULL;
  if (H5PLget_loading_state(&state) < 0 || !(state & H5PL_FILTER_PLUGIN) || H5PLsize(&paths) < 0)
    return NULL;
  for (unsigned i = 0; i < paths && !fn; i++) {
    char dir[4096];
    ssize_t len = H5PLget(i, dir, sizeof dir);
    if (len > 0 && (size_t)len < sizeof dir) fn = find_in_dir(dir, id);
  }
  return fn;
}

int h5g_plugin_decode(H5Z_func_t fn, unsigned flags, size_t ncd, const unsigned *cd,
                      const unsigned char *in, size_t in_bytes, unsigned char *out, size_t cap,
                      size_t *out_bytes, const char **why) {
  /* The filter owns *buf: it frees it when it returns another (malloc'd, as HDF5's are) */
  size_t buf_size = in_bytes ? in_bytes : 1;
  void *buf = malloc(buf_size);
  if (!buf) {
    *why = "out of host memory";
    return -1;
  }
  memcpy(buf, in, in_bytes);
  /* The returned size is the data's: lz4 leaves buf_size as it was (HDF5 reads no more). */
  size_t n = fn(H5Z_FLAG_REVERSE | flags, ncd, cd, in_bytes, &buf_size, &buf);
  *why = n == 0 ? "plugin filter failed to decode the chunk"
         : n > cap ? "decoded size differs from the chunk size" : NULL;
  if (!*why) memcpy(out, buf, n);
  free(buf);
  *out_bytes = n;
  return *why ? -1 : 0;
}

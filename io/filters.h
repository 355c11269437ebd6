/* The filter pipelines h5gsort decodes and encodes itself (internal to io/): shuffle, deflate
 * and fletcher32, the filters of h5py's and h5repack's gzip output and of most chunked files,
 * decoded and encoded; scale-offset of integers and IEEE floats, n-bit of integers and floats
 * and szip (HDF5's built-in H5Zscaleoffset.c, H5Znbit.c and H5Zszip.c, io/filter_codecs.h; szip
 * by libsz, when it loads), decoded only; the plugins bzip2 and lz4, decoded only, by the plugin
 * HDF5 would load (io/filter_plugin.h).
 * HDF5 is not thread-safe and runs its filters on one thread per rank; these functions touch no
 * HDF5 state (but h5g_filters_from_dcpl), so several threads decode or encode chunks at once.
 * Deflate decodes through libdeflate (HDF5's zlib streams, faster than zlib) and encodes
 * through zlib as HDF5 does, so encoded chunks are HDF5's own, byte for byte. Anything else
 * (scale-offset of other floats, n-bit of compounds and arrays, szip without libsz, other
 * plugins) is left to HDF5. */
#ifndef H5G_IO_FILTERS_H
#define H5G_IO_FILTERS_H

#include <hdf5.h>
#include <stddef.h>

#define H5G_FILTERS_MAX 8
#define H5G_FILTER_CD_MAX 20 /* scale-offset's parameters, the most of the filters decoded */

typedef struct {
  H5Z_filter_t id;  /* one of the filters above */
  unsigned flags;   /* H5Z_FLAG_OPTIONAL or 0, as stored */
  unsigned param;   /* deflate: level 0-9; shuffle: element size in bytes; fletcher32: 0 */
  int identity;     /* HDF5 returns the data unchanged (n-bit of a full-precision type, ...) */
  unsigned cd[H5G_FILTER_CD_MAX]; /* scale-offset, n-bit, szip, plugins: as HDF5 stored them */
  size_t ncd;                     /* plugins: how many */
  H5Z_func_t plugin;              /* plugins: the loaded plugin's filter callback */
} h5g_filter;

typedef struct {
  int count; /* filters in the order HDF5 applies them when writing */
  h5g_filter filter[H5G_FILTERS_MAX];
} h5g_filter_pipeline;

/* From a dataset creation property list, for elements of the dataset's (file) type: *ours = 1
 * and *p filled when every filter is one we decode with the parameters stored (an empty pipeline
 * included), *ours = 0 otherwise. H5G_ERR_RUNTIME only when HDF5 cannot list the filters. */
int h5g_filters_from_dcpl(hid_t dcpl, hid_t type, h5g_filter_pipeline *p, int *ours,
                          const char *where);

/* 1 when every filter of p also encodes here (h5g_filters_encode refuses the others). */
int h5g_filters_encodable(const h5g_filter_pipeline *p);

/* HDF5's name of filter `id` as h5dump prints it ("deflate", "scaleoffset", ...). */
const char *h5g_filter_name(H5Z_filter_t id);

/* The most bytes a chunk of raw_bytes can take once encoded (the output buffer's size). */
size_t h5g_filters_bound(const h5g_filter_pipeline *p, size_t raw_bytes);

/* One thread's state: the libdeflate (de)compressors and a scratch buffer for chunks of up to
 * h5g_filters_bound(p, chunk_bytes). NULL when out of memory. */
typedef struct h5g_filter_ctx h5g_filter_ctx;
h5g_filter_ctx *h5g_filter_ctx_new(const h5g_filter_pipeline *p, size_t chunk_bytes);
void h5g_filter_ctx_free(h5g_filter_ctx *c);

/* Decodes one stored chunk (in, in_bytes; filter_mask as HDF5 stores it: bit i set = filter i
 * was skipped) into out, which receives exactly raw_bytes (the chunk's full size). Thread-safe
 * per context. 0 on success; -1 with *why set to a static reason ("deflate stream is corrupt",
 * "fletcher32 checksum mismatch", "decoded size differs from the chunk size", ...) otherwise. */
int h5g_filters_decode(h5g_filter_ctx *c, unsigned filter_mask, const void *in, size_t in_bytes,
                       void *out, size_t raw_bytes, const char **why);

/* Encodes raw_bytes of `in` through the pipeline into out (capacity out_cap >=
 * h5g_filters_bound), as HDF5's own filters would: *out_bytes and *filter_mask set (an optional
 * filter whose output does not fit is skipped and its bit set, as HDF5 does). Thread-safe per
 * context; `in` is not modified. 0 on success; -1 with *why set otherwise. */
int h5g_filters_encode(h5g_filter_ctx *c, const void *in, size_t raw_bytes, void *out,
                       size_t out_cap, size_t *out_bytes, unsigned *filter_mask, const char **why);

#endif

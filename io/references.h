/* References held in an HDF5 file: found wherever a datatype nests them, followed to the object
 * they refer to. Internal to io/ (replace.c, scales.c); serial, on one rank. Functions return
 * HDF5's convention (negative: failed), not an h5g status: callers turn them into messages. */
#ifndef H5G_IO_REFERENCES_H
#define H5G_IO_REFERENCES_H

#include <hdf5.h>
#include <stddef.h>

/* Called for each reference found (kind: H5R_OBJECT or H5R_DATASET_REGION); a non-zero return
 * stops the walk and is returned. */
typedef int (*h5g_io_reference_fn)(void *ctx, H5R_type_t kind, const void *ref);

/* Walks the references of attribute `name` of `obj`: 0 when walked, -1 when it cannot be read. */
int h5g_io_attribute_references(hid_t obj, const char *name, h5g_io_reference_fn fn, void *ctx);

/* 1 and *addr when `ref` (read from the file of `loc`) refers to an object; 0 for a null or
 * dangling reference. */
int h5g_io_reference_target(hid_t loc, H5R_type_t kind, const void *ref, haddr_t *addr);

/* 1 when some attribute or dataset of `file` holds a reference to the object at address
 * `target` (where: which one, e.g. "attribute 'REFERENCE_LIST' of /obs"), 0 when none does,
 * -1 when the file cannot be walked. */
int h5g_io_find_referrer(hid_t file, haddr_t target, char *where, size_t len);

#endif

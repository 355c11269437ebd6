/* The end of a file as HDF5 takes it (internal to io/): the end-of-file address stored in the
 * superblock, which HDF5 reads nothing past. H5Fget_eoa answers only for SWMR-capable drivers,
 * not for the MPI-IO one h5gsort opens files with. */
#ifndef H5G_IO_SUPERBLOCK_H
#define H5G_IO_SUPERBLOCK_H

#include <hdf5.h>

/* The superblock at offset 0 (no user block) of `path`: 0 and *eoa set, or -1 when there is
 * none or it is not one this reads (versions 0-3). */
int h5g_superblock_eoa(const char *path, haddr_t *eoa);

#endif

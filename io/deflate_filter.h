/* HDF5's deflate filter replaced in this process by one that runs through libdeflate (internal
 * to io/; io/deflate_filter.c). */
#ifndef H5G_IO_DEFLATE_FILTER_H
#define H5G_IO_DEFLATE_FILTER_H

/* Process-wide, before HDF5 filters anything; silent (HDF5's own filter stays) on failure. */
void h5g_deflate_filter_register(void);

#endif

#ifndef H5G_SIZE_PARSE_H
#define H5G_SIZE_PARSE_H

#include <stdint.h>

/* Parses "512M", "2G", "1.5GiB", "4096", "64k" (powers of 1024) into bytes.
 * Returns 0 on success, -1 on a malformed or overflowing size. */
int h5g_parse_size(const char *text, uint64_t *bytes);

#endif

/* File-system steps of the atomic output: checks before any work, the temporary file beside
 * OUTPUT, the byte copy for in-place sorts, and the final rename. Called by one rank. */
#ifndef H5G_IO_FILES_H
#define H5G_IO_FILES_H

#include <stddef.h>

/* Usage errors for an OUTPUT that cannot be produced: exists without --force, is a directory,
 * its directory is missing or not writable. Sets *same_as_input when OUTPUT is INPUT. */
int h5g_files_check_output(const char *input, const char *output, int force, int *same_as_input);
/* Usage error when the --report file cannot be created (checked before any work). */
int h5g_files_check_report(const char *report);
/* A name beside `output` that no other run uses: "<dir>/.<base>.h5gsort-<host>-<pid>.tmp". */
int h5g_files_temp_name(const char *output, char *name, size_t len);
/* Removes temporary files of `output` left by runs that were killed: those named for this host
 * whose process no longer exists. Returns how many were removed. */
int h5g_files_remove_stale(const char *output);
/* Byte copy of src to a new file dst (fsynced). */
int h5g_files_copy(const char *src, const char *dst);
/* Fails early (runtime error) when `bytes` more cannot be written beside `output`: over the
 * process's file-size limit or the free space of its file system. Writing past either would
 * fail inside HDF5, whose 1.10 library cannot then close the file cleanly. */
int h5g_files_check_space(const char *output, unsigned long long bytes);
/* Bytes free (for an unprivileged writer) on the file system OUTPUT is written to; 0 if unknown. */
unsigned long long h5g_files_free_bytes(const char *output);
/* Reserves disk blocks for the first `bytes` of `path` without changing its size, so the writes
 * that follow cannot run out of space half-way (a shared scratch file system may fill up during
 * a long write). Where the file system has no such call nothing is reserved. Runtime error when
 * the space is not there. */
int h5g_files_reserve(const char *path, unsigned long long bytes);
/* Atomically replaces `output` with `tmp` (blocks reserved past its end given back, rename,
 * then fsync of the directory). With `durable`, tmp's data reaches the disk before the rename:
 * in-place sorts use it, so a crash can never leave the input replaced by unwritten data. */
int h5g_files_commit(const char *tmp, const char *output, int durable);

#endif

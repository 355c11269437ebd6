/* File-system steps of the atomic output: checks before any work, the temporary file beside
 * OUTPUT, the byte copy for in-place sorts, and the final rename. Called by one rank. */
#ifndef H5G_IO_FILES_H
#define H5G_IO_FILES_H

#include <stddef.h>

/* NULL for a regular file (or none at all), else what `path` is ("directory", "FIFO (named
 * pipe)", ...): inputs must be regular files, checked before anything opens them. */
const char *h5g_files_kind(const char *path);
/* Usage errors for an OUTPUT that cannot be produced: an empty name or one ending in '/', exists
 * without --force, is not a regular file (a directory, a device, a FIFO: never replaced, even
 * with --force), its directory is missing or not writable. Sets *same_as_input when OUTPUT is
 * INPUT (the same file by device and inode, however named). */
int h5g_files_check_output(const char *input, const char *output, int force, int *same_as_input);
/* Usage error when the --report file cannot be created (checked before any work): an empty
 * name, a directory or socket, a missing or unwritable directory, or the input or OUTPUT. */
int h5g_files_check_report(const char *report, const char *input, const char *output);
/* Usage error when the temporary file's name is the input's (it would be overwritten). */
int h5g_files_check_temp(const char *temp, const char *input);
/* A name beside `output` that no other run uses: "<dir>/.<base>.h5gsort-<host>-<pid>.tmp",
 * within the directory's file-name limit (a long base is cut and a hash of it added). */
int h5g_files_temp_name(const char *output, char *name, size_t len);
/* Removes temporary files of `output` left by runs that were killed: those named for this host
 * whose process no longer exists, and the files MPI-IO made beside them ("<temp>.data.0", ...);
 * never `input`. Returns how many were removed. */
int h5g_files_remove_stale(const char *output, const char *input);
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

/* Host memory that spills to a scratch directory (issue 54). When a rank's share needs more host
 * memory than the job may use (src/sizing.c), its large buffers (base/host_memory.h) are shared
 * mappings of files there instead of anonymous memory: the kernel writes their pages to the files
 * and drops them as memory runs short, and the sort's passes over them run mostly in order (the
 * read, the merges, the writes), one sorted run at a time in memory.
 * Each file has no name (O_TMPFILE, or unlinked as soon as it is open), so none is left behind
 * however the process ends (but those of the buffers a killed run can be resumed from, named in
 * a directory of their own once a state is recorded in them, or at once on a file system without
 * O_TMPFILE: src/resume.h), and its blocks are reserved where the file system can (fallocate), so
 * that a full file system fails the allocation instead of a store into the mapping. */
#ifndef H5G_SCRATCH_MEMORY_H
#define H5G_SCRATCH_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Process-wide, before the buffers are made: they come from files in `dir` (copied) from now
 * on; NULL: from anonymous memory again. */
int h5g_scratch_use(const char *dir);
/* The directory the buffers come from, or NULL. */
const char *h5g_scratch_dir(void);
/* *p = `bytes` (a multiple of the page size) mapped from a new file in the directory in use: at
 * `at` (a range the caller holds, which the mapping replaces), or where the kernel puts it
 * (NULL); released by munmap. An h5g status. */
int h5g_scratch_map(size_t bytes, void *at, void **p);
/* The same for the file `path` names (a run that can be resumed, src/resume.h): with `reuse` the
 * one there, which must have `bytes` bytes (its contents kept); else a new file of no name in
 * path's directory, *fd left open on it for h5g_scratch_link (a file system without such files:
 * made at path, *fd -1), so that a run killed before it records a state leaves none. An h5g
 * status. */
int h5g_scratch_map_named(const char *path, size_t bytes, int reuse, void *at, void **p, int *fd);
/* Gives the file of no name open on `fd` the name `path` (replacing a file there), and closes
 * fd. An h5g status. */
int h5g_scratch_link(int fd, const char *path);
/* The bytes an unprivileged writer may still write in `dir` (statvfs). An h5g status. */
int h5g_scratch_free_bytes(const char *dir, uint64_t *free_bytes);
/* Whether `dir` is on a file system kept in memory (tmpfs, ramfs: /dev/shm, often /tmp), where
 * scratch files save no memory. */
int h5g_scratch_in_memory(const char *dir);

#ifdef __cplusplus
}
#endif
#endif

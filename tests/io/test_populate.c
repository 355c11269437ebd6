/* io/populate.c on its own: the helper, forked, makes the pages of the range it is told (in the
 * page cache: mincore sees them) and allocates the range, which extends the file, without
 * changing a byte of what the file held, at an offset that is not page-aligned; it stops when
 * told, with or without a range, makes no page once it said it stopped, and a helper gone or
 * never forked is no error. Descriptors handed to it stay open while the process that handed them
 * lives, and are closed once it has ended; its own numbers then lead to an eventfd.
 * Where this kernel refuses MADV_POPULATE_WRITE (before Linux 5.14) or the file system
 * fallocate, the helper makes nothing: those checks are skipped, saying so. Argument: a path
 * prefix for its file, removed at the end. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/h5io.h"
#include "tests/support/check.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { PAGE = 4096 };

static char path[4096];

/* 1 when this kernel populates mappings on request and the file system under `path` allocates. */
static int populate_works(void) {
  void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  int works = p != MAP_FAILED && madvise(p, PAGE, MADV_POPULATE_WRITE) == 0;
  if (p != MAP_FAILED) munmap(p, PAGE);
  char probe[4200];
  snprintf(probe, sizeof probe, "%s.probe", path);
  int fd = open(probe, O_RDWR | O_CREAT | O_TRUNC, 0600);
  works = works && fd >= 0 && fallocate(fd, 0, 0, PAGE) == 0;
  if (fd >= 0) close(fd);
  unlink(probe);
  return works;
}

/* Pages of [from, to) of the file in the page cache. */
static size_t resident_pages(int fd, off_t from, off_t to) {
  off_t begin = from / PAGE * PAGE;
  size_t bytes = (size_t)(to - begin), pages = (bytes + PAGE - 1) / PAGE, resident = 0;
  unsigned char *vec = malloc(pages);
  void *p = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, begin);
  if (vec && p != MAP_FAILED && mincore(p, bytes, vec) == 0)
    for (size_t i = 0; i < pages; i++) resident += vec[i] & 1;
  if (p != MAP_FAILED) munmap(p, bytes);
  free(vec);
  return resident;
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* The helper told a range that starts inside the file, mid-page, and ends past its end: the
 * range is allocated and its pages made; the bytes the file held, on the shared first page and
 * inside the range too, stay. */
static void populates_range(int works) {
  const off_t offset = 5 * PAGE + 100;
  const size_t held = (size_t)offset + 1000; /* into the range's first page, and the range */
  const uint64_t bytes = (40u << 20) + 77;
  unsigned char *pattern = malloc(held), *back = malloc(held);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  EXPECT(fd >= 0 && pattern && back, "cannot make %s: %s", path, strerror(errno));
  if (fd < 0 || !pattern || !back) goto done;
  uint64_t state = 7;
  for (size_t i = 0; i < held; i++) pattern[i] = (unsigned char)test_rand(&state);
  EXPECT(pwrite(fd, pattern, held, 0) == (ssize_t)held, "cannot write %s", path);
  EXPECT(h5g_helper_fork() == 1, "no helper forked");
  EXPECT(h5g_populate_ready(), "no helper after the fork");
  EXPECT(h5g_populate_start(path, offset, bytes, 3) == 1, "the helper was not told");
  if (works) {
    const size_t want = (size_t)((offset + (off_t)bytes + PAGE - 1) / PAGE - offset / PAGE);
    size_t made = 0;
    for (int waited = 0; waited < 1000 && made < want; waited++) { /* 10 s at most */
      struct stat st;
      if (fstat(fd, &st) == 0 && st.st_size >= offset + (off_t)bytes)
        made = resident_pages(fd, offset, offset + (off_t)bytes);
      if (made < want) sleep_ms(10);
    }
    EXPECT(made == want, "%zu of %zu pages of the range made", made, want);
  } else {
    printf("skipped: this kernel or file system cannot populate: nothing is made\n");
  }
  h5g_populate_finish();
  EXPECT(!h5g_populate_ready(), "the helper waits for a range after it finished");
  h5g_helper_end();
  struct stat st;
  EXPECT(fstat(fd, &st) == 0, "cannot stat %s", path);
  if (works)
    EXPECT(st.st_size == offset + (off_t)bytes, "file size %lld, not the range's end %lld",
           (long long)st.st_size, (long long)(offset + (off_t)bytes));
  EXPECT(pread(fd, back, held, 0) == (ssize_t)held && memcmp(back, pattern, held) == 0,
         "the bytes the file held changed");
  unsigned char tail[PAGE];
  int zeros = pread(fd, tail, sizeof tail, (off_t)held) == (ssize_t)sizeof tail || !works;
  for (size_t i = 0; works && i < sizeof tail; i++) zeros &= tail[i] == 0;
  EXPECT(zeros, "the range past the bytes held does not read as zeros");
done:
  if (fd >= 0) close(fd);
  free(pattern);
  free(back);
}

/* Told to stop before any range, the helper takes none; one never forked, or gone, is told
 * nothing and is no error. */
static void stops_without_range(void) {
  EXPECT(h5g_populate_start(path, 0, PAGE, 1) == 0, "told a range with no helper");
  h5g_populate_finish(); /* none: returns */
  EXPECT(h5g_helper_fork() == 1, "no helper forked");
  EXPECT(h5g_helper_fork() == 0, "a second helper forked beside the first");
  EXPECT(h5g_populate_ready(), "no helper after the fork");
  EXPECT(h5g_populate_start(path, 0, 0, 1) == 0, "told an empty range");
  h5g_populate_stop();
  EXPECT(!h5g_populate_ready(), "ready after it was stopped");
  EXPECT(h5g_populate_start(path, 0, PAGE, 1) == 0, "told a range after it was stopped");
  h5g_populate_finish();
  h5g_helper_end();
  int fds[2];
  EXPECT(pipe(fds) == 0, "cannot make a pipe");
  EXPECT(h5g_helper_hand_over(&fds[1], 1) == 0, "handed over with no helper");
  EXPECT(fcntl(fds[1], F_GETFD) >= 0, "a descriptor not handed over was closed");
  close(fds[0]);
  close(fds[1]);
}

/* Told to finish while its worker is still making pages, the helper answers only once the
 * worker has stopped: no page of the range is made after h5g_populate_finish returns. */
static void stops_its_workers(int works) {
  const uint64_t bytes = 128u << 20; /* one worker takes about 0.1 s or more */
  if (!works) {
    printf("skipped: this kernel or file system cannot populate: nothing to stop\n");
    return;
  }
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  EXPECT(fd >= 0, "cannot make %s: %s", path, strerror(errno));
  if (fd < 0) return;
  EXPECT(h5g_helper_fork() == 1, "no helper forked");
  EXPECT(h5g_populate_start(path, 0, bytes, 1) == 1, "the helper was not told");
  EXPECT(!h5g_populate_ready(), "the helper waits for a range after it was told one");
  EXPECT(h5g_populate_start(path, 0, bytes, 1) == 0, "told a second range");
  sleep_ms(20);
  h5g_populate_finish();
  size_t made = resident_pages(fd, 0, (off_t)bytes);
  sleep_ms(200);
  size_t later = resident_pages(fd, 0, (off_t)bytes);
  EXPECT(later <= made, "%zu pages made after the helper said it stopped (%zu then)",
         later - made, made);
  if (made == bytes / PAGE) printf("note: the whole range was made before the stop\n");
  h5g_helper_end();
  close(fd);
}

/* Where /proc/self/fd/NUMBER leads ("" when it cannot tell). */
static void fd_target(int fd, char *target, size_t size) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, size - 1);
  target[n > 0 ? n : 0] = '\0';
}

/* A process (the "rank") forks its helper, hands it the write end of a pipe, says so on a second
 * pipe and lives on 0.3 s: the first pipe's read end here sees no end while the rank lives (the
 * helper holds the write end), and its end once the rank has ended (the helper closed it); in
 * the rank the number leads to an eventfd that does not read as ready. */
static void holds_descriptors_past_the_end(void) {
  int fds[2], said[2];
  EXPECT(pipe(fds) == 0 && pipe(said) == 0, "cannot make the pipes");
  pid_t rank = fork();
  if (rank == 0) {
    close(fds[0]);
    close(said[0]);
    char target[256], verdict = 'n';
    struct pollfd placeholder = {fds[1], POLLIN, 0};
    if (h5g_helper_fork() != 1) verdict = 'f';
    else if (h5g_helper_hand_over(&fds[1], 1) != 1) verdict = 'h';
    fd_target(fds[1], target, sizeof target);
    if (verdict == 'n' && strcmp(target, "anon_inode:[eventfd]") != 0) verdict = 'e';
    if (verdict == 'n' && poll(&placeholder, 1, 0) != 0) verdict = 'p';
    if (verdict == 'n') verdict = 'y';
    h5g_helper_end(); /* holds descriptors: returns at once */
    if (write(said[1], &verdict, 1) != 1) _exit(1);
    sleep_ms(300);
    _exit(0);
  }
  close(fds[1]);
  close(said[1]);
  char verdict = 0;
  struct pollfd p = {said[0], POLLIN, 0};
  EXPECT(poll(&p, 1, 10000) == 1 && read(said[0], &verdict, 1) == 1, "the rank said nothing");
  EXPECT(verdict == 'y', "the rank: %s",
         verdict == 'f'   ? "no helper forked"
         : verdict == 'h' ? "the hand-over failed"
         : verdict == 'e' ? "its number leads elsewhere than an eventfd"
         : verdict == 'p' ? "its placeholder reads as ready"
                          : "no verdict");
  p.fd = fds[0];
  EXPECT(poll(&p, 1, 150) == 0, "the pipe ended while the rank lived (revents %d)", p.revents);
  int status = -1;
  EXPECT(waitpid(rank, &status, 0) == rank && WIFEXITED(status) && WEXITSTATUS(status) == 0,
         "the rank failed");
  char byte;
  EXPECT(poll(&p, 1, 10000) == 1 && read(fds[0], &byte, 1) == 0,
         "the pipe did not end after the rank ended: the helper kept it");
  close(fds[0]);
  close(said[0]);
}

int main(int argc, char **argv) {
  snprintf(path, sizeof path, "%s.populate", argc > 1 ? argv[1] : "test_populate");
  int works = populate_works();
  populates_range(works);
  stops_without_range();
  stops_its_workers(works);
  holds_descriptors_past_the_end();
  unlink(path);
  return test_summary("io/populate");
}

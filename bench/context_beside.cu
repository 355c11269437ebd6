/* The GPU context's making beside work on other cores (issue 30 item 1): what the wait for the
 * context (0.2-0.3 s on the H100 machine, cores idle) can carry. One fresh process per run (the
 * driver starts once a process): `workers` populate the page cache of a BYTES-long file in DIR
 * (MADV_POPULATE_WRITE in steps of STEP KiB, each its own share through its own mapping, the way
 * the output's pages would be made ahead of the write; bench_raw_io mmap-populated measures what
 * that saves the write) while the main thread makes the context (cuInit, then cudaSetDevice and
 * cudaFree(0), h5gsort's way). The workers are threads of this process (sharing its address
 * space, and so its mmap lock, with the driver) or processes forked before the driver starts
 * (each its own address space); "none" runs the context alone. Prints one line: the driver's
 * start (cudaGetDeviceCount, which runs cuInit) and the context's seconds, and how much of the
 * file was made by then; then (untimed) a source buffer is made, and 16 threads copy it into the file
 * through a fresh mapping in this process, h5gsort's write (io/direct.c: map_for_writing), timed
 * with the mapping's making and release: what the population saved the write.
 *   bench_context_beside none|threads|processes WORKERS STEP_KIB BYTES DIR
 * Alternate the variants, one process each, after a pause, e.g.
 *   for r in 1 2 3; do for v in "none 1 8192" "threads 16 8192" "threads 15 2048" \
 *     "processes 16 8192" "processes 15 2048"; do sleep 1.5; \
 *     build/bin/bench_context_beside $v $((4<<30)) /tmp; done; done */
/* fallocate(2), MADV_POPULATE_WRITE: Linux */
#define _GNU_SOURCE 1
#include <cuda_runtime.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

enum { MAX_WORKERS = 256, PAGE = 4096 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Shared with forked workers: a page of MAP_SHARED memory. */
struct Shared {
  int stop;
  unsigned long long made[MAX_WORKERS]; /* bytes each worker populated */
};

static int g_fd, g_workers;
static size_t g_bytes, g_step;
static Shared *g_shared;

/* Worker i populates its share until done or told to stop. */
static void populate(int i) {
  const size_t share = g_bytes / (size_t)g_workers / PAGE * PAGE, from = share * (size_t)i;
  const size_t bytes = i == g_workers - 1 ? g_bytes - from : share;
  char *p = (char *)mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, g_fd, (off_t)from);
  if (p == MAP_FAILED) return;
  madvise(p, bytes, MADV_HUGEPAGE); /* as h5gsort's write maps the output (io/direct.c) */
  for (size_t done = 0; done < bytes && !__atomic_load_n(&g_shared->stop, __ATOMIC_RELAXED);) {
    const size_t step = bytes - done < g_step ? bytes - done : g_step;
    if (madvise(p + done, step, MADV_POPULATE_WRITE) != 0) break;
    done += step;
    g_shared->made[i] = done;
  }
  munmap(p, bytes);
}

static void *populate_thread(void *arg) {
  populate((int)(long)arg);
  return NULL;
}

enum { COPIERS = 16 };
static char *g_src, *g_dst;

/* Copier i fills (or, before the copy is timed, g_dst NULL: touches) its share of the source. */
static void *copy_thread(void *arg) {
  const int i = (int)(long)arg;
  const size_t share = g_bytes / COPIERS / PAGE * PAGE, from = share * (size_t)i;
  const size_t bytes = i == COPIERS - 1 ? g_bytes - from : share;
  if (g_dst)
    memcpy(g_dst + from, g_src + from, bytes);
  else
    memset(g_src + from, i + 1, bytes);
  return NULL;
}

static void run_copiers(void) {
  pthread_t ids[COPIERS];
  for (int i = 0; i < COPIERS; i++) pthread_create(&ids[i], NULL, copy_thread, (void *)(long)i);
  for (int i = 0; i < COPIERS; i++) pthread_join(ids[i], NULL);
}

/* The file written through a fresh shared mapping by COPIERS threads, as io/direct.c writes the
 * output (huge-page advice, munmap included); seconds, or -1. */
static double timed_copy(void) {
  g_src = (char *)malloc(g_bytes);
  if (!g_src) return -1;
  g_dst = NULL;
  run_copiers(); /* the source resident first, untimed */
  const double start = now();
  void *p = mmap(NULL, g_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, g_fd, 0);
  if (p == MAP_FAILED) return -1;
  madvise(p, g_bytes, MADV_HUGEPAGE);
  g_dst = (char *)p;
  run_copiers();
  munmap(p, g_bytes);
  const double copied = now() - start;
  free(g_src);
  return copied;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: bench_context_beside none|threads|processes WORKERS STEP_KIB BYTES DIR\n");
    return 2;
  }
  const char *mode = argv[1];
  const bool threads = strcmp(mode, "threads") == 0, processes = strcmp(mode, "processes") == 0;
  g_workers = atoi(argv[2]);
  g_step = strtoull(argv[3], NULL, 10) << 10;
  g_bytes = strtoull(argv[4], NULL, 10);
  if (g_workers < 1 || g_workers > MAX_WORKERS || g_step == 0 || g_bytes < PAGE) return 2;
  char path[4096];
  snprintf(path, sizeof path, "%s/context_beside.%d", argv[5], (int)getpid());
  g_shared = (Shared *)mmap(NULL, sizeof(Shared), PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  g_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (g_shared == MAP_FAILED || g_fd < 0 || fallocate(g_fd, 0, 0, (off_t)g_bytes) != 0) {
    perror("bench_context_beside");
    return 1;
  }
  pthread_t ids[MAX_WORKERS];
  pid_t pids[MAX_WORKERS];
  for (int i = 0; threads && i < g_workers; i++)
    pthread_create(&ids[i], NULL, populate_thread, (void *)(long)i);
  for (int i = 0; processes && i < g_workers; i++) /* before the driver starts in this process */
    if ((pids[i] = fork()) == 0) {
      populate(i);
      _exit(0);
    }
  const double start = now();
  int devices = 0; /* the driver's start (cuInit) */
  const cudaError_t init = cudaGetDeviceCount(&devices);
  const double initialized = now();
  const cudaError_t made = init == cudaSuccess ? cudaSetDevice(0) : init;
  const cudaError_t freed = made == cudaSuccess ? cudaFree(0) : made;
  const double ready = now();
  unsigned long long by_then = 0;
  for (int i = 0; i < g_workers; i++) by_then += g_shared->made[i];
  __atomic_store_n(&g_shared->stop, 1, __ATOMIC_RELAXED);
  for (int i = 0; threads && i < g_workers; i++) pthread_join(ids[i], NULL);
  for (int i = 0; processes && i < g_workers; i++) waitpid(pids[i], NULL, 0);
  const double joined = now();
  const double copy = timed_copy();
  close(g_fd);
  unlink(path);
  if (freed != cudaSuccess) {
    fprintf(stderr, "bench_context_beside: no context: %s\n", cudaGetErrorString(freed));
    return 1;
  }
  printf("%-9s workers %3d step %6zu KiB: driver %.3f s, context %.3f s, total %.3f s; "
         "%.2f of %.2f GiB made by then; stop %.3f s; copy %.3f s, context + copy %.3f s\n",
         mode, processes || threads ? g_workers : 0, g_step >> 10, initialized - start,
         ready - initialized, ready - start, by_then / 1073741824.0, g_bytes / 1073741824.0,
         joined - ready, copy, ready - start + copy);
  return 0;
}

/* fail_alloc: an LD_PRELOAD shim that makes one allocation of the program itself fail, to test
 * that an out-of-memory error on one rank reaches every rank (tests/faults/alloc_failure.sh).
 *
 * Only calls made FROM THE MAIN EXECUTABLE count (our libraries are static, so they are inside
 * it): the return address must lie in the executable's mapped text. Allocations made by libc,
 * HDF5, MPI or CUDA on our behalf are neither counted nor failed: we test our error paths, not
 * theirs.
 *
 * Environment (read once, at load):
 *   H5G_FAIL_ALLOC=k         fail the k-th counted call (1-based; 0 or unset: count only)
 *   H5G_FAIL_ALLOC_RANK=r    only on the process whose OMPI_COMM_WORLD_RANK is r (unset: any)
 *   H5G_FAIL_ALLOC_REPORT=P  at exit write "count N" and one "call I 0xOFFSET" line per counted
 *                            call (the first MAX_TRACE) to P.<rank>; a failed call also adds
 *                            "failed K 0xOFFSET" there as it happens. OFFSET is the caller's
 *                            address relative to the executable's load base, for addr2line -e.
 * Counted: malloc, calloc, realloc, posix_memalign, aligned_alloc and mmap (the host buffers are
 * mapped: base/host_memory.c). The failed call returns NULL (mmap: MAP_FAILED) with errno ENOMEM,
 * once; later calls succeed, so cleanup code that allocates runs as it would after a real
 * transient shortage. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_TRACE 65536
#define BOOT_BYTES 4096

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void (*free_fn)(void *);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*aligned_alloc_fn)(size_t, size_t);
typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);

static malloc_fn real_malloc;
static calloc_fn real_calloc;
static realloc_fn real_realloc;
static free_fn real_free;
static posix_memalign_fn real_posix_memalign;
static aligned_alloc_fn real_aligned_alloc;
static mmap_fn real_mmap;

/* dlsym itself may call calloc/malloc before the real functions are known: those few requests
 * are served from this static arena and never freed (free ignores pointers into it). */
static _Alignas(16) unsigned char boot_arena[BOOT_BYTES];
static size_t boot_used;
static int resolving;

static uintptr_t text_lo, text_hi, load_base; /* executable text [lo, hi) and its load base */
static long fail_at;                          /* k, or 0 */
static int active;                            /* this process takes part (rank matches) */
static long calls;                            /* counted calls so far (atomic) */
static char report_path[4096];
static uintptr_t trace[MAX_TRACE];

static void *boot_alloc(size_t bytes) {
  size_t at = (boot_used + 15) & ~(size_t)15;
  if (at + bytes > sizeof boot_arena) return NULL;
  boot_used = at + bytes;
  return boot_arena + at;
}

static int in_boot(const void *p) {
  return (const unsigned char *)p >= boot_arena && (const unsigned char *)p < boot_arena + BOOT_BYTES;
}

static void resolve(void) {
  if (real_malloc || resolving) return;
  resolving = 1;
  real_calloc = (calloc_fn)dlsym(RTLD_NEXT, "calloc");
  real_malloc = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
  real_realloc = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
  real_free = (free_fn)dlsym(RTLD_NEXT, "free");
  real_posix_memalign = (posix_memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
  real_aligned_alloc = (aligned_alloc_fn)dlsym(RTLD_NEXT, "aligned_alloc");
  real_mmap = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
  resolving = 0;
}

/* The first entry of dl_iterate_phdr is the main program: its executable PT_LOAD segments. */
static int find_text(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (text_lo == 0 || lo < text_lo) text_lo = lo;
    if (hi > text_hi) text_hi = hi;
  }
  load_base = info->dlpi_addr;
  return 1; /* stop after the first entry */
}

/* Appends "0x<hex>" to buf at *len (no stdio: it may allocate). */
static void put_hex(char *buf, size_t *len, uintptr_t v) {
  char digits[2 * sizeof v];
  int n = 0;
  do {
    digits[n++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  buf[(*len)++] = '0';
  buf[(*len)++] = 'x';
  while (n) buf[(*len)++] = digits[--n];
}

static void put_dec(char *buf, size_t *len, long v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) buf[(*len)++] = digits[--n];
}

static void put_str(char *buf, size_t *len, const char *s) {
  while (*s) buf[(*len)++] = *s++;
}

static void report_line(int fd, const char *what, long index, uintptr_t offset) {
  char line[96];
  size_t len = 0;
  put_str(line, &len, what);
  put_dec(line, &len, index);
  put_str(line, &len, " ");
  put_hex(line, &len, offset);
  put_str(line, &len, "\n");
  if (write(fd, line, len) < 0) return;
}

__attribute__((constructor)) static void setup(void) {
  resolve();
  dl_iterate_phdr(find_text, NULL);
  const char *k = getenv("H5G_FAIL_ALLOC"), *want = getenv("H5G_FAIL_ALLOC_RANK"),
             *rank = getenv("OMPI_COMM_WORLD_RANK"), *report = getenv("H5G_FAIL_ALLOC_REPORT");
  fail_at = k ? strtol(k, NULL, 10) : 0;
  active = !want || (rank && strcmp(want, rank) == 0);
  if (report && strlen(report) + 24 < sizeof report_path) {
    size_t len = 0;
    put_str(report_path, &len, report);
    put_str(report_path, &len, ".");
    put_str(report_path, &len, rank ? rank : "0");
    report_path[len] = '\0';
  }
}

__attribute__((destructor)) static void finish(void) {
  if (!active || report_path[0] == '\0') return;
  int fd = open(report_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  long n = __atomic_load_n(&calls, __ATOMIC_RELAXED);
  report_line(fd, "count ", n, 0);
  for (long i = 0; i < n && i < MAX_TRACE; i++) report_line(fd, "call ", i + 1, trace[i]);
  close(fd);
}

/* True when this call (from `caller`) is the one to fail; counts it when it is ours. */
static int should_fail(void *caller) {
  uintptr_t at = (uintptr_t)caller;
  if (!active || at < text_lo || at >= text_hi) return 0;
  long index = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
  if (index <= MAX_TRACE) trace[index - 1] = at - load_base;
  if (index != fail_at) return 0;
  if (report_path[0] != '\0') {
    int fd = open(report_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      report_line(fd, "failed ", index, at - load_base);
      close(fd);
    }
  }
  errno = ENOMEM;
  return 1;
}

void *malloc(size_t bytes) {
  resolve();
  if (!real_malloc) return boot_alloc(bytes);
  if (should_fail(__builtin_return_address(0))) return NULL;
  return real_malloc(bytes);
}

void *calloc(size_t count, size_t size) {
  resolve();
  if (!real_calloc) { /* inside dlsym: the arena is zero (static) and never reused */
    if (size && count > (size_t)-1 / size) return NULL;
    return boot_alloc(count * size);
  }
  if (should_fail(__builtin_return_address(0))) return NULL;
  return real_calloc(count, size);
}

void *realloc(void *ptr, size_t bytes) {
  resolve();
  if (in_boot(ptr)) { /* move an arena block to the heap: copy what it can hold */
    size_t held = (size_t)(boot_arena + BOOT_BYTES - (unsigned char *)ptr);
    void *moved = real_malloc ? real_malloc(bytes) : boot_alloc(bytes);
    if (moved) memcpy(moved, ptr, bytes < held ? bytes : held);
    return moved;
  }
  if (!real_realloc) return boot_alloc(bytes);
  if (should_fail(__builtin_return_address(0))) return NULL;
  return real_realloc(ptr, bytes);
}

void free(void *ptr) {
  if (ptr == NULL || in_boot(ptr)) return;
  resolve();
  if (real_free) real_free(ptr);
}

int posix_memalign(void **out, size_t alignment, size_t bytes) {
  resolve();
  if (should_fail(__builtin_return_address(0))) return ENOMEM;
  return real_posix_memalign(out, alignment, bytes);
}

void *aligned_alloc(size_t alignment, size_t bytes) {
  resolve();
  if (should_fail(__builtin_return_address(0))) return NULL;
  return real_aligned_alloc(alignment, bytes);
}

void *mmap(void *addr, size_t bytes, int prot, int flags, int fd, off_t offset) {
  resolve();
  if (!real_mmap) /* inside dlsym */
    return (void *)syscall(SYS_mmap, addr, bytes, prot, flags, fd, offset);
  if (should_fail(__builtin_return_address(0))) return MAP_FAILED;
  return real_mmap(addr, bytes, prot, flags, fd, offset);
}

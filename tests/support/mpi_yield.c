/* Preloaded into the ranks of MPICH test runs (tests/CMakeLists.txt, H5G_MPIEXEC): a rank waiting
 * in MPI gives up its CPU whenever a poll of the network finds nothing, as Open MPI's ranks do
 * when its launcher oversubscribes the node (mpi_yield_when_idle).
 *
 * MPICH's ranks wait by polling without pause (ch4:ucx, Debian's build: ucp_worker_progress in a
 * loop, no sched_yield anywhere in libmpich 4.0; MPIR_CVAR_POLLS_BEFORE_YIELD is ch3's, and
 * MPIR_CVAR_CH4_PROGRESS_THROTTLE came after 4.0). With more ranks than cores (3 and 4 ranks on
 * CI's 2 cores) a rank waiting in a collective then spends its whole time slice polling while
 * the rank it waits for is not scheduled: tests/mpi's splitters at 3 ranks ran past their
 * 300 s where Open MPI takes 9 s. With this, MPICH's runs take about Open MPI's time.
 *
 * A test harness aid only, never part of h5gsort: it wraps libucp's ucp_worker_progress (and
 * does nothing in a process without libucp, e.g. another MPICH device). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef struct ucp_worker *ucp_worker_h;
typedef unsigned (*progress_fn)(ucp_worker_h);

unsigned ucp_worker_progress(ucp_worker_h worker);
unsigned ucp_worker_progress(ucp_worker_h worker) {
  static progress_fn real;
  progress_fn fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
  if (!fn) {
    void *sym = dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (!sym) return 0;
    *(void **)&fn = sym;
    __atomic_store_n(&real, fn, __ATOMIC_RELEASE);
  }
  unsigned events = fn(worker);
  if (events == 0) sched_yield();
  return events;
}

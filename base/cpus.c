#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "base/cpus.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int h5g_cpus_allowed(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return h5g_cpus_online();
  int count = CPU_COUNT(&set);
  return count > 0 ? count : 1;
}

int h5g_cpus_online(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

void h5g_cpus_list(char *buf, size_t len) {
  cpu_set_t set;
  size_t used = 0;
  if (len == 0) return;
  buf[0] = '\0';
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return;
  for (int c = 0; c < CPU_SETSIZE && used < len; c++) {
    if (!CPU_ISSET(c, &set) || (c > 0 && CPU_ISSET(c - 1, &set))) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) last++;
    int n = last > c ? snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", c, last)
                     : snprintf(buf + used, len - used, "%s%d", used ? "," : "", c);
    if (n < 0) break;
    used += (size_t)n;
  }
}

void h5g_cpus_mask(uint64_t mask[H5G_CPUS_MASK_WORDS]) {
  cpu_set_t set;
  memset(mask, 0, H5G_CPUS_MASK_WORDS * sizeof *mask);
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return;
  for (int c = 0; c < CPU_SETSIZE && c < 64 * H5G_CPUS_MASK_WORDS; c++)
    if (CPU_ISSET(c, &set)) mask[c / 64] |= (uint64_t)1 << (c % 64);
}

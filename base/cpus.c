#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "base/cpus.h"

#include <sched.h>
#include <stdio.h>
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

int h5g_cpus_take_share(int share, int shares) {
  cpu_set_t parent, mine, wanted;
  CPU_ZERO(&parent);
  CPU_ZERO(&mine);
  CPU_ZERO(&wanted);
  if (shares < 1 || share < 0 || share >= shares || sched_getaffinity(getppid(), sizeof parent,
                                                                      &parent) != 0 ||
      sched_getaffinity(0, sizeof mine, &mine) != 0)
    return 0;
  int total = CPU_COUNT(&parent), each = total / shares;
  if (each <= CPU_COUNT(&mine)) return 0;
  for (int c = 0, seen = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &parent)) continue;
    if (seen / each == share) CPU_SET(c, &wanted);
    seen++;
  }
  return sched_setaffinity(0, sizeof wanted, &wanted) == 0;
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

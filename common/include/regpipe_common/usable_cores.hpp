// How many cores this process may run on: its CPU affinity (taskset, a SLURM job's cpuset, a
// batch worker given its share of the host by its supervisor), not the machine's count, which
// std::thread::hardware_concurrency() reports. Threads beyond it only queue for the same cores.
#pragma once

#include <sched.h>

#include <thread>

namespace regpipe_common {

inline unsigned usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return unsigned(count);
  }
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware > 0 ? hardware : 1;
}

}  // namespace regpipe_common

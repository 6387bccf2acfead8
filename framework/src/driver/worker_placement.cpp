#include "driver/worker_placement.hpp"

#include "process/cuda_device_count.hpp"

#include <regpipe/host/error.hpp>
#include <regpipe/host/host_services.hpp>

#include <sched.h>

#include <cstdlib>

namespace regpipe {
namespace {

// This process's CUDA_VISIBLE_DEVICES entries ("2,3" or GPU UUIDs), so that a worker given
// device 1 is given what this process calls device 1; empty when it is not set.
std::vector<std::string> visible_devices_entries() {
  std::vector<std::string> out;
  const char* text = std::getenv("CUDA_VISIBLE_DEVICES");
  if (text == nullptr) return out;
  std::string entry;
  for (const char* c = text;; ++c) {
    if (*c == ',' || *c == '\0') {
      out.push_back(entry);
      entry.clear();
      if (*c == '\0') return out;
    } else if (*c != ' ') {
      entry += *c;
    }
  }
}

// The devices execution.devices asks for, checked against those this process sees.
std::vector<unsigned> resolve_devices(const PipelineExecution& e) {
  if (!e.all_devices && e.devices.empty()) return {};
  const CudaDeviceCount seen = count_cuda_devices();
  if (e.all_devices) {
    if (seen.count == 0)
      write_log_line(RP_LOG_WARNING, "execution.devices: all, but this machine has " + seen.why_none +
                                         ": the workers register with the components' CPU alternatives");
    std::vector<unsigned> all;
    for (int d = 0; d < seen.count; ++d) all.push_back(unsigned(d));
    return all;
  }
  for (const unsigned d : e.devices)
    if (int(d) >= seen.count) {
      std::string message = "execution.devices lists device " + std::to_string(d) + ", but ";
      if (seen.count == 0) message += "this machine has " + seen.why_none;
      else
        message += "this process sees " + std::to_string(seen.count) + " CUDA device(s) (0.." +
                   std::to_string(seen.count - 1) + ")";
      if (std::getenv("CUDA_VISIBLE_DEVICES") != nullptr)
        message += std::string("; CUDA_VISIBLE_DEVICES=") + std::getenv("CUDA_VISIBLE_DEVICES") +
                   " limits them, and indices count within it";
      throw UserError(message);
    }
  return e.devices;
}

std::string visible_name(unsigned device) {
  const std::vector<std::string> entries = visible_devices_entries();
  return device < entries.size() ? entries[device] : std::to_string(device);
}

std::vector<int> own_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

// "0-7" or "0-3,8"
std::string cpu_ranges(const std::vector<int>& cpus) {
  std::string out;
  for (size_t k = 0; k < cpus.size();) {
    size_t last = k;
    while (last + 1 < cpus.size() && cpus[last + 1] == cpus[last] + 1) ++last;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[k]);
    if (last > k) out += "-" + std::to_string(cpus[last]);
    k = last + 1;
  }
  return out;
}

}  // namespace

std::vector<WorkerPlacement> place_workers(const PipelineExecution& e) {
  const std::vector<unsigned> devices = resolve_devices(e);
  const size_t workers = e.workers > 0 ? e.workers : std::max<size_t>(1, devices.size());
  const std::vector<int> cpus = workers > 1 ? own_cpus() : std::vector<int>{};
  std::vector<WorkerPlacement> out(workers);
  for (size_t w = 0; w < workers; ++w) {
    if (!devices.empty()) {
      out[w].device = devices[w % devices.size()];
      out[w].visible_device = visible_name(*out[w].device);
    }
    if (cpus.size() >= workers) {  // contiguous shares, as even as they divide
      for (size_t c = w * cpus.size() / workers; c < (w + 1) * cpus.size() / workers; ++c)
        out[w].cpus.push_back(cpus[c]);
    } else if (!cpus.empty()) {  // more workers than cores: they share them in turn
      out[w].cpus = {cpus[w % cpus.size()]};
    }
  }
  return out;
}

void use_first_device(const PipelineExecution& e) {
  const std::vector<unsigned> devices = resolve_devices(e);
  if (!devices.empty()) ::setenv("CUDA_VISIBLE_DEVICES", visible_name(devices.front()).c_str(), 1);
}

std::string describe_placement(size_t worker, const WorkerPlacement& p) {
  std::string out = "worker " + std::to_string(worker);
  out += p.device ? " on CUDA device " + std::to_string(*p.device) : std::string(" without a device of its own");
  if (!p.cpus.empty()) out += " (cores " + cpu_ranges(p.cpus) + ")";
  return out;
}

}  // namespace regpipe

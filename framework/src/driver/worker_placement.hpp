// Where each worker process of a batch runs (execution.devices, execution.workers): its CUDA
// device, given to it as its only visible device, and its share of the supervisor's cores, so
// that workers' thread pools (a CPU cost's slabs, the gzip writers) do not queue for the same
// cores. A placement changes where images register, never their results.
#pragma once

#include <regpipe/host/driver.hpp>
#include <regpipe/host/pipeline.hpp>

#include <optional>
#include <string>
#include <vector>

namespace regpipe {

struct WorkerPlacement {
  std::optional<unsigned> device;  // index among the devices the supervisor sees; none: the CPU
                                   // or the components' own `device`
  std::string visible_device;      // the worker's CUDA_VISIBLE_DEVICES ("": inherited)
  std::vector<int> cpus;           // the cores it may use (empty: all of the supervisor's)
};

// One placement per worker. UserError when execution.devices names a device this process does
// not see; `all` on a machine without one places the workers on the CPU, saying so.
std::vector<WorkerPlacement> place_workers(const PipelineExecution& execution);

// "worker 0 on CUDA device 1 (cores 0-7)", for the log and the report.
std::string describe_placement(size_t worker, const WorkerPlacement& placement);

}  // namespace regpipe

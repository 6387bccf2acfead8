// Pieces every benchmark driver needs: the device named in its tables, and medians.
#pragma once

#include <string>
#include <vector>

namespace regpipe::bench {

// "NVIDIA H100 80GB HBM3 (132 SMs)", "none" without a device, or "none (built without CUDA)".
std::string device_name();

// The median of the samples (the upper one of an even count); 0 for none.
double median(std::vector<double> samples);

}  // namespace regpipe::bench

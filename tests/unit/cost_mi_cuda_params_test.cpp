// cuda.mi / cuda.nmi's create-time checks that need no device (label unit, runs wherever the
// plugin is built): the combinations partial_volume does not support are refused with
// RP_INVALID_ARGUMENT before the device is opened, naming what works, so a machine without a
// GPU gives the same message as one with it (and not the RP_DEVICE of a missing device).
#include <regpipe/host/components.hpp>
#include <regpipe/host/error.hpp>

#include "support/test_support.hpp"

#include <map>
#include <string>

using namespace regpipe;

namespace {

PluginHost& host() {
  static PluginHost h({{test::plugin_dir()}, false, false});
  return h;
}

// Expects cuda.<measure> with `params` to be refused with RP_INVALID_ARGUMENT and a message
// containing `needle`.
void expect_refused(const std::string& measure, const std::map<std::string, std::string>& params,
                    const std::string& needle) {
  const Component& c = *host().find(RP_KIND_COST, "cuda." + measure);
  HostServices services;
  try {
    CostInstance cost(c, services, resolve_params(c, params));
    ADD_FAILURE() << "cuda." << measure << " accepted parameters that should be refused (expected: " << needle << ")";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_INVALID_ARGUMENT) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "the error should say '" << needle << "'; it says: " << e.what();
  }
}

}  // namespace

TEST(CudaMiParams, PartialVolumeWithASchemeThatCountsWholeSamplesIsRefusedNamingPrivatised) {
  if (host().find(RP_KIND_COST, "cuda.mi") == nullptr) GTEST_SKIP() << "cuda.mi is not built (no nvcc)";
  for (const std::string measure : {"mi", "nmi"})
    for (const std::string scheme :
         {"per_warp", "sort_and_count", "per_thread_packed", "presorted", "approximate", "adaptive"})
      expect_refused(measure, {{"partial_volume", "true"}, {"scheme", scheme}},
                     "partial_volume=true is not supported by scheme=" + scheme +
                         ", which counts whole samples; the schemes that support it: privatised (or cpu." +
                         measure + ")");
}

TEST(CudaMiParams, PartialVolumeWithNearestInterpolationIsRefusedAsCpuMiRefusesIt) {
  if (host().find(RP_KIND_COST, "cuda.mi") == nullptr) GTEST_SKIP() << "cuda.mi is not built (no nvcc)";
  // cpu.mi's own message (cost_cpu's settings.cpp), so a [cuda.mi, cpu.mi] list reads the same.
  const std::string needle = "partial_volume=true spreads each sample over its 8 trilinear neighbours and "
                             "cannot be combined with interpolation=nearest; use interpolation=trilinear";
  for (const std::string measure : {"mi", "nmi"})
    expect_refused(measure, {{"partial_volume", "true"}, {"interpolation", "nearest"}}, needle);
  const Component& cpu = host().require(RP_KIND_COST, "cpu.mi");
  HostServices services;
  try {
    CostInstance cost(cpu, services, resolve_params(cpu, {{"partial_volume", "true"}, {"interpolation", "nearest"}}));
    ADD_FAILURE() << "cpu.mi accepted partial_volume with nearest";
  } catch (const ComponentError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

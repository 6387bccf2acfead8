// Fault-injecting cost components for the robustness tests (built only for tests, into
// build/test_plugins/fault): each evaluate misbehaves in one way that abi.h forbids, so that the
// batch supervisor, the watchdog and `regpipe plugins --check` can be shown to contain it.
//
//   test.fault.segv   SIGSEGV          test.fault.hang   never returns, ignores should_cancel
//   test.fault.abort  abort()          test.fault.throw  a C++ int escapes across the C ABI
//   test.fault.nan    a NaN cost
//
// Otherwise the cost is the squared norm of the transform's translation (the optimizer finds
// the identity quickly), and the overlap 1 unless the translation takes the images apart. The fault happens only for a moving image narrower along x than
// `only_below_extent_mm` (default: every image), so a test marks one image of a batch by
// its size: the pyramid resamples the image, but its extent in mm stays. Each other image's
// first evaluation waits `healthy_first_evaluation_ms`, so that images registered at once
// beside the faulty one (execution.registrations_per_worker) are still in flight at its fault.
#include <regpipe/abi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <thread>
#include <utility>

namespace {

enum class Fault { segv, abort, hang, throw_int, nan };

struct FaultCost {
  const rp_host* host = nullptr;
  double only_below_extent_mm = 1e9;
  double healthy_first_evaluation_ms = 0.0;
  bool faulty_moving = false;
  bool evaluated = false;  // since the moving image was set
  double reference_reach_mm = 0.0, moving_reach_mm = 0.0;  // farthest corner from the origin
};

double extent_x_mm(const rp_image* image) {
  const double* m = image->voxel_to_world;  // row-major: column 0 is the x voxel step
  return image->dims[0] * std::sqrt(m[0] * m[0] + m[4] * m[4] + m[8] * m[8]);
}

double reach_mm(const rp_image* image) {
  const double* m = image->voxel_to_world;
  double reach = 0.0;
  for (int corner = 0; corner < 8; ++corner) {
    const double v[3] = {corner & 1 ? image->dims[0] - 0.5 : -0.5, corner & 2 ? image->dims[1] - 0.5 : -0.5,
                         corner & 4 ? image->dims[2] - 0.5 : -0.5};
    double norm2 = 0.0;
    for (int r = 0; r < 3; ++r) {
      const double w = m[4 * r] * v[0] + m[4 * r + 1] * v[1] + m[4 * r + 2] * v[2] + m[4 * r + 3];
      norm2 += w * w;
    }
    reach = std::max(reach, std::sqrt(norm2));
  }
  return reach;
}

rp_status create(const rp_host* host, const rp_param_value* params, size_t n, void** self, rp_error_buf*) {
  auto* cost = new (std::nothrow) FaultCost;
  if (cost == nullptr) return RP_OUT_OF_MEMORY;
  cost->host = host;
  for (size_t i = 0; i < n; ++i)
    (std::strcmp(params[i].name, "only_below_extent_mm") == 0 ? cost->only_below_extent_mm
                                                               : cost->healthy_first_evaluation_ms) = params[i].double_value;
  *self = cost;
  return RP_OK;
}

rp_status set_reference(void* self, const rp_image* reference, const rp_image*) {
  static_cast<FaultCost*>(self)->reference_reach_mm = reach_mm(reference);
  return RP_OK;
}

rp_status set_moving(void* self, const rp_image* moving, const rp_image*) {
  auto* cost = static_cast<FaultCost*>(self);
  cost->faulty_moving = extent_x_mm(moving) < cost->only_below_extent_mm;
  cost->moving_reach_mm = reach_mm(moving);
  cost->evaluated = false;
  return RP_OK;
}

template <Fault F>
rp_status evaluate(void* self, const rp_cost_request* request) {
  if (static_cast<FaultCost*>(self)->faulty_moving) {
    switch (F) {
      case Fault::segv: std::raise(SIGSEGV); break;
      case Fault::abort: std::abort();
      case Fault::hang: {  // said first, so that a test knows when to signal
        const rp_host* host = static_cast<FaultCost*>(self)->host;
        host->log(host->ctx, RP_LOG_WARNING, "test.fault.hang: hanging in evaluate");
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      }
      case Fault::throw_int: throw 42;
      case Fault::nan: break;
    }
  }
  auto* cost = static_cast<FaultCost*>(self);
  if (!cost->faulty_moving && !std::exchange(cost->evaluated, true))
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(cost->healthy_first_evaluation_ms));
  for (size_t i = 0; i < request->k; ++i) {
    const double* m = request->matrices + 16 * i;
    const double shift2 = m[3] * m[3] + m[7] * m[7] + m[11] * m[11];
    request->costs_out[i] = F == Fault::nan && cost->faulty_moving ? std::numeric_limits<double>::quiet_NaN() : shift2;
    const double reach = cost->reference_reach_mm + cost->moving_reach_mm;
    if (request->overlap_out != nullptr) request->overlap_out[i] = shift2 < reach * reach ? 1.0 : 0.0;
  }
  return RP_OK;
}

const char* last_error(const void*) { return ""; }
void destroy(void* self) { delete static_cast<FaultCost*>(self); }

template <Fault F>
constexpr rp_cost_vtable kVtable = {sizeof(rp_cost_vtable), create, set_reference, set_moving,
                                    evaluate<F>, last_error, destroy, nullptr};

const rp_param_desc kParams[] = {{sizeof(rp_param_desc), "only_below_extent_mm", RP_PARAM_DOUBLE, "1e9", 0.0, 1e9,
                                  nullptr, "mm", "fault only for a moving image narrower than this along x"},
                                 {sizeof(rp_param_desc), "healthy_first_evaluation_ms", RP_PARAM_DOUBLE, "0", 0.0,
                                  1e6, nullptr, "ms", "the first evaluation of each other moving image waits this"}};

#define FAULT_COMPONENT(id, fault, what)                                                                 \
  rp_component_desc{sizeof(rp_component_desc), RP_KIND_COST, id, "Fault: " what, "1.0.0",              \
                    "Cost whose evaluate " what " (robustness test fixture).", kParams, 2, &kVtable<fault>}

const rp_component_desc kComponents[] = {
    FAULT_COMPONENT("test.fault.segv", Fault::segv, "raises SIGSEGV"),
    FAULT_COMPONENT("test.fault.abort", Fault::abort, "aborts"),
    FAULT_COMPONENT("test.fault.hang", Fault::hang, "never returns"),
    FAULT_COMPONENT("test.fault.throw", Fault::throw_int, "throws an int across the C ABI"),
    FAULT_COMPONENT("test.fault.nan", Fault::nan, "returns NaN costs"),
};

const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry), RP_ABI_MAJOR, RP_ABI_MINOR, "fault_plugin", "1.0.0",
                                "MIT", sizeof(kComponents) / sizeof(kComponents[0]), kComponents};

}  // namespace

extern "C" RP_EXPORT const rp_plugin_entry* regpipe_plugin_entry(void) { return &kEntry; }

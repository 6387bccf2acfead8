// The conformance suite: every component the host discovers — ours and any third party's on
// REGPIPE_PLUGIN_PATH — loaded through the host and held to abi.h's contract: parameter
// validation in create, error paths that return a status instead of crashing, defined costs
// without overlap, determinism, and the basic job of each kind.
//
//   REGPIPE_PLUGIN_PATH=/my/plugins regpipe_plugin_tests     # check your own plugin too
#include <regpipe/host/components.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/phantom.hpp>
#include <regpipe/host/transform.hpp>

#include "support/test_support.hpp"

#include <cmath>

using namespace regpipe;

namespace {

PluginHost& host() {
  static PluginHost h([] {
    PluginSearchOptions o = test::built_plugins();
    o.use_environment = true;  // third-party plugins on REGPIPE_PLUGIN_PATH are checked too
    return o;
  }());
  return h;
}

HostServices& services() {
  static HostServices s;
  return s;
}

std::vector<std::string> ids(int32_t kind) {
  std::vector<std::string> out;
  for (const auto& c : host().components())
    if (c.kind == kind) out.push_back(c.id);
  return out;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& i) {
  std::string s = i.param;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// Creates the component, or skips the test when it cannot run on this machine (a GPU plugin
// without a device reports RP_DEVICE, as abi.h asks).
template <class Instance>
std::unique_ptr<Instance> create_or_skip(const Component& c, const std::map<std::string, ParamValue>& params,
                                         std::string* skip) {
  try {
    return std::make_unique<Instance>(c, services(), params);
  } catch (const ComponentError& e) {
    if (e.status() != RP_DEVICE) throw;
    *skip = e.what();
    return nullptr;
  }
}

// Every numeric parameter pushed just past its range must be refused by create itself (the
// host's validation bypassed), naming the parameter.
template <class Instance>
void check_create_rechecks_ranges(const Component& c) {
  for (const auto& p : c.params) {
    if (p.type != RP_PARAM_INT && p.type != RP_PARAM_DOUBLE) continue;
    auto params = resolve_params(c, {});
    ParamValue& v = params[p.name];
    if (p.type == RP_PARAM_INT) v.int_value = static_cast<long long>(p.max) + 1;
    else v.double_value = p.max + std::max(1.0, std::fabs(p.max));
    try {
      Instance instance(c, services(), params);
      ADD_FAILURE() << c.id << ": create accepted " << p.name << " above its maximum " << p.max;
    } catch (const ComponentError& e) {
      if (e.status() == RP_DEVICE) return;  // cannot get that far without a device
      EXPECT_EQ(e.status(), RP_INVALID_ARGUMENT) << c.id << " " << p.name;
      EXPECT_NE(std::string(e.what()).find(p.name), std::string::npos) << c.id << ": " << e.what();
    }
  }
}

struct Pair {
  Image reference, moving;
};
const Pair& phantom_pair() {
  static const Pair p{make_head_phantom({24, 24, 24}, 8.0, 0), make_head_phantom({24, 24, 24}, 8.0, 1)};
  return p;
}

class CostConformance : public ::testing::TestWithParam<std::string> {};
class OptimizerConformance : public ::testing::TestWithParam<std::string> {};
class ResamplerConformance : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST(Conformance, FindsTheProjectsComponents) {
  for (const auto& p : host().problems()) ADD_FAILURE() << p.file << ": " << p.reason;
  EXPECT_GE(ids(RP_KIND_COST).size(), 5u);
  EXPECT_GE(ids(RP_KIND_OPTIMIZER).size(), 1u);
  EXPECT_GE(ids(RP_KIND_RESAMPLER).size(), 1u);
}

TEST_P(CostConformance, HonoursTheCostContract) {
  const Component& c = host().require(RP_KIND_COST, GetParam());
  check_create_rechecks_ranges<CostInstance>(c);
  std::string skip;
  auto cost = create_or_skip<CostInstance>(c, resolve_params(c, {}), &skip);
  if (!cost) GTEST_SKIP() << skip;
  const double identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  double value = 0.0, overlap = 0.0;
  // Evaluating before the images are set is an error status, not a crash.
  EXPECT_THROW(cost->evaluate(identity, 1, &value), ComponentError);
  cost->set_reference(phantom_pair().reference, nullptr);
  cost->set_moving(phantom_pair().moving, nullptr);
  // A batch: identity, a small shift, and a transform that leaves no overlap.
  std::vector<double> m;
  for (double shift : {0.0, 3.0, 1e5}) {
    Eigen::Matrix4d t = Eigen::Matrix4d::Identity();
    t(0, 3) = shift;
    for (int j = 0; j < 16; ++j) m.push_back(t(j / 4, j % 4));
  }
  std::vector<double> costs(3), overlaps(3), again(3);
  cost->evaluate(m.data(), 3, costs.data(), overlaps.data());
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isfinite(costs[i])) << c.id << " cost " << i;
  EXPECT_NEAR(overlaps[0], 1.0, 1e-9) << c.id;
  EXPECT_EQ(overlaps[2], 0.0) << c.id << ": no overlap must report overlap 0";
  EXPECT_LT(costs[0], costs[2]) << c.id << ": the aligned pair must cost less than no overlap";
  // Determinism: the same request gives the same costs (to float atomics' order, 1e-6).
  cost->evaluate(m.data(), 3, again.data());
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(again[i], costs[i], 1e-6 * std::max(1.0, std::fabs(costs[i]))) << c.id;
  // A singular transform is refused with a status.
  const double singular[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_THROW(cost->evaluate(singular, 1, &value), ComponentError);
}

namespace {

// A bowl over translations with its minimum at (3, -2, 1) mm, one level; `fail` makes every
// evaluation return RP_DEVICE.
struct BowlObjective {
  int calls = 0;
  bool fail = false;
  double steps[RP_PARAM_COUNT] = {0.05, 0.05, 0.05, 1, 1, 1, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01};
  double levels[1] = {4.0};
  rp_objective abi{};

  explicit BowlObjective(uint32_t dof) {
    abi.size = sizeof(abi);
    abi.ctx = this;
    abi.param_count = RP_PARAM_COUNT;
    abi.dof = dof;
    abi.typical_step = steps;
    abi.level_count = 1;
    abi.levels_mm = levels;
    abi.evaluate = [](void* p, const double* x, size_t k, double* f) -> rp_status {
      auto* b = static_cast<BowlObjective*>(p);
      if (b->fail) return RP_DEVICE;
      for (size_t i = 0; i < k; ++i) {
        const double* v = x + i * RP_PARAM_COUNT;
        f[i] = std::pow(v[3] - 3, 2) + std::pow(v[4] + 2, 2) + std::pow(v[5] - 1, 2) +
               100 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
      }
      b->calls += int(k);
      return RP_OK;
    };
    abi.set_level = [](void*, uint32_t level) -> rp_status { return level == 0 ? RP_OK : RP_INVALID_ARGUMENT; };
    abi.last_error = [](void*) -> const char* { return "the test objective failed"; };
    abi.begin_stage = [](void*, const char*) {};
  }
};

}  // namespace

TEST_P(OptimizerConformance, MinimisesABowlAndPropagatesObjectiveFailures) {
  const Component& c = host().require(RP_KIND_OPTIMIZER, GetParam());
  check_create_rechecks_ranges<OptimizerInstance>(c);
  if (c.deformable_only) {
    // abi.h 1.5's RP_OPTIMIZER_DEFORMABLE_ONLY (optim.syn): an affine objective is refused, untouched.
    OptimizerInstance opt(c, services(), resolve_params(c, {}));
    BowlObjective bowl(6);
    AffineParams x = identity_params();
    double f = 0.0;
    try {
      opt.minimize(bowl.abi, x.data(), &f);
      ADD_FAILURE() << c.id << " declares itself deformable only but minimised an affine objective";
    } catch (const ComponentError& e) {
      EXPECT_EQ(e.status(), RP_UNSUPPORTED) << c.id << ": " << e.what();
    }
    EXPECT_EQ(bowl.calls, 0) << c.id;
    return;
  }
  if (!c.supports_dof(6)) GTEST_SKIP() << c.id << " does not support 6 DOF";
  OptimizerInstance opt(c, services(), resolve_params(c, {}));
  BowlObjective bowl(6);
  AffineParams x = identity_params();
  double f = 0.0;
  opt.minimize(bowl.abi, x.data(), &f);
  EXPECT_NEAR(x[3], 3.0, 0.05) << c.id;
  EXPECT_NEAR(x[4], -2.0, 0.05) << c.id;
  EXPECT_NEAR(x[5], 1.0, 0.05) << c.id;
  EXPECT_GT(bowl.calls, 0);
  bowl.fail = true;
  x = identity_params();
  try {
    opt.minimize(bowl.abi, x.data(), &f);
    ADD_FAILURE() << c.id << " ignored a failing objective";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_DEVICE) << c.id << ": the objective's status must come back";
  }
}

// The DOF an optimizer declares (ABI 1.2's supported_dof) are the DOF its minimize takes: the
// host hands it nothing else, and refuses pipelines on the strength of the declaration.
TEST_P(OptimizerConformance, MinimisesAtEveryDofItDeclares) {
  const Component& c = host().require(RP_KIND_OPTIMIZER, GetParam());
  if (c.supported_dof != RP_DOF_ANY)
    EXPECT_NE(c.supported_dof & RP_DOF_ALL, 0u) << c.id << " declares no DOF this regpipe knows";
  OptimizerInstance opt(c, services(), resolve_params(c, {}));
  for (unsigned dof : {3u, 6u, 7u, 9u, 12u}) {
    if (c.supported_dof == RP_DOF_ANY || !c.supports_dof(dof)) continue;
    BowlObjective bowl(dof);
    AffineParams x = identity_params();
    double f = 0.0;
    EXPECT_NO_THROW(opt.minimize(bowl.abi, x.data(), &f)) << c.id << " at " << dof << " DOF";
    EXPECT_NEAR(x[3], 3.0, 0.05) << c.id << " at " << dof << " DOF";
  }
}

TEST_P(ResamplerConformance, ReproducesAnImageOnItsOwnGridAndRefusesBadRequests) {
  const Component& c = host().require(RP_KIND_RESAMPLER, GetParam());
  check_create_rechecks_ranges<ResamplerInstance>(c);
  std::string skip;
  auto resampler = create_or_skip<ResamplerInstance>(c, resolve_params(c, {}), &skip);
  if (!resampler) GTEST_SKIP() << skip;
  ResamplerInstance& r = *resampler;
  const Image& in = phantom_pair().reference;
  const rp_image view = in.view();
  std::vector<float> out(in.voxel_count());
  rp_resample_request req{};
  req.size = sizeof(req);
  req.input = &view;
  for (int a = 0; a < 3; ++a) req.out_dims[a] = in.dims[a];
  for (int i = 0; i < 16; ++i) req.out_voxel_to_world[i] = in.voxel_to_world(i / 4, i % 4);
  req.out_data = out.data();
  req.interpolation = RP_INTERP_TRILINEAR;
  r.resample(req);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], in.data[i], 1e-3) << c.id << " voxel " << i;
  req.out_dims[0] = 0;
  EXPECT_THROW(r.resample(req), ComponentError);
}

INSTANTIATE_TEST_SUITE_P(All, CostConformance, ::testing::ValuesIn(ids(RP_KIND_COST)), test_name);
INSTANTIATE_TEST_SUITE_P(All, OptimizerConformance, ::testing::ValuesIn(ids(RP_KIND_OPTIMIZER)), test_name);
INSTANTIATE_TEST_SUITE_P(All, ResamplerConformance, ::testing::ValuesIn(ids(RP_KIND_RESAMPLER)), test_name);

// registration.stages (issue 16, item 4): the Rigid -> Affine -> SyN form parsed into stages,
// and each mistake refused with the stage's index and key. The one-stage form is
// pipeline_test.cpp's, unchanged.
#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/pipeline.hpp>

#include "support/test_support.hpp"

#include <fstream>

namespace fs = std::filesystem;
using namespace regpipe;

namespace {

class PipelineStagesTest : public ::testing::Test {
 protected:
  PipelineStagesTest() : host_(test::built_plugins()) {}
  fs::path write(const std::string& text) {
    fs::path p = dir_ / "pipeline.yaml";
    std::ofstream(p) << kInputs << text;
    return p;
  }
  Pipeline load(const std::string& registration) { return load_pipeline(write(registration), {}, host_); }
  // The error text of loading `registration` (or of creating its stages' components).
  std::string error_of(const std::string& registration, bool create = false) {
    try {
      const Pipeline p = load(registration);
      if (create) {
        HostServices services(RP_LOG_ERROR, false);
        create_stage_components(p, host_, services);
      }
    } catch (const UserError& e) {
      std::string m = e.what();
      for (size_t at; (at = m.find(dir_.path().string() + "/")) != std::string::npos;)
        m.erase(at, dir_.path().string().size() + 1);
      return m;
    }
    return "no error";
  }
  bool has(int32_t kind, const char* id) const { return host_.find(kind, id) != nullptr; }

  static constexpr const char* kInputs =
      "inputs:\n"
      "  reference: ref.nii.gz\n"
      "  moving: mov.nii.gz\n"
      "outputs:\n"
      "  dir: out\n";  // lines 1-5: registration starts at line 6
  test::TempDir dir_;
  PluginHost host_;
};

}  // namespace

TEST_F(PipelineStagesTest, RigidThenAffineAreTwoStagesWithTheirOwnKeysAndTheSharedOnes) {
  const Pipeline p = load(
      "registration:\n"
      "  initialisation: geometric_centre\n"
      "  min_overlap: 0.3\n"
      "  stages:\n"
      "    - transform: rigid\n"
      "      levels_mm: [8, 4]\n"
      "      cost: {plugin: cpu.cr, params: {bins: 64}}\n"
      "    - {dof: 9, levels_mm: [2]}\n"
      "    - transform: affine\n");
  ASSERT_EQ(p.stages.size(), 3u);
  EXPECT_EQ(p.stages[0].transform, "rigid");
  EXPECT_EQ(p.stages[0].registration.dof, 6u);
  EXPECT_EQ(p.stages[0].registration.levels_mm, (std::vector<double>{8, 4}));
  EXPECT_EQ(p.stages[0].registration.cost.plugins, (std::vector<std::string>{"cpu.cr"}));
  EXPECT_EQ(p.stages[0].registration.cost.params.at("bins").value, "64");
  EXPECT_EQ(p.stages[1].transform, "dof");
  EXPECT_EQ(p.stages[1].registration.dof, 9u);
  EXPECT_EQ(p.stages[2].registration.dof, 12u);
  EXPECT_EQ(p.stages[2].registration.levels_mm, (std::vector<double>{8, 4, 2, 1}));
  EXPECT_EQ(p.stages[2].registration.cost.plugins, (std::vector<std::string>{"cuda.cr", "cpu.cr"}));
  EXPECT_EQ(p.stages[2].registration.optimizer.plugins, (std::vector<std::string>{"optim.powell"}));
  for (const PipelineStage& s : p.stages) {
    EXPECT_FALSE(s.deformable);
    EXPECT_EQ(s.registration.initialisation, "geometric_centre");
    EXPECT_EQ(s.registration.min_overlap, 0.3);
  }
  EXPECT_EQ(p.stages[1].label, "registration.stages[1] (dof)");
  // The section's own view is the first affine stage.
  EXPECT_EQ(p.registration.dof, 6u);
  // One stage alone: stage_pipeline hands register_images that stage as a one-stage pipeline.
  const Pipeline one = stage_pipeline(p, 1);
  EXPECT_TRUE(one.stages.empty());
  EXPECT_EQ(one.registration.dof, 9u);
  EXPECT_EQ(one.registration.levels_mm, (std::vector<double>{2}));
}

TEST_F(PipelineStagesTest, TheOneStageFormHasNoStages) {
  const Pipeline p = load("registration: {dof: 6}\n");
  EXPECT_TRUE(p.stages.empty());
  EXPECT_EQ(p.registration.dof, 6u);
}

TEST_F(PipelineStagesTest, ASynStageDefaultsToLocalCcAndOptimSyn) {
  if (!has(RP_KIND_OPTIMIZER, "optim.syn")) GTEST_SKIP() << "optim.syn is not built here";
  const Pipeline p = load("registration:\n  stages:\n    - transform: affine\n    - transform: syn\n");
  ASSERT_EQ(p.stages.size(), 2u);
  EXPECT_TRUE(p.stages[1].deformable);
  EXPECT_EQ(p.stages[1].registration.cost.plugins, (std::vector<std::string>{"cpu.lcc"}));
  EXPECT_EQ(p.stages[1].registration.optimizer.plugins, (std::vector<std::string>{"optim.syn"}));
}

TEST_F(PipelineStagesTest, StageMistakesNameTheStageAndTheKey) {
  EXPECT_EQ(error_of("registration:\n  dof: 6\n  stages: [{transform: rigid}]\n"),
            "pipeline.yaml:7:8: registration.dof is a stage's key when registration.stages is given: move "
            "it into each stage that needs it");
  EXPECT_EQ(error_of("registration:\n  stages: []\n"),
            "pipeline.yaml:7:11: registration.stages must be a non-empty list of stages, e.g. [{transform: "
            "rigid}, {transform: affine}, {transform: syn}]");
  EXPECT_EQ(error_of("registration:\n  stages:\n    - levels_mm: [4]\n"),
            "pipeline.yaml:8:7: registration.stages[0]: give its transform (rigid, affine or syn) or its dof");
  EXPECT_EQ(error_of("registration:\n  stages:\n    - {transform: rigid}\n    - {transform: similarity}\n"),
            "pipeline.yaml:9:19: registration.stages[1].transform=similarity is not one of rigid, affine, syn");
  EXPECT_EQ(error_of("registration:\n  stages:\n    - {transform: rigid, dof: 12}\n"),
            "pipeline.yaml:8:31: registration.stages[0].dof=12 contradicts its transform rigid (6 DOF): give "
            "one of them");
  EXPECT_EQ(error_of("registration:\n  stages:\n    - {transform: affine, dof: 5}\n"),
            "pipeline.yaml:8:32: registration.stages[0].dof=5 is not one of 3, 6, 7, 9, 12");
  EXPECT_EQ(error_of("registration:\n  stages:\n    - {transform: rigid, levels_mm: [2, 4]}\n"),
            "pipeline.yaml:8:37: registration.stages[0].levels_mm must go from coarse to fine");
  const std::string unknown = error_of("registration:\n  stages:\n    - {transform: rigid, levls_mm: [4]}\n");
  EXPECT_NE(unknown.find("pipeline.yaml:8:26: unknown key 'levls_mm' in registration.stages[0] (did you mean "
                         "'levels_mm'?)"),
            std::string::npos)
      << unknown;
  const std::string plugin =
      error_of("registration:\n  stages:\n    - {transform: rigid, cost: {plugin: cpu.crr}}\n");
  EXPECT_EQ(plugin.rfind("pipeline.yaml:8:41: unknown cost plugin 'cpu.crr'", 0), 0u) << plugin;
}

TEST_F(PipelineStagesTest, SynStageMistakes) {
  // The optimizer is named so that these hold whether optim.syn is built or not.
  EXPECT_EQ(error_of("registration:\n  stages:\n"
                     "    - {transform: syn, levels_mm: [4, 2], optimizer: {plugin: optim.powell}}\n"),
            "pipeline.yaml:8:35: registration.stages[0].levels_mm: a syn stage has no levels_mm: its schedule "
            "is its optimizer's params (optim.syn: iterations, shrink_factors, smoothing_sigmas)");
  EXPECT_EQ(error_of("registration:\n  stages:\n"
                     "    - {transform: syn, dof: 12, optimizer: {plugin: optim.powell}}\n"),
            "pipeline.yaml:8:29: registration.stages[0].dof: a syn stage has no dof (it is a displacement field)");
  EXPECT_EQ(error_of("registration:\n  stages:\n"
                     "    - {transform: syn, optimizer: {plugin: optim.powell}}\n"
                     "    - {transform: affine}\n"),
            "pipeline.yaml:9:7: registration.stages[1] (affine) comes after the syn stage "
            "registration.stages[0]: affine stages come first, their result starts the deformable one");
  EXPECT_EQ(error_of("registration:\n  stages:\n"
                     "    - {transform: syn, optimizer: {plugin: optim.powell}}\n"
                     "    - {transform: syn, optimizer: {plugin: optim.powell}}\n"),
            "pipeline.yaml:9:7: registration.stages[1]: a second syn stage (registration.stages[0] is one): one "
            "deformable stage, the last");
  // A syn stage first, with no affine stage before it, is allowed (identity start).
  EXPECT_EQ(error_of("registration:\n  stages:\n    - {transform: syn, optimizer: {plugin: optim.powell}}\n"),
            "no error");
  // ... but not with a start it would ignore.
  EXPECT_EQ(error_of("registration:\n  initialisation: moments\n  stages:\n"
                     "    - {transform: syn, optimizer: {plugin: optim.powell}}\n"),
            "pipeline.yaml:7:19: registration.initialisation: the first stage is syn, which starts from the "
            "identity (the headers): put an affine stage before it to start from this, or remove it");
}

TEST_F(PipelineStagesTest, SynStageComponentsNeedTheDenseAndDeformableExtensions) {
  // A cost without the dense extension: named, with those that have it.
  const std::string cost = error_of(
      "registration:\n  stages:\n"
      "    - transform: affine\n"
      "    - {transform: syn, cost: {plugin: cpu.cr}, optimizer: {plugin: optim.powell}}\n",
      true);
  EXPECT_EQ(cost.rfind("pipeline.yaml:9:39: registration.stages[1].cost: 'cpu.cr' offers no dense extension "
                       "(regpipe.dense_cost/1), which a syn stage needs; costs that offer it here: ",
                       0),
            0u)
      << cost;
  EXPECT_NE(cost.find("cpu.lcc"), std::string::npos) << cost;
  EXPECT_NE(cost.find("cpu.ls"), std::string::npos) << cost;
  EXPECT_EQ(cost.find("cpu.cr,"), std::string::npos) << cost;
  // An affine optimizer in a syn stage.
  const std::string optimizer = error_of(
      "registration:\n  stages:\n"
      "    - {transform: syn, cost: {plugin: cpu.lcc}, optimizer: {plugin: optim.powell}}\n", true);
  EXPECT_EQ(optimizer.rfind("pipeline.yaml:8:69: registration.stages[0].optimizer: 'optim.powell' is not a "
                            "deformable optimizer (no regpipe.deformable_optimizer/1), which a syn stage needs; "
                            "optimizers that are ",
                            0),
            0u)
      << optimizer;
  if (has(RP_KIND_OPTIMIZER, "optim.syn")) EXPECT_NE(optimizer.find("here: optim.syn"), std::string::npos) << optimizer;
}

TEST_F(PipelineStagesTest, ADeformableOnlyOptimizerIsRefusedInAnAffineStageWhileValidating) {
  if (!has(RP_KIND_OPTIMIZER, "optim.syn")) GTEST_SKIP() << "optim.syn is not built here";
  const std::string e = error_of("registration:\n  stages:\n"
                                 "    - {transform: affine, optimizer: {plugin: optim.syn}}\n");
  EXPECT_NE(e.find("registration.stages[0].dof=12 (the stage's transform) is not supported by optimizer "
                   "'optim.syn', which is a deformable optimizer, for a syn stage only"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("optimizers that support 12 DOF: "), std::string::npos) << e;
  EXPECT_EQ(e.find("optim.syn,"), std::string::npos) << e;
}

TEST_F(PipelineStagesTest, ABatchRunsTheOneStageFormOnly) {
  const fs::path yaml = dir_ / "batch.yaml";
  std::ofstream(yaml) << "inputs:\n  reference: ref.nii.gz\n  moving: [a.nii.gz, b.nii.gz]\noutputs: {dir: out}\n"
                         "registration:\n  stages: [{transform: rigid}]\n";
  try {
    load_pipeline(yaml, {}, host_);
    ADD_FAILURE() << "a batch with stages was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("registration.stages: a batch of 2 moving images runs the one-stage "
                                         "form only"),
              std::string::npos)
        << e.what();
  }
}

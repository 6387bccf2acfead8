// Pipeline YAML: validation before any work, with locations and suggestions.
#include <regpipe/host/error.hpp>
#include <regpipe/host/pipeline.hpp>

#include "support/test_support.hpp"

#include <fstream>

namespace fs = std::filesystem;
using namespace regpipe;

namespace {

class PipelineTest : public ::testing::Test {
 protected:
  PipelineTest() : host_(test::built_plugins()) {}
  fs::path write(const std::string& text) {
    fs::path p = dir_ / "pipeline.yaml";
    std::ofstream(p) << text;
    return p;
  }
  // The error text of loading `text`, or "no error".
  std::string error_of(const std::string& text, const std::vector<Override>& sets = {}) {
    try {
      load_pipeline(write(text), sets, host_);
    } catch (const UserError& e) {
      std::string m = e.what();
      // Locations start with the file path: make them comparable.
      for (size_t at; (at = m.find(dir_.path().string() + "/")) != std::string::npos;)
        m.erase(at, dir_.path().string().size() + 1);
      return m;
    }
    return "no error";
  }
  test::TempDir dir_;
  PluginHost host_;
};

constexpr const char* kMinimal =
    "inputs:\n"
    "  reference: ref.nii.gz\n"
    "  moving: images/mov.nii.gz\n"
    "outputs:\n"
    "  dir: out\n";

}  // namespace

TEST_F(PipelineTest, MinimalPipelineGetsDefaultsAndPathsRelativeToTheFile) {
  const Pipeline p = load_pipeline(write(kMinimal), {}, host_);
  EXPECT_EQ(p.inputs.reference.path, dir_ / "ref.nii.gz");
  EXPECT_EQ(p.inputs.moving.front().path, dir_ / "images/mov.nii.gz");
  EXPECT_EQ(p.outputs.dir, dir_ / "out");
  EXPECT_EQ(p.registration.dof, 12u);
  EXPECT_EQ(p.registration.levels_mm, (std::vector<double>{8, 4, 2, 1}));
  EXPECT_EQ(p.registration.cost.plugins, (std::vector<std::string>{"cuda.cr", "cpu.cr"}));
  EXPECT_EQ(p.registration.optimizer.plugins, (std::vector<std::string>{"optim.powell"}));
}

TEST_F(PipelineTest, UnknownKeyHasLineColumnAndSuggestion) {
  EXPECT_EQ(error_of("inputs:\n  referense: a.nii\n  moving: b.nii\noutputs: {dir: o}\n"),
            "pipeline.yaml:2:3: unknown key 'referense' in inputs (did you mean 'reference'?); "
            "allowed: reference, moving, reference_volume, moving_volume, reference_weight, "
            "moving_weight, non_finite\n"
            "pipeline.yaml:2:3: missing key 'inputs.reference'");
}

TEST_F(PipelineTest, DuplicateKeyIsAnError) {
  EXPECT_EQ(error_of(std::string(kMinimal) + "registration:\n  dof: 6\n  dof: 7\n"),
            "pipeline.yaml:8:3: duplicate key 'dof' (first at line 7)");
}

TEST_F(PipelineTest, WrongTypesAndRangesAreErrors) {
  EXPECT_EQ(error_of(std::string(kMinimal) + "registration: {dof: twelve}\n"),
            "pipeline.yaml:6:21: registration.dof=twelve is not an integer");
  EXPECT_EQ(error_of(std::string(kMinimal) + "registration: {dof: 5}\n"),
            "pipeline.yaml:6:21: registration.dof=5 is not one of 3, 6, 7, 9, 12");
  EXPECT_EQ(error_of(std::string(kMinimal) + "registration: {levels_mm: [2, 4]}\n"),
            "pipeline.yaml:6:27: registration.levels_mm must go from coarse to fine");
}

TEST_F(PipelineTest, PluginParametersAreCheckedAgainstTheSchema) {
  EXPECT_EQ(error_of(std::string(kMinimal) +
                     "registration:\n  cost:\n    plugin: cpu.cr\n    params: {bins: 1}\n"),
            "pipeline.yaml:9:20: bins=1 is below the minimum 2 (cpu.cr)");
  const std::string e = error_of(std::string(kMinimal) +
                                 "registration:\n  cost:\n    plugin: cpu.cr\n    params: {binz: 64}\n");
  EXPECT_EQ(e.rfind("pipeline.yaml:9:20: unknown parameter 'binz' of cost 'cpu.cr' (did you mean 'bins'?)", 0), 0u) << e;
}

TEST_F(PipelineTest, UnknownPluginListsTheAvailableOnes) {
  const std::string e = error_of(std::string(kMinimal) + "registration:\n  optimizer: {plugin: optim.powel}\n");
  EXPECT_EQ(e.rfind("pipeline.yaml:7:23: unknown optimizer plugin 'optim.powel' (did you mean 'optim.powell'?); available: ", 0), 0u) << e;
}

TEST_F(PipelineTest, CommandLineOverridesReplaceValuesAndResolveFromTheCurrentFolder) {
  const Pipeline p = load_pipeline(
      write(kMinimal),
      {parse_override("inputs.moving=b.nii.gz"), parse_override("registration.levels_mm=[4, 2]"),
       parse_override("registration.cost.params.bins=32")},
      host_);
  EXPECT_EQ(p.inputs.moving.front().path, fs::current_path() / "b.nii.gz");
  EXPECT_EQ(p.registration.levels_mm, (std::vector<double>{4, 2}));
  EXPECT_EQ(p.registration.cost.params.at("bins").value, "32");
  EXPECT_EQ(error_of(kMinimal, {parse_override("registration.dof=8")}),
            "--set registration.dof: registration.dof=8 is not one of 3, 6, 7, 9, 12");
}

TEST_F(PipelineTest, SyntaxErrorsAndMissingFilesAreReported) {
  EXPECT_EQ(error_of("inputs: [a, b\n"), "pipeline.yaml:2:1: YAML syntax error: end of sequence flow not found");
  EXPECT_THROW(load_pipeline(dir_ / "missing.yaml", {}, host_), UserError);
  EXPECT_THROW(parse_override("no-equals-sign"), UserError);
}

TEST_F(PipelineTest, QaOrientationIsRadiologicalUnlessNeurologicalIsAsked) {
  EXPECT_EQ(load_pipeline(write(kMinimal), {}, host_).outputs.qa_orientation, "radiological");
  EXPECT_EQ(load_pipeline(write(kMinimal), {parse_override("outputs.qa_orientation=neurological")}, host_)
                .outputs.qa_orientation,
            "neurological");
  EXPECT_EQ(error_of(std::string(kMinimal) + "  qa_orientation: neurologic\n"),
            "pipeline.yaml:6:19: outputs.qa_orientation=neurologic is not one of radiological, "
            "neurological (did you mean 'neurological'?)");
}

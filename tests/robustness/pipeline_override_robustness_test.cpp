// --set overrides on pipeline files of any shape: a refusal naming the key, never a read past
// the key's segments (the pipeline fuzzer found one on a file whose top level is a scalar).
#include <regpipe/host/error.hpp>
#include <regpipe/host/pipeline.hpp>

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <fstream>

using regpipe::test::message_of;

namespace {

std::string refusal_of(const std::string& pipeline_text, const std::string& set) {
  regpipe::test::TempDir dir;
  std::ofstream(dir / "pipeline.yaml") << pipeline_text;
  const regpipe::PluginHost plugins(regpipe::test::built_plugins());
  return message_of([&] {
    regpipe::load_pipeline(dir / "pipeline.yaml", {regpipe::parse_override(set)}, plugins);
  });
}

TEST(PipelineOverrideRobustness, ASetIntoAPipelineWhoseTopLevelIsAScalarNamesTheKey) {
  EXPECT_EQ(refusal_of("itk\n", "outputs.dir=o"),
            "--set outputs.dir: the pipeline's top level is not a map");
}

TEST(PipelineOverrideRobustness, ASetIntoAPipelineWhoseTopLevelIsAListNamesTheKey) {
  EXPECT_EQ(refusal_of("[1, 2]\n", "inputs=x"), "--set inputs: the pipeline's top level is not a map");
}

TEST(PipelineOverrideRobustness, ASetThroughAScalarNamesTheSegment) {
  EXPECT_EQ(refusal_of("outputs: 3\n", "outputs.dir=o"), "--set outputs.dir: 'outputs' in the pipeline is not a map");
}

}  // namespace

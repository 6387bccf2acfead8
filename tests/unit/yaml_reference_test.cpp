// docs/yaml-reference.md documents exactly the keys the loader accepts.
#include <regpipe/host/pipeline.hpp>

#include "support/test_support.hpp"

#include <fstream>
#include <regex>

using namespace regpipe;

TEST(YamlReference, DocumentsEveryKeyWithItsTypeAndDefault) {
  std::ifstream doc(test::source_dir() / "docs" / "yaml-reference.md");
  ASSERT_TRUE(doc) << "docs/yaml-reference.md is missing";
  // Rows look like: | `inputs.reference` | path | (required) | Reference image ... |
  const std::regex row(R"(^\| `([a-z_.]+)` \| (.*?) \| (.*?) \| .*\|$)");
  std::vector<PipelineKeyDoc> documented;
  for (std::string line; std::getline(doc, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) documented.push_back({m[1], m[2], m[3], ""});
  }
  const auto& schema = pipeline_schema();
  ASSERT_EQ(documented.size(), schema.size()) << "keys documented vs keys in the schema";
  for (size_t i = 0; i < schema.size(); ++i) {
    EXPECT_EQ(documented[i].key, schema[i].key);
    EXPECT_EQ(documented[i].type, schema[i].type) << schema[i].key;
    EXPECT_EQ(documented[i].default_value, "`" + schema[i].default_value + "`") << schema[i].key;
  }
}

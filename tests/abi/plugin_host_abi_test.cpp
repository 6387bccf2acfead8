// The host's side of the ABI contract: version checks, grown structs, malformed plugins.
#include <regpipe/host/components.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/plugin_host.hpp>

#include "support/test_support.hpp"

#include <fstream>

namespace fs = std::filesystem;
using namespace regpipe;

namespace {

fs::path fake_dir(const std::string& variant) {
  return (test::bin_dir() / ".." / "test_plugins" / variant).lexically_normal();
}

PluginSearchOptions only(const std::vector<fs::path>& paths) {
  PluginSearchOptions o;
  o.plugin_paths = paths;
  o.use_environment = false;
  o.use_default_dirs = false;
  return o;
}

}  // namespace

TEST(PluginHost, LoadsCurrentAbiPluginWrittenInC) {
  PluginHost host(only({fake_dir("current")}));
  ASSERT_TRUE(host.problems().empty()) << host.problems().front().reason;
  const Component& c = host.require(RP_KIND_COST, "test.fake_cost");
  EXPECT_EQ(c.version, "1.2.3");
  EXPECT_EQ(c.library_name, "fake_plugin");
  ASSERT_EQ(c.params.size(), 1u);
  EXPECT_EQ(c.params[0].name, "offset");
}

TEST(PluginHost, RefusesAnotherMajorAbiWithClearMessage) {
  PluginHost host(only({fake_dir("major2")}));
  EXPECT_TRUE(host.components().empty());
  ASSERT_EQ(host.problems().size(), 1u);
  EXPECT_NE(host.problems()[0].file.string().find("libfake_major2.so"), std::string::npos);
  EXPECT_EQ(host.problems()[0].reason, "built for regpipe ABI 2.x; this regpipe speaks 1.x");
}

// A plugin built against a later minor hands out larger structs with members this host
// does not know; the host reads only what it knows and the plugin works.
TEST(PluginHost, AcceptsNewerMinorWithGrownStructs) {
  PluginHost host(only({fake_dir("newer_minor")}));
  ASSERT_TRUE(host.problems().empty()) << host.problems().front().reason;
  const Component& c = host.require(RP_KIND_COST, "test.fake_cost");
  EXPECT_EQ(c.abi_minor, 7u);
  HostServices services;
  CostInstance cost(c, services, resolve_params(c, {{"offset", "0.5"}}));
  Image img;
  img.dims = {2, 2, 2};
  img.data.assign(8, 1.0f);
  cost.set_reference(img, nullptr);
  cost.set_moving(img, nullptr);
  double m[16] = {1, 0, 0, 3, 0, 1, 0, 4, 0, 0, 1, 0, 0, 0, 0, 1};
  double value = 0.0;
  cost.evaluate(m, 1, &value);
  EXPECT_DOUBLE_EQ(value, 25.5);
}

// A plugin built against ABI 1.0 (its structs exactly the 1.0 sizes) keeps loading in a
// newer-minor host.
TEST(PluginHost, AcceptsMinorZeroPlugin) {
  PluginHost host(only({fake_dir("minor0")}));
  EXPECT_EQ(host.require(RP_KIND_COST, "test.fake_cost").abi_minor, 0u);
}

TEST(PluginHost, ReportsMalformedIdAndSkipsLibrary) {
  PluginHost host(only({fake_dir("bad_id")}));
  EXPECT_TRUE(host.components().empty());
  ASSERT_EQ(host.problems().size(), 1u);
  EXPECT_NE(host.problems()[0].reason.find("'Bad Id' is not lowercase dotted"), std::string::npos);
}

TEST(PluginHost, ReportsLibraryWithoutEntrySymbol) {
  PluginHost host(only({fake_dir("no_entry")}));
  ASSERT_EQ(host.problems().size(), 1u);
  EXPECT_NE(host.problems()[0].reason.find("no regpipe_plugin_entry symbol"), std::string::npos);
}

TEST(PluginHost, ReportsGarbageFileAndKeepsGoodOnes) {
  test::TempDir dir;
  std::ofstream(dir / "libbroken.so") << "this is not an ELF file";
  PluginHost host(only({dir.path(), fake_dir("current")}));
  EXPECT_NE(host.find(RP_KIND_COST, "test.fake_cost"), nullptr);
  ASSERT_EQ(host.problems().size(), 1u);
  EXPECT_EQ(host.problems()[0].file.filename(), "libbroken.so");
  EXPECT_NE(host.problems()[0].reason.find("cannot load"), std::string::npos);
}

TEST(PluginHost, LoadsEachLibraryOnceAndRefusesDuplicateIds) {
  // The same folder twice: one load. Two libraries with the same id: the second is reported.
  PluginHost host(only({fake_dir("current"), fake_dir("current"), fake_dir("newer_minor")}));
  EXPECT_EQ(host.components().size(), 1u);
  ASSERT_EQ(host.problems().size(), 1u);
  EXPECT_NE(host.problems()[0].reason.find("already provided by"), std::string::npos);
}

TEST(PluginHost, UnknownIdListsAvailableAndSuggests) {
  PluginHost host(only({fake_dir("current")}));
  try {
    host.require(RP_KIND_COST, "test.fake_cots");
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown cost plugin 'test.fake_cots' (did you mean 'test.fake_cost'?); "
                 "available: test.fake_cost");
  }
}

TEST(PluginHost, SearchPathFromEnvironment) {
  ::setenv("REGPIPE_PLUGIN_PATH", ("/nonexistent:" + fake_dir("current").string()).c_str(), 1);
  PluginSearchOptions o;
  o.use_default_dirs = false;
  PluginHost host(o);
  ::unsetenv("REGPIPE_PLUGIN_PATH");
  EXPECT_NE(host.find(RP_KIND_COST, "test.fake_cost"), nullptr);
  ASSERT_EQ(host.search_path().size(), 2u);
  EXPECT_EQ(host.search_path()[0], "/nonexistent");
}

TEST(PluginHost, NeverSearchesTheCurrentDirectory) {
  const fs::path before = fs::current_path();
  fs::current_path(fake_dir("current"));
  PluginSearchOptions o;
  o.use_environment = false;
  PluginHost host(o);  // default dirs only: the build tree's plugins, not the cwd
  fs::current_path(before);
  EXPECT_EQ(host.find(RP_KIND_COST, "test.fake_cost"), nullptr);
}

TEST(ComponentParams, CreateErrorCarriesPluginMessage) {
  PluginHost host(only({fake_dir("current")}));
  const Component& c = host.require(RP_KIND_COST, "test.fake_cost");
  HostServices services;
  // Bypass host validation to see the plugin's own re-check reach the caller.
  std::map<std::string, ParamValue> params = resolve_params(c, {});
  params["offset"].double_value = -1.0;
  try {
    CostInstance cost(c, services, params);
    FAIL() << "expected ComponentError";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_INVALID_ARGUMENT);
    EXPECT_STREQ(e.what(), "cost 'test.fake_cost': offset is negative");
  }
}

TEST(ComponentParams, ValidatesTypesRangesAndNames) {
  PluginHost host(only({fake_dir("current")}));
  const Component& c = host.require(RP_KIND_COST, "test.fake_cost");
  EXPECT_DOUBLE_EQ(resolve_params(c, {{"offset", "2.5"}}).at("offset").double_value, 2.5);
  auto message = [&](const std::map<std::string, std::string>& texts) {
    try {
      resolve_params(c, texts);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({{"offset", "abc"}}), "offset=abc is not a number");
  EXPECT_EQ(message({{"offset", "101"}}), "offset=101 is above the maximum 100");
  EXPECT_EQ(message({{"ofset", "1"}}),
            "unknown parameter 'ofset' of cost 'test.fake_cost' (did you mean 'offset'?); it takes: offset");
}

// The host's side of the ABI contract: version checks, grown structs, malformed plugins.
#include <regpipe/host/components.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/pipeline.hpp>
#include <regpipe/host/plugin_host.hpp>

#include "support/test_support.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <fstream>

// ABI 1.1's optimizer vtable ended at get_extension; 1.2 appends supported_dof right after it,
// so that a 1.1 vtable's size ends exactly before the new member.
static_assert(offsetof(rp_optimizer_vtable, supported_dof) ==
              offsetof(rp_optimizer_vtable, get_extension) + sizeof(void (*)(void)));

namespace fs = std::filesystem;
using namespace regpipe;

namespace {

fs::path fake_dir(const std::string& variant) {
  return (test::bin_dir() / ".." / "test_plugins" / variant).lexically_normal();
}

}  // namespace

TEST(PluginHost, LoadsCurrentAbiPluginWrittenInC) {
  PluginHost host(test::plugins_in({fake_dir("current")}));
  ASSERT_TRUE(host.problems().empty()) << host.problems().front().reason;
  const Component& c = host.require(RP_KIND_COST, "test.fake_cost");
  EXPECT_EQ(c.version, "1.2.3");
  EXPECT_EQ(c.library_name, "fake_plugin");
  ASSERT_EQ(c.params.size(), 1u);
  EXPECT_EQ(c.params[0].name, "offset");
}

TEST(PluginHost, RefusesAnotherMajorAbiWithClearMessage) {
  PluginHost host(test::plugins_in({fake_dir("major2")}));
  EXPECT_TRUE(host.components().empty());
  ASSERT_EQ(host.problems().size(), 1u);
  EXPECT_NE(host.problems()[0].file.string().find("libfake_major2.so"), std::string::npos);
  EXPECT_EQ(host.problems()[0].reason, "built for regpipe ABI 2.x; this regpipe speaks 1.x");
}

// A plugin built against a later minor hands out larger structs with members this host
// does not know; the host reads only what it knows and the plugin works.
TEST(PluginHost, AcceptsNewerMinorWithGrownStructs) {
  PluginHost host(test::plugins_in({fake_dir("newer_minor")}));
  ASSERT_TRUE(host.problems().empty()) << host.problems().front().reason;
  const Component& c = host.require(RP_KIND_COST, "test.fake_cost");
  EXPECT_EQ(c.abi_minor, 8u);
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
  PluginHost host(test::plugins_in({fake_dir("minor0")}));
  EXPECT_EQ(host.require(RP_KIND_COST, "test.fake_cost").abi_minor, 0u);
}

TEST(PluginHost, ReportsMalformedIdAndSkipsLibrary) {
  PluginHost host(test::plugins_in({fake_dir("bad_id")}));
  EXPECT_TRUE(host.components().empty());
  ASSERT_EQ(host.problems().size(), 1u);
  EXPECT_NE(host.problems()[0].reason.find("'Bad Id' is not lowercase dotted"), std::string::npos);
}

TEST(PluginHost, ReportsLibraryWithoutEntrySymbol) {
  PluginHost host(test::plugins_in({fake_dir("no_entry")}));
  ASSERT_EQ(host.problems().size(), 1u);
  EXPECT_NE(host.problems()[0].reason.find("no regpipe_plugin_entry symbol"), std::string::npos);
}

TEST(PluginHost, ReportsGarbageFileAndKeepsGoodOnes) {
  test::TempDir dir;
  std::ofstream(dir / "libbroken.so") << "this is not an ELF file";
  PluginHost host(test::plugins_in({dir.path(), fake_dir("current")}));
  EXPECT_NE(host.find(RP_KIND_COST, "test.fake_cost"), nullptr);
  ASSERT_EQ(host.problems().size(), 1u);
  EXPECT_EQ(host.problems()[0].file.filename(), "libbroken.so");
  EXPECT_NE(host.problems()[0].reason.find("cannot load"), std::string::npos);
}

TEST(PluginHost, LoadsEachLibraryOnceAndRefusesDuplicateIds) {
  // The same folder twice: one load. Two libraries with the same id: the second is reported.
  PluginHost host(test::plugins_in({fake_dir("current"), fake_dir("current"), fake_dir("newer_minor")}));
  EXPECT_EQ(host.components().size(), 1u);
  ASSERT_EQ(host.problems().size(), 1u);
  EXPECT_NE(host.problems()[0].reason.find("already provided by"), std::string::npos);
}

TEST(PluginHost, UnknownIdListsAvailableAndSuggests) {
  PluginHost host(test::plugins_in({fake_dir("current")}));
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
  PluginHost host(test::plugins_in({fake_dir("current")}));
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
  PluginHost host(test::plugins_in({fake_dir("current")}));
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

// ABI 1.2's rp_optimizer_vtable.supported_dof. A 1.1 optimizer's vtable ends before it: the
// host reads nothing past `size` (the fixture leaves RP_DOF_6 there) and treats the
// optimizer as accepting any DOF.
TEST(OptimizerDof, MinorOnePluginWithoutTheMemberAcceptsAnyDof) {
  PluginHost host(test::plugins_in({fake_dir("optimizer_minor1")}));
  ASSERT_TRUE(host.problems().empty()) << host.problems().front().reason;
  const Component& c = host.require(RP_KIND_OPTIMIZER, "test.fake_optimizer");
  EXPECT_EQ(c.abi_minor, 1u);
  EXPECT_EQ(c.supported_dof, RP_DOF_ANY);
  for (unsigned dof : {3u, 6u, 7u, 9u, 12u}) EXPECT_TRUE(c.supports_dof(dof)) << dof;
  EXPECT_EQ(dof_list(c.supported_dof), "any");
}

TEST(OptimizerDof, ReadsTheDeclaredSet) {
  PluginHost host(test::plugins_in({fake_dir("optimizer_dof")}));
  const Component& c = host.require(RP_KIND_OPTIMIZER, "test.fake_optimizer");
  EXPECT_EQ(c.supported_dof, RP_DOF_6 | RP_DOF_12);
  EXPECT_TRUE(c.supports_dof(6));
  EXPECT_FALSE(c.supports_dof(3));
  EXPECT_FALSE(c.supports_dof(7));
  EXPECT_EQ(dof_list(c.supported_dof), "6 or 12");
}

namespace {

// A pipeline with the fake optimizer and the built-in CPU plugins; the images need not exist
// (nothing here reads them).
class PipelineDof : public ::testing::Test {
 protected:
  Pipeline load(const std::string& variant, unsigned dof) {
    host_ = std::make_unique<PluginHost>(test::plugins_in({fake_dir(variant), test::plugin_dir()}));
    std::ofstream(dir_ / "pipeline.yaml")
        << "inputs: {reference: ref.nii.gz, moving: mov.nii.gz}\n"
           "registration:\n"
           "  dof: " << dof << "\n"
           "  cost: {plugin: cpu.cr}\n"
           "  optimizer: {plugin: test.fake_optimizer}\n"
           "  resampler: {plugin: resample.cpu}\n"
           "outputs: {dir: out}\n";
    return load_pipeline(dir_ / "pipeline.yaml", {}, *host_);
  }
  test::TempDir dir_;
  std::unique_ptr<PluginHost> host_;
  HostServices services_;
};

}  // namespace

TEST_F(PipelineDof, MinorOneOptimizerIsGivenAnyDof) {
  const Pipeline p = load("optimizer_minor1", 3);
  RegistrationComponents c = create_registration_components(p, *host_, services_);
  EXPECT_EQ(c.optimizer->component().id, "test.fake_optimizer");
}

TEST_F(PipelineDof, DeclaredSetRefusesOtherDofWhileValidating) {
  EXPECT_EQ(test::message_of([&] { load("optimizer_dof", 3); }),
            (dir_ / "pipeline.yaml").string() +
                ":3:8: registration.dof=3 is not supported by optimizer 'test.fake_optimizer', "
                "which supports DOF 6 or 12; optimizers that support 3 DOF: optim.powell");
  EXPECT_NO_THROW(load("optimizer_dof", 12));
}

// A Pipeline that bypassed validation still fails before any image is read: the driver
// checks the DOF when it creates the optimizer.
TEST_F(PipelineDof, DriverRefusesTheOptimizerBeforeCreatingIt) {
  Pipeline p = load("optimizer_dof", 6);
  p.registration.dof = 9;
  EXPECT_EQ(test::message_of([&] { create_registration_components(p, *host_, services_); }),
            "no usable optimizer plugin among test.fake_optimizer:\n"
            "  test.fake_optimizer: supports DOF 6 or 12, not registration.dof=9");
}

// End to end: `regpipe run` hands a 1.1 optimizer the pipeline's 3 DOF.
TEST(OptimizerDofCli, MinorOneOptimizerRunsWithThreeDof) {
  test::TempDir dir;
  std::string out;
  const std::string cli = test::regpipe_cli().string();
  ASSERT_EQ(test::run_command(cli + " phantom '" + (dir / "demo").string() + "' --size 24 --voxel-mm 4", &out), 0)
      << out;
  ASSERT_EQ(test::run_command(cli + " run '" + (dir / "demo" / "pipeline.yaml").string() +
                                  "' --quiet --plugin-path '" + fake_dir("optimizer_minor1").string() +
                                  "' --set registration.cost.plugin=cpu.cr --set registration.dof=3 "
                                  "--set registration.optimizer.plugin=test.fake_optimizer",
                              &out),
            0)
      << out;
  const auto report = nlohmann::json::parse(std::ifstream(dir / "demo" / "result" / "report.json"));
  EXPECT_EQ(report["components"]["optimizer"]["id"], "test.fake_optimizer");
  EXPECT_EQ(report["registration"]["dof"], 3);
}

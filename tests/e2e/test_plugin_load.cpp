// End-to-end: a plugin library that cannot load is one clear error (exit status 2, naming the
// library) before any case runs, for `crucible run` and `crucible ops`; the library is loaded
// only in a short-lived probe process, so a constructor that crashes, hangs, reaches for the
// network or forges the probe's answer cannot take crucible down or lie about its kernels.
// The libraries are tests/fixtures/plugins/*.c, built by cmake/kernel_abi.cmake.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"
#include "sandbox/remove_tree.h"

namespace crucible::e2e {
namespace {

namespace fs = std::filesystem;

std::string plugin_path(const std::string& name) {
  return std::string(CRUCIBLE_TEST_PLUGIN_DIR) + "/lib" + name + ".so";
}

struct Refusal {
  std::string library;  // the path given to --backend plugin:
  std::string why;      // a fragment the message must hold
};

// `crucible run` and `crucible ops` both refuse `r` with exit status 2, name the library, say
// why, and no case runs.
void expect_refused(const Refusal& r, const std::string& env = "") {
  SCOPED_TRACE(r.library);
  const std::string out = temp_dir("plugin-load");
  Output o =
      crucible_env(env, "run --suite smoke --ops relu.default --workers 1 -q --backend plugin:" +
                            shell_quote(r.library) + " --out " + shell_quote(out));
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find(r.library), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(r.why), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("internal error"), std::string::npos) << o.out;
  const std::string results = out + "/results.jsonl";
  EXPECT_TRUE(!fs::exists(results) || fs::file_size(results) == 0) << read_text(results);

  o = crucible_env(env, "ops --backend plugin:" + shell_quote(r.library));
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find(r.library), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(r.why), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("supported by"), std::string::npos) << o.out;
  crucible::remove_tree(std::filesystem::path(out).string());
}

TEST(PluginLoadE2e, ANonLibraryIsRefusedBeforeAnyCase) {
  expect_refused({std::string(CRUCIBLE_SOURCE_DIR) + "/tests/fixtures/plugins/not_a_library.txt",
                  "cannot load the kernel library"});
}

TEST(PluginLoadE2e, NoEntryPointIsRefused) {
  expect_refused({plugin_path("no_entry"), "does not export crucible_plugin_v1()"});
}

TEST(PluginLoadE2e, AnotherAbiVersionIsRefused) {
  expect_refused({plugin_path("wrong_version"), "built for crucible kernel ABI version 999"});
}

TEST(PluginLoadE2e, ATooSmallDescriptionIsRefused) {
  expect_refused({plugin_path("load_small_struct"), "struct_size is 8, smaller than the"});
}

TEST(PluginLoadE2e, AKernelCountPastTheArrayOrAbsurdIsRefused) {
  expect_refused({plugin_path("load_past_array"), "kernel entry 1"});
  expect_refused({plugin_path("load_absurd_count"), "num_kernels is 1099511627776"});
}

TEST(PluginLoadE2e, AnOpOutsideTheCatalogIsRefused) {
  expect_refused(
      {plugin_path("load_not_catalog"), "'aten.no_such_op.default', which is not an op"});
}

TEST(PluginLoadE2e, AConstructorThatCrashesIsRefused) {
  expect_refused({plugin_path("load_ctor_segv"), "it crashed while being loaded (SIGSEGV"});
}

TEST(PluginLoadE2e, AConstructorThatHangsIsStopped) {
  expect_refused({plugin_path("load_ctor_hang"), "loading it did not finish in 1 s"},
                 "CRUCIBLE_PLUGIN_LOAD_TIMEOUT=1");
}

TEST(PluginLoadE2e, AConstructorThatReachesForTheNetworkIsStoppedByTheSandbox) {
  expect_refused(
      {plugin_path("load_ctor_socket"), "the sandbox stopped it while it was being loaded"});
}

TEST(PluginLoadE2e, AForgedProbeAnswerIsNotBelieved) {
  expect_refused({plugin_path("load_ctor_forge"), "answered with malformed data"});
}

TEST(PluginLoadE2e, AGoodPluginListsItsKernelsWithoutLoadingInTheParent) {
  // The marker plugin's constructor appends to $CRUCIBLE_TEST_LOAD_MARKER wherever it can write:
  // loaded here, in the test process, it does.
  const std::string dir = temp_dir("plugin-load-marker");
  const std::string marker = dir + "/loaded.txt";
  setenv("CRUCIBLE_TEST_LOAD_MARKER", marker.c_str(), 1);
  void* h = dlopen(plugin_path("load_ctor_marker").c_str(), RTLD_NOW | RTLD_LOCAL);
  unsetenv("CRUCIBLE_TEST_LOAD_MARKER");
  ASSERT_NE(h, nullptr) << dlerror();
  EXPECT_EQ(read_text(marker), "loaded\n");
  fs::remove(marker);
  // `crucible ops` lists its kernel from the probe's answer; the probe, sandboxed, could not
  // write the marker, and nothing else loaded the library.
  Output o = crucible_env("CRUCIBLE_TEST_LOAD_MARKER=" + shell_quote(marker),
                          "ops --backend plugin:" + shell_quote(plugin_path("load_ctor_marker")));
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("; 1 supported by plugin:"), std::string::npos) << o.out;
  EXPECT_FALSE(fs::exists(marker)) << read_text(marker);

  o = crucible("ops --backend plugin:" + shell_quote(plugin_path("c_relu")));
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("; 1 supported by plugin:"), std::string::npos) << o.out;
  const std::string out = dir + "/run";
  o = crucible(
      "run --suite smoke --ops relu.default --dtypes f32 --workers 1 -q --backend plugin:" +
      shell_quote(plugin_path("c_relu")) + " --out " + shell_quote(out));
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_FALSE(read_jsonl(out + "/results.jsonl").empty());
  // The manifest has what the library says of itself.
  EXPECT_NE(read_text(out + "/manifest.json").find("c-relu 1.0 (libc_relu.so)"), std::string::npos)
      << read_text(out + "/manifest.json");
  crucible::remove_tree(std::filesystem::path(dir).string());
}

TEST(PluginLoadE2e, AnInvalidTimeoutIsAUsageError) {
  Output o = crucible_env("CRUCIBLE_PLUGIN_LOAD_TIMEOUT=soon",
                          "ops --backend plugin:" + shell_quote(plugin_path("c_relu")));
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("CRUCIBLE_PLUGIN_LOAD_TIMEOUT='soon' is not a number"), std::string::npos)
      << o.out;
}

}  // namespace
}  // namespace crucible::e2e

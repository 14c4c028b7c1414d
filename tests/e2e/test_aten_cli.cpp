// `crucible` with the aten backend: as candidate, as reference (--reference aten) and as baseline
// (--baseline aten --perf, speed-ups in summary.json and operator_summary.csv), its version in the
// manifest; libtorch loaded only when a run names aten, from the right library. Without libtorch:
// `--backend aten` says the build has no ATen and how to get it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

#ifdef CRUCIBLE_HAVE_ATEN

TEST(E2EAten, CandidateRecordsItsVersionInTheManifest) {
  std::string out = temp_dir("aten-cand");
  Output o = crucible(
      "run --suite smoke --backend aten --ops relu,add.Tensor --dtypes f32 "
      "--threads 1 --quiet --out " +
      out);
  ASSERT_EQ(o.status, 0) << o.out;
  nlohmann::json m = read_json(out + "/manifest.json");
  bool found = false;
  for (const auto& b : m["backends"]) {
    if (b["role"] == "candidate") {
      found = true;
      EXPECT_EQ(b["name"], "aten");
      EXPECT_EQ(b["version"].get<std::string>().rfind("libtorch ", 0), 0u) << b.dump();
      EXPECT_EQ(b["device"], "cpu");
    }
  }
  EXPECT_TRUE(found) << m.dump(2);
}

TEST(E2EAten, AtenAsTheReference) {
  std::string out = temp_dir("aten-ref");
  Output o = crucible(
      "run --suite smoke --backend ref --reference aten --ops relu,mul.Tensor "
      "--dtypes f32,f64 --threads 1 --quiet --out " +
      out);
  ASSERT_EQ(o.status, 0) << o.out;
  nlohmann::json s = read_json(out + "/summary.json");
  EXPECT_EQ(s["reference"], "aten");
  EXPECT_GT(s["cases_passed"].get<int>(), 0);
  EXPECT_EQ(s["cases_passed"], s["cases_total"]);
}

TEST(E2EAten, AtenAsTheBaselineGivesSpeedups) {
  std::string out = temp_dir("aten-base");
  Output o = crucible(
      "run --suite smoke --backend ref --baseline aten --perf --ops relu,add.Tensor --dtypes f32 "
      "--threads 1 --out " +
      out);
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("aten"), std::string::npos) << o.out;
  nlohmann::json s = read_json(out + "/summary.json");
  EXPECT_EQ(s["baseline"], "aten");
  ASSERT_TRUE(s["perf_score"].is_number()) << s.dump(2);
  EXPECT_GT(s["perf_score"].get<double>(), 0.0);
  ASSERT_TRUE(s["ops"]["aten.relu.default"].contains("speedup")) << s.dump(2);
  EXPECT_GT(s["ops"]["aten.relu.default"]["speedup"].get<double>(), 0.0);
  std::string csv = read_text(out + "/operator_summary.csv");
  ASSERT_NE(csv.find("speedup"), std::string::npos) << csv;
  EXPECT_NE(csv.find("aten.relu.default"), std::string::npos) << csv;
  int timed = 0;
  for (const auto& l : read_jsonl(out + "/results.jsonl"))
    if (l["record"] == "timing" && l["baseline"]["median_s"].get<double>() > 0) ++timed;
  EXPECT_GT(timed, 0);
}

// libtorch is in the process only once something names aten: a run on another backend, and
// `crucible --version`, never load it (docs/aten-backend.md, "Loading").
TEST(E2EAten, LibtorchLoadsOnlyWhenSomethingNamesAten) {
  const auto loads_libtorch = [](const std::string& args) {
    // LD_DEBUG=files: the dynamic loader names every library it loads, dlopen()ed ones included.
    Output o = crucible_env("LD_DEBUG=files", args);
    EXPECT_EQ(o.status, 0) << args << "\n" << o.out.substr(0, 2000);
    return o.out.find("libtorch_cpu.so") != std::string::npos;
  };
  EXPECT_FALSE(loads_libtorch("--version"));
  EXPECT_FALSE(
      loads_libtorch("run --suite smoke --backend ref --ops relu --dtypes f32 --quiet "
                     "--out " +
                     temp_dir("aten-not-loaded")));
  EXPECT_TRUE(
      loads_libtorch("run --suite smoke --backend ref --reference aten --ops relu "
                     "--dtypes f32 --quiet --out " +
                     temp_dir("aten-loaded")));
  EXPECT_TRUE(loads_libtorch("backends"));
  Output b = crucible("backends");
  EXPECT_NE(b.out.find("ready: libtorch "), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("libcrucible_aten.so"), std::string::npos) << b.out;
}

// The backend's library is missing, is not crucible's, or comes from another build: each is a
// usage error that names the library and the fix, and nothing in a wrong library runs.
TEST(E2EAten, ALibraryThatIsMissingNotCruciblesOrOfAnotherBuildIsRefusedByName) {
  const std::string run = "run --suite smoke --backend aten --ops relu --quiet --out ";
  Output missing = crucible_env("CRUCIBLE_ATEN_LIBRARY=/nonexistent/libcrucible_aten.so",
                                run + temp_dir("aten-missing"));
  EXPECT_EQ(missing.status, 2) << missing.out;
  EXPECT_NE(missing.out.find("/nonexistent/libcrucible_aten.so"), std::string::npos) << missing.out;
  EXPECT_NE(missing.out.find("CRUCIBLE_ATEN_LIBRARY names"), std::string::npos) << missing.out;

  const std::string other_lib = std::string(CRUCIBLE_TEST_PLUGIN_DIR) + "/libexamples.so";
  ASSERT_TRUE(std::filesystem::exists(other_lib)) << other_lib;
  Output foreign =
      crucible_env("CRUCIBLE_ATEN_LIBRARY=" + other_lib, run + temp_dir("aten-foreign"));
  EXPECT_EQ(foreign.status, 2) << foreign.out;
  EXPECT_NE(foreign.out.find("no crucible_aten_module entry point"), std::string::npos)
      << foreign.out;

  Output other = crucible_env(std::string("CRUCIBLE_ATEN_LIBRARY=") + CRUCIBLE_ATEN_OTHER_BUILD,
                              run + temp_dir("aten-other-build"));
  EXPECT_EQ(other.status, 2) << other.out;
  EXPECT_NE(other.out.find("built with another crucible (crucible 0.0.1 0123456789ab"),
            std::string::npos)
      << other.out;

  Output state = crucible_env("CRUCIBLE_ATEN_LIBRARY=/nonexistent/x.so", "backends");
  EXPECT_EQ(state.status, 0) << state.out;
  EXPECT_NE(state.out.find("not ready: CRUCIBLE_ATEN_LIBRARY names"), std::string::npos)
      << state.out;
}

// Installed (`cmake --install --component runtime`), crucible finds the backend's library in
// <prefix>/<libdir>/crucible, before the build tree's.
TEST(E2EAten, AnInstalledCrucibleLoadsTheInstalledLibrary) {
  const std::string dir = temp_dir("aten-installed");
  Output inst = run_shell(std::string(CRUCIBLE_CMAKE_COMMAND) + " --install " +
                          CRUCIBLE_BINARY_DIR + " --prefix " + dir + " --component runtime");
  ASSERT_EQ(inst.status, 0) << inst.out;
  const std::string exe = dir + "/bin/crucible";
  ASSERT_TRUE(std::filesystem::exists(exe)) << inst.out;
  Output b = run_shell("env -u CRUCIBLE_ATEN_LIBRARY " + exe + " backends");
  EXPECT_EQ(b.status, 0) << b.out;
  EXPECT_NE(b.out.find("loaded from " + dir + "/lib"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("/crucible/libcrucible_aten.so"), std::string::npos) << b.out;
  Output r = run_shell("env -u CRUCIBLE_ATEN_LIBRARY " + exe +
                       " run --suite smoke --backend aten --ops add.Tensor --dtypes f32 --quiet "
                       "--out " +
                       dir + "/run");
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(E2EAten, UnknownDeviceIsAUsageError) {
  Output o = crucible("run --backend aten:tpu --out " + temp_dir("aten-tpu"));
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("aten:cuda"), std::string::npos) << o.out;
}

#else

TEST(E2EAten, BuildWithoutLibtorchSaysSo) {
  for (const char* spec : {"aten", "aten:cuda"}) {
    Output o = crucible(std::string("run --backend ") + spec + " --out " + temp_dir("aten-none"));
    EXPECT_EQ(o.status, 2) << o.out;
    EXPECT_NE(o.out.find("no ATen backend"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("install-deps.sh"), std::string::npos) << o.out;
  }
}

#endif

}  // namespace
}  // namespace crucible::e2e

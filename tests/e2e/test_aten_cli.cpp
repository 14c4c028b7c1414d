// `crucible` with the aten backend: as candidate, as reference (--reference aten) and as baseline
// (--baseline aten --perf, speed-ups in summary.json and operator_summary.csv), its version in the
// manifest. Without libtorch: `--backend aten` says the build has no ATen and how to get it.
#include <gtest/gtest.h>

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

// End-to-end: `--backend flag_gems` through the real binary, with Debian's python3-torch.
//
// Real FlagGems needs Triton and a GPU, which this machine does not have. The runs below use
// tests/fixtures/flag_gems_standin instead: a STAND-IN package named flag_gems, laid out like
// FlagGems' op table (enable(), its registrar class, register_impl), whose functions are PyTorch
// ops on the CPU. What they check is crucible's side: the table read from the installed package
// at run start, each catalog entry run as a kernel (called directly, not through ATen), the
// verdicts, the entries outside the catalog listed, and the errors when FlagGems cannot run.
#include <cstdio>
#include <map>

#include <gtest/gtest.h>

#include "backends/flag_gems/flag_gems_table.h"
#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

std::string standin() {
  return std::string(CRUCIBLE_SOURCE_DIR) + "/tests/fixtures/flag_gems_standin";
}

// The interpreter crucible embeds on Debian (its python3-torch).
const std::string kPython = "CRUCIBLE_PYTHON=/usr/bin/python3";

TEST(FlagGems, KeysNameCatalogOverloads) {
  EXPECT_EQ(flag_gems::catalog_op_of_key("abs"), "aten.abs.default");
  EXPECT_EQ(flag_gems::catalog_op_of_key("add.Tensor"), "aten.add.Tensor");
  EXPECT_EQ(flag_gems::catalog_op_of_key("div_.Scalar_mode"), "aten.div_.Scalar_mode");
  EXPECT_EQ(flag_gems::catalog_op_of_key("fused_standin_op"), "");
  EXPECT_EQ(flag_gems::catalog_op_of_key("add.NoSuchOverload"), "");
  EXPECT_EQ(flag_gems::catalog_op_of_key(""), "");
}

TEST(FlagGems, AFlagGemsThatCannotBeImportedIsAnErrorNamingTheInterpreterTheErrorAndTheFix) {
  // A real interpreter and a real import failure: nothing named flag_gems on its path.
  Output o = crucible_env(kPython + " PYTHONPATH=", "run --suite smoke --backend flag_gems -q");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("the Python interpreter /usr/bin/python3 cannot import flag_gems"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("ModuleNotFoundError: No module named 'flag_gems'"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("/usr/bin/python3 -m pip install flag-gems"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("PYTHONPATH=<checkout>/src"), std::string::npos) << o.out;

  // An interpreter that does not exist.
  o = crucible_env("CRUCIBLE_PYTHON=/nonexistent/bin/python3",
                   "run --suite smoke --backend flag_gems -q");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("cannot run the Python interpreter /nonexistent/bin/python3"),
            std::string::npos)
      << o.out;
}

TEST(FlagGems, AProbeThatDiesOrATableThatCannotBeReadIsAnError) {
  const std::string broken = std::string(CRUCIBLE_SOURCE_DIR) + "/tests/fixtures/flag_gems_broken";
  const std::string env = kPython + " PYTHONPATH=" + shell_quote(broken) + " BROKEN_FLAG_GEMS=";
  // The interpreter dies while importing it: what it printed is quoted.
  Output o = crucible_env(env + "killed", "run --suite smoke --backend flag_gems -q");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("the probe that imports flag_gems in /usr/bin/python3 died of signal 9"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("broken flag_gems: about to die"), std::string::npos) << o.out;
  // No enable() and registrar class to read the table through.
  o = crucible_env(env + "no-registrar", "run --suite smoke --backend flag_gems -q");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("but its op table cannot be read: RuntimeError:"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("has no enable() and registrar class"), std::string::npos) << o.out;
  // enable() raises: Python's error and its traceback.
  o = crucible_env(env + "raises", "run --suite smoke --backend flag_gems -q");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("ValueError: broken flag_gems: enable() refuses"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("Traceback (most recent call last)"), std::string::npos) << o.out;
}

TEST(FlagGems, AFlagGemsForCudaWithNoVisibleDeviceIsAnError) {
  // The stand-in claims FlagGems' device; no CUDA device is visible (none here, and
  // CUDA_VISIBLE_DEVICES hides any elsewhere): exit status 2 before any case runs.
  Output o = crucible_env(kPython + " PYTHONPATH=" + shell_quote(standin()) +
                              " STANDIN_FLAG_GEMS_DEVICE=cuda CUDA_VISIBLE_DEVICES=",
                          "run --suite smoke --backend flag_gems -q");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("no CUDA device is visible: torch.cuda.device_count() is 0"),
            std::string::npos)
      << o.out;
}

TEST(FlagGems, TheStandInTableRunsEndToEndWithTheRightVerdicts) {
  const std::string out = temp_dir("flag-gems");
  // PYTHONPATH relative to the working folder, as a user writes it (PYTHONPATH=FlagGems/src):
  // the probe and every kernel's process find the same package.
  Output o = crucible_env("cd " + shell_quote(CRUCIBLE_SOURCE_DIR) + " && " + kPython +
                              " PYTHONPATH=tests/fixtures/flag_gems_standin",
                          "run --suite opinfo --backend flag_gems --ops "
                          "relu.default,add.Tensor,abs.default,neg.default --dtypes f32 "
                          "--timeout 30 --workers 2 -q --out " +
                              out);
  ASSERT_EQ(o.status, 1) << o.out;  // abs fails

  // The table was read from the package at run start, and what is not in the catalog is listed.
  EXPECT_NE(o.out.find("FlagGems 0.0+standin from " + standin() + "/flag_gems/__init__.py"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("4 of its 6 registrations name catalog ops"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("2 registered by FlagGems, not in the catalog: _upsample_bicubic2d_aa, "
                       "fused_standin_op"),
            std::string::npos)
      << o.out;

  // The manifest says the same.
  const std::string manifest = read_text(out + "/manifest.json");
  EXPECT_NE(manifest.find("2 registered by FlagGems, not in the catalog (_upsample_bicubic2d_aa, "
                          "fused_standin_op)"),
            std::string::npos)
      << manifest;

  // Per op, each case's verdict and detail.
  struct Verdict {
    std::string status, detail;
  };
  auto verdicts = [](const std::string& folder) {
    std::map<std::string, std::map<std::string, Verdict>> v;
    for (const auto& l : read_jsonl(folder + "/results.jsonl"))
      if (l.value("record", "case") == "case")
        v[l["op"]][l["case_id"]] = {l["status"], l.value("detail", "")};
    return v;
  };
  auto got = verdicts(out);
  auto count = [&](const std::string& op, const std::string& status) {
    int n = 0;
    for (const auto& [id, v] : got[op]) n += v.status == status;
    return n;
  };

  // relu (FlagGems' key "relu") and add.Tensor (alpha as a keyword, as ATen passes it) are
  // PyTorch's own ops in the stand-in, so each of their cases gets ATen's verdict (ATen 1.13
  // differs from crucible's reference in a few cases, docs/aten-differences.md).
  EXPECT_GE(got["aten.relu.default"].size(), 10u);
  EXPECT_GE(got["aten.add.Tensor"].size(), 10u);
  // Against the aten backend, case by case (built wherever libtorch is, as in CI; a build without
  // it says so and keeps the checks below).
  const std::string aten_out = temp_dir("flag-gems-aten");
  Output a = crucible(
      "run --suite opinfo --backend aten --ops relu.default,add.Tensor --dtypes f32 --workers 2 "
      "-q --out " +
      aten_out);
  if (a.status == 2 && a.out.find("has no ATen backend") != std::string::npos) {
    std::printf("this crucible has no ATen backend: the stand-in's verdicts are not compared\n");
  } else {
    ASSERT_LE(a.status, 1) << a.out;
    auto aten = verdicts(aten_out);
    for (const char* op : {"aten.relu.default", "aten.add.Tensor"}) {
      EXPECT_EQ(got[op].size(), aten[op].size()) << op;
      for (const auto& [id, v] : aten[op])
        EXPECT_EQ(got[op][id].status, v.status)
            << op << " case " << id << ": " << got[op][id].detail;
    }
  }
  EXPECT_EQ(count("aten.relu.default", "passed"),
            static_cast<int>(got["aten.relu.default"].size()));
  EXPECT_GE(count("aten.add.Tensor", "passed"), 40);

  // The stand-in's abs is wrong (-|x|): it fails wherever that differs from |x| (every case but
  // the empty, zero and tiny ones), which it could not through ATen's dispatcher (nothing is
  // registered there, so ATen's own abs would run and pass).
  EXPECT_GE(count("aten.abs.default", "failed"), 20);
  for (const auto& [id, v] : got["aten.abs.default"]) {
    if (v.status == "failed") {
      EXPECT_NE(v.detail.find("wrong values"), std::string::npos) << v.detail;
    }
  }

  // neg is in the package but left out by its registrar's filtering (FlagGems' `unused`): not a
  // kernel of the backend.
  EXPECT_GE(got["aten.neg.default"].size(), 1u);
  EXPECT_EQ(count("aten.neg.default", "unsupported"),
            static_cast<int>(got["aten.neg.default"].size()));
  for (const auto& [id, v] : got["aten.neg.default"])
    EXPECT_NE(v.detail.find("FlagGems registers no kernel for aten.neg.default"), std::string::npos)
        << v.detail;
}

// A device argument reaches a Python kernel as a torch.device; on the CPU it stays the CPU.
TEST(FlagGems, ADeviceArgumentReachesTheKernelAsATorchDevice) {
  const std::string out = temp_dir("flag-gems-device-arg");
  const Output o =
      crucible_env(kPython + " PYTHONPATH=" + shell_quote(standin()),
                   "run --backend flag_gems --op arange.default --case " +
                       shell_quote("((128,), {'device': 'cpu', 'pin_memory': False})") +
                       " --timeout 30 -q --history none --out " + out);
  EXPECT_EQ(o.status, 0) << o.out << read_text(out + "/results.jsonl");
  const auto lines = read_jsonl(out + "/results.jsonl");
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].value("status", ""), "passed") << lines[0].dump(2);
}

TEST(FlagGems, BackendsListsItWithItsState) {
  Output o = crucible_env(kPython + " PYTHONPATH=" + shell_quote(standin()), "backends");
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("flag_gems"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("ready: FlagGems 0.0+standin from"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("4 of its 6 registrations name catalog ops"), std::string::npos) << o.out;

  o = crucible_env(kPython + " PYTHONPATH=", "backends --json");
  EXPECT_EQ(o.status, 0) << o.out;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  std::string state;
  for (const auto& e : j)
    if (e["backend"] == "flag_gems") state = e["state"];
  EXPECT_TRUE(state.starts_with(
      "not ready: the Python interpreter /usr/bin/python3 cannot import flag_gems"))
      << state;
}

// The GPU machine (ctest label gpu): the stand-in claims FlagGems' device, so each kernel's
// candidate process starts CUDA before its sandbox and the kernels receive CUDA tensors (the
// stand-in's relu and add raise on any other). Runs with the interpreter crucible was built
// with (or $CRUCIBLE_PYTHON), whose PyTorch has CUDA there.
TEST(FlagGemsGpu, TheStandInRunsOnDeviceTensors) {
  if (!gpu_visible()) GTEST_SKIP() << "no CUDA device is visible (nvidia-smi -L lists none)";
  const std::string out = temp_dir("flag-gems-gpu");
  Output o = crucible_env("PYTHONPATH=" + shell_quote(standin()) + " STANDIN_FLAG_GEMS_DEVICE=cuda",
                          "run --suite opinfo --backend flag_gems --ops "
                          "relu.default,abs.default --dtypes f32 --timeout 60 -q --out " +
                              out);
  ASSERT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("device cuda"), std::string::npos) << o.out;
  std::map<std::string, std::map<std::string, int>> n;
  std::string relu_detail;
  for (const auto& l : read_jsonl(out + "/results.jsonl")) {
    if (l.value("record", "case") != "case") continue;
    n[l["op"]][l["status"]]++;
    if (l["op"] == "aten.relu.default" && l["status"] != "passed") relu_detail = l["detail"];
  }
  EXPECT_GE(n["aten.relu.default"]["passed"], 10) << relu_detail;
  EXPECT_EQ(n["aten.relu.default"].size(), 1u) << relu_detail;
  EXPECT_GE(n["aten.abs.default"]["failed"], 20);

  // A call that names the CPU, as a recorded trace does: the kernel is given its own device
  // (the stand-in's arange raises for any other).
  const std::string out2 = temp_dir("flag-gems-gpu-arange");
  o = crucible_env("PYTHONPATH=" + shell_quote(standin()) + " STANDIN_FLAG_GEMS_DEVICE=cuda",
                   "run --backend flag_gems --op arange.default --case " +
                       shell_quote("((128,), {'device': 'cpu', 'pin_memory': False})") +
                       " --timeout 60 -q --out " + out2);
  EXPECT_EQ(o.status, 0) << o.out << read_text(out2 + "/results.jsonl");
}

}  // namespace
}  // namespace crucible::e2e

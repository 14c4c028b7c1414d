// `--suite opinfo:<dtype>` (opinfo:bf16, opinfo:f16): each op's opinfo samples with their floating
// tensors and floating dtype arguments in one dtype, as BackendBench's default suite runs
// PyTorch's OpInfo samples at torch.bfloat16; ops without a kernel for the dtype are unsupported
// with the reason.
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "crucible/cases/literal.h"

#include "crucible/core/error.h"
#include "crucible/suites/suite.h"
#include "e2e/cli_helpers.h"

namespace crucible {
namespace {

std::vector<SuiteCase> suite(const std::string& name, const std::vector<std::string>& ops) {
  SuiteOptions o;
  o.suite = name;
  o.ops = ops;
  return build_suite(o);
}

// Every dtype a call names: its tensors' and its dtype arguments'.
void dtypes_of(const cases::Literal& l, std::multiset<DType>& tensors, std::multiset<DType>& args) {
  if (l.kind == cases::LitKind::Tensor) tensors.insert(l.tensor.dtype);
  if (l.kind == cases::LitKind::DType) args.insert(l.dtype);
  for (const cases::Literal& i : l.items) dtypes_of(i, tensors, args);
  for (const auto& kv : l.entries) dtypes_of(kv.second, tensors, args);
}

// Whether the call is a case "in" `t`: its floating tensors and floating dtype arguments all
// `t` (at least one), its other tensors integers or booleans.
::testing::AssertionResult in_dtype(const cases::CallSpec& call, DType t) {
  std::multiset<DType> tensors, args;
  for (const cases::Literal& a : call.args) dtypes_of(a, tensors, args);
  for (const auto& kv : call.kwargs) dtypes_of(kv.second, tensors, args);
  size_t in_t = 0;
  for (DType d : tensors) {
    if (d == t)
      ++in_t;
    else if (!is_integral(d, true))
      return ::testing::AssertionFailure()
             << cases::print_call(call) << " holds a " << dtype_code(d) << " tensor";
  }
  for (DType d : args) {
    if (d == t)
      ++in_t;
    else if (!is_integral(d, true))
      return ::testing::AssertionFailure()
             << cases::print_call(call) << " names dtype " << dtype_code(d);
  }
  if (in_t == 0)
    return ::testing::AssertionFailure()
           << cases::print_call(call) << " holds nothing of dtype " << dtype_code(t);
  return ::testing::AssertionSuccess();
}

// Pointwise, matmul, reduction, factory, where (a bool condition), index (an index tensor),
// int8 weights and attention's backward (its RNG state: i64 tensors beside bf16 ones).
const std::vector<std::string> kOps = {"relu.default",
                                       "add.Tensor",
                                       "mm.default",
                                       "sum.dim_IntList",
                                       "_softmax.default",
                                       "arange.start_step",
                                       "where.self",
                                       "index_select.default",
                                       "_weight_int8pack_mm.default",
                                       "_scaled_dot_product_flash_attention_backward.default"};

TEST(DtypeSuites, EveryCaseOfTheSuiteIsInItsDtype) {
  for (auto [name, t] : {std::pair<const char*, DType>{"opinfo:bf16", DType::BFloat16},
                         {"opinfo:f16", DType::Float16}}) {
    const std::vector<SuiteCase> cases = suite(name, kOps);
    std::set<std::string> ops;
    for (const SuiteCase& sc : cases) {
      ASSERT_TRUE(sc.unsupported_reason.empty()) << sc.c.op << ": " << sc.unsupported_reason;
      EXPECT_TRUE(in_dtype(sc.c.call, t)) << name;
      EXPECT_EQ(sc.c.source, "opinfo");
      EXPECT_EQ(sc.c.label.find("f32"), std::string::npos) << sc.c.label;
      ops.insert(sc.c.op);
    }
    EXPECT_EQ(ops.size(), kOps.size()) << name << ": every op has cases";
  }
}

// The opinfo cases of op `op`: their printed calls by the dtypes they hold.
struct OpinfoCalls {
  std::set<std::string> in_t;     // already in the dtype
  std::set<std::string> retyped;  // cases of one other floating dtype, rewritten
  std::set<std::string> mixed;    // several floating dtypes
};

OpinfoCalls opinfo_calls(const std::string& op, DType t) {
  OpinfoCalls out;
  for (const SuiteCase& sc : suite("opinfo", {op})) {
    std::multiset<DType> tensors, args;
    for (const cases::Literal& a : sc.c.call.args) dtypes_of(a, tensors, args);
    for (const auto& kv : sc.c.call.kwargs) dtypes_of(kv.second, tensors, args);
    std::set<DType> floats;
    bool foreign = false, dtype_argument = false;  // complex or fp8; a floating dtype argument
    auto fp8 = [](DType d) { return d == DType::Float8E4M3FN || d == DType::Float8E5M2; };
    for (DType d : tensors) {
      if (is_complex(d) || fp8(d)) foreign = true;
      if (is_floating(d)) floats.insert(d);
    }
    for (DType d : args) {
      if (is_complex(d) || fp8(d)) foreign = true;
      if (is_floating(d)) dtype_argument = true;
    }
    // These ops take no index: integer data beside floating tensors or a floating dtype
    // argument is type promotion.
    const bool integers =
        std::any_of(tensors.begin(), tensors.end(), [](DType d) { return is_integral(d, false); });
    if (foreign || (floats.empty() && !dtype_argument)) continue;
    if (floats.size() > 1 || (integers && (!floats.empty() || dtype_argument))) {
      out.mixed.insert(cases::print_call(sc.c.call));
      continue;
    }
    cases::CallSpec call = sc.c.call;
    retype_floating(call, t);
    const std::string text = cases::print_call(call);
    if (text == cases::print_call(sc.c.call)) out.in_t.insert(text);
    out.retyped.insert(text);
  }
  return out;
}

TEST(DtypeSuites, AnOpsCasesAreItsOpinfoSamplesInTheDtypeEachOnce) {
  for (const std::string op : {"relu.default", "add.Tensor", "mm.default", "sum.dim_IntList"}) {
    const OpinfoCalls expected = opinfo_calls(op, DType::BFloat16);
    std::set<std::string> got;
    for (const SuiteCase& sc : suite("opinfo:bf16", {op})) {
      const std::string text = cases::print_call(sc.c.call);
      EXPECT_TRUE(got.insert(text).second) << op << ": " << text << " twice";
    }
    // Every bf16 sample of the opinfo suite is there unchanged, and every single-dtype sample
    // in its bf16 form; nothing else.
    for (const std::string& c : expected.in_t) EXPECT_TRUE(got.count(c)) << op << ": " << c;
    EXPECT_EQ(got, expected.retyped) << op;
    EXPECT_GT(got.size(), expected.in_t.size()) << op << ": the f32 samples are added";
    const size_t opinfo_size = suite("opinfo", {op}).size();
    EXPECT_LT(got.size(), opinfo_size) << op << ": the dtypes' copies of one sample are one case";
  }
  // relu and add have mixed-dtype samples (type promotion) in opinfo; none is in opinfo:bf16.
  EXPECT_FALSE(opinfo_calls("add.Tensor", DType::BFloat16).mixed.empty());
}

TEST(DtypeSuites, AnOpWithoutAKernelForTheDtypeIsOneUnsupportedCaseWithTheReason) {
  // The first ops of the catalog that ATen computes on integers only.
  std::vector<std::string> without;
  for (const OpDef* op : OpRegistry::catalog().all()) {
    if (op->dtypes.empty() || std::count(op->dtypes.begin(), op->dtypes.end(), DType::BFloat16))
      continue;
    without.push_back(op->name);
    if (without.size() == 3) break;
  }
  ASSERT_EQ(without.size(), 3u);
  for (const std::string& op : without) {
    const std::vector<SuiteCase> cases = suite("opinfo:bf16", {op});
    ASSERT_EQ(cases.size(), 1u) << op;
    EXPECT_EQ(cases[0].c.op, op);
    EXPECT_NE(cases[0].unsupported_reason.find("no bf16 kernel for " + op), std::string::npos)
        << cases[0].unsupported_reason;
  }
}

TEST(DtypeSuites, TheDtypeIsNamedAsCrucibleOrPyTorchNamesIt) {
  const size_t n = suite("opinfo:bf16", {"relu.default"}).size();
  EXPECT_EQ(suite("opinfo:bfloat16", {"relu.default"}).size(), n);
  EXPECT_EQ(suite("opinfo:torch.bfloat16", {"relu.default"}).size(), n);
  EXPECT_EQ(suite("opinfo:BFloat16", {"relu.default"}).size(), n);
  for (const SuiteCase& sc : suite("opinfo:float16", {"relu.default"}))
    EXPECT_TRUE(in_dtype(sc.c.call, DType::Float16));
}

::testing::AssertionResult usage_error_naming(const std::string& name,
                                              const std::vector<std::string>& words,
                                              const std::set<DType>& dtypes = {}) {
  SuiteOptions o;
  o.suite = name;
  o.ops = {"relu.default"};
  o.dtypes = dtypes;
  try {
    build_suite(o);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Usage)
      return ::testing::AssertionFailure() << "not a usage error: " << e.what();
    for (const std::string& w : words)
      if (std::string(e.what()).find(w) == std::string::npos)
        return ::testing::AssertionFailure() << "'" << w << "' not in: " << e.what();
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << name << " was accepted";
}

// --dtypes selects a call by its first tensor; a factory, which has none, by the dtype it is asked
// to make (FlagGems' zeros, full, rand... were left out of an f32 run before).
TEST(DtypeSuites, AFactoryIsOfTheDtypeItNames) {
  EXPECT_EQ(primary_dtype(cases::parse_call("(([5, 6],), {'dtype': f32})")), DType::Float32);
  EXPECT_EQ(primary_dtype(cases::parse_call("(([5, 6],), {'dtype': torch.int64})")), DType::Int64);
  EXPECT_EQ(primary_dtype(cases::parse_call("(([5, 6],), {})")), std::nullopt);
  EXPECT_EQ(primary_dtype(cases::parse_call("((T([2], f16),), {'dtype': f32})")),
            DType::Float16);  // a tensor argument comes first
  SuiteOptions o;
  o.suite = "opinfo";
  o.ops = {"zeros.default"};
  o.dtypes = {DType::Float32};
  const std::vector<SuiteCase> cases = build_suite(o);
  ASSERT_FALSE(cases.empty());
  for (const SuiteCase& sc : cases) EXPECT_EQ(primary_dtype(sc.c.call), DType::Float32);
}

TEST(DtypeSuites, AnUnknownDtypeIsRefusedNamingTheValidOnes) {
  EXPECT_TRUE(usage_error_naming("opinfo:bf17", {"'bf17'", "bf16, f16, f32, f64"}));
  EXPECT_TRUE(usage_error_naming("opinfo:i32", {"'i32'", "bf16, f16, f32, f64"}));
  EXPECT_TRUE(usage_error_naming("opinfo:c64", {"bf16, f16, f32, f64"}));
  EXPECT_TRUE(usage_error_naming("opinfo:", {"nothing after ':'"}));
  EXPECT_TRUE(usage_error_naming("opinfo:bf16", {"--dtypes", "bf16"}, {DType::Float32}));
}

// Through the binary: exit status 2 and the valid dtypes; a run of the suite on ref and cpu.
TEST(DtypeSuitesCli, AnUnknownDtypeExitsWithStatus2) {
  const e2e::Output o = e2e::crucible("run --suite opinfo:half8 --backend ref --ops relu -q");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("bf16, f16, f32, f64"), std::string::npos) << o.out;
}

TEST(DtypeSuitesCli, ARunOnRefAndCpuPasses) {
  for (const char* backend : {"ref", "cpu"}) {
    const std::string out = e2e::temp_dir(std::string("dtype-suite-") + backend);
    const e2e::Output o =
        e2e::crucible(std::string("run --suite opinfo:bf16 --backend ") + backend +
                      " --ops relu,add.Tensor,mm --workers 2 -q " + "--history none --out " + out);
    EXPECT_EQ(o.status, 0) << backend << ": " << o.out;
    size_t cases = 0;
    for (const nlohmann::json& j : e2e::read_jsonl(out + "/results.jsonl")) {
      if (j.value("record", "") != "case") continue;
      ++cases;
      EXPECT_EQ(j.value("status", ""), "passed") << backend << ": " << j.dump();
    }
    EXPECT_EQ(cases, suite("opinfo:bf16", {"relu", "add.Tensor", "mm"}).size()) << backend;
  }
}

}  // namespace
}  // namespace crucible

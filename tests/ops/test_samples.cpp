// The sample builders and the samples of the pointwise and copy ops: literals as documented,
// enough cases per op, every case printable and parsable back to the same text, and every
// case runs through the reference, raising exactly when its label says it must.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"
#include "ops/samples.h"

namespace crucible {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)

const OpRegistry& my_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_pointwise_unary_ops(*reg);
    register_pointwise_binary_ops(*reg);
    register_copy_ops(*reg);
    return reg;
  }();
  return *r;
}

TEST(SampleBuilders, TensorLiterals) {
  Literal c = T({2, 3}, DType::Float16);
  EXPECT_EQ(c.kind, cases::LitKind::Tensor);
  EXPECT_FALSE(c.tensor.strides.has_value());
  EXPECT_FALSE(c.tensor.stride_written);
  Literal s = T({5, 8}, DType::Float32, {0, 1});
  ASSERT_TRUE(s.tensor.strides.has_value());
  EXPECT_TRUE(s.tensor.stride_written);
  EXPECT_EQ(cases::print_literal(s), "T([5, 8], f32, stride=(0, 1))");
  EXPECT_EQ(T_transposed(3, 4, DType::Int64).tensor.strides, (Shape{1, 3}));
  EXPECT_EQ(T_fill({4}, DType::BFloat16, "special").tensor.fill, "special");
  EXPECT_EQ(cases::print_literal(L({1, -2})), "[1, -2]");
  Sample m = make("x", {T({}, DType::Bool), I(3)}, {{"alpha", F(0.5)}});
  EXPECT_EQ(cases::print_call(m.call), "((T([], b8), 3), {'alpha': 0.5})");
  EXPECT_EQ(all_numeric_dtypes().size(), 10u);
  EXPECT_EQ(integral_dtypes(false).size(), 5u);
  EXPECT_EQ(floating_dtypes().size(), 4u);
}

TEST(SampleBuilders, UnaryCoversDtypesLayoutsAndSpecials) {
  const std::vector<Sample> ss = unary_samples(all_numeric_dtypes(), {}, {{"k", B(true)}});
  for (DType t : all_numeric_dtypes()) {
    bool zero_d = false, non_contig = false, special = false;
    for (const Sample& s : ss) {
      const cases::TensorLit& lit = s.call.args[0].tensor;
      if (lit.dtype != t) continue;
      zero_d |= lit.shape.empty();
      non_contig |= lit.strides.has_value();
      special |= lit.fill == "special";
      EXPECT_EQ(s.call.kwargs.size(), 1u);
    }
    EXPECT_TRUE(zero_d && non_contig) << dtype_code(t);
    // Special values for floats, the extremes of the range for integers (which must wrap).
    EXPECT_EQ(special, is_floating(t) || is_integral(t, false)) << dtype_code(t);
  }
  bool empty = false, expanded = false;
  for (const Sample& s : ss) {
    const cases::TensorLit& lit = s.call.args[0].tensor;
    empty |= numel_of(lit.shape) == 0;
    expanded |= lit.strides && std::count(lit.strides->begin(), lit.strides->end(), 0) > 0;
  }
  EXPECT_TRUE(empty && expanded);
}

TEST(SampleBuilders, BinaryBroadcastsBothWaysAndPromotes) {
  const std::vector<Sample> ss = binary_samples(all_numeric_dtypes());
  bool self_bc = false, other_bc = false, mixed = false, zero_d_mixed = false;
  for (const Sample& s : ss) {
    const cases::TensorLit& a = s.call.args[0].tensor;
    const cases::TensorLit& b = s.call.args[1].tensor;
    self_bc |= a.shape.size() < b.shape.size() && !a.shape.empty();
    other_bc |= b.shape.size() < a.shape.size() && !b.shape.empty();
    mixed |= a.dtype != b.dtype;
    zero_d_mixed |= a.dtype != b.dtype && (a.shape.empty() != b.shape.empty());
  }
  EXPECT_TRUE(self_bc && other_bc && mixed && zero_d_mixed);
}

TEST(SampleBuilders, PerfSamplesAreLarge) {
  for (const Sample& s : elementwise_perf_samples(2, {DType::Float32, DType::BFloat16})) {
    ASSERT_EQ(s.call.args.size(), 2u);
    EXPECT_GE(numel_of(s.call.args[0].tensor.shape), int64_t{1} << 22) << s.label;
  }
}

TEST(OpSamples, EveryOpHasEnoughCasesAndRoundTrips) {
  const std::vector<std::string> expected = {
      "aten.relu.default", "aten.relu_.default",   "aten.neg.default",   "aten.exp.default",
      "aten.tanh.default", "aten.sigmoid.default", "aten.gelu.default",  "aten.add.Tensor",
      "aten.add.Scalar",   "aten.add_.Tensor",     "aten.sub.Tensor",    "aten.mul.Tensor",
      "aten.mul.Scalar",   "aten.div.Tensor",      "aten.clone.default", "aten._to_copy.default",
      "aten.copy_.default"};
  EXPECT_EQ(my_ops().all().size(), expected.size());
  for (const std::string& name : expected) {
    const OpDef& op = my_ops().get(name);
    EXPECT_FALSE(op.family.empty());
    EXPECT_FALSE(op.dtypes.empty());
    const std::vector<Sample> ss = op.samples(SampleContext{false});
    EXPECT_GE(ss.size(), 8u) << name;
    std::set<std::string> labels;
    for (const Sample& s : ss) {
      EXPECT_TRUE(labels.insert(s.label).second) << name << ": duplicate label " << s.label;
      const std::string text = cases::print_call(s.call);
      EXPECT_EQ(cases::print_call(cases::parse_call(text)), text) << name;
    }
    const std::vector<Sample> perf = op.samples(SampleContext{true});
    EXPECT_FALSE(perf.empty()) << name;
    for (const Sample& s : perf) {
      const std::string text = cases::print_call(s.call);
      EXPECT_EQ(cases::print_call(cases::parse_call(text)), text) << name;
    }
  }
}

// Every correctness sample materialises and runs through the reference; it raises an op error
// exactly when its label starts with "error:".
TEST(OpSamples, ReferenceRaisesExactlyOnErrorCases) {
  for (const OpDef* op : my_ops().all()) {
    for (const Sample& s : op->samples(SampleContext{false})) {
      const std::string text = cases::print_call(s.call);
      Values args;
      try {
        args = materialize(*op, s.call, 7);
      } catch (const Error& e) {
        ADD_FAILURE() << op->name << " " << text << ": does not materialise: " << e.what();
        continue;
      }
      const bool must_raise = s.label.starts_with("error:");
      std::string error;
      try {
        const Values out = op->run_ref(args);
        ASSERT_FALSE(out.empty());
        const Cost c = op->run_cost(args, out);
        EXPECT_GE(c.bytes, 0) << op->name;
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OpError) << op->name << " " << text << ": " << e.what();
        error = e.what();
      }
      EXPECT_EQ(!error.empty(), must_raise)
          << op->name << " [" << s.label << "] " << text << (error.empty() ? "" : ": " + error);
    }
  }
}

}  // namespace
}  // namespace crucible

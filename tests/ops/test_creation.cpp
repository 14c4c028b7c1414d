// ATen semantics of the creation family's references (checked against PyTorch): dtype
// inference of full and arange, c10's checked conversion of fill values, the strides of *_like
// and empty* results, arange's lengths and errors, fill/copy/lift_fresh_copy; and that every
// sample materialises and raises exactly when labelled "error:".
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& creation_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_creation_ops(*reg);
    return reg;
  }();
  return *r;
}

// Runs the reference on a call written in the case grammar.
Values run(const std::string& op, const std::string& call) {
  const OpDef& def = creation_ops().get(op);
  return def.run_ref(materialize(def, cases::parse_call(call), 5));
}
Tensor run_t(const std::string& op, const std::string& call) {
  return run(op, call).at(0).tensor();
}

std::string error_of(const std::string& op, const std::string& call) {
  try {
    run(op, call);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError) << e.what();
    return e.what();
  }
  return "";
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get(i));
  return v;
}

TEST(CreationFull, InfersTheDtypeFromTheValue) {
  EXPECT_EQ(run_t("aten.full.default", "(([2, 3], 1), {})").dtype(), DType::Int64);
  EXPECT_EQ(run_t("aten.full.default", "(([2, 3], 1.5), {})").dtype(), DType::Float32);
  // PyTorch 2.x: a bool fill value gives a bool tensor.
  EXPECT_EQ(run_t("aten.full.default", "(([2], True), {})").dtype(), DType::Bool);
  const Tensor t = run_t("aten.full.default", "(([2, 3], 1.5), {'dtype': i32})");
  EXPECT_EQ(t.dtype(), DType::Int32);
  EXPECT_EQ(values(t), std::vector<double>(6, 1.0));
  // scalar_tensor does not infer: f32.
  const Tensor s = run_t("aten.scalar_tensor.default", "((3,), {})");
  EXPECT_EQ(s.dtype(), DType::Float32);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.get(0), 3.0);
}

TEST(CreationFull, CheckedConversionOfTheValue) {
  EXPECT_EQ(error_of("aten.full.default", "(([2], 300), {'dtype': i8})"),
            "value cannot be converted to type int8_t without overflow");
  // Negative integers wrap into u8 down to -255; negative floats do not.
  EXPECT_EQ(run_t("aten.full.default", "(([2], -1), {'dtype': u8})").get_int(0), 255);
  EXPECT_EQ(run_t("aten.scalar_tensor.default", "((-2,), {'dtype': u8})").get_int(0), 254);
  EXPECT_NE(error_of("aten.full.default", "(([2], -256), {'dtype': u8})"), "");
  EXPECT_EQ(error_of("aten.full.default", "(([2], -0.5), {'dtype': u8})"),
            "value cannot be converted to type uint8_t without overflow");
  EXPECT_EQ(error_of("aten.full.default", "(([2], 1e6), {'dtype': f16})"),
            "value cannot be converted to type at::Half without overflow");
  EXPECT_TRUE(std::isinf(run_t("aten.full.default", "(([2], inf), {'dtype': f16})").get(0)));
  EXPECT_EQ(error_of("aten.full.default", "(([2], nan), {'dtype': i32})"),
            "value cannot be converted to type int without overflow");
  // Truncation toward zero, bool is "!= 0".
  EXPECT_EQ(run_t("aten.full.default", "(([2], -7.9), {'dtype': i8})").get_int(1), -7);
  EXPECT_EQ(run_t("aten.full.default", "(([2], 0.5), {'dtype': b8})").get_int(0), 1);
  EXPECT_EQ(error_of("aten.full.default", "(([2, -3], 1), {})"),
            "Trying to create tensor with negative dimension -3: [2, -3]");
}

TEST(CreationLike, StridesFollowTheMemoryFormat) {
  // A transposed (dense) input keeps its strides; a sliced one its stride order; an expanded
  // one becomes contiguous.
  EXPECT_EQ(run_t("aten.empty_like.default", "((T([4, 3], f32, stride=(1, 4)),), {})").strides(),
            (Shape{1, 4}));
  EXPECT_EQ(run_t("aten.zeros_like.default", "((T([3, 6], f32, stride=(1, 10)),), {})").strides(),
            (Shape{1, 3}));
  EXPECT_EQ(run_t("aten.ones_like.default", "((T([3, 4], f32, stride=(0, 1)),), {})").strides(),
            (Shape{4, 1}));
  EXPECT_EQ(run_t("aten.ones_like.default",
                  "((T([2, 4, 5, 3], f32, stride=(60, 5, 1, 20)),), "
                  "{'memory_format': torch.contiguous_format})")
                .strides(),
            (Shape{60, 15, 3, 1}));
  EXPECT_EQ(run_t("aten.zeros_like.default",
                  "((T([2, 3, 4, 5], f32),), {'memory_format': torch.channels_last})")
                .strides(),
            (Shape{60, 1, 15, 3}));
  EXPECT_EQ(error_of("aten.zeros_like.default",
                     "((T([3], f32),), {'memory_format': torch.channels_last})"),
            "required rank 4 tensor to use channels_last format");
  const Tensor f = run_t("aten.full_like.default", "((T([3], i32), 7.9), {'dtype': f16})");
  EXPECT_EQ(f.dtype(), DType::Float16);
  EXPECT_EQ(f.get(0), 7.8984375);
  EXPECT_EQ(run_t("aten.full_like.default", "((T([3], i32), 7.9), {})").get_int(2), 7);
  EXPECT_EQ(values(run_t("aten.ones_like.default", "((T([2], b8),), {})")),
            (std::vector<double>{1, 1}));
}

TEST(CreationEmpty, StridesAndErrors) {
  EXPECT_EQ(
      run_t("aten.empty.memory_format", "(([2, 3, 4, 5],), {'memory_format': torch.channels_last})")
          .strides(),
      (Shape{60, 1, 15, 3}));
  EXPECT_EQ(
      error_of("aten.empty.memory_format", "(([2, 3],), {'memory_format': torch.preserve_format})"),
      "unsupported memory format Preserve");
  EXPECT_EQ(run_t("aten.empty_strided.default", "(([2, 3], [1, 2]), {})").strides(), (Shape{1, 2}));
  EXPECT_EQ(error_of("aten.empty_strided.default", "(([2, 3], [1]), {})"),
            "dimensionality of sizes (2) must match dimensionality of strides (1)");
  EXPECT_NE(error_of("aten.empty_strided.default", "(([2, 3], [-1, 2]), {})"), "");
  const Tensor n = run_t("aten.new_empty_strided.default", "((T([3], f16), [2, 2], [1, 2]), {})");
  EXPECT_EQ(n.dtype(), DType::Float16);
  EXPECT_EQ(n.strides(), (Shape{1, 2}));
  EXPECT_EQ(creation_ops().get("aten.empty_like.default").compare.kind,
            ComparePolicy::Kind::ShapeOnly);
  EXPECT_EQ(creation_ops().get("aten.zeros.default").compare.kind, ComparePolicy::Kind::Values);
}

TEST(CreationNew, ContiguousWithTheInputsDtype) {
  const Tensor z = run_t("aten.new_zeros.default", "((T([4, 3], i16, stride=(1, 4)), [2, 5]), {})");
  EXPECT_EQ(z.dtype(), DType::Int16);
  EXPECT_EQ(z.strides(), (Shape{5, 1}));
  EXPECT_EQ(values(z), std::vector<double>(10, 0.0));
  EXPECT_EQ(run_t("aten.new_ones.default", "((T([3], f32), [2]), {'dtype': i8})").dtype(),
            DType::Int8);
  const Tensor f = run_t("aten.new_full.default", "((T([3], f32), [2, 2], 7.9), {})");
  EXPECT_EQ(f.get(3), static_cast<double>(7.9f));
  EXPECT_EQ(error_of("aten.new_zeros.default", "((T([3], f32), [2, -2]), {})"),
            "Trying to create tensor with negative dimension -2: [2, -2]");
}

TEST(CreationArange, DtypeInferenceAndValues) {
  EXPECT_EQ(run_t("aten.arange.default", "((5,), {})").dtype(), DType::Int64);
  EXPECT_EQ(run_t("aten.arange.default", "((5.0,), {})").dtype(), DType::Float32);
  EXPECT_EQ(run_t("aten.arange.default", "((True,), {})").dtype(), DType::Int64);
  EXPECT_EQ(run_t("aten.arange.start", "((2, 7.5), {})").numel(), 6);
  const Tensor f = run_t("aten.arange.start_step", "((0, 1, 0.3), {})");
  ASSERT_EQ(f.numel(), 4);
  EXPECT_FLOAT_EQ(static_cast<float>(f.get(3)), 0.9f);
  EXPECT_EQ(values(run_t("aten.arange.start_step", "((10, 0, -3), {})")),
            (std::vector<double>{10, 7, 4, 1}));
  EXPECT_EQ(run_t("aten.arange.start_step", "((-3, 3, 0.7), {})").numel(), 9);
  EXPECT_EQ(run_t("aten.arange.start_step", "((0, 1, 0.1), {})").numel(), 10);
  EXPECT_EQ(run_t("aten.arange.default", "((0,), {})").numel(), 0);
}

TEST(CreationArange, IntegralDtypesTruncateTheScalars) {
  // i64 computes the length from the truncated scalars, other integral dtypes from the doubles.
  EXPECT_EQ(values(run_t("aten.arange.start_step", "((0, 10, 3.5), {'dtype': i64})")),
            (std::vector<double>{0, 3, 6, 9}));
  EXPECT_EQ(values(run_t("aten.arange.start_step", "((0, 10, 3.5), {'dtype': i32})")),
            (std::vector<double>{0, 3, 6}));
  EXPECT_EQ(values(run_t("aten.arange.start_step", "((0.5, 10, 3), {'dtype': i32})")),
            (std::vector<double>{0, 3, 6, 9}));
  EXPECT_EQ(values(run_t("aten.arange.start_step", "((10, 0.5, -3), {'dtype': i64})")),
            (std::vector<double>{10, 7, 4, 1}));
  EXPECT_EQ(values(run_t("aten.arange.start", "((-1.5, 2), {'dtype': i64})")),
            (std::vector<double>{-1, 0, 1}));
  const Tensor u = run_t("aten.arange.start", "((-5, 5), {'dtype': u8})");
  EXPECT_EQ(u.get_int(0), 251);
  EXPECT_EQ(u.get_int(9), 4);
  EXPECT_EQ(run_t("aten.arange.default", "((300,), {'dtype': u8})").get_int(299), 43);
  const Tensor big =
      run_t("aten.arange.start_step", "((9007199254740993, 9007199254740997, 2), {})");
  EXPECT_EQ(big.get_int(1), 9007199254740995);
  EXPECT_EQ(big.dtype(), DType::Int64);
}

TEST(CreationArange, Errors) {
  EXPECT_EQ(error_of("aten.arange.start_step", "((0, 10, 0), {})"), "step must be nonzero");
  EXPECT_EQ(error_of("aten.arange.start_step", "((0, 10, 0.3), {'dtype': i64})"),
            "step must be nonzero");
  EXPECT_EQ(error_of("aten.arange.start_step", "((1, 10, -1), {})"),
            "upper bound and larger bound inconsistent with step sign");
  EXPECT_EQ(error_of("aten.arange.default", "((-3,), {})"),
            "upper bound and larger bound inconsistent with step sign");
  EXPECT_EQ(error_of("aten.arange.default", "((inf,), {})"), "unsupported range: 0 -> inf");
  EXPECT_EQ(error_of("aten.arange.default", "((5,), {'dtype': b8})"),
            "\"arange_cpu\" not implemented for 'Bool'");
}

TEST(CreationFill, ValuesStridesAndErrors) {
  const Tensor f = run_t("aten.fill.Scalar", "((T([4, 3], f32, stride=(1, 4)), 2), {})");
  EXPECT_EQ(f.strides(), (Shape{1, 4}));
  EXPECT_EQ(values(f), std::vector<double>(12, 2.0));
  EXPECT_EQ(run_t("aten.fill.Scalar", "((T([3], i32), 2.5), {})").get_int(0), 2);
  EXPECT_EQ(run_t("aten.fill.Scalar", "((T([3], u8), -1), {})").get_int(0), 255);
  EXPECT_EQ(error_of("aten.fill.Tensor", "((T([3, 4], f32), T([1], f32)), {})"),
            "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.");
  EXPECT_EQ(error_of("aten.fill.Scalar", "((T([3], f16), 1e6), {})"),
            "value cannot be converted to type at::Half without overflow");
  // fill_ writes through stride 0 and returns self.
  const OpDef& op = creation_ops().get("aten.fill_.Scalar");
  const Values args =
      materialize(op, cases::parse_call("((T([3, 4], f32, stride=(0, 1)), 2), {})"), 1);
  const Values out = op.run_ref(args);
  EXPECT_TRUE(out[0].tensor().shares_storage(args[0].tensor()));
  EXPECT_EQ(values(args[0].tensor()), std::vector<double>(12, 2.0));
  // fill.Tensor takes the value's item() and converts it like a Scalar.
  Tensor v = Tensor::scalar(-3.75, DType::Float64);
  const Tensor self = Tensor::zeros({2}, DType::Int8);
  EXPECT_EQ(creation_ops().get("aten.fill.Tensor").run_ref({self, v})[0].tensor().get_int(1), -3);
}

TEST(CreationCopy, BroadcastsIntoSelfsLayout) {
  const OpDef& op = creation_ops().get("aten.copy.default");
  const Tensor self = Tensor::zeros({3, 2}, DType::Int32).transpose(0, 1);  // [2, 3], (1, 2)
  Tensor src = Tensor::empty({3}, DType::Float32);
  for (int64_t i = 0; i < 3; ++i) src.set(i, 1.75 * static_cast<double>(i + 1));
  const Tensor out = op.run_ref({self, src, Value(false)})[0].tensor();
  EXPECT_EQ(out.dtype(), DType::Int32);
  EXPECT_EQ(out.strides(), (Shape{1, 2}));
  EXPECT_FALSE(out.shares_storage(self));
  EXPECT_EQ(values(out), (std::vector<double>{1, 3, 5, 1, 3, 5}));
  EXPECT_NE(error_of("aten.copy.default", "((T([7], f32), T([6, 7], f32)), {})"), "");
  const Tensor l = run_t("aten.lift_fresh_copy.default", "((T([4, 3], f16, stride=(1, 4)),), {})");
  EXPECT_EQ(l.strides(), (Shape{1, 4}));
}

TEST(CreationSamples, EveryOpHasEnoughCases) {
  EXPECT_EQ(creation_ops().all().size(), 24u);
  for (const OpDef* op : creation_ops().all()) {
    EXPECT_EQ(op->family, "creation");
    EXPECT_GE(op->samples(SampleContext{false}).size(), 8u) << op->name;
    EXPECT_FALSE(op->samples(SampleContext{true}).empty()) << op->name;
  }
}

TEST(CreationSamples, ReferenceRaisesExactlyOnErrorCases) {
  for (const OpDef* op : creation_ops().all()) {
    for (const Sample& s : op->samples(SampleContext{false})) {
      const std::string text = cases::print_call(s.call);
      Values args;
      try {
        args = materialize(*op, s.call, 7);
      } catch (const Error& e) {
        ADD_FAILURE() << op->name << " " << text << ": does not materialise: " << e.what();
        continue;
      }
      std::string error;
      try {
        const Values out = op->run_ref(args);
        ASSERT_FALSE(out.empty());
        EXPECT_GE(op->run_cost(args, out).bytes, 0) << op->name;
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OpError) << op->name << " " << text << ": " << e.what();
        error = e.what();
      }
      EXPECT_EQ(!error.empty(), s.label.starts_with("error:"))
          << op->name << " [" << s.label << "] " << text << (error.empty() ? "" : ": " + error);
    }
  }
}

}  // namespace
}  // namespace crucible

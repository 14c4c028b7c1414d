// ATen semantics of the pointwise.math catalog entries: dtypes of results (float ops promote
// integers to f32 after casting them), identity rounding of integers, half-to-even rounding,
// round.decimals in the kernel's opmath type, sign/sgn, domains, bitwise_not, the in-place and
// out= rules, and that every sample materialises and raises exactly when labelled "error:".
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& math_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_pointwise_math_ops(*reg);
    return reg;
  }();
  return *r;
}

Values call(const std::string& op, const Values& args) { return math_ops().get(op).run_ref(args); }
Tensor call1(const std::string& op, const Tensor& x) { return call(op, {x})[0].tensor(); }

Tensor vec(const std::vector<double>& vals, DType t) {
  Tensor x = Tensor::empty({static_cast<int64_t>(vals.size())}, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}

// A performance case with its tensors shrunk to [2] (contiguous): checks that it binds to the
// schema without materialising large tensors.
cases::CallSpec shrunk(cases::CallSpec call) {
  auto shrink = [](cases::Literal& l) {
    if (l.kind != cases::LitKind::Tensor) return;
    l.tensor.shape = {2};
    l.tensor.strides.reset();
    l.tensor.stride_written = false;
  };
  for (cases::Literal& a : call.args) shrink(a);
  for (auto& [k, v] : call.kwargs) shrink(v);
  return call;
}

template <typename Fn>
std::string op_error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError) << e.what();
    return e.what();
  }
  return "";
}

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

void expect_values(const Tensor& t, const std::vector<double>& want) {
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const double got = t.get(static_cast<int64_t>(i));
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got)) << "element " << i;
    else
      EXPECT_DOUBLE_EQ(got, want[i]) << "element " << i;
  }
}

TEST(PointwiseMathDtypes, FloatOpsCastIntegersToF32First) {
  const Tensor s = call1("aten.sin.default", vec({2147483647.0}, DType::Int32));
  EXPECT_EQ(s.dtype(), DType::Float32);
  // i32 2147483647 becomes f32 2^31 before sin, as in ATen.
  EXPECT_DOUBLE_EQ(s.get(0), static_cast<double>(static_cast<float>(std::sin(2147483648.0))));
  EXPECT_EQ(call1("aten.sqrt.default", vec({1, 0}, DType::Bool)).dtype(), DType::Float32);
  EXPECT_EQ(call1("aten.log.default", vec({1}, DType::Float16)).dtype(), DType::Float16);
  expect_values(call1("aten.reciprocal.default", vec({0, 2, -4}, DType::Int64)),
                {kInf, 0.5, -0.25});
  expect_values(call1("aten.sin.default", vec({1, 0}, DType::Bool)),
                {static_cast<float>(std::sin(1.0)), 0});
}

TEST(PointwiseMathDtypes, AbsAndRoundingKeepIntegers) {
  const Tensor a = call1("aten.abs.default", vec({-128, -5, 7}, DType::Int8));
  EXPECT_EQ(a.dtype(), DType::Int8);
  expect_values(a, {-128, 5, 7});  // abs(INT8_MIN) wraps
  for (const char* op :
       {"aten.ceil.default", "aten.floor.default", "aten.round.default", "aten.trunc.default"}) {
    const Tensor r = call1(op, vec({-3, 0, 9}, DType::Int16));
    EXPECT_EQ(r.dtype(), DType::Int16) << op;
    expect_values(r, {-3, 0, 9});
    EXPECT_NE(op_error_of([&] { call1(op, vec({1}, DType::Bool)); }), "") << op;
  }
  EXPECT_NE(op_error_of([] {
              call1("aten.abs.default", vec({1}, DType::Bool));
            }).find("not implemented for 'Bool'"),
            std::string::npos);
}

TEST(PointwiseMathRounding, HalfToEvenAndDirections) {
  expect_values(call1("aten.round.default", vec({0.5, 1.5, 2.5, -0.5, -1.5, -2.5}, DType::Float32)),
                {0, 2, 2, -0.0, -2, -2});
  expect_values(call1("aten.ceil.default", vec({-0.5, 0.5, kNan}, DType::BFloat16)),
                {-0.0, 1, kNan});
  expect_values(call1("aten.floor.default", vec({-0.5, 0.5, -kInf}, DType::Float64)),
                {-1, 0, -kInf});
  expect_values(call1("aten.trunc.default", vec({-1.7, 1.7}, DType::Float32)), {-1, 1});
}

TEST(PointwiseMathRounding, DecimalsInOpmath) {
  auto round = [](const Tensor& x, int64_t d) {
    return call("aten.round.decimals", {x, Value(d)})[0].tensor();
  };
  // f32 computes in float: 0.35f * 10 is 3.5f, rounded to 4 (in double it would be 3.4999...).
  expect_values(round(vec({0.25, 0.35, -0.25, 1.25, 2.675}, DType::Float32), 1),
                {0.2f, 0.4f, -0.2f, 1.2f, 2.7f});
  // f64: 2.675 * 100 rounds to 267.5 in double, then half to even gives 268.
  expect_values(round(vec({2.675, 1.005}, DType::Float64), 2), {2.68, 1.0});
  expect_values(round(vec({25, 35, -25, 15, 1234.5}, DType::Float32), -1), {20, 40, -20, 20, 1230});
  EXPECT_NE(op_error_of([&] { round(vec({1}, DType::Int64), 0); }), "");
}

TEST(PointwiseMathSign, NanZeroUnsignedBool) {
  for (const char* op : {"aten.sign.default", "aten.sgn.default"}) {
    expect_values(call1(op, vec({kNan, -0.0, 0.0, kInf, -2.5, 1e-30}, DType::Float32)),
                  {0, 0, 0, 1, -1, 1});
    expect_values(call1(op, vec({0, 200}, DType::UInt8)), {0, 1});
    const Tensor b = call1(op, vec({1, 0}, DType::Bool));
    EXPECT_EQ(b.dtype(), DType::Bool);
    expect_values(b, {1, 0});
    expect_values(call1(op, vec({-3, 0, 5}, DType::Int8)), {-1, 0, 1});
  }
}

TEST(PointwiseMathDomains, LogAcoshAtanhRsqrt) {
  expect_values(call1("aten.log.default", vec({-1, 0, -0.0, 1, kInf}, DType::Float32)),
                {kNan, -kInf, -kInf, 0, kInf});
  expect_values(call1("aten.acosh.default", vec({0.5, 1, -1}, DType::Float64)), {kNan, 0, kNan});
  expect_values(call1("aten.atanh.default", vec({-1, 1, 2}, DType::Float64)), {-kInf, kInf, kNan});
  expect_values(call1("aten.rsqrt.default", vec({-1, 0, -0.0, 4, kInf}, DType::Float32)),
                {kNan, kInf, -kInf, 0.5, 0});
  expect_values(call1("aten.sqrt.default", vec({-0.0, -1}, DType::Float32)), {-0.0, kNan});
  expect_values(call1("aten.erf.default", vec({kNan, kInf, -kInf}, DType::Float32)), {kNan, 1, -1});
}

TEST(PointwiseMathLogical, BitwiseNotIsnanIsinfLogicalNot) {
  const Tensor b = call1("aten.bitwise_not.default", vec({1, 0}, DType::Bool));
  EXPECT_EQ(b.dtype(), DType::Bool);
  expect_values(b, {0, 1});
  expect_values(call1("aten.bitwise_not.default", vec({0, 5, 253}, DType::UInt8)), {255, 250, 2});
  expect_values(call1("aten.bitwise_not.default", vec({0, -3}, DType::Int64)), {-1, 2});
  EXPECT_NE(op_error_of([] {
              call1("aten.bitwise_not.default", vec({1}, DType::Float32));
            }).find("not implemented for 'Float'"),
            std::string::npos);
  const Tensor n = call1("aten.isnan.default", vec({kNan, kInf, 1}, DType::Float16));
  EXPECT_EQ(n.dtype(), DType::Bool);
  expect_values(n, {1, 0, 0});
  expect_values(call1("aten.isinf.default", vec({kNan, kInf, -kInf, 1}, DType::Float32)),
                {0, 1, 1, 0});
  expect_values(call1("aten.isinf.default", vec({1, 2}, DType::Int64)), {0, 0});
  expect_values(call1("aten.logical_not.default", vec({kNan, 0, -0.0, 2}, DType::Float32)),
                {0, 1, 1, 0});
}

TEST(PointwiseMathInplace, MutatesAndChecksCasting) {
  const Tensor x = vec({0, 1, 4}, DType::Float32);
  const Values r = call("aten.sqrt_.default", {x});
  EXPECT_EQ(r[0].tensor().data_ptr(), x.data_ptr());
  expect_values(x, {0, 1, 2});
  EXPECT_NE(op_error_of([] {
              call("aten.sin_.default", {vec({1}, DType::Int64)});
            }).find("result type Float can't be cast to the desired output type Long"),
            std::string::npos);
  const Tensor i = vec({-3, 4}, DType::Int32);
  call("aten.abs_.default", {i});
  expect_values(i, {3, 4});
  call("aten.ceil_.default", {i});  // identity on integers
  expect_values(i, {3, 4});
  const Tensor expanded = vec({1}, DType::Float32).expand({3});
  EXPECT_NE(op_error_of([&] { call("aten.exp_.default", {expanded}); }).find("single memory"),
            std::string::npos);
  EXPECT_NE(op_error_of([] { call("aten.neg_.default", {vec({1}, DType::Bool)}); }), "");
}

TEST(PointwiseMathOut, DtypeRules) {
  const Tensor x = vec({0.5, -1}, DType::Float32);
  const Tensor o64 = Tensor::empty({2}, DType::Float64);
  const Values r = call("aten.sin.out", {x, o64});
  EXPECT_EQ(r[0].tensor().data_ptr(), o64.data_ptr());
  // Computed in f32, then cast to f64.
  EXPECT_EQ(o64.get(0), static_cast<double>(static_cast<float>(std::sin(0.5))));
  EXPECT_NE(op_error_of([&] {
              call("aten.abs.out", {x, o64});
            }).find("Found dtype Double but expected Float"),
            std::string::npos);
  EXPECT_NE(op_error_of([&] {
              call("aten.exp.out", {vec({1}, DType::Int64), Tensor::empty({1}, DType::Int64)});
            }).find("can't be cast"),
            std::string::npos);
  const Tensor oi = Tensor::empty({2}, DType::Int64);
  call("aten.neg.out", {vec({3, -4}, DType::Int64), oi});
  expect_values(oi, {-3, 4});
  const Tensor of = Tensor::empty({2}, DType::Float32);
  call("aten.reciprocal.out", {vec({2, 0}, DType::Int32), of});
  expect_values(of, {0.5, kInf});
}

TEST(PointwiseMathSamples, CountsAndReferenceRaisesExactlyOnErrorCases) {
  int ops = 0;
  for (const OpDef* op : math_ops().all()) {
    ++ops;
    EXPECT_EQ(op->family, "pointwise.math");
    const std::vector<Sample> ss = op->samples(SampleContext{false});
    EXPECT_GE(ss.size(), 8u) << op->name;
    std::set<std::string> labels;
    for (const Sample& s : ss) {
      EXPECT_TRUE(labels.insert(s.label).second) << op->name << ": duplicate label " << s.label;
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
        EXPECT_GE(op->run_cost(args, out).bytes, 0);
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OpError) << op->name << " " << text << ": " << e.what();
        error = e.what();
      }
      EXPECT_EQ(!error.empty(), s.label.starts_with("error:"))
          << op->name << " [" << s.label << "] " << text << ": " << error;
    }
    const std::vector<Sample> perf = op->samples(SampleContext{true});
    EXPECT_FALSE(perf.empty()) << op->name;
    for (const Sample& s : perf) {
      try {
        const Values args = materialize(*op, shrunk(s.call), 7);
        if (!s.label.starts_with("error:")) op->run_ref(args);
      } catch (const Error& e) {
        ADD_FAILURE() << op->name << " performance case [" << s.label << "]: " << e.what();
      }
    }
  }
  EXPECT_EQ(ops, 32 + 15 + 10);
}

}  // namespace
}  // namespace crucible

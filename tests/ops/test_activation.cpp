// ATen semantics of the activation and activation.backward catalog entries: integer limits of
// hardtanh/threshold, in-place overlap rules, float opmath overflow, the backward formulas at
// their kinks (NaN included), the self_is_result / is_result checks, promotion and broadcasting
// of backward ops, and that every sample materialises and raises exactly when labelled "error:".
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

const OpRegistry& act_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_activation_ops(*reg);
    register_activation_backward_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor call(const std::string& op, const Values& args) {
  return act_ops().get(op).run_ref(args).at(0).tensor();
}

Tensor vec(const std::vector<double>& vals, DType t) {
  Tensor x = Tensor::empty({static_cast<int64_t>(vals.size())}, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}
Tensor ones(int64_t n, DType t = DType::Float32) { return Tensor::full({n}, 1.0, t); }

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

void expect_near(const Tensor& t, const std::vector<double>& want, double tol = 1e-4) {
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const double got = t.get(static_cast<int64_t>(i));
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got)) << "element " << i;
    else if (std::isinf(want[i]))
      EXPECT_EQ(got, want[i]) << "element " << i;
    else
      EXPECT_NEAR(got, want[i], tol) << "element " << i;
  }
}

TEST(Activation, HardtanhIntegerLimitsAreTruncated) {
  const Tensor r =
      call("aten.hardtanh.default", {vec({1, 2, -3}, DType::Int64), Value(-0.5), Value(1.5)});
  EXPECT_EQ(r.dtype(), DType::Int64);
  expect_near(r, {1, 1, 0});
  expect_near(call("aten.hardtanh.default",
                   {vec({0, 3, 200}, DType::UInt8), Value(int64_t{0}), Value(int64_t{6})}),
              {0, 3, 6});
  // Truncated to 0: no longer negative, so u8 accepts it.
  expect_near(call("aten.hardtanh.default", {vec({1, 2, 3}, DType::UInt8), Value(0.5), Value(1.5)}),
              {1, 1, 1});
  EXPECT_NE(op_error_of([] {
              call("aten.hardtanh.default",
                   {vec({1}, DType::UInt8), Value(int64_t{-1}), Value(int64_t{1})});
            }).find("unsigned type with negative limits"),
            std::string::npos);
  EXPECT_NE(op_error_of([] {
              call("aten.hardtanh.default",
                   {vec({1}, DType::Bool), Value(int64_t{-1}), Value(int64_t{1})});
            }).find("Bool inputs not supported for hardtanh"),
            std::string::npos);
  // min > max gives max; NaN propagates.
  expect_near(call("aten.hardtanh.default",
                   {vec({0, 3, -2, kNan}, DType::Float32), Value(2.0), Value(1.0)}),
              {1, 1, 1, kNan});
  expect_near(call("aten.relu6.default", {vec({-1, 3, 7}, DType::Int8)}), {0, 3, 6});
}

TEST(Activation, ThresholdScalarsConvertToSelfsDtype) {
  expect_near(
      call("aten.threshold.default", {vec({1, 2, -3}, DType::Int8), Value(1.5), Value(-2.5)}),
      {-2, 2, -2});
  expect_near(call("aten.threshold.default",
                   {vec({kNan, 0.5, 0.25}, DType::Float32), Value(0.5), Value(9.0)}),
              {kNan, 9, 9});
  EXPECT_NE(op_error_of([] {
              call("aten.threshold.default", {vec({1}, DType::Bool), Value(0.0), Value(0.0)});
            }),
            "");
}

TEST(Activation, InplaceOverlap) {
  const Tensor base = vec({-1, 2, 0.25}, DType::Float32);
  const Tensor expanded = base.as_strided({2, 3}, {0, 1}, 0);
  // threshold_'s TensorIterator does not check overlap: allowed.
  call("aten.threshold_.default", {expanded, Value(0.5), Value(7.0)});
  expect_near(base, {7, 2, 7});
  EXPECT_NE(op_error_of([&] { call("aten.silu_.default", {expanded}); }).find("single memory"),
            std::string::npos);
  const Tensor x = vec({-1, 2}, DType::Float32);
  const Tensor r = call("aten.leaky_relu_.default", {x, Value(-0.5)});
  EXPECT_EQ(r.data_ptr(), x.data_ptr());
  expect_near(x, {0.5, 2});
  EXPECT_NE(op_error_of([] {
              call("aten.gelu_.default", {vec({1}, DType::Int64), Value("none")});
            }),
            "");
}

TEST(Activation, ForwardValues) {
  // hardswish computes x * clamp(x + 3, 0, 6) in float: it overflows to inf before / 6.
  expect_near(call("aten.hardswish.default", {vec({3e38, -4, 1, 4}, DType::Float32)}),
              {kInf, 0, 4.0 / 6.0, 4});
  expect_near(call("aten.hardsigmoid.default", {vec({-3, 0, 3, kNan}, DType::Float32)}),
              {0, 0.5, 1, kNan});
  expect_near(
      call("aten.softplus.default", {vec({-1, 0, 2, 30}, DType::Float32), Value(2.0), Value(5.0)}),
      {0.0635, 0.3466, 2.0091, 30});
  expect_near(call("aten.elu.default",
                   {vec({-1, 0, 2}, DType::Float32), Value(1.5), Value(2.0), Value(0.5)}),
              {1.5 * 2.0 * std::expm1(-0.5), 0, 4});
  expect_near(call("aten.mish.default", {vec({-kInf, kInf, 1}, DType::Float32)}),
              {kNan, kInf, std::tanh(std::log1p(std::exp(1.0)))});
  expect_near(call("aten.silu.default", {vec({1, -kInf}, DType::Float64)}),
              {1 / (1 + std::exp(-1.0)), kNan});
  EXPECT_NE(op_error_of([] {
              call("aten.silu.default", {vec({1}, DType::Int32)});
            }).find("not implemented for 'Int'"),
            std::string::npos);
}

TEST(ActivationBackward, KinksAndNan) {
  expect_near(
      call("aten.hardswish_backward.default", {ones(5), vec({-3, 3, -4, 4, kNan}, DType::Float32)}),
      {-0.5, 1, 0, 1, kNan});  // ATen's vectorized kernel: x >= 3 gives grad, NaN gives NaN
  expect_near(call("aten.hardsigmoid_backward.default",
                   {ones(5), vec({-3, 3, -2, 2, kNan}, DType::Float32)}),
              {0, 0, 1.0 / 6, 1.0 / 6, 0});
  expect_near(
      call("aten.hardtanh_backward.default", {ones(5), vec({-1, 1, -2, 0.5, kNan}, DType::Float32),
                                              Value(int64_t{-1}), Value(int64_t{1})}),
      {0, 0, 0, 1, 1});
  expect_near(call("aten.threshold_backward.default",
                   {ones(3), vec({kNan, 0, 1}, DType::Float32), Value(int64_t{0})}),
              {1, 0, 1});
  expect_near(
      call("aten.gelu_backward.default", {ones(3), vec({-1, 0, 2}, DType::Float32), Value("tanh")}),
      {-0.0830, 0.5, 1.0861});
  expect_near(call("aten.softplus_backward.default",
                   {ones(4), vec({-1, 0, 2, 30}, DType::Float32), Value(2.0), Value(5.0)}),
              {0.1192, 0.5, 0.9820, 1});
  // tanh_backward: out^2 overflows float's range -> -inf, as ATen's float kernel gives.
  expect_near(call("aten.tanh_backward.default",
                   {vec({1e-30, 1}, DType::Float32), vec({3e38, 0.5}, DType::Float32)}),
              {-kInf, 0.75});
}

TEST(ActivationBackward, JudgeAllowsFloatCancellationScaledByGrad) {
  const OpDef& op = act_ops().get("aten.gelu_backward.default");
  ASSERT_EQ(op.compare.kind, ComparePolicy::Kind::Custom);
  const Values in = {vec({1e30, 1.0, 2.0}, DType::Float32), vec({-4, 0.5, kNan}, DType::Float32),
                     Value("tanh")};
  const Tensor r = op.run_ref(in)[0].tensor();
  auto judge = [&](const std::vector<double>& cand) {
    return op.compare.custom(in, {Value(r)}, {Value(vec(cand, DType::Float32))}).at(0).passed;
  };
  // float's 1 + tanh(u) near u = -4 loses digits: 5e-4 relative of a 1e30 grad's tiny derivative.
  EXPECT_TRUE(judge({r.get(0) * (1 + 5e-4), r.get(1), kNan}));
  EXPECT_FALSE(judge({r.get(0) * 1.5, r.get(1), kNan}));
  EXPECT_FALSE(judge({r.get(0), r.get(1) * (1 + 1e-4), kNan}));  // ordinary elements: f32 rtol
  EXPECT_FALSE(judge({r.get(0), r.get(1), 0}));                  // NaN must meet NaN
}

TEST(ActivationBackward, ResultFlags) {
  EXPECT_NE(op_error_of([] {
              call("aten.leaky_relu_backward.default",
                   {ones(3), vec({-1, 0, 2}, DType::Float32), Value(-0.1), Value(true)});
            }).find("In-place leakyReLu backward"),
            std::string::npos);
  expect_near(call("aten.leaky_relu_backward.default",
                   {ones(3), vec({-1, 0, 2}, DType::Float32), Value(0.1), Value(true)}),
              {0.1, 0.1, 1});
  EXPECT_NE(op_error_of([] {
              call("aten.elu_backward.default", {ones(3), Value(-1.0), Value(1.0), Value(1.0),
                                                 Value(true), vec({-1, 0, 2}, DType::Float32)});
            }).find("In-place elu backward"),
            std::string::npos);
  expect_near(call("aten.elu_backward.default", {ones(3), Value(1.0), Value(2.0), Value(3.0),
                                                 Value(true), vec({-1, 0, 2}, DType::Float32)}),
              {3, 6, 2});
  expect_near(call("aten.elu_backward.default", {ones(3), Value(1.0), Value(2.0), Value(3.0),
                                                 Value(false), vec({-1, 0, 2}, DType::Float32)}),
              {0.2987, 6, 2});
}

TEST(ActivationBackward, PromotionBroadcastAndDtypes) {
  const Tensor p = call("aten.sigmoid_backward.default",
                        {vec({1, 2}, DType::Float32), vec({0.5, 0.25}, DType::Float64)});
  EXPECT_EQ(p.dtype(), DType::Float64);
  expect_near(p, {0.25, 2 * 0.75 * 0.25});
  const Tensor b = call("aten.tanh_backward.default", {Tensor::full({2, 3}, 1.0, DType::Float32),
                                                       vec({0, 0.5, 1}, DType::Float32)});
  EXPECT_EQ(b.shape(), (Shape{2, 3}));
  const Tensor ti = call("aten.threshold_backward.default",
                         {ones(3, DType::Int64), vec({-1, 0, 2}, DType::Int64), Value(int64_t{0})});
  EXPECT_EQ(ti.dtype(), DType::Int64);
  expect_near(ti, {0, 0, 1});
  EXPECT_EQ(call("aten.threshold_backward.default",
                 {ones(3), vec({-1, 0, 2}, DType::Int64), Value(int64_t{0})})
                .dtype(),
            DType::Float32);
  EXPECT_NE(op_error_of([] {
              call("aten.sigmoid_backward.default", {ones(3, DType::Int64), ones(3, DType::Int64)});
            }).find("not implemented for 'Long'"),
            std::string::npos);
  EXPECT_NE(op_error_of([] {
              call("aten.threshold_backward.default",
                   {ones(3, DType::Bool), ones(3, DType::Bool), Value(int64_t{0})});
            }),
            "");
}

TEST(ActivationSamples, CountsAndReferenceRaisesExactlyOnErrorCases) {
  for (const OpDef* op : act_ops().all()) {
    EXPECT_TRUE(op->family == "activation" || op->family == "activation.backward") << op->name;
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
  EXPECT_EQ(act_ops().all().size(), 19u + 12u);
}

}  // namespace
}  // namespace crucible

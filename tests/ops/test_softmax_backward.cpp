// ATen semantics of _softmax_backward_data and _log_softmax_backward_data: the formulas, the
// input_dtype rules on the CPU, dims and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& sb_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_softmax_backward_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor tensor(const std::vector<double>& vals, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}

Tensor run(bool log, const Tensor& g, const Tensor& o, int64_t dim, DType input_dtype) {
  const char* name =
      log ? "aten._log_softmax_backward_data.default" : "aten._softmax_backward_data.default";
  return sb_ops().get(name).run_ref({g, o, Value(dim), Value(input_dtype)})[0].tensor();
}

TEST(SoftmaxBackward, Formulas) {
  const DType f32 = DType::Float32;
  Tensor s = run(false, tensor({1, 0}, {1, 2}, f32), tensor({0.25, 0.75}, {1, 2}, f32), 1, f32);
  EXPECT_FLOAT_EQ(s.get(0), 0.1875f);
  EXPECT_FLOAT_EQ(s.get(1), -0.1875f);
  Tensor l = run(true, tensor({1, 2}, {2}, f32), tensor({std::log(0.25), std::log(0.75)}, {2}, f32),
                 0, f32);
  EXPECT_FLOAT_EQ(l.get(0), 0.25f);
  EXPECT_FLOAT_EQ(l.get(1), -0.25f);
  // Along dim 0 of a [2, 1] tensor.
  Tensor c = run(false, tensor({1, 0}, {2, 1}, f32), tensor({0.25, 0.75}, {2, 1}, f32), -2, f32);
  EXPECT_FLOAT_EQ(c.get(1), -0.1875f);
}

TEST(SoftmaxBackward, InputDtypeRules) {
  const DType f32 = DType::Float32;
  const Tensor g = tensor({1, 0}, {2}, f32), o = tensor({0.5, 0.5}, {2}, f32);
  EXPECT_EQ(run(false, g, o, 0, DType::Float64).dtype(), f32);  // ignored on the CPU
  // f32 grad with input_dtype f16: the backward of CUDA's half_to_float softmax, an f16 result.
  const Tensor h = run(false, g, o, 0, DType::Float16);
  EXPECT_EQ(h.dtype(), DType::Float16);
  EXPECT_EQ(h.get(0), run(false, g, o, 0, f32).get(0));
  EXPECT_THROW(run(true, g, o.to(DType::Float64), 0, f32), Error);
  EXPECT_THROW(run(false, g, tensor({1, 2, 3}, {3}, f32), 0, f32), Error);
  EXPECT_EQ(run(false, g.to(DType::BFloat16), o.to(DType::BFloat16), 0, DType::BFloat16).dtype(),
            DType::BFloat16);
  EXPECT_THROW(run(false, g.to(DType::Int64), o.to(DType::Int64), 0, DType::Int64), Error);
}

// `output` is the forward's output in every suite, a trace's call included: a log_softmax
// output is <= 0 and a softmax output in [0, 1]. Drawn as signed normal data, a large call's
// exp(output) reaches e^6 and no f32 kernel (ATen's included) stays within tolerance.
TEST(SoftmaxBackward, ATracedCallsOutputIsWhatTheForwardCanProduce) {
  for (bool log : {true, false}) {
    const OpDef& op = sb_ops().get(log ? "aten._log_softmax_backward_data.default"
                                       : "aten._softmax_backward_data.default");
    const Values args = materialize(
        op, cases::parse_call("((T([64, 300], f32), T([64, 300], f32), 1, f32), {})"), 3);
    const Tensor& out = args[1].tensor();
    double lo = 1e300, hi = -1e300;
    for (int64_t i = 0; i < out.numel(); ++i) {
      lo = std::min(lo, out.get(i));
      hi = std::max(hi, out.get(i));
    }
    if (log) {
      EXPECT_LE(hi, 0.0);
      EXPECT_LT(lo, -1.0);  // spread, not a constant
    } else {
      EXPECT_GE(lo, 0.0);
      EXPECT_LE(hi, 1.0);
    }
    // grad_output stays signed data.
    const Tensor& g = args[0].tensor();
    bool negative = false, positive = false;
    for (int64_t i = 0; i < g.numel(); ++i) (g.get(i) < 0 ? negative : positive) = true;
    EXPECT_TRUE(negative && positive);
  }
}

}  // namespace
}  // namespace crucible

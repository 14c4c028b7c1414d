// ATen semantics of _softmax_backward_data and _log_softmax_backward_data: the formulas, the
// input_dtype rules on the CPU, dims and errors.
#include <gtest/gtest.h>

#include <vector>

#include "crucible/core/error.h"
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

}  // namespace
}  // namespace crucible

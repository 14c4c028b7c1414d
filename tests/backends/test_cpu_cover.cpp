// Calls the cpu backend takes through kernels that once refused them: integer gradients of the
// activation backward ops (promoted with a floating self, also through their out= forms),
// addcdiv with an integral self, bool products that never reach ATen's dispatch (empty inner
// dimension or result), and the errors these paths must keep (all-integral operands, a
// non-empty bool product, an out= with internal overlap).
#include <gtest/gtest.h>

#include <string>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32, i64 = DType::Int64;

Values run_cpu(const std::string& name, const Values& args) {
  auto cpu = make_cpu_backend();
  return cpu->run(OpRegistry::catalog().get(name), args);
}

// The op error `name` raises on `args` on cpu (empty when it does not raise one).
std::string cpu_error(const std::string& name, const Values& args) {
  try {
    run_cpu(name, args);
  } catch (const Error& e) {
    return e.kind() == ErrorKind::OpError ? e.what() : std::string("not an op error: ") + e.what();
  }
  return "";
}

TEST(CpuCover, ActivationBackwardWithIntegerGrad) {
  const Tensor g = filled({6, 7}, i64), x = filled({6, 7}, f32, 2);
  // grad 1 everywhere: sigmoid_backward is (1 - y) * y.
  Tensor ones = Tensor::empty({3}, i64), y = Tensor::empty({3}, f32);
  for (int64_t i = 0; i < 3; ++i) {
    ones.set_int(i, 1);
    y.set(i, 0.25 * static_cast<double>(i + 1));
  }
  const Tensor s = run_cpu("aten.sigmoid_backward.default", {ones, y}).at(0).tensor();
  EXPECT_EQ(s.dtype(), f32);
  EXPECT_FLOAT_EQ(static_cast<float>(s.get(0)), 0.1875f);
  EXPECT_FLOAT_EQ(static_cast<float>(s.get(1)), 0.25f);
  for (const char* op :
       {"aten.sigmoid_backward.default", "aten.tanh_backward.default", "aten.silu_backward.default",
        "aten.mish_backward.default", "aten.hardsigmoid_backward.default",
        "aten.hardswish_backward.default", "aten.gelu_backward.default"})
    expect_matches_ref(op, {g, x});
  expect_matches_ref("aten.gelu_backward.default", {g, x, Value("tanh")});
  expect_matches_ref("aten.leaky_relu_backward.default", {g, x, Value(0.2), Value(false)});
  expect_matches_ref("aten.softplus_backward.default", {g, x, Value(2.0), Value(1.0)});
  expect_matches_ref("aten.elu_backward.default",
                     {g, Value(1.5), Value(2.0), Value(0.5), Value(false), x});
  // The derived out= forms run the same kernel.
  expect_matches_ref("aten.tanh_backward.grad_input", {g, x, Tensor::empty({6, 7}, f32)});
  expect_matches_ref("aten.hardswish_backward.out", {g, x, Tensor::empty({6, 7}, f32)});
  // Integral grad and self: no floating result, ATen raises.
  EXPECT_NE(cpu_error("aten.sigmoid_backward.default", {g, filled({6, 7}, i64)}), "");
}

TEST(CpuCover, AddcdivWithIntegralSelf) {
  const Tensor self = filled({6, 7}, i64), t1 = filled({6, 7}, f32, 2), t2 = filled({6, 7}, i64, 3);
  const Values out = expect_matches_ref("aten.addcdiv.default", {self, t1, t2, Value(0.5)});
  EXPECT_EQ(out.at(0).tensor().dtype(), f32);
  // self 3 + 0.5 * 2 / 4 = 3.25.
  Tensor s = Tensor::empty({1}, i64), a = Tensor::empty({1}, f32), b = Tensor::empty({1}, i64);
  s.set_int(0, 3);
  a.set(0, 2.0);
  b.set_int(0, 4);
  EXPECT_EQ(run_cpu("aten.addcdiv.default", {s, a, b, Value(0.5)}).at(0).tensor().get(0), 3.25);
  expect_matches_ref("aten.addcdiv.out",
                     {self, t1, t2, Value(int64_t{1}), Tensor::empty({7, 6}, f32).transpose(0, 1)});
  // Integer tensor1 and tensor2: ATen refuses integer division.
  EXPECT_NE(cpu_error("aten.addcdiv.default", {t1, self, t2, Value(int64_t{1})})
                .find("Integer division with addcdiv"),
            std::string::npos);
}

TEST(CpuCover, BoolProductsThatNeverReachTheDispatch) {
  const DType b8 = DType::Bool;
  const Tensor z =
      run_cpu("aten.mm.default", {Tensor::empty({4, 0}, b8), Tensor::empty({0, 3}, b8)})
          .at(0)
          .tensor();
  ASSERT_EQ(z.shape(), (Shape{4, 3}));
  EXPECT_EQ(z.dtype(), b8);
  for (int64_t i = 0; i < z.numel(); ++i) EXPECT_EQ(z.get_int(i), 0);
  expect_matches_ref("aten.mm.default", {Tensor::empty({0, 5}, b8), Tensor::empty({5, 3}, b8)});
  expect_matches_ref("aten.bmm.default",
                     {Tensor::empty({2, 4, 0}, b8), Tensor::empty({2, 0, 3}, b8)});
  // addmm with an empty inner dimension: beta * self (as integers, stored as bool).
  Tensor self = Tensor::empty({4, 3}, b8);
  for (int64_t i = 0; i < 12; ++i) self.set_int(i, i % 2);
  const Values am = expect_matches_ref("aten.addmm.default",
                                       {self, Tensor::empty({4, 0}, b8), Tensor::empty({0, 3}, b8),
                                        Value(int64_t{1}), Value(int64_t{1})});
  EXPECT_EQ(am.at(0).tensor().get_int(1), 1);
  EXPECT_EQ(am.at(0).tensor().get_int(2), 0);
  // A product that is not empty reaches the dispatch, which has no bool kernel.
  Tensor a = Tensor::empty({2, 2}, b8);
  EXPECT_EQ(cpu_error("aten.mm.default", {a, a}), "\"addmm_impl_cpu_\" not implemented for 'Bool'");
}

TEST(CpuCover, OutWithInternalOverlapRaises) {
  const Tensor expanded = Tensor::empty({1, 8}, f32).expand({5, 8});
  for (const char* op : {"aten.neg.out", "aten.abs.out"})
    EXPECT_NE(cpu_error(op, {filled({5, 8}, f32), expanded})
                  .find("more than one element of the written-to tensor refers to a single "
                        "memory location"),
              std::string::npos)
        << op;
  expect_matches_ref("aten.neg.out",
                     {filled({5, 8}, f32), Tensor::empty({8, 5}, f32).transpose(0, 1)});
}

}  // namespace
}  // namespace crucible::cpu_test

// ATen semantics of mse_loss and mse_loss_backward (values checked against torch).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "arith_test_util.h"
#include "ops/families.h"

namespace crucible {
namespace {

using namespace arith_test;  // NOLINT(google-build-using-namespace)

const OpRegistry& ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_loss_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor call(const std::string& op, const Values& args) {
  return ops().get(op).run_ref(args).at(0).tensor();
}

Value red(int64_t r) { return Value(r); }

TEST(LossOps, MseLossReductions) {
  const Tensor a = vec({1, 2}, DType::Float32), b = vec({2, 4}, DType::Float32);
  Tensor r = call("aten.mse_loss.default", {a, b, red(1)});
  EXPECT_EQ(r.dim(), 0);
  EXPECT_EQ(r.get(0), 2.5);
  EXPECT_EQ(call("aten.mse_loss.default", {a, b, red(2)}).get(0), 5);
  EXPECT_EQ(values(call("aten.mse_loss.default", {a, b, red(0)})), (std::vector<double>{1, 4}));
  r = call("aten.mse_loss.default", {a, tensor({2, 4, 0, 0}, {2, 2}, DType::Float32), red(0)});
  EXPECT_EQ(values(r), (std::vector<double>{1, 4, 1, 4}));
  EXPECT_EQ(call("aten.mse_loss.default", {a, vec({2, 4}, DType::Float64), red(1)}).dtype(),
            DType::Float64);
  EXPECT_EQ(call("aten.mse_loss.default", {vec({1, 2}, DType::Int64), b, red(0)}).dtype(),
            DType::Float32);
  EXPECT_TRUE(std::isnan(
      call("aten.mse_loss.default", {vec({}, DType::Float32), vec({}, DType::Float32), red(1)})
          .get(0)));
  EXPECT_EQ(
      call("aten.mse_loss.default", {vec({}, DType::Float32), vec({}, DType::Float32), red(2)})
          .get(0),
      0);
  EXPECT_EQ(call("aten.mse_loss.default",
                 {scalar(1, DType::Float32), vec({3, 4}, DType::Float32), red(1)})
                .get(0),
            6.5);
  EXPECT_EQ(
      op_error_of([] {
        call("aten.mse_loss.default", {vec({1}, DType::Int64), vec({1}, DType::Int64), red(1)});
      }),
      "\"mse_cpu\" not implemented for 'Long'");
  EXPECT_NE(op_error_of([&] { call("aten.mse_loss.default", {a, b, red(3)}); }), "");
  // Elements are materialised in f16 before the mean: 300^2 overflows to inf.
  EXPECT_TRUE(std::isinf(call("aten.mse_loss.default",
                              {vec({300, 0}, DType::Float16), vec({0, 0}, DType::Float16), red(1)})
                             .get(0)));
}

TEST(LossOps, MseLossBackward) {
  const Tensor g = scalar(2, DType::Float32), a = vec({1, 2}, DType::Float32),
               b = vec({2, 5}, DType::Float32);
  EXPECT_EQ(values(call("aten.mse_loss_backward.default", {g, a, b, red(1)})),
            (std::vector<double>{-2, -6}));
  EXPECT_EQ(values(call("aten.mse_loss_backward.default", {g, a, b, red(2)})),
            (std::vector<double>{-4, -12}));
  EXPECT_EQ(
      values(call("aten.mse_loss_backward.default", {vec({1, 3}, DType::Float32), a, b, red(0)})),
      (std::vector<double>{-2, -18}));
  // norm uses self's numel even when the result broadcasts beyond self.
  Tensor r = call("aten.mse_loss_backward.default",
                  {g, a, tensor({2, 5, 0, 0}, {2, 2}, DType::Float32), red(1)});
  EXPECT_EQ(values(r), (std::vector<double>{-2, -6, 2, 4}));
  // Integers: the norm is truncated (2/3 -> 0, 2/2 -> 1).
  EXPECT_EQ(values(call("aten.mse_loss_backward.default",
                        {scalar(1, DType::Int64), vec({1, 2, 3}, DType::Int64),
                         vec({2, 5, 7}, DType::Int64), red(1)})),
            (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(values(call("aten.mse_loss_backward.default",
                        {scalar(1, DType::Int64), vec({1, 2}, DType::Int64),
                         vec({2, 5}, DType::Int64), red(1)})),
            (std::vector<double>{-1, -3}));
  EXPECT_EQ(values(call(
                "aten.mse_loss_backward.default",
                {scalar(1, DType::UInt8), vec({1}, DType::UInt8), vec({3}, DType::UInt8), red(2)})),
            (std::vector<double>{252}));
  EXPECT_EQ(op_error_of([&] {
              call("aten.mse_loss_backward.default", {scalar(2, DType::Float64), a, b, red(1)});
            }),
            "Found dtype Double but expected Float");
  EXPECT_EQ(op_error_of([] {
              const Tensor t = vec({1}, DType::Bool);
              call("aten.mse_loss_backward.default", {scalar(1, DType::Bool), t, t, red(2)});
            }),
            "\"mse_backward_cpu_out\" not implemented for 'Bool'");
}

TEST(LossOps, EverySampleRunsAndRaisesExactlyOnErrorCases) {
  EXPECT_EQ(ops().all().size(), 2u);
  check_family_samples(ops());
  // Reductions widen the tolerance by sqrt(n).
  const OpDef& mse = ops().get("aten.mse_loss.default");
  EXPECT_EQ(mse.compare.tol_scale({Tensor::empty({10, 10}, DType::Float32),
                                   Tensor::empty({10}, DType::Float32), red(1)}),
            10);
  EXPECT_EQ(mse.compare.tol_scale({Tensor::empty({10, 10}, DType::Float32),
                                   Tensor::empty({10}, DType::Float32), red(0)}),
            1);
}

}  // namespace
}  // namespace crucible

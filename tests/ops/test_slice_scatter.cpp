// ATen semantics of the view backward/scatter ops, with values checked against torch.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& scatter_view_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_slice_scatter_ops(*reg);
    return reg;
  }();
  return *r;
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

Tensor tensor(const std::vector<double>& vals, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get(i));
  return v;
}

// Every op: >= 8 correctness samples, each materialises, and its reference raises exactly when
// the label starts with "error:".
void check_all_samples(const OpRegistry& reg) {
  for (const OpDef* op : reg.all()) {
    const auto samples = op->samples(SampleContext{false});
    EXPECT_GE(samples.size(), 8u) << op->name;
    for (const Sample& s : samples) {
      const bool must_raise = s.label.rfind("error:", 0) == 0;
      bool raised = false;
      std::string msg;
      try {
        const Values args = materialize(*op, s.call, 7);
        op->run_ref(args, 7);
      } catch (const Error& e) {
        raised = true;
        msg = e.what();
      }
      EXPECT_EQ(raised, must_raise) << op->name << " / " << s.label << ": " << msg;
    }
    EXPECT_FALSE(op->samples(SampleContext{true}).empty()) << op->name;
  }
}

Tensor run1(const std::string& op, Values args) {
  return scatter_view_ops().get(op).run_ref(args)[0].tensor();
}
Value list(std::vector<int64_t> v) { return Value(std::move(v)); }

TEST(SliceScatterOps, Backward) {
  const Tensor g = tensor({1, 2}, {2}, DType::Float32);
  EXPECT_EQ(values_of(run1("aten.select_backward.default", {g, list({2, 2}), Value(1), Value(-1)})),
            std::vector<double>({0, 1, 0, 2}));
  EXPECT_EQ(values_of(run1("aten.slice_backward.default",
                           {g, list({5}), Value(0), Value(1), Value(100), Value(2)})),
            std::vector<double>({0, 1, 0, 2, 0}));
  EXPECT_EQ(run1("aten.select_backward.default", {g, list({2, 2}), Value(0), Value(0)}).dtype(),
            DType::Float32);
}

TEST(SliceScatterOps, Scatter) {
  const Tensor z = Tensor::zeros({2, 3}, DType::Float32);
  EXPECT_EQ(values_of(run1("aten.diagonal_scatter.default",
                           {z, tensor({1, 2}, {2}, DType::Float32), Value(1), Value(0), Value(1)})),
            std::vector<double>({0, 1, 0, 0, 0, 2}));
  // src of another dtype is converted; the result keeps self's dtype; self is not modified.
  Tensor s = run1("aten.select_scatter.default",
                  {z, tensor({7, 8, 9}, {3}, DType::Int64), Value(0), Value(1)});
  EXPECT_EQ(s.dtype(), DType::Float32);
  EXPECT_EQ(values_of(s), std::vector<double>({0, 0, 0, 7, 8, 9}));
  EXPECT_EQ(z.get(3), 0.0);
  EXPECT_EQ(op_error_of([&] {
              run1("aten.slice_scatter.default", {z, Tensor::zeros({2, 1}, DType::Float32),
                                                  Value(1), Value(0), Value(2), Value(1)});
            }),
            "expected src to have a size equal to the slice of self. src size = [2, 1], slice size "
            "= [2, 2]");
}

TEST(SliceScatterOps, AsStridedScatterKeepsDenseLayouts) {
  // torch.as_strided_scatter(z.t(), -ones(6), [6], [2]) with z = arange(12).view(3, 4): the clone
  // keeps the transposed strides, so storage positions 0, 2, ..., 10 are rows 0 and 2.
  Tensor z = Tensor::empty({3, 4}, DType::Float32);
  for (int64_t i = 0; i < 12; ++i) z.set(i, static_cast<double>(i));
  const Tensor zt = z.transpose(0, 1);
  Tensor out = run1("aten.as_strided_scatter.default",
                    {zt, Tensor::full({6}, -1, DType::Float32), list({6}), list({2}), Value()});
  EXPECT_EQ(values_of(out), std::vector<double>({-1, -1, -1, 1, 5, 9, -1, -1, -1, 3, 7, 11}));
  // A sliced (not dense) self is cloned contiguously.
  out = run1(
      "aten.as_strided_scatter.default",
      {z.slice(1, 0, 4, 2), Tensor::full({3}, -1, DType::Float32), list({3}), list({2}), Value()});
  EXPECT_EQ(values_of(out), std::vector<double>({-1, 2, -1, 6, -1, 10}));
}

TEST(SliceScatterOps, SamplesMaterialiseAndRaiseAsLabelled) {
  check_all_samples(scatter_view_ops());
}

}  // namespace
}  // namespace crucible

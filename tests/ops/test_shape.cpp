// ATen semantics of the shape views and their _copy variants: sizes, strides and storage
// offsets exactly as ATen computes them (checked against torch), sharing of storage, and the
// error conditions.
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

const OpRegistry& shape_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_shape_ops(*reg);
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

Values run(const std::string& op, Values args) { return shape_ops().get(op).run_ref(args); }
Tensor run1(const std::string& op, Values args) { return run(op, std::move(args))[0].tensor(); }

TEST(ShapeOps, DiagonalStridesAndOffset) {
  const Tensor x = Tensor::zeros({3, 4, 5}, DType::Float32);
  // torch.diagonal(x, 1, 0, 2): [4, 3], strides (5, 21), offset 1.
  Tensor d = run1("aten.diagonal.default", {x, Value(1), Value(0), Value(2)});
  EXPECT_EQ(d.shape(), Shape({4, 3}));
  EXPECT_EQ(d.strides(), Shape({5, 21}));
  EXPECT_EQ(d.offset(), 1);
  EXPECT_TRUE(d.shares_storage(x));
  // Negative offset moves by -offset * stride(dim1): torch.diagonal(x, -2, 2, 0) -> offset 2.
  d = run1("aten.diagonal.default", {x, Value(-2), Value(2), Value(0)});
  EXPECT_EQ(d.shape(), Shape({4, 3}));
  EXPECT_EQ(d.offset(), 2);
  // Past the end: length 0 and the offset is not moved.
  d = run1("aten.diagonal.default", {x, Value(7), Value(0), Value(2)});
  EXPECT_EQ(d.shape(), Shape({4, 0}));
  EXPECT_EQ(d.offset(), 0);
  EXPECT_NE(op_error_of([&] {
              run1("aten.diagonal.default", {x, Value(0), Value(1), Value(-2)});
            }).find("diagonal dimensions cannot be identical"),
            std::string::npos);
}

TEST(ShapeOps, ExpandUnsqueezeAsStrided) {
  Tensor e = run1("aten.expand.default", {Tensor::zeros({3, 1}, DType::Float32),
                                          Value(std::vector<int64_t>{2, -1, 4}), Value(false)});
  EXPECT_EQ(e.shape(), Shape({2, 3, 4}));
  EXPECT_EQ(e.strides(), Shape({0, 1, 0}));
  const Tensor tr = Tensor::zeros({3, 4}, DType::Float32).transpose(0, 1);
  Tensor u = run1("aten.unsqueeze.default", {tr, Value(1)});
  EXPECT_EQ(u.strides(), Shape({1, 12, 4}));
  // storage_offset None keeps the input's (absolute) offset.
  const Tensor sl = Tensor::zeros({10}, DType::Float32).slice(0, 2, 10);
  Tensor s = run1("aten.as_strided.default", {sl, Value(std::vector<int64_t>{2, 2}),
                                              Value(std::vector<int64_t>{3, 1}), Value()});
  EXPECT_EQ(s.offset(), 2);
  s = run1("aten.as_strided.default",
           {sl, Value(std::vector<int64_t>{2}), Value(std::vector<int64_t>{1}), Value(0)});
  EXPECT_EQ(s.offset(), 0);
  EXPECT_NE(op_error_of([&] {
              run1("aten.as_strided.default", {sl, Value(std::vector<int64_t>{4, 4}),
                                               Value(std::vector<int64_t>{4, 1}), Value()});
            }),
            "");
}

TEST(ShapeOps, SliceClampsAndRejectsBadSteps) {
  const Tensor x = Tensor::zeros({8, 3}, DType::Float32);
  // aten.slice(x, 0, -5, -1, 2): [2, 3], strides (6, 1), offset 9.
  Tensor s = run1("aten.slice.Tensor", {x, Value(0), Value(-5), Value(-1), Value(2)});
  EXPECT_EQ(s.shape(), Shape({2, 3}));
  EXPECT_EQ(s.strides(), Shape({6, 1}));
  EXPECT_EQ(s.offset(), 9);
  s = run1("aten.slice.Tensor", {x, Value(0), Value(), Value(), Value(1)});
  EXPECT_EQ(s.shape(), Shape({8, 3}));
  s = run1("aten.slice.Tensor", {x, Value(0), Value(6), Value(2), Value(1)});
  EXPECT_EQ(s.shape(), Shape({0, 3}));
  s = run1("aten.slice.Tensor", {x, Value(0), Value(-100), Value(INT64_MAX), Value(3)});
  EXPECT_EQ(s.shape(), Shape({3, 3}));
  EXPECT_EQ(op_error_of([&] {
              run1("aten.slice.Tensor", {x, Value(0), Value(), Value(), Value(0)});
            }),
            "slice step must be positive");
  EXPECT_NE(op_error_of([&] {
              run1("aten.slice.Tensor", {x, Value(0), Value(), Value(), Value(-1)});
            }),
            "");
}

TEST(ShapeOps, SplitUnbindSqueezeT) {
  const Tensor x = Tensor::zeros({7, 3}, DType::Float32);
  Values out = run("aten.split.Tensor", {x, Value(3), Value(0)});
  ASSERT_EQ(out[0].kind(), ValueKind::TensorList);
  const auto& parts = out[0].tensors();
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].shape(), Shape({1, 3}));
  EXPECT_EQ(parts[2].offset(), 18);
  EXPECT_TRUE(parts[1].shares_storage(x));
  EXPECT_EQ(run("aten.split.Tensor", {Tensor::zeros({0, 3}, DType::Float32), Value(0), Value(0)})[0]
                .tensors()
                .size(),
            1u);
  EXPECT_NE(
      op_error_of([&] {
        run("aten.split_with_sizes.default", {x, Value(std::vector<int64_t>{3, 3}), Value(0)});
      }).find("split_with_sizes expects split_sizes to sum exactly to 7"),
      std::string::npos);
  const auto rows = run("aten.unbind.int", {x, Value(-1)})[0].tensors();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].shape(), Shape({7}));
  EXPECT_EQ(rows[1].strides(), Shape({3}));
  EXPECT_EQ(run1("aten.squeeze.default", {Tensor::zeros({1, 3, 1}, DType::Float32)}).shape(),
            Shape({3}));
  EXPECT_EQ(run1("aten.squeeze.dim", {Tensor::zeros({1, 3}, DType::Float32), Value(1)}).shape(),
            Shape({1, 3}));
  EXPECT_EQ(run1("aten.squeeze.dim", {Tensor::scalar(1, DType::Float32), Value(-1)}).dim(), 0);
  EXPECT_EQ(op_error_of([&] {
              run1("aten.squeeze.dims",
                   {Tensor::zeros({1, 3, 1}, DType::Float32), Value(std::vector<int64_t>{2, -1})});
            }),
            "dim 2 appears multiple times in the list of dims");
  EXPECT_EQ(run1("aten.t.default", {Tensor::zeros({5}, DType::Float32)}).shape(), Shape({5}));
  EXPECT_EQ(op_error_of([&] {
              run1("aten.t.default", {Tensor::zeros({2, 2, 2}, DType::Float32)});
            }),
            "t() expects a tensor with <= 2 dimensions, but self is 3D");
}

TEST(ShapeOps, CopyVariantsAreFreshAndContiguous) {
  Tensor x = tensor({0, 1, 2, 3, 4, 5}, {2, 3}, DType::Int64);
  Tensor t = run1("aten.t_copy.default", {x});
  EXPECT_FALSE(t.shares_storage(x));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(values_of(t), std::vector<double>({0, 3, 1, 4, 2, 5}));
  const auto parts = run("aten.unbind_copy.int", {x, Value(1)})[0].tensors();
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_FALSE(parts[2].shares_storage(x));
  EXPECT_EQ(values_of(parts[2]), std::vector<double>({2, 5}));
  EXPECT_FALSE(shape_ops().get("aten.t_copy.default").compare.output_is_view);
  EXPECT_TRUE(shape_ops().get("aten.t.default").compare.output_is_view);
  EXPECT_TRUE(shape_ops().get("aten.split.Tensor").compare.output_is_view);
  // _unsafe_view's schema has no alias annotation: the reference returns a copy.
  Tensor v = run1("aten._unsafe_view.default", {x, Value(std::vector<int64_t>{3, 2})});
  EXPECT_FALSE(v.shares_storage(x));
  EXPECT_EQ(v.shape(), Shape({3, 2}));
}

TEST(ShapeOps, SamplesMaterialiseAndRaiseAsLabelled) { check_all_samples(shape_ops()); }

}  // namespace
}  // namespace crucible

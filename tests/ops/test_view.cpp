// ATen semantics of view and permute: they return views sharing storage with the right
// shapes and strides, and raise ATen's errors for incompatible shapes and bad permutations.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& view_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_view_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor view(const Tensor& x, std::vector<int64_t> size) {
  return view_ops().get("aten.view.default").run_ref({x, Value(std::move(size))})[0].tensor();
}
Tensor permute(const Tensor& x, std::vector<int64_t> dims) {
  return view_ops().get("aten.permute.default").run_ref({x, Value(std::move(dims))})[0].tensor();
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

TEST(View, SharesStorageAndInfersSize) {
  const Tensor x = Tensor::zeros({2, 3, 4}, DType::Float32);
  Tensor v = view(x, {6, -1});
  EXPECT_EQ(v.shape(), Shape({6, 4}));
  EXPECT_EQ(v.strides(), Shape({4, 1}));
  EXPECT_TRUE(v.shares_storage(x));
  v.set(5, 7.0);
  EXPECT_EQ(x.get(5), 7.0);  // a write through the view is seen by the input
  EXPECT_EQ(view(Tensor::scalar(1.0, DType::Int64), {1}).shape(), Shape({1}));
  EXPECT_EQ(view(Tensor::zeros({1}, DType::Float32), {}).dim(), 0);
  EXPECT_TRUE(view_ops().get("aten.view.default").compare.output_is_view);
}

TEST(View, NonContiguousInputs) {
  const Tensor t = Tensor::zeros({6, 4}, DType::Float32).transpose(0, 1);  // [4, 6], (1, 4)
  EXPECT_EQ(view(t, {4, 6, 1}).strides()[1], 4);
  EXPECT_NE(op_error_of([&] { view(t, {24}); }).find("view size is not compatible"),
            std::string::npos);
}

TEST(View, BadSizes) {
  const Tensor x = Tensor::zeros({4, 6}, DType::Float32);
  EXPECT_NE(op_error_of([&] { view(x, {5, 5}); }), "");
  EXPECT_NE(op_error_of([&] { view(x, {-1, -1}); }), "");
  EXPECT_NE(op_error_of([&] { view(Tensor::zeros({0, 4}, DType::Float32), {-1, 0}); }), "");
}

TEST(Permute, StridesArePermuted) {
  const Tensor x = Tensor::zeros({2, 3, 4}, DType::Float16);
  Tensor p = permute(x, {2, 0, -2});
  EXPECT_EQ(p.shape(), Shape({4, 2, 3}));
  EXPECT_EQ(p.strides(), Shape({1, 12, 4}));
  EXPECT_TRUE(p.shares_storage(x));
  EXPECT_EQ(permute(Tensor::scalar(2.0, DType::Float32), {}).dim(), 0);
  EXPECT_TRUE(view_ops().get("aten.permute.default").compare.output_is_view);
}

TEST(Permute, Errors) {
  const Tensor x = Tensor::zeros({2, 3, 4}, DType::Float32);
  EXPECT_EQ(op_error_of([&] {
              permute(x, {0, 1, 1});
            }),
            "permute(): duplicate dims are not allowed.");
  EXPECT_NE(op_error_of([&] {
              permute(x, {1, 0});
            }).find("input.dim() = 3 is not equal to len(dims) = 2"),
            std::string::npos);
  EXPECT_EQ(op_error_of([&] {
              permute(x, {0, 1, 3});
            }),
            "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
}

}  // namespace
}  // namespace crucible

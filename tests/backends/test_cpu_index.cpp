// The cpu backend's embedding and indexing-along-a-dim kernels against the reference:
// embedding (any dtype) and its dense backward (padding_idx, scale_grad_by_freq), index_select,
// gather, scatter_add and index_add (duplicates accumulate), out-of-range indices raise.
#include <gtest/gtest.h>

#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;

Tensor indices(const std::vector<int64_t>& v, const Shape& shape, DType dt = DType::Int64) {
  Tensor t = Tensor::empty(shape, dt);
  for (size_t i = 0; i < v.size(); ++i) t.set_int(static_cast<int64_t>(i), v[i]);
  return t;
}

TEST(CpuIndex, EmbeddingAndDenseBackward) {
  const Tensor w = filled({10, 7}, f32);
  const Tensor idx = indices({3, 0, 9, 3, 3, 5}, {2, 3});
  const Values out = expect_matches_ref("aten.embedding.default",
                                        {w, idx, Value(int64_t{-1}), Value(false), Value(false)});
  EXPECT_EQ(out[0].tensor().shape(), (Shape{2, 3, 7}));
  EXPECT_EQ(out[0].tensor().get(7 * 2 + 4), w.get(9 * 7 + 4));
  expect_matches_ref("aten.embedding.default",
                     {filled({4, 3}, DType::Int16), indices({1, 2}, {2}, DType::Int32),
                      Value(int64_t{-1}), Value(false), Value(false)});
  for (bool scale : {false, true}) {
    expect_matches_ref(
        "aten.embedding_dense_backward.default",
        {filled({2, 3, 37}, f32, 2), idx, Value(int64_t{10}), Value(int64_t{5}), Value(scale)});
  }
  auto cpu = make_cpu_backend();
  EXPECT_THROW(cpu->run(OpRegistry::catalog().get("aten.embedding.default"),
                        {w, indices({10}, {1}), Value(int64_t{-1}), Value(false), Value(false)}),
               crucible::Error);
}

TEST(CpuIndex, IndexSelectAndGather) {
  const Tensor x = filled({4, 5, 3}, f32);
  const Values sel = expect_matches_ref("aten.index_select.default",
                                        {x, Value(int64_t{1}), indices({4, 0, 4}, {3})});
  EXPECT_EQ(sel[0].tensor().get(3), x.get(0 * 15 + 0 * 3 + 0));  // [0, 1, 0] <- [0, 0, 0]
  expect_matches_ref("aten.index_select.default",
                     {x.transpose(0, 2), Value(int64_t{-1}), indices({1, 3}, {2}, DType::Int32)});
  expect_matches_ref("aten.gather.default",
                     {x, Value(int64_t{1}), indices({4, 1, 0, 2, 2, 3}, {2, 1, 3}), Value(false)});
}

TEST(CpuIndex, ScatterAddAndIndexAddAccumulate) {
  const Tensor x = filled({4, 5}, f32);
  const Values out = expect_matches_ref(
      "aten.scatter_add.default",
      {x, Value(int64_t{0}), indices({1, 1, 1, 3, 3, 0}, {2, 3}), filled({3, 4}, f32, 2)});
  const Tensor src = filled({3, 4}, f32, 2);
  // out[1, 0] gets src[0, 0]; out[3, 0] gets src[1, 0].
  EXPECT_NEAR(out[0].tensor().get(5), x.get(5) + src.get(0), 1e-6);
  EXPECT_NEAR(out[0].tensor().get(15), x.get(15) + src.get(4), 1e-6);
  expect_matches_ref("aten.index_add.default", {x, Value(int64_t{1}), indices({4, 4, 0}, {3}),
                                                filled({4, 3}, f32, 3), Value(2.5)});
  expect_matches_ref("aten.index_add.default",
                     {filled({4, 5}, DType::BFloat16), Value(int64_t{0}), indices({3, 3}, {2}),
                      filled({2, 5}, DType::BFloat16, 3), Value(int64_t{1})});
}

}  // namespace
}  // namespace crucible::cpu_test

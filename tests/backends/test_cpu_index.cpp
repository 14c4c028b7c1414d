// The cpu backend's embedding and indexing kernels against the reference: embedding (any dtype)
// and its dense backward (padding_idx, scale_grad_by_freq), index_select, gather, scatter_add
// and index_add (duplicates accumulate, integers wrap, extreme values summed in f64),
// index.Tensor and index_put (None between indexed dims, masks, negative and broadcast
// indices, accumulated duplicates, in place on strided self); out-of-range indices raise.
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

TEST(CpuIndex, GatherAndScatterAddAlongInnerAndOuterDims) {
  const Tensor x = filled({4, 6}, f32);
  for (int64_t dim : {0, 1}) {
    const Tensor idx = indices({3, 0, 2, 1, 1, 0, 2, 3, 0}, {3, 3});
    expect_matches_ref("aten.gather.default", {x, Value(dim), idx, Value(false)});
    expect_matches_ref("aten.scatter_add.default", {x, Value(dim), idx, filled({3, 4}, f32, 2)});
  }
  // A strided self and an integer dtype (wrapping adds).
  expect_matches_ref("aten.gather.default", {x.transpose(0, 1), Value(int64_t{1}),
                                             indices({3, 3, 0}, {1, 3}), Value(false)});
  expect_matches_ref("aten.scatter_add.default",
                     {filled({3, 2}, DType::Int8), Value(int64_t{0}), indices({1, 1, 1}, {3, 1}),
                      filled({3, 1}, DType::Int8, 5)});
}

TEST(CpuIndex, ExtremeValuesAccumulateInF64) {
  // 1 + 2^51 - 2^51 is 1 in f64 and 0 in f32.
  const double big = 2251799813685248.0;
  Tensor src = Tensor::empty({2}, f32);
  src.set(0, big);
  src.set(1, -big);
  const Values out = expect_matches_ref(
      "aten.scatter_add.default",
      {Tensor::full({3}, 1.0, f32), Value(int64_t{0}), indices({2, 2}, {2}), src});
  EXPECT_EQ(out[0].tensor().get(2), 1.0);
  Tensor rows = Tensor::empty({2, 4}, f32);
  for (int64_t j = 0; j < 4; ++j) {
    rows.set(j, big);
    rows.set(4 + j, -big);
  }
  const Values added = expect_matches_ref("aten.index_add.default",
                                          {Tensor::full({3, 4}, 1.0, f32), Value(int64_t{0}),
                                           indices({1, 1}, {2}), rows, Value(int64_t{1})});
  EXPECT_EQ(added[0].tensor().get(5), 1.0);
  expect_matches_ref("aten.index_add.default",
                     {filled({3, 70}, DType::Int16), Value(int64_t{0}), indices({2, 0, 2}, {3}),
                      filled({3, 70}, DType::Int16, 4), Value(int64_t{300})});
}

// A long 1-d index into a short output (the kernel's unrolled path, four targets a step):
// the sums match the reference's, an extreme value deep in the source still sends the call to
// f64, and of two out-of-range indices in one step the first in order is the one named.
TEST(CpuIndex, LongOneDimScatterAdd) {
  const int64_t n = 5003, bound = 97;
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = (k * 37 + k / 5) % bound;
  const Tensor idx = indices(v, {n});
  const Tensor self = filled({bound}, f32);
  expect_matches_ref("aten.scatter_add.default",
                     {self, Value(int64_t{0}), idx, filled({n}, f32, 3)});
  // 2^51 and -2^51 both land on target 5 with a 1 between them: 1 in f64, 0 in f32.
  Tensor src = Tensor::zeros({n}, f32);
  std::vector<int64_t> w(static_cast<size_t>(n), 0);
  w[4001] = w[4002] = w[4003] = 5;
  src.set(4001, 2251799813685248.0);
  src.set(4002, 1.0);
  src.set(4003, -2251799813685248.0);
  const Values out =
      expect_matches_ref("aten.scatter_add.default",
                         {Tensor::zeros({bound}, f32), Value(int64_t{0}), indices(w, {n}), src});
  EXPECT_EQ(out[0].tensor().get(5), 1.0);
  auto cpu = make_cpu_backend();
  const OpDef& op = OpRegistry::catalog().get("aten.scatter_add.default");
  v[2049] = -3;
  v[2050] = bound + 7;
  try {
    cpu->run(op, {self, Value(int64_t{0}), indices(v, {n}), filled({n}, f32, 3)});
    ADD_FAILURE() << "no error for an out-of-range index";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index -3 is out of bounds"), std::string::npos)
        << e.what();
  }
}

Value index_list(std::vector<Tensor> ts) { return Value::tensor_list(std::move(ts), true); }

TEST(CpuIndex, AdvancedIndexing) {
  const Tensor x = filled({4, 3, 5}, f32);
  // Adjacent indexed dims after a None, broadcast against each other, negative values.
  expect_matches_ref(
      "aten.index.Tensor",
      {x, index_list({Tensor(), indices({-1, 0}, {2, 1}), indices({4, -5, 2}, {3})})});
  // A None between indexed dims puts B first.
  expect_matches_ref("aten.index.Tensor",
                     {x, index_list({indices({3, 1}, {2}), Tensor(), indices({0, 4}, {2})})});
  // Masks, and a transposed self with a contiguous run of plain dims missing.
  Tensor mask = Tensor::empty({4, 3}, DType::Bool);
  for (int64_t i = 0; i < 12; ++i) mask.set_int(i, i % 5 != 2);
  expect_matches_ref("aten.index.Tensor", {x, index_list({mask})});
  expect_matches_ref("aten.index.Tensor",
                     {x.transpose(0, 2), index_list({Tensor(), indices({2, 0}, {2})})});
  auto cpu = make_cpu_backend();
  EXPECT_THROW(cpu->run(OpRegistry::catalog().get("aten.index.Tensor"),
                        {x, index_list({indices({4}, {1})})}),
               crucible::Error);
}

TEST(CpuIndex, IndexPutAccumulatesDuplicates) {
  const Tensor x = filled({5, 4}, f32);
  const Values out = expect_matches_ref(
      "aten.index_put.default",
      {x, index_list({indices({1, 3, 1, 1}, {4})}), filled({4, 4}, f32, 2), Value(true)});
  const Tensor v = filled({4, 4}, f32, 2);
  EXPECT_NEAR(out[0].tensor().get(4), x.get(4) + v.get(0) + v.get(8) + v.get(12), 1e-6);
  // Values stored transposed (as in the traces), broadcast values, plain writes.
  expect_matches_ref("aten.index_put.default",
                     {x, index_list({indices({4, 0, 4, 2, 4}, {5})}),
                      filled({4, 5}, f32, 3).transpose(0, 1), Value(true)});
  expect_matches_ref("aten.index_put.default", {x, index_list({Tensor(), indices({3, 0}, {2})}),
                                                filled({2}, f32, 4), Value(false)});
  // In place on a strided self, integer wrapping.
  expect_matches_ref(
      "aten.index_put_.default",
      {filled({6, 5}, f32).transpose(0, 1),
       index_list({indices({1, 1}, {2}), indices({0, 5}, {2})}), filled({2}, f32, 5), Value(true)});
  expect_matches_ref("aten.index_put.default",
                     {filled({4, 3}, DType::Int8), index_list({indices({2, 2, 2}, {3})}),
                      filled({3, 3}, DType::Int8, 7), Value(true)});
  auto cpu = make_cpu_backend();
  EXPECT_THROW(cpu->run(OpRegistry::catalog().get("aten.index_put.default"),
                        {x, index_list({indices({5}, {1})}), filled({4}, f32), Value(false)}),
               crucible::Error);
}

}  // namespace
}  // namespace crucible::cpu_test

// The cpu backend's embedding bags against the reference: sum (with per-sample weights), mean
// and max (NaN and empty bags), padding_idx, include_last_offset, widths that leave vector
// tails, the auxiliary outputs, the per-sample-weights backward on a strided grad, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;

Tensor ints(const std::vector<int64_t>& v, DType dt = DType::Int64) {
  Tensor t = Tensor::empty({static_cast<int64_t>(v.size())}, dt);
  for (size_t i = 0; i < v.size(); ++i) t.set_int(static_cast<int64_t>(i), v[i]);
  return t;
}

Values bag_args(const Tensor& w, const Tensor& idx, const Tensor& off, int64_t mode,
                const Tensor& psw = Tensor(), bool include_last = false, int64_t padding = -1) {
  return {w,
          idx,
          off,
          Value(false),
          Value(mode),
          Value(false),
          psw.defined() ? Value(psw) : Value(),
          Value(include_last),
          Value(padding)};
}

TEST(CpuEmbeddingBag, ModesPaddingAndTails) {
  const std::vector<int64_t> idx = {3, 0, 9, 3, 3, 5, 7, 1, 2, 2, 8, 4};
  const Tensor off = ints({0, 3, 3, 7});  // bag 1 is empty
  for (int64_t d : {5, 16, 37, 200}) {
    const Tensor w = filled({10, d}, f32);
    for (int64_t mode : {0, 1, 2}) {
      expect_matches_ref("aten._embedding_bag.default", bag_args(w, ints(idx), off, mode));
      expect_matches_ref("aten._embedding_bag.default",
                         bag_args(w, ints(idx), off, mode, Tensor(), false, 3));
    }
    expect_matches_ref("aten._embedding_bag.default",
                       bag_args(w, ints(idx), off, 0, filled({12}, f32, 2), true, 3));
  }
  // The auxiliary outputs: offset2bag and bag_size (padding left out of the count).
  const Values out =
      expect_matches_ref("aten._embedding_bag.default",
                         bag_args(filled({10, 4}, f32), ints(idx), off, 1, Tensor(), false, 3));
  EXPECT_EQ(out[1].tensor().get_int(5), 2);
  EXPECT_EQ(out[2].tensor().get_int(0), 2);  // {3, 0, 9}: row 3 is padding
  EXPECT_EQ(out[2].tensor().get_int(1), 0);
}

TEST(CpuEmbeddingBag, MaxPropagatesNaNAndExtremeSumsUseF64) {
  Tensor w = filled({6, 3}, f32);
  w.set(4, std::nan(""));
  expect_matches_ref("aten._embedding_bag.default",
                     bag_args(w, ints({0, 1, 2, 1}), ints({0, 2}), 2));
  // 2^51 + 1 - 2^51 in one bag: f32 sums would lose the 1.
  Tensor big = Tensor::zeros({3, 2}, f32);
  big.set(0, 2251799813685248.0);
  big.set(2, 1.0);
  big.set(4, -2251799813685248.0);
  const Values out = expect_matches_ref("aten._embedding_bag.default",
                                        bag_args(big, ints({0, 1, 2}), ints({0}), 0));
  EXPECT_EQ(out[0].tensor().get(0), 1.0);
}

TEST(CpuEmbeddingBag, PerSampleWeightsBackward) {
  // grad rows are a strided view, as in the DLRM traces.
  const Tensor grad = filled({4, 60}, f32).slice(1, 0, 37);
  const Tensor w = filled({9, 37}, f32, 3);
  const Tensor idx = ints({1, 8, 0, 4, 4, 2, 7});
  const Tensor o2b = ints({0, 0, 1, 1, 3, 3, 3});
  for (int64_t padding : {-1, 4})
    expect_matches_ref("aten._embedding_bag_per_sample_weights_backward.default",
                       {grad, w, idx, ints({0, 2, 4, 4}), o2b, Value(int64_t{0}), Value(padding)});
  auto cpu = make_cpu_backend();
  EXPECT_THROW(
      cpu->run(
          OpRegistry::catalog().get("aten._embedding_bag_per_sample_weights_backward.default"),
          {grad, w, ints({1, 9}), ints({0}), ints({0, 0}), Value(int64_t{0}), Value(int64_t{-1})}),
      crucible::Error);
}

TEST(CpuEmbeddingBag, ErrorsRaise) {
  auto cpu = make_cpu_backend();
  const OpDef& op = OpRegistry::catalog().get("aten._embedding_bag.default");
  const Tensor w = filled({5, 3}, f32);
  EXPECT_THROW(cpu->run(op, bag_args(w, ints({0, 5}), ints({0}), 0)), crucible::Error);
  EXPECT_THROW(cpu->run(op, bag_args(w, ints({0, 1}), ints({1}), 0)), crucible::Error);
  EXPECT_THROW(cpu->run(op, bag_args(w, ints({0, 1}), ints({0, 3}), 0)), crucible::Error);
  EXPECT_THROW(cpu->run(op, bag_args(w, ints({0, 1}), ints({0}), 1, filled({2}, f32))),
               crucible::Error);
}

}  // namespace
}  // namespace crucible::cpu_test

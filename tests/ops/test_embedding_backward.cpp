// ATen semantics of embedding_dense_backward, _embedding_bag (bags from offsets, modes,
// per_sample_weights, include_last_offset, padding_idx) and its per-sample-weights backward,
// with values checked against torch.
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

const OpRegistry& embedding_backward_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_embedding_backward_ops(*reg);
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

Values run(const std::string& op, Values args) {
  return embedding_backward_ops().get(op).run_ref(args);
}
Tensor idx(std::vector<double> v) {
  return tensor(v, {static_cast<int64_t>(v.size())}, DType::Int64);
}
Tensor arange(int64_t n, Shape s) {
  Tensor t = Tensor::empty(s, DType::Float32);
  for (int64_t i = 0; i < n; ++i) t.set(i, static_cast<double>(i));
  return t;
}

TEST(EmbeddingBackward, DenseBackward) {
  // grad rows [0,1],[2,3],[4,5],[6,7] for indices [0, 2, 0, 1], padding_idx 1, scaled by freq.
  Tensor g = run("aten.embedding_dense_backward.default",
                 {arange(8, {4, 2}), idx({0, 2, 0, 1}), Value(3), Value(1), Value(true)})[0]
                 .tensor();
  EXPECT_EQ(g.shape(), Shape({3, 2}));
  EXPECT_EQ(values_of(g), std::vector<double>({2, 3, 0, 0, 2, 3}));
  g = run("aten.embedding_dense_backward.default",
          {arange(8, {4, 2}), idx({0, 2, 0, 1}), Value(3), Value(-1), Value(false)})[0]
          .tensor();
  EXPECT_EQ(values_of(g), std::vector<double>({4, 6, 6, 7, 2, 3}));
}

TEST(EmbeddingBackward, BagsModes) {
  const Tensor w = arange(10, {5, 2});
  const Tensor ids = idx({0, 4, 2, 1, 3});
  // mean over bags [0, 2), [2, 2) (empty -> 0), [2, 5).
  Values o = run("aten._embedding_bag.default", {w, ids, idx({0, 2, 2}), Value(false), Value(1),
                                                 Value(false), Value(), Value(false), Value(-1)});
  EXPECT_EQ(values_of(o[0].tensor()), std::vector<double>({4, 5, 0, 0, 4, 5}));
  EXPECT_EQ(values_of(o[1].tensor()), std::vector<double>({0, 0, 2, 2, 2}));
  EXPECT_EQ(values_of(o[2].tensor()), std::vector<double>({2, 0, 3}));
  // max, with the chosen rows in max_indices.
  o = run("aten._embedding_bag.default", {w, ids, idx({0, 2, 2}), Value(false), Value(2),
                                          Value(false), Value(), Value(false), Value(-1)});
  EXPECT_EQ(values_of(o[0].tensor()), std::vector<double>({8, 9, 0, 0, 6, 7}));
  EXPECT_EQ(values_of(o[3].tensor()), std::vector<double>({4, 4, -1, -1, 3, 3}));
  // sum with per_sample_weights and include_last_offset: indices after the last offset are
  // left out.
  o = run("aten._embedding_bag.default",
          {w, ids, idx({0, 2, 3}), Value(false), Value(0), Value(false),
           tensor({1, 2, 3, 4, 5}, {5}, DType::Float32), Value(true), Value(-1)});
  EXPECT_EQ(values_of(o[0].tensor()), std::vector<double>({16, 19, 12, 15}));
  // padding_idx entries are skipped and not counted in the mean.
  o = run("aten._embedding_bag.default", {w, ids, idx({0}), Value(false), Value(1), Value(false),
                                          Value(), Value(false), Value(4)});
  EXPECT_EQ(values_of(o[0].tensor()), std::vector<double>({3, 4}));
  EXPECT_EQ(op_error_of([&] {
              run("aten._embedding_bag.default", {w, ids, idx({1}), Value(false), Value(0),
                                                  Value(false), Value(), Value(false), Value(-1)});
            }).find("offsets[0] has to be 0"),
            0u);
  EXPECT_NE(op_error_of([&] {
              run("aten._embedding_bag.default",
                  {w, ids, idx({0}), Value(false), Value(1), Value(false),
                   tensor({1, 2, 3, 4, 5}, {5}, DType::Float32), Value(false), Value(-1)});
            }).find("per_sample_weights is only supported for mode='sum'"),
            std::string::npos);
  EXPECT_EQ(embedding_backward_ops().get("aten._embedding_bag.default").compare.kind,
            ComparePolicy::Kind::Custom);
}

TEST(EmbeddingBackward, PerSampleWeightsBackward) {
  const Tensor w = arange(10, {5, 2});
  Tensor r = run("aten._embedding_bag_per_sample_weights_backward.default",
                 {tensor({1, 1, 2, 0}, {2, 2}, DType::Float32), w, idx({0, 4, 2}), idx({0, 2}),
                  idx({0, 0, 1}), Value(0), Value(4)})[0]
                 .tensor();
  EXPECT_EQ(values_of(r), std::vector<double>({1, 0, 8}));
}

TEST(EmbeddingBackward, SamplesMaterialiseAndRaiseAsLabelled) {
  check_all_samples(embedding_backward_ops());
}

}  // namespace
}  // namespace crucible

namespace crucible {
namespace {

// Materialised bag boundaries are real offsets: from 0, non-decreasing, within the indices,
// with empty bags -- as in the DLRM trace call, whose 1024 offsets split 54824 indices.
TEST(EmbeddingBackward, OffsetsAreDrawnAsSortedBagBoundaries) {
  const OpDef& bag = embedding_backward_ops().get("aten._embedding_bag.default");
  for (uint64_t seed : {0, 1, 2}) {
    const Values a = materialize(
        bag,
        cases::parse_call("((T([965, 192], f16), T([54824], i64), T([1024], i64), False, 0, "
                          "True, T([54824], f16)), {})"),
        seed);
    const Tensor& offsets = a.at(2).tensor();
    ASSERT_EQ(offsets.numel(), 1024);
    EXPECT_EQ(offsets.get_int(0), 0);
    int empty = 0;
    for (int64_t b = 1; b < offsets.numel(); ++b) {
      EXPECT_GE(offsets.get_int(b), offsets.get_int(b - 1)) << b;
      EXPECT_LE(offsets.get_int(b), 54824) << b;
      empty += offsets.get_int(b) == offsets.get_int(b - 1);
    }
    EXPECT_GT(empty, 0);
    EXPECT_GT(offsets.get_int(1023), 54824 / 2);  // the bags spread over the indices
    // The reference accepts them and sums every index into some bag.
    EXPECT_NO_THROW(bag.run_ref(a));
  }
}

// The indices of embedding_dense_backward stay below num_weights, however small it is (the
// token-type embedding of the BERT-like traces has 2 rows).
TEST(EmbeddingBackward, DenseBackwardIndicesStayBelowNumWeights) {
  const OpDef& op = embedding_backward_ops().get("aten.embedding_dense_backward.default");
  const Values a = materialize(
      op, cases::parse_call("((T([2, 512, 128], f16), T([2, 512], i64), 2, -1, False), {})"), 0);
  const Tensor& idx = a.at(1).tensor();
  bool saw_one = false;
  for (int64_t i = 0; i < idx.numel(); ++i) {
    EXPECT_GE(idx.get_int(i), 0);
    EXPECT_LT(idx.get_int(i), 2);
    saw_one |= idx.get_int(i) == 1;
  }
  EXPECT_TRUE(saw_one);
  EXPECT_NO_THROW(op.run_ref(a));
}

}  // namespace
}  // namespace crucible

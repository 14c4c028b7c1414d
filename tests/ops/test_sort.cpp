// ATen semantics of sort, topk, nonzero and _local_scalar_dense, and their tie-tolerant judges.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& sort_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_sort_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor tensor(const std::vector<double>& vals, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Sort, NaNLargestAndStable) {
  const Tensor x = tensor({1, kNaN, -3, 1}, {4}, DType::Float32);
  Values up = sort_ops().get("aten.sort.default").run_ref({x, Value(int64_t{-1}), Value(false)});
  EXPECT_EQ(up[0].tensor().get(0), -3.0);
  EXPECT_TRUE(std::isnan(up[0].tensor().get(3)));
  Values down =
      sort_ops().get("aten.sort.stable").run_ref({x, Value(true), Value(int64_t{0}), Value(true)});
  EXPECT_TRUE(std::isnan(down[0].tensor().get(0)));
  EXPECT_EQ(down[1].tensor().get_int(1), 0);  // ties keep input order
  EXPECT_EQ(down[1].tensor().get_int(2), 3);
}

TEST(Sort, JudgeAllowsTiesUnlessStable) {
  const OpDef& op = sort_ops().get("aten.sort.default");
  const Tensor x = tensor({2, 1, 2}, {3}, DType::Int64);
  Values in{x, Value(int64_t{0}), Value(false)};
  Values ref = op.run_ref(in);
  Values swapped{ref[0].tensor().clone(), tensor({1, 2, 0}, {3}, DType::Int64)};
  for (const TensorCheck& c : op.compare.custom(in, ref, swapped))
    EXPECT_TRUE(c.passed) << c.reason;
  Values dup{ref[0].tensor().clone(), tensor({1, 0, 0}, {3}, DType::Int64)};
  EXPECT_FALSE(op.compare.custom(in, ref, dup)[1].passed);
  const OpDef& st = sort_ops().get("aten.sort.stable");
  Values sin{x, Value(true), Value(int64_t{0}), Value(false)};
  Values sref = st.run_ref(sin);
  EXPECT_FALSE(st.compare.custom(sin, sref, swapped)[1].passed);
}

TEST(Sort, Topk) {
  const OpDef& op = sort_ops().get("aten.topk.default");
  const Tensor x = tensor({1, kNaN, 3, 0}, {4}, DType::Float32);
  Values r = op.run_ref({x, Value(int64_t{2}), Value(int64_t{-1}), Value(true), Value(true)});
  EXPECT_TRUE(std::isnan(r[0].tensor().get(0)));
  EXPECT_EQ(r[0].tensor().get(1), 3.0);
  Values s = op.run_ref({x, Value(int64_t{2}), Value(int64_t{-1}), Value(false), Value(true)});
  EXPECT_EQ(s[0].tensor().get(0), 0.0);
  EXPECT_EQ(s[1].tensor().get_int(1), 0);
  EXPECT_THROW(op.run_ref({x, Value(int64_t{5}), Value(int64_t{-1}), Value(true), Value(true)}),
               Error);
  EXPECT_THROW(op.run_ref({tensor({1, 0}, {2}, DType::Bool), Value(int64_t{1}), Value(int64_t{-1}),
                           Value(true), Value(true)}),
               Error);
  // 0-d with k = 0 still returns the value (ATen).
  Values z = op.run_ref({Tensor::scalar(3, DType::Float32), Value(int64_t{0}), Value(int64_t{-1}),
                         Value(true), Value(true)});
  EXPECT_EQ(z[0].tensor().get(0), 3.0);
  // sorted=False: a permutation of the values passes.
  Values in{tensor({5, 1, 4}, {3}, DType::Float32), Value(int64_t{2}), Value(int64_t{0}),
            Value(true), Value(false)};
  Values ref = op.run_ref(in);
  Values perm{tensor({4, 5}, {2}, DType::Float32), tensor({2, 0}, {2}, DType::Int64)};
  for (const TensorCheck& c : op.compare.custom(in, ref, perm)) EXPECT_TRUE(c.passed) << c.reason;
}

TEST(Sort, NonzeroAndLocalScalar) {
  const Tensor x = tensor({0, -0.0, kNaN, 2}, {2, 2}, DType::Float32);
  Tensor nz = sort_ops().get("aten.nonzero.default").run_ref({x})[0].tensor();
  EXPECT_EQ(nz.shape(), Shape({2, 2}));
  EXPECT_EQ(nz.get_int(0), 1);
  EXPECT_EQ(nz.get_int(1), 0);
  EXPECT_EQ(sort_ops()
                .get("aten.nonzero.default")
                .run_ref({Tensor::scalar(3, DType::Int32)})[0]
                .tensor()
                .shape(),
            Shape({1, 0}));
  const OpDef& ls = sort_ops().get("aten._local_scalar_dense.default");
  Value f = ls.run_ref({tensor({2.5}, {1}, DType::Float16)})[0];
  EXPECT_EQ(f.kind(), ValueKind::Float);
  EXPECT_EQ(f.to_double(), 2.5);
  EXPECT_EQ(ls.run_ref({tensor({1}, {1}, DType::Bool)})[0].kind(), ValueKind::Bool);
  EXPECT_EQ(ls.run_ref({tensor({7, 3}, {2}, DType::Int64)})[0].to_int(), 7);
}

}  // namespace
}  // namespace crucible

// The cpu backend's sort, topk, nonzero and _local_scalar_dense: hand-computed orders (NaN
// largest, -0 and +0 tied in input order, descending ties stable), long rows through the radix
// path against the reference's stable order for every key width, strided rows, topk's partial
// selection (sorted and as a set), nonzero across many chunks, and item() of every kind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;

Tensor values_1d(const std::vector<double>& v, DType dt) {
  Tensor t = Tensor::empty({static_cast<int64_t>(v.size())}, dt);
  for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  return t;
}

Values run_cpu(const std::string& name, const Values& args) {
  auto cpu = make_cpu_backend();
  cpu->set_num_threads(2);
  return cpu->run(OpRegistry::catalog().get(name), args);
}

Values stable_args(const Tensor& x, int64_t dim, bool descending) {
  return {x, Value(true), Value(dim), Value(descending)};
}

// Data with many ties: values from a small set, in every dtype.
Tensor tied(const Shape& shape, DType dt, int mod = 7) {
  Tensor t = Tensor::empty(shape, dt);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set(i, dt == DType::Bool ? (i * 7919 % 3 == 0) : static_cast<double>((i * 7919) % mod) - 3);
  return t;
}

TEST(CpuSort, NanLargestZerosTiedInInputOrder) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = values_1d({3, nan, -0.0, 0.0, -1, 3}, f32);
  const Values up = run_cpu("aten.sort.stable", stable_args(x, 0, false));
  const std::vector<int64_t> up_idx = {4, 2, 3, 0, 5, 1};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(up[1].tensor().get_int(i), up_idx[i]) << i;
  EXPECT_TRUE(std::signbit(up[0].tensor().get(1)));  // -0 first: it came first
  EXPECT_FALSE(std::signbit(up[0].tensor().get(2)));
  EXPECT_TRUE(std::isnan(up[0].tensor().get(5)));
  const Values down = run_cpu("aten.sort.stable", stable_args(x, 0, true));
  const std::vector<int64_t> down_idx = {1, 0, 5, 2, 3, 4};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(down[1].tensor().get_int(i), down_idx[i]) << i;
  EXPECT_TRUE(std::isnan(down[0].tensor().get(0)));
}

TEST(CpuSort, LongRowsMatchTheStableReferenceInEveryDtype) {
  // Rows of 3000 take the radix path; ties everywhere, so indices check stability exactly.
  for (DType dt : {DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64,
                   DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    for (bool desc : {false, true}) {
      expect_matches_ref("aten.sort.stable", stable_args(tied({2, 3000}, dt, 11), 1, desc));
      expect_matches_ref("aten.sort.stable", stable_args(tied({40, 3}, dt), 0, desc));
    }
  }
  // Wide-range values (every key digit differs) and special values through the radix path.
  Tensor wide = filled({2, 5000}, f32);
  for (int64_t i = 0; i < wide.numel(); i += 97) wide.set(i, i % 2 ? -INFINITY : NAN);
  for (int64_t i = 5; i < wide.numel(); i += 89) wide.set(i, i % 2 ? -0.0 : 0.0);
  expect_matches_ref("aten.sort.stable", stable_args(wide, 1, false));
  expect_matches_ref("aten.sort.stable", stable_args(wide.to(DType::Float64), 1, true));
}

TEST(CpuSort, StridedRowsAndZeroDim) {
  expect_matches_ref("aten.sort.default", {filled({9, 7}, DType::Int32).transpose(0, 1),
                                           Value(int64_t{1}), Value(true)});
  expect_matches_ref("aten.sort.default",
                     {filled({3, 10}, f32).slice(1, 0, 10, 2), Value(int64_t{-1}), Value(false)});
  expect_matches_ref("aten.sort.default", {filled({4, 5, 6}, f32), Value(int64_t{1}), Value(true)});
  const Values s = expect_matches_ref("aten.sort.default",
                                      {Tensor::scalar(2.5, f32), Value(int64_t{0}), Value(false)});
  EXPECT_EQ(s[0].tensor().dim(), 0);
  EXPECT_EQ(s[1].tensor().get_int(0), 0);
}

TEST(CpuSort, TopkSelectsTheLargestAndSmallest) {
  const Tensor x = values_1d({5, -2, 9, 9, 0, 7, -8, 1}, f32);
  const Values top = run_cpu("aten.topk.default",
                             {x, Value(int64_t{3}), Value(int64_t{0}), Value(true), Value(true)});
  const std::vector<double> v = {9, 9, 7};
  const std::vector<int64_t> idx = {2, 3, 5};
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(top[0].tensor().get(i), v[i]);
    EXPECT_EQ(top[1].tensor().get_int(i), idx[i]);
  }
  const Values low = run_cpu("aten.topk.default",
                             {x, Value(int64_t{2}), Value(int64_t{0}), Value(false), Value(true)});
  EXPECT_EQ(low[0].tensor().get(0), -8);
  EXPECT_EQ(low[0].tensor().get(1), -2);
  // Long rows (a heap of the best k, nth_element, a full sort) against the reference.
  for (int64_t k : {1, 50, 500, 2900}) {
    expect_matches_ref("aten.topk.default", {filled({3, 3000}, f32), Value(k), Value(int64_t{1}),
                                             Value(true), Value(true)});
    expect_matches_ref("aten.topk.default", {tied({3, 3000}, DType::Int64), Value(k),
                                             Value(int64_t{-1}), Value(false), Value(true)});
  }
  expect_matches_ref("aten.topk.default", {filled({30, 4}, DType::BFloat16), Value(int64_t{5}),
                                           Value(int64_t{0}), Value(true), Value(true)});
}

TEST(CpuSort, TopkUnsortedReturnsTheSameSet) {
  const Tensor x = filled({2, 1000}, f32);
  const Values ref =
      OpRegistry::catalog()
          .get("aten.topk.default")
          .run_ref({x, Value(int64_t{40}), Value(int64_t{1}), Value(true), Value(true)});
  const Values got = run_cpu("aten.topk.default",
                             {x, Value(int64_t{40}), Value(int64_t{1}), Value(true), Value(false)});
  for (int64_t r = 0; r < 2; ++r) {
    std::vector<double> a, b;
    for (int64_t j = 0; j < 40; ++j) {
      a.push_back(ref[0].tensor().get(r * 40 + j));
      b.push_back(got[0].tensor().get(r * 40 + j));
      // Each index selects its value.
      EXPECT_EQ(x.get(r * 1000 + got[1].tensor().get_int(r * 40 + j)), b.back());
    }
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b);
  }
}

TEST(CpuSort, TopkOfBoolRaises) {
  EXPECT_THROW(run_cpu("aten.topk.default", {tied({4}, DType::Bool), Value(int64_t{1}),
                                             Value(int64_t{0}), Value(true), Value(true)}),
               Error);
}

TEST(CpuSort, NonzeroCoordinatesInRowMajorOrder) {
  const Tensor x = values_1d({0, NAN, -0.0, 2, 0, -3}, f32).view({2, 3});
  const Values out = run_cpu("aten.nonzero.default", {x});
  const Tensor& n = out[0].tensor();
  ASSERT_EQ(n.shape(), (Shape{3, 2}));
  const std::vector<int64_t> want = {0, 1, 1, 0, 1, 2};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(n.get_int(i), want[i]) << i;
  // Many chunks, strided and byte-wide inputs, 0-d and empty.
  Tensor big = tied({300, 700}, DType::Int16, 5);
  expect_matches_ref("aten.nonzero.default", {big});
  expect_matches_ref("aten.nonzero.default", {big.transpose(0, 1)});
  expect_matches_ref("aten.nonzero.default", {tied({3, 200, 300}, DType::Bool)});
  expect_matches_ref("aten.nonzero.default", {filled({70000}, DType::BFloat16)});
  const Values zero_d = expect_matches_ref("aten.nonzero.default", {Tensor::scalar(2, f32)});
  EXPECT_EQ(zero_d[0].tensor().shape(), (Shape{1, 0}));
  const Values none = expect_matches_ref("aten.nonzero.default", {Tensor::zeros({4, 5}, f32)});
  EXPECT_EQ(none[0].tensor().shape(), (Shape{0, 2}));
}

TEST(CpuSort, LocalScalarDenseReadsTheFirstElement) {
  EXPECT_EQ(
      run_cpu("aten._local_scalar_dense.default", {Tensor::scalar(1, DType::Bool)})[0].to_bool(),
      true);
  Tensor big = Tensor::empty({2}, DType::Int64);
  big.set_int(0, std::numeric_limits<int64_t>::min());
  const Value i = run_cpu("aten._local_scalar_dense.default", {big})[0];
  EXPECT_EQ(i.kind(), ValueKind::Int);
  EXPECT_EQ(i.to_int(), std::numeric_limits<int64_t>::min());
  const Value h = run_cpu("aten._local_scalar_dense.default",
                          {values_1d({0.1, 5}, DType::Float16).slice(0, 0, 1)})[0];
  EXPECT_EQ(h.kind(), ValueKind::Float);
  EXPECT_EQ(h.to_double(), static_cast<double>(Half(0.1)));
  try {
    run_cpu("aten._local_scalar_dense.default", {Tensor::empty({0}, f32)});
    FAIL() << "an empty tensor must raise";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("0 elements"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crucible::cpu_test

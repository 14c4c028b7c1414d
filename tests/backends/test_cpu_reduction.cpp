// The cpu backend's reductions against the reference: long rows split over blocks and threads,
// cancellation of huge terms (summed again in the reference's order), columns, and the first
// index of a NaN or a tie in max.dim / argmax.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/parallel.h"
#include "crucible/ops/op.h"

namespace crucible::cpu {
namespace {

Values run(const char* name, const Values& args) {
  auto cpu = make_cpu_backend();
  return cpu->run(OpRegistry::catalog().get(name), args);
}

Values ref(const char* name, const Values& args) {
  return OpRegistry::catalog().get(name).ref(args);
}

TEST(CpuReduction, LongRowSumMatchesReferenceOnEveryThreadCount) {
  Tensor x = Tensor::empty({3, 100003}, DType::Float32);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, std::sin(0.001 * static_cast<double>(i)) + 0.5);
  const Values args{Value(x), Value(std::vector<int64_t>{1}), Value(false), Value()};
  const Tensor want = ref("aten.sum.dim_IntList", args).at(0).tensor();
  const int saved = num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    const Tensor got = run("aten.sum.dim_IntList", args).at(0).tensor();
    ASSERT_EQ(got.shape(), (Shape{3}));
    for (int64_t o = 0; o < 3; ++o)
      EXPECT_NEAR(got.get(o), want.get(o), 1e-6 * std::abs(want.get(o))) << threads;
  }
  set_num_threads(saved);
}

TEST(CpuReduction, CancellingHugeTermsAreSummedInOrder) {
  // Row 0 in order: 3e38 + 1.5 loses the 1.5, - 3e38 gives 0 (what the reference computes);
  // summed in eight interleaved accumulators it would give 1.5.
  Tensor x = Tensor::zeros({2, 20}, DType::Float32);
  x.set(0, 3e38);
  x.set(1, 1.5);
  x.set(8, -3e38);
  x.set(25, 1.0);
  const Values args{Value(x), Value(std::vector<int64_t>{-1}), Value(true), Value()};
  const Tensor got = run("aten.sum.dim_IntList", args).at(0).tensor();
  const Tensor want = ref("aten.sum.dim_IntList", args).at(0).tensor();
  ASSERT_EQ(got.shape(), (Shape{2, 1}));
  EXPECT_EQ(want.get(0), 0.0);
  EXPECT_EQ(got.get(0), want.get(0));
  EXPECT_EQ(got.get(1), 1.0);
}

TEST(CpuReduction, ColumnMeanAndDtypeConversionFirst) {
  Tensor x = Tensor::empty({5, 4}, DType::Float32);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, 0.7 * static_cast<double>(i));
  // sum(dtype=i64) truncates every element before adding, as ATen does.
  const Values args{Value(x), Value(std::vector<int64_t>{0}), Value(false), Value(DType::Int64)};
  const Tensor got = run("aten.sum.dim_IntList", args).at(0).tensor();
  const Tensor want = ref("aten.sum.dim_IntList", args).at(0).tensor();
  ASSERT_EQ(got.dtype(), DType::Int64);
  for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(got.get_int(j), want.get_int(j));
  const Values margs{Value(x), Value(std::vector<int64_t>{0}), Value(false), Value()};
  const Tensor m = run("aten.mean.dim", margs).at(0).tensor();
  for (int64_t j = 0; j < 4; ++j)
    EXPECT_FLOAT_EQ(static_cast<float>(m.get(j)), static_cast<float>(0.7 * (8 + j)));
}

TEST(CpuReduction, MaxDimTakesFirstNanAndFirstTie) {
  Tensor x = Tensor::empty({2, 5}, DType::Float32);
  const double v[] = {1, 4, 4, NAN, NAN, 2, 7, 3, 7, 1};
  for (int64_t i = 0; i < 10; ++i) x.set(i, v[i]);
  const Values out = run("aten.max.dim", {Value(x), Value(int64_t{1}), Value(false)});
  const Tensor& values = out.at(0).tensor();
  const Tensor& idx = out.at(1).tensor();
  EXPECT_TRUE(std::isnan(values.get(0)));
  EXPECT_EQ(idx.get_int(0), 3);
  EXPECT_EQ(values.get(1), 7.0);
  EXPECT_EQ(idx.get_int(1), 1);
  // Column-wise argmin over a transposed (non-contiguous) input.
  const Tensor am =
      run("aten.argmin.default", {Value(x.transpose(0, 1)), Value(int64_t{0}), Value(false)})
          .at(0)
          .tensor();
  EXPECT_EQ(am.get_int(0), 3);  // a NaN is the extreme of argmin too
  EXPECT_EQ(am.get_int(1), 4);
}

}  // namespace
}  // namespace crucible::cpu

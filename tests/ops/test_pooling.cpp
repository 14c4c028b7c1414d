// ATen semantics of max, average and adaptive pooling and their backwards (expected values
// computed with torch): padding, ceil_mode, dilation, count_include_pad, divisor_override, NaN,
// unbatched and 3-d inputs, i64 average pooling, the max-pool index judge, ATen's checks, and
// every correctness sample materialising and running.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& pool_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_pooling_ops(*reg);
    return reg;
  }();
  return *r;
}

using Ints = std::vector<int64_t>;

Tensor tensor(const std::vector<double>& vals, const Shape& shape, DType t = DType::Float64) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}

Tensor arange(const Shape& shape, double scale, double shift, DType t = DType::Float64) {
  Tensor x = Tensor::empty(shape, t);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i) * scale + shift);
  return x;
}

Values run(const std::string& op, Values args) { return pool_ops().get(op).run_ref(args); }

void expect_values(const Tensor& t, const Shape& shape, const std::vector<double>& expect) {
  ASSERT_EQ(t.shape(), shape);
  ASSERT_EQ(t.numel(), static_cast<int64_t>(expect.size()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (std::isnan(expect[i]))
      EXPECT_TRUE(std::isnan(t.get(i))) << "at " << i;
    else
      EXPECT_NEAR(t.get(i), expect[i], 1e-12) << "at " << i;
  }
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

// The [1, 1, 4, 5] input of the torch snippets.
Tensor digits() {
  return tensor({3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4}, {1, 1, 4, 5});
}

Values max2d(const Tensor& x, Ints k, Ints s, Ints p, Ints d, bool ceil) {
  return run("aten.max_pool2d_with_indices.default", {x, k, s, p, d, ceil});
}

TEST(Pooling, MaxPool2dFromTorch) {
  Values r = max2d(digits(), {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);
  expect_values(r[0].tensor(), {1, 1, 2, 3}, {9, 6, 5, 9, 9, 9});
  expect_values(r[1].tensor(), {1, 1, 2, 3}, {5, 7, 4, 5, 12, 14});
  EXPECT_EQ(r[1].tensor().dtype(), DType::Int64);
  r = max2d(digits(), {2, 2}, {2, 2}, {0, 0}, {1, 1}, true);  // ceil_mode keeps partial windows
  expect_values(r[0].tensor(), {1, 1, 2, 3}, {9, 6, 5, 8, 9, 9});
  expect_values(r[1].tensor(), {1, 1, 2, 3}, {5, 7, 4, 11, 12, 14});
  r = max2d(digits(), {2, 2}, {1, 1}, {0, 0}, {2, 2}, false);  // dilation
  expect_values(r[0].tensor(), {1, 1, 2, 3}, {9, 8, 9, 9, 8, 6});
  expect_values(r[1].tensor(), {1, 1, 2, 3}, {12, 11, 12, 5, 18, 7});
  // NaN wins (its index is reported); -inf never blocks a larger value.
  Tensor x = digits();
  x.set(6, std::numeric_limits<double>::quiet_NaN());
  x.set(0, -std::numeric_limits<double>::infinity());
  r = max2d(x, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false);
  expect_values(r[0].tensor(), {1, 1, 2, 2}, {std::nan(""), 6, 8, 9});
  expect_values(r[1].tensor(), {1, 1, 2, 2}, {6, 7, 11, 12});
  // Defaults: stride [] is the kernel.
  r = max2d(digits(), {2, 2}, {}, {0}, {1}, false);
  EXPECT_EQ(r[0].tensor().shape(), Shape({1, 1, 2, 2}));
}

TEST(Pooling, MaxPool2dBackwardFromTorch) {
  const Values r = max2d(digits(), {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);
  const Tensor g = arange({1, 1, 2, 3}, 1, 1);
  const Tensor gi =
      run("aten.max_pool2d_with_indices_backward.default",
          {g, digits(), Ints{3, 3}, Ints{2, 2}, Ints{1, 1}, Ints{1, 1}, false, r[1].tensor()})[0]
          .tensor();
  // Index 5 is hit twice (1 + 4).
  expect_values(gi, {1, 1, 4, 5}, {0, 0, 0, 0, 3, 5, 0, 2, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0});
}

TEST(Pooling, MaxJudgeAcceptsTiesOnly) {
  const OpDef& op = pool_ops().get("aten.max_pool2d_with_indices.default");
  const Tensor x = tensor({1, 7, 7, 2}, {1, 1, 2, 2});  // a tie at positions 1 and 2
  const Values in{x, Ints{2, 2}, Ints{2, 2}, Ints{0, 0}, Ints{1, 1}, false};
  const Values ref = op.run_ref(in);
  EXPECT_EQ(ref[1].tensor().get_int(0), 1);
  auto judge = [&](int64_t idx) {
    Values cand{ref[0].tensor().clone(),
                tensor({static_cast<double>(idx)}, {1, 1, 1, 1}, DType::Int64)};
    bool ok = true;
    for (const TensorCheck& c : op.compare.custom(in, ref, cand)) ok = ok && c.passed;
    return ok;
  };
  EXPECT_TRUE(judge(1));
  EXPECT_TRUE(judge(2));   // the other maximum
  EXPECT_FALSE(judge(3));  // not the max
  EXPECT_FALSE(judge(4));  // out of the plane
}

Tensor avg2d(const Tensor& x, Ints k, Ints s, Ints p, bool ceil, bool cip, Value div = Value()) {
  return run("aten.avg_pool2d.default", {x, k, s, p, ceil, cip, div})[0].tensor();
}

TEST(Pooling, AvgPool2dFromTorch) {
  const Tensor y = arange({1, 1, 5, 5}, 1, -12);
  const double t = 2.6666666666666665;
  expect_values(avg2d(y, {3, 3}, {2, 2}, {1, 1}, false, true), {1, 1, 3, 3},
                {-4, -5, -t, -1, 0, 1, t, 5, 4});
  expect_values(avg2d(y, {3, 3}, {2, 2}, {1, 1}, false, false), {1, 1, 3, 3},
                {-9, -7.5, -6, -1.5, 0, 1.5, 6, 7.5, 9});
  expect_values(avg2d(y, {3, 3}, {2, 2}, {1, 1}, false, true, Value(int64_t{2})), {1, 1, 3, 3},
                {-18, -22.5, -12, -4.5, 0, 4.5, 12, 22.5, 18});
  // ceil_mode: windows running past the padding count only up to input + padding.
  expect_values(avg2d(y, {2, 2}, {2, 2}, {1, 1}, true, true), {1, 1, 3, 3},
                {-3, -5.25, -4.25, -2.25, -3, -1, 2.75, 7, 9});
  expect_values(avg2d(y, {2, 2}, {2, 2}, {1, 1}, true, false), {1, 1, 3, 3},
                {-12, -10.5, -8.5, -4.5, -3, -1, 5.5, 7, 9});
  // i64: exact sum, truncating division (torch: [-1, 2]).
  const Tensor yi = avg2d(tensor({-1, -2, 5, -3, -1, 7}, {1, 1, 2, 3}, DType::Int64), {2, 2},
                          {1, 1}, {0, 0}, false, true);
  EXPECT_EQ(yi.dtype(), DType::Int64);
  EXPECT_EQ(yi.get_int(0), -1);
  EXPECT_EQ(yi.get_int(1), 2);
  EXPECT_EQ(op_error_of([&] {
              avg2d(y, {3, 3}, {2, 2}, {1, 1}, false, true, Value(int64_t{0}));
            }),
            "divisor must be not zero");
}

TEST(Pooling, AvgPool2dBackwardFromTorch) {
  const Tensor y = arange({1, 1, 5, 5}, 1, -12);
  const Tensor g = arange({1, 1, 3, 3}, 1, 0);
  auto back = [&](bool cip) {
    return run("aten.avg_pool2d_backward.default",
               {g, y, Ints{3, 3}, Ints{2, 2}, Ints{1, 1}, false, cip, Value()})[0]
        .tensor();
  };
  const double n = 1.0 / 9;
  expect_values(back(true), {1, 1, 5, 5},
                {0,      n,      n,     3 * n,  2 * n, 3 * n,  8 * n, 5 * n,  12 * n,
                 7 * n,  3 * n,  7 * n, 4 * n,  9 * n, 5 * n,  9 * n, 20 * n, 11 * n,
                 24 * n, 13 * n, 6 * n, 13 * n, 7 * n, 15 * n, 8 * n});
  const Tensor nopad = back(false);
  EXPECT_NEAR(nopad.get(1), 0.16666666666666666, 1e-15);
  EXPECT_NEAR(nopad.get(8), 1.9444444444444446, 1e-15);
  EXPECT_NEAR(nopad.get(24), 2.0, 1e-15);
}

TEST(Pooling, AdaptiveFromTorch) {
  const Tensor z = arange({1, 1, 5, 7}, 0.5, 0);
  expect_values(run("aten._adaptive_avg_pool2d.default", {z, Ints{3, 4}})[0].tensor(), {1, 1, 3, 4},
                {2, 2.75, 3.75, 4.5, 7.25, 8, 9, 9.75, 12.5, 13.25, 14.25, 15});
  const Tensor gb =
      run("aten._adaptive_avg_pool2d_backward.default", {arange({1, 1, 3, 4}, 1, 0), z})[0]
          .tensor();
  EXPECT_NEAR(gb.get(1), 0.16666666666666666, 1e-15);
  EXPECT_NEAR(gb.get(5), 1.0833333333333333, 1e-15);
  EXPECT_NEAR(gb.get(26), 6.25, 1e-15);
  EXPECT_NEAR(gb.get(34), 2.75, 1e-15);
  // 3-d, unbatched [C, D, H, W].
  expect_values(
      run("aten._adaptive_avg_pool3d.default", {arange({1, 2, 3, 4}, 1, 0), Ints{2, 1, 3}})[0]
          .tensor(),
      {1, 2, 1, 3}, {4.5, 5.5, 6.5, 16.5, 17.5, 18.5});
  const Tensor w = tensor({3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3,
                           8, 4, 6, 2, 6, 4, 3, 3, 8, 3, 2, 7, 9, 5, 0, 2, 8},
                          {1, 1, 5, 7});
  Values r = run("aten.adaptive_max_pool2d.default", {w, Ints{2, 3}});
  expect_values(r[0].tensor(), {1, 1, 2, 3}, {9, 8, 9, 9, 9, 8});
  expect_values(r[1].tensor(), {1, 1, 2, 3}, {14, 11, 5, 14, 30, 18});
  // Output larger than the input: windows overlap and repeat.
  r = run("aten.adaptive_max_pool2d.default", {tensor({1, 5, 3, 2}, {1, 1, 2, 2}), Ints{3, 3}});
  expect_values(r[0].tensor(), {1, 1, 3, 3}, {1, 5, 5, 3, 5, 5, 3, 3, 2});
  expect_values(r[1].tensor(), {1, 1, 3, 3}, {0, 1, 1, 2, 1, 1, 2, 2, 3});
}

TEST(Pooling, ThreeDimsFromTorch) {
  // torch: x = arange(24.).reshape(1,2,3,4).flip(-1) (unbatched), kernel 2, stride (1,2,2),
  // padding (0,0,1).
  Tensor x = Tensor::empty({1, 2, 3, 4}, DType::Float64);
  for (int64_t i = 0; i < 24; ++i) x.set(i, static_cast<double>((i / 4) * 4 + (3 - i % 4)));
  const Values r = run("aten.max_pool3d_with_indices.default",
                       {x, Ints{2, 2, 2}, Ints{1, 2, 2}, Ints{0, 0, 1}, Ints{1, 1, 1}, false});
  expect_values(r[0].tensor(), {1, 1, 1, 3}, {19, 18, 16});
  expect_values(r[1].tensor(), {1, 1, 1, 3}, {16, 17, 19});
  expect_values(
      run("aten.avg_pool3d.default", {arange({1, 2, 3, 4}, 1, 0), Ints{2, 2, 2}, Ints{1, 2, 2},
                                      Ints{0, 1, 1}, false, false, Value()})[0]
          .tensor(),
      {1, 1, 2, 3}, {6, 7.5, 9, 12, 13.5, 15});
}

TEST(Pooling, ChecksLikeATen) {
  const Tensor x = arange({1, 2, 5, 5}, 1, 0, DType::Float32);
  EXPECT_NE(op_error_of([&] {
              max2d(x, {3, 3}, {1, 1}, {2, 2}, {1, 1}, false);
            }).find("pad should be"),
            std::string::npos);
  EXPECT_EQ(op_error_of([&] {
              max2d(x, {3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, false);
            }),
            "max_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  EXPECT_EQ(op_error_of([&] {
              max2d(x, {6, 6}, {1, 1}, {0, 0}, {1, 1}, false);
            }),
            "Given input size: (2x5x5). Calculated output size: (2x0x0). Output size is too small");
  EXPECT_EQ(op_error_of([&] {
              max2d(arange({1, 0, 5, 5}, 1, 0), {2, 2}, {1, 1}, {0, 0}, {1, 1}, false);
            }),
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
            "got:[1, 0, 5, 5]");
  EXPECT_EQ(op_error_of([&] {
              run("aten._adaptive_avg_pool2d.default", {arange({5, 5}, 1, 0), Ints{2, 2}});
            }),
            "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [5, 5]");
  EXPECT_EQ(
      op_error_of([&] {
        max2d(Tensor::zeros({1, 2, 4, 4}, DType::Bool), {2, 2}, {2, 2}, {0, 0}, {1, 1}, false);
      }),
      "\"max_pool2d\" not implemented for 'Bool'");
}

TEST(Pooling, SamplesMaterialiseAndRun) {
  int ops = 0;
  for (const OpDef* op : pool_ops().all()) {
    ++ops;
    const auto samples = op->samples(SampleContext{false});
    EXPECT_GE(samples.size(), 8u) << op->name;
    for (const Sample& s : samples) {
      const Values args = materialize(*op, s.call, 9);
      bool raised = false;
      try {
        op->run_ref(args);
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OpError) << s.label << ": " << e.what();
        raised = true;
      }
      EXPECT_EQ(raised, s.label.rfind("error:", 0) == 0) << op->name << ": " << s.label;
    }
    EXPECT_FALSE(op->samples(SampleContext{true}).empty()) << op->name;
  }
  EXPECT_EQ(ops, 14);
}

// ATen's CUDA max-pool backward adds the gradients that land on one input with atomics in the
// gradient's precision, in an order that changes between runs: every order must pass, and a
// kernel that drops one of the gradients must still fail.
TEST(Pooling, BackwardToleranceCoversEveryOrderOfAddsInTheOutputsPrecision) {
  int checked = 0, wrong_failed = 0;
  for (const auto& [name, nsp] : std::vector<std::pair<std::string, int>>{
           {"aten.max_pool2d_with_indices_backward.default", 2},
           {"aten.max_pool3d_with_indices_backward.default", 3}}) {
    const OpDef& op = pool_ops().get(name);
    for (const Sample& s : op.samples(SampleContext{false})) {
      if (s.label.rfind("error:", 0) == 0) continue;
      const Values args = materialize(op, s.call, 3);
      const Tensor& g = args[0].tensor();
      if (g.dtype() != DType::Float16 && g.dtype() != DType::BFloat16) continue;
      const Tensor& self = args[1].tensor();
      const Tensor& idx = args.back().tensor();
      int64_t in_plane = 1, out_plane = 1;
      for (int i = 1; i <= nsp; ++i) {
        in_plane *= self.size(-i);
        out_plane *= idx.size(-i);
      }
      const Tensor ref = op.run_ref(args)[0].tensor();
      Tensor one = Tensor::empty({1}, g.dtype());
      auto round = [&](double x) {
        one.set(0, x);
        return one.get(0);
      };
      for (int order = 0; order < 3; ++order) {
        std::vector<int64_t> seq(static_cast<size_t>(g.numel()));
        for (int64_t i = 0; i < g.numel(); ++i) seq[static_cast<size_t>(i)] = i;
        if (order == 1) std::reverse(seq.begin(), seq.end());
        if (order == 2) std::shuffle(seq.begin(), seq.end(), std::mt19937(9));
        std::vector<double> acc(static_cast<size_t>(self.numel()), 0.0);
        int64_t first_shared = -1;
        std::vector<int> hits(acc.size(), 0);
        for (int64_t i : seq) {
          const int64_t at = i / out_plane * in_plane + idx.get_int(i);
          double& a = acc[static_cast<size_t>(at)];
          a = round(a + g.get(i));
          if (++hits[static_cast<size_t>(at)] == 2 && g.get(i) != 0) first_shared = i;
        }
        Tensor got = Tensor::empty(self.shape(), g.dtype());
        for (int64_t i = 0; i < got.numel(); ++i) got.set(i, acc[static_cast<size_t>(i)]);
        const std::vector<TensorCheck> c = op.compare.custom(args, {ref}, {got});
        ASSERT_EQ(c.size(), 1u);
        EXPECT_TRUE(c[0].passed) << name << " " << s.label << " order " << order << ": "
                                 << c[0].reason;
        ++checked;
        if (order == 0 && first_shared >= 0 && std::isfinite(g.get(first_shared))) {
          const int64_t at = first_shared / out_plane * in_plane + idx.get_int(first_shared);
          got.set(at, round(got.get(at) - g.get(first_shared)));
          if (!op.compare.custom(args, {ref}, {got}).at(0).passed) ++wrong_failed;
        }
      }
    }
  }
  EXPECT_GE(checked, 6);
  EXPECT_GE(wrong_failed, 2);
}

}  // namespace
}  // namespace crucible

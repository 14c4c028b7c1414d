// ATen semantics of convolution and convolution_backward: values of 1-d, 2-d, 3-d and
// transposed convolutions (expected values computed with torch), output_mask, integer
// wrapping, ATen's shape checks, and every correctness sample materialising and running.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& conv_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_convolution_ops(*reg);
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

// arange(numel) * scale + shift, as in the torch snippets that produced the expected values.
Tensor arange(const Shape& shape, double scale, double shift, DType t = DType::Float64) {
  Tensor x = Tensor::empty(shape, t);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i) * scale + shift);
  return x;
}

Value opt(const std::optional<Tensor>& t) { return t ? Value(*t) : Value(); }

Tensor conv(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, Ints stride,
            Ints padding, Ints dilation, bool transposed, Ints output_padding, int64_t groups) {
  return conv_ops()
      .get("aten.convolution.default")
      .run_ref({x, w, opt(b), Value(stride), Value(padding), Value(dilation), Value(transposed),
                Value(output_padding), Value(groups)})[0]
      .tensor();
}

Values conv_backward(const Tensor& go, const Tensor& x, const Tensor& w, Ints stride, Ints padding,
                     bool transposed, Ints output_padding, int64_t groups, std::vector<bool> mask) {
  return conv_ops()
      .get("aten.convolution_backward.default")
      .run_ref({go, x, w, Value(Ints{w.size(0)}), Value(stride), Value(padding), Value(Ints{1, 1}),
                Value(transposed), Value(output_padding), Value(groups), Value(mask)});
}

void expect_values(const Tensor& t, const Shape& shape, const std::vector<double>& expect) {
  ASSERT_EQ(t.shape(), shape);
  ASSERT_EQ(t.numel(), static_cast<int64_t>(expect.size()));
  for (int64_t i = 0; i < t.numel(); ++i) EXPECT_DOUBLE_EQ(t.get(i), expect[i]) << "at " << i;
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

// torch: x = arange(24.).reshape(1,2,3,4) - 10; w = arange(24.).reshape(3,2,2,2) * 0.5 - 3;
// b = [1, -1, 0.5]; convolution(x, w, b, [1,2], [1,0], [1,1], False, [0,0], 1).
TEST(Convolution, Conv2dValuesFromTorch) {
  const Tensor x = arange({1, 2, 3, 4}, 1, -10), w = arange({3, 2, 2, 2}, 0.5, -3);
  const Tensor b = tensor({1, -1, 0.5}, {3});
  expect_values(conv(x, w, b, {1, 2}, {1, 0}, {1, 1}, false, {0, 0}, 1), {1, 3, 4, 2},
                {36.0,  30.0,  73.0, 53.0, 33.0,  13.0,  -6.0,  -20.0, -22.0, 4.0,   23.0,  67.0,
                 111.0, 155.0, 64.0, 82.0, -76.5, -18.5, -23.5, 84.5,  192.5, 300.5, 137.5, 187.5});
  // f32 in, f32 out.
  EXPECT_EQ(conv(x.to(DType::Float32), w.to(DType::Float32), std::nullopt, {1, 2}, {1, 0}, {1, 1},
                 false, {0, 0}, 1)
                .dtype(),
            DType::Float32);
}

TEST(Convolution, Conv2dBackwardFromTorch) {
  const Tensor x = arange({1, 2, 3, 4}, 1, -10), w = arange({3, 2, 2, 2}, 0.5, -3);
  const Tensor go = arange({1, 3, 4, 2}, 0.25, -2);
  const Values g = conv_backward(go, x, w, {1, 2}, {1, 0}, false, {0, 0}, 1, {true, true, true});
  expect_values(g[0].tensor(), {1, 2, 3, 4},
                {33.5, 34.25, 35.75, 37.25, 38.0, 40.25, 40.25, 43.25, 42.5, 46.25, 44.75, 49.25,
                 36.5, 37.25, 41.75, 43.25, 47.0, 49.25, 52.25, 55.25, 57.5, 61.25, 62.75, 67.25});
  expect_values(
      g[1].tensor(), {3, 2, 2, 2},
      {35.0, 29.75, 50.0, 41.75, -28.0, -33.25, -49.0, -57.25, -25.0, -18.25, -10.0, -6.25,
       56.0, 62.75, 35.0, 38.75, -85.0, -66.25, -70.0, -54.25, 140.0, 158.75, 119.0, 134.75});
  expect_values(g[2].tensor(), {3}, {-9.0, 7.0, 23.0});
  // Outputs left out of output_mask are None.
  const Values only_w =
      conv_backward(go, x, w, {1, 2}, {1, 0}, false, {0, 0}, 1, {false, true, false});
  ASSERT_EQ(only_w.size(), 3u);
  EXPECT_TRUE(only_w[0].is_none());
  EXPECT_TRUE(only_w[1].is_tensor());
  EXPECT_TRUE(only_w[2].is_none());
  const Values none =
      conv_backward(go, x, w, {1, 2}, {1, 0}, false, {0, 0}, 1, {false, false, false});
  for (const Value& v : none) EXPECT_TRUE(v.is_none());
}

// An image whose f64 columns pass 2^25 elements (9 x 2101 x 2101) is unfolded a band of rows at
// a time: the forward, the input gradient (folded band by band) and the weight gradient (summed
// over the bands) still match a direct computation. Integer values make every sum exact, so any
// misplaced column shows.
TEST(Convolution, AnImageTooLargeForOneBandOfColumns) {
  const int64_t h = 2101, wd = 2101;
  Tensor x = Tensor::empty({1, 1, h, wd}, DType::Float64);
  Tensor go = Tensor::empty({1, 1, h, wd}, DType::Float64);
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.set(i, static_cast<double>(i % 7 - 3));
    go.set(i, static_cast<double>(i % 5 - 2));
  }
  const Tensor w = tensor({1, -2, 3, 0, 1, -1, 2, 1, -3}, {1, 1, 3, 3});
  auto at = [&](const Tensor& t, int64_t r, int64_t c) {
    return r < 0 || r >= h || c < 0 || c >= wd ? 0.0 : t.get(r * wd + c);
  };
  const Tensor y = conv(x, w, std::nullopt, {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1);
  const Values g = conv_backward(go, x, w, {1, 1}, {1, 1}, false, {0, 0}, 1, {true, true, false});
  const Tensor& gi = g[0].tensor();
  const Tensor& gw = g[1].tensor();
  ASSERT_EQ(y.shape(), (Shape{1, 1, h, wd}));
  double sums[9] = {};
  int64_t wrong_y = 0, wrong_gi = 0;
  for (int64_t r = 0; r < h; ++r)
    for (int64_t c = 0; c < wd; ++c) {
      double fy = 0, fgi = 0;
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 3; ++j) {
          const double k = w.get(i * 3 + j);
          fy += k * at(x, r + i - 1, c + j - 1);
          fgi += k * at(go, r - i + 1, c - j + 1);
          sums[i * 3 + j] += at(go, r, c) * at(x, r + i - 1, c + j - 1);
        }
      wrong_y += y.get(r * wd + c) != fy;
      wrong_gi += gi.get(r * wd + c) != fgi;
    }
  EXPECT_EQ(wrong_y, 0);
  EXPECT_EQ(wrong_gi, 0);
  for (int64_t k = 0; k < 9; ++k) EXPECT_EQ(gw.get(k), sums[k]) << k;
}

// torch: x = arange(8.).reshape(1,2,2,2) - 3; w = arange(8.).reshape(2,1,2,2) - 4;
// convolution(x, w, [0.5, -0.5], [2,2], [0,0], [1,1], True, [1,0], 2) -> [1, 2, 5, 4].
TEST(Convolution, TransposedGroupsFromTorch) {
  const Tensor x = arange({1, 2, 2, 2}, 1, -3), w = arange({2, 1, 2, 2}, 1, -4);
  const Tensor y = conv(x, w, tensor({0.5, -0.5}, {2}), {2, 2}, {0, 0}, {1, 1}, true, {1, 0}, 2);
  expect_values(y, {1, 2, 5, 4},
                {12.5, 9.5, 8.5,  6.5, 6.5, 3.5, 4.5,  2.5,  4.5,  3.5,  0.5,  0.5, 2.5, 1.5,
                 0.5,  0.5, 0.5,  0.5, 0.5, 0.5, -0.5, 0.5,  -0.5, 1.5,  1.5,  2.5, 3.5, 5.5,
                 -0.5, 2.5, -0.5, 3.5, 5.5, 8.5, 7.5,  11.5, -0.5, -0.5, -0.5, -0.5});
  const Tensor go = arange({1, 2, 5, 4}, 1, -20);
  const Values g = conv_backward(go, x, w, {2, 2}, {0, 0}, true, {1, 0}, 2, {true, true, true});
  expect_values(g[0].tensor(), {1, 2, 2, 2}, {184.0, 164.0, 104.0, 84.0, 24.0, 36.0, 72.0, 84.0});
  expect_values(g[1].tensor(), {2, 1, 2, 2}, {108.0, 102.0, 84.0, 78.0, 68.0, 78.0, 108.0, 118.0});
  expect_values(g[2].tensor(), {2}, {-210.0, 190.0});
}

TEST(Convolution, OneAndThreeDimsFromTorch) {
  // torch: conv1d(arange(6.), [[[1, -2]]], dilation=2) -> [-4, -5, -6, -7].
  expect_values(conv(arange({1, 1, 6}, 1, 0), tensor({1, -2}, {1, 1, 2}), std::nullopt, {1}, {0},
                     {2}, false, {0}, 1),
                {1, 1, 4}, {-4, -5, -6, -7});
  // torch: x = arange(16.).reshape(1,2,2,2,2) - 8, w = arange(8.).reshape(1,2,2,2,1) - 4,
  // padding (0, 0, 1) -> [0, 88, 84, 0].
  expect_values(conv(arange({1, 2, 2, 2, 2}, 1, -8), arange({1, 2, 2, 2, 1}, 1, -4), std::nullopt,
                     {1, 1, 1}, {0, 0, 1}, {1, 1, 1}, false, {0, 0, 0}, 1),
                {1, 1, 1, 1, 4}, {0, 88, 84, 0});
  // One stride value for both dims of a 2-d convolution.
  EXPECT_EQ(conv(arange({1, 2, 5, 5}, 1, 0), arange({3, 2, 3, 3}, 1, 0), std::nullopt, {2}, {1},
                 {1}, false, {0}, 1)
                .shape(),
            Shape({1, 3, 3, 3}));
}

TEST(Convolution, IntegersAreExactAndWrap) {
  // torch: uint8 200s conv uint8 2s over a 2x2 window: 1600 mod 256 = 64.
  const Tensor x = Tensor::full({1, 1, 2, 2}, 200, DType::UInt8);
  const Tensor w = Tensor::full({1, 1, 2, 2}, 2, DType::UInt8);
  const Tensor y = conv(x, w, std::nullopt, {1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 1);
  EXPECT_EQ(y.dtype(), DType::UInt8);
  EXPECT_EQ(y.get_int(0), 64);
}

TEST(Convolution, ShapeChecksLikeATen) {
  auto f32 = [](const Shape& s) { return Tensor::zeros(s, DType::Float32); };
  EXPECT_EQ(op_error_of([&] {
              conv(f32({1, 4, 5, 5}), f32({3, 2, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {1, 1},
                   false, {0, 0}, 1);
            }),
            "Given groups=1, weight of size [3, 2, 3, 3], expected input[1, 4, 5, 5] to have 2 "
            "channels, but got 4 channels instead");
  EXPECT_EQ(op_error_of([&] {
              conv(f32({1, 4, 5, 5}), f32({3, 2, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {1, 1}, true,
                   {0, 0}, 1);
            }),
            "Given transposed=1, weight of size [3, 2, 3, 3], expected input[1, 4, 5, 5] to have 3 "
            "channels, but got 4 channels instead");
  EXPECT_EQ(op_error_of([&] {
              conv(f32({1, 2, 2, 5}), f32({3, 2, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {1, 1},
                   false, {0, 0}, 1);
            }),
            "Calculated padded input size per channel: (2 x 5). Kernel size: (3 x 3). Kernel size "
            "can't be greater than actual input size");
  EXPECT_EQ(op_error_of([&] {
              conv(f32({1, 4, 5, 5}), f32({3, 2, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {1, 1},
                   false, {0, 0}, 4);
            }),
            "Given groups=4, expected weight to be at least 4 at dimension 0, but got weight of "
            "size [3, 2, 3, 3] instead");
  EXPECT_EQ(op_error_of([&] {
              conv(f32({2, 5, 5}), f32({3, 2, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {1, 1}, false,
                   {0, 0}, 1);
            }),
            "Expected 4-dimensional input for 4-dimensional weight [3, 2, 3, 3], but got "
            "3-dimensional input of size [2, 5, 5] instead");
  EXPECT_EQ(op_error_of([&] {
              conv(f32({1, 2, 1, 1}), f32({2, 3, 3, 3}), std::nullopt, {1, 1}, {2, 2}, {1, 1}, true,
                   {0, 0}, 1);
            }),
            "Given input size per channel: (1 x 1). Calculated output size per channel: (-1 x -1). "
            "Output size is too small");
  EXPECT_EQ(op_error_of([&] {
              conv(f32({1, 2, 5, 5}), f32({3, 2, 3, 3}), std::nullopt, {1, 1}, {0, 0, 0}, {1, 1},
                   false, {0, 0}, 1);
            }),
            "expected padding to be a single integer value or a list of 2 values to match the "
            "convolution dimensions, but got padding=[0, 0, 0]");
  EXPECT_EQ(op_error_of([&] {
              conv(f32({1, 2, 5, 5}), f32({3, 2, 3, 3}), f32({4}), {1, 1}, {0, 0}, {1, 1}, false,
                   {0, 0}, 1);
            }),
            "Given weight of size [3, 2, 3, 3], expected bias to be 1-dimensional with 3 "
            "elements, but got bias of size [4] instead");
  EXPECT_EQ(op_error_of([&] {
              conv(f32({1, 2, 5, 5}), f32({3, 2, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {0, 1},
                   false, {0, 0}, 1);
            }),
            "dilation should be greater than zero, but got [0, 1]");
  EXPECT_NE(op_error_of([&] {
              conv(Tensor::zeros({1, 2, 5, 5}, DType::Bool),
                   Tensor::zeros({3, 2, 3, 3}, DType::Bool), std::nullopt, {1, 1}, {0, 0}, {1, 1},
                   false, {0, 0}, 1);
            }),
            "");
  // Transposed integer convolutions other than i64 are not implemented (1.13 and 2.x).
  EXPECT_NE(op_error_of([&] {
              conv(Tensor::zeros({1, 2, 3, 3}, DType::Int32),
                   Tensor::zeros({2, 3, 3, 3}, DType::Int32), std::nullopt, {1, 1}, {0, 0}, {1, 1},
                   true, {0, 0}, 1);
            }),
            "");
}

void check_samples(const std::string& name) {
  const OpDef& op = conv_ops().get(name);
  const auto samples = op.samples(SampleContext{false});
  EXPECT_GE(samples.size(), 8u) << name;
  for (const Sample& s : samples) {
    const Values args = materialize(op, s.call, 7);
    const bool expect_error = s.label.rfind("error:", 0) == 0;
    bool raised = false;
    try {
      op.run_ref(args);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::OpError) << s.label << ": " << e.what();
      raised = true;
    }
    EXPECT_EQ(raised, expect_error) << name << ": " << s.label;
  }
  EXPECT_FALSE(op.samples(SampleContext{true}).empty()) << name;
}

TEST(Convolution, SamplesMaterialiseAndRun) {
  check_samples("aten.convolution.default");
  check_samples("aten.convolution_backward.default");
}

}  // namespace
}  // namespace crucible

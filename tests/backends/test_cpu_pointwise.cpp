// The cpu backend's elementwise loops: the vectorized f32 math meets the f32 tolerance on every
// ISA this machine has, and the backend's ops agree with the reference on strided inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/cpu_features.h"
#include "backends/cpu/pointwise_kernels.h"
#include "backends/pointwise_kernel_sets.h"
#include "crucible/core/error.h"
#include "crucible/ops/op.h"

namespace crucible::cpu {
namespace {

void expect_close(PwOp op, double (*ref)(double), float lo, float hi) {
  std::vector<float> x;
  for (int i = 0; i <= 20000; ++i) x.push_back(lo + (hi - lo) * static_cast<float>(i) / 20000.0f);
  for (float s : {0.0f, -0.0f, INFINITY, -INFINITY, NAN}) x.push_back(s);
  for (const PwKernels* k : kernel_sets()) {
    std::vector<float> y(x.size());
    const float* in[1] = {x.data()};
    k->f32[static_cast<int>(op)](in, y.data(), static_cast<int64_t>(x.size()), PwParams{});
    for (size_t i = 0; i < x.size(); ++i) {
      const double r = ref(static_cast<double>(x[i]));
      if (std::isnan(r)) {
        EXPECT_TRUE(std::isnan(y[i])) << x[i];
      } else if (std::isinf(r)) {
        EXPECT_EQ(y[i], r) << x[i];
      } else {
        EXPECT_LE(std::abs(y[i] - r), 1e-5 + 1.3e-6 * std::abs(r)) << "x=" << x[i];
      }
    }
  }
}

TEST(CpuPointwise, ExpMeetsF32Tolerance) {
  expect_close(
      PwOp::Exp, [](double v) { return std::exp(v); }, -110.0f, 88.7f);
}
TEST(CpuPointwise, LogMeetsF32Tolerance) {
  expect_close(
      PwOp::Log, [](double v) { return std::log(v); }, -1.0f, 1e6f);
  expect_close(
      PwOp::Log, [](double v) { return std::log(v); }, 1e-40f, 1e-30f);
}
TEST(CpuPointwise, TanhMeetsF32Tolerance) {
  expect_close(
      PwOp::Tanh, [](double v) { return std::tanh(v); }, -12.0f, 12.0f);
}
TEST(CpuPointwise, ErfMeetsF32Tolerance) {
  expect_close(
      PwOp::Erf, [](double v) { return std::erf(v); }, -6.0f, 6.0f);
}
TEST(CpuPointwise, SigmoidMeetsF32Tolerance) {
  expect_close(
      PwOp::Sigmoid, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }, -90.0f, 90.0f);
}

TEST(CpuPointwise, GeluMeetsF32ToleranceWithItsNegativeTail) {
  expect_close(
      PwOp::Gelu, [](double v) { return 0.5 * v * std::erfc(-v / std::sqrt(2.0)); }, -14.0f, 12.0f);
  expect_close(
      PwOp::Gelu, [](double v) { return 0.5 * v * std::erfc(-v / std::sqrt(2.0)); }, -130.0f,
      130.0f);
  // The tail (x * Phi(x) is about -1.8e-37 at -13) keeps its sign and magnitude: Abramowitz
  // and Stegun's erfc fit, t P(t) exp(-z^2), is off by 0.16% relative at -5, 1% at -8 and 3.7%
  // at -13 (its own error there, far below f32's absolute tolerance), where 0.5 x (1 + erf(x /
  // sqrt 2)) in f32, as ATen's vectorized gelu computes it, cancels to 0 beyond about -5.5.
  for (const PwKernels* k : kernel_sets()) {
    for (float x : {-5.0f, -8.0f, -11.0f, -13.0f}) {
      float y = 0;
      const float* in[1] = {&x};
      k->f32[static_cast<int>(PwOp::Gelu)](in, &y, 1, PwParams{});
      const double r = 0.5 * x * std::erfc(-x / std::sqrt(2.0));
      EXPECT_NEAR(y / r, 1.0, 0.04) << x;
    }
  }
}

// A second input constant along the row ([N, 1] against [N, L], or a 0-d tensor) takes the loop
// that reads it once (f32_b1): rows longer than a block, NaN and infinities in the column, and
// in-place, each element as the scalar expression gives it.
TEST(CpuPointwise, AColumnBroadcastAlongItsRowGivesEveryElementTheSameExpression) {
  auto cpu = make_cpu_backend();
  const int64_t n = 5, len = 1029;  // rows longer than the engine's block of 1024
  Tensor a = Tensor::empty({n, len}, DType::Float32);
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, 0.37 * static_cast<double>(i % 211) - 20);
  Tensor b = Tensor::empty({n, 1}, DType::Float32);
  const double col[] = {1.5, -0.0, NAN, INFINITY, -3.25};
  for (int64_t r = 0; r < n; ++r) b.set(r, col[r]);
  auto expect = [&](const std::string& op, const Values& extra, auto f) {
    Values args = {Value(a), Value(b)};
    args.insert(args.end(), extra.begin(), extra.end());
    const Tensor o = cpu->run(OpRegistry::catalog().get(op), args).at(0).tensor();
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < len; ++j) {
        const float x = static_cast<float>(a.get(r * len + j));
        const float want = f(x, static_cast<float>(col[r]));
        const float got = static_cast<float>(o.get(r * len + j));
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(got)) << op << " row " << r << " at " << j;
        } else {
          ASSERT_EQ(got, want) << op << " row " << r << " at " << j;
        }
      }
  };
  expect("aten.mul.Tensor", {}, [](float x, float y) { return x * y; });
  expect("aten.add.Tensor", {Value(2.0)}, [](float x, float y) { return x + 2.0f * y; });
  expect("aten.div.Tensor", {}, [](float x, float y) { return x / y; });
  expect("aten.maximum.default", {},
         [](float x, float y) { return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y); });
  // In place: self is the row, the column is read once per row.
  Tensor self = a.clone();
  cpu->run(OpRegistry::catalog().get("aten.mul_.Tensor"), {Value(self), Value(b)});
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < len; j += 97) {
      const float want = static_cast<float>(a.get(r * len + j)) * static_cast<float>(col[r]);
      const float got = static_cast<float>(self.get(r * len + j));
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got));
      else
        EXPECT_EQ(got, want) << r << " " << j;
    }
}

TEST(CpuPointwise, BroadcastStridedAddMatchesReference) {
  auto cpu = make_cpu_backend();
  const OpDef& op = OpRegistry::catalog().get("aten.add.Tensor");
  Tensor a = Tensor::empty({37, 53}, DType::Float32);
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, 0.25 * static_cast<double>(i % 97) - 3);
  Tensor at = a.transpose(0, 1);  // [53, 37], strided
  Tensor b = Tensor::empty({37}, DType::BFloat16);
  for (int64_t i = 0; i < b.numel(); ++i) b.set(i, static_cast<double>(i) / 8);
  Values out = cpu->run(op, {Value(at), Value(b), Value(2.0)});
  const Tensor& o = out.at(0).tensor();
  ASSERT_EQ(o.dtype(), DType::Float32);
  ASSERT_EQ(o.shape(), (Shape{53, 37}));
  for (int64_t i = 0; i < 53; ++i)
    for (int64_t j = 0; j < 37; ++j)
      ASSERT_FLOAT_EQ(static_cast<float>(o.get(i * 37 + j)),
                      static_cast<float>(at.get(i * 37 + j) + 2.0 * b.get(j)));
}

TEST(CpuPointwise, UnsupportedCallIsReportedNotForwarded) {
  auto cpu = make_cpu_backend();
  // fill_ of a complex tensor: cpu fills real dtypes only.
  const OpDef& op = OpRegistry::catalog().get("aten.fill_.Tensor");
  Tensor self = Tensor::empty({3, 4}, DType::Complex64);
  std::string why;
  // A call that computes: reported unsupported, never forwarded to the reference.
  const Values computes{Value(self), Value(Tensor::scalar(1.5, DType::Float32))};
  EXPECT_FALSE(cpu->supports(op, computes, &why));
  EXPECT_NE(why.find("backend 'cpu'"), std::string::npos) << why;
  try {
    cpu->run(op, computes);
    ADD_FAILURE() << "cpu computed a call it does not support";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
  }
  for (int64_t i = 0; i < self.numel(); ++i) EXPECT_EQ(self.get(i), 0.0) << "written";
  // A call the op's meta function refuses: cpu raises ATen's error as the reference does.
  const Values refused{Value(self), Value(Tensor::empty({2}, DType::Float32))};
  std::string want;
  try {
    op.run_meta(refused);
    FAIL() << "a 1-d value tensor must be refused by fill_'s meta function";
  } catch (const Error& e) {
    want = e.what();
  }
  EXPECT_TRUE(cpu->supports(op, refused, &why));
  try {
    cpu->run(op, refused);
    ADD_FAILURE() << "cpu computed a call the meta function refuses";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError) << e.what();
    EXPECT_EQ(std::string(e.what()), want);
  }
}

// pow(x, 3) takes the cube loop (in f64 for f32, rounded once): exact where the reference is,
// including values whose cube overflows and the special values.
TEST(CpuPointwise, CubeMatchesTheReferenceRoundedOnce) {
  auto cpu = make_cpu_backend();
  const OpDef& op = OpRegistry::catalog().get("aten.pow.Tensor_Scalar");
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
    Tensor x = Tensor::empty({4099}, t);
    for (int64_t i = 0; i < 4090; ++i) x.set(i, (static_cast<double>(i) - 2045) * 0.0173);
    const double specials[] = {NAN, INFINITY, -INFINITY, -0.0, 7e12, -7e12, 3e38, 1e-30, 250};
    for (int64_t i = 0; i < 9; ++i) x.set(4090 + i, specials[i]);
    const Values args = {Value(x), Value(3.0)};
    const Tensor got = cpu->run(op, args).at(0).tensor();
    const Tensor want = op.run_ref(args).at(0).tensor();
    ASSERT_EQ(got.dtype(), t);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double g = got.get(i), w = want.get(i);
      if (std::isnan(w))
        EXPECT_TRUE(std::isnan(g)) << i;
      else
        EXPECT_EQ(g, w) << dtype_code(t) << " x=" << x.get(i);
    }
  }
}

// A [N, 192] * [N, 1] product broadcasts the second operand along rows shorter than the
// engine's block: every row must see its own value.
TEST(CpuPointwise, RowBroadcastOfShortRowsUsesEachRowsValue) {
  auto cpu = make_cpu_backend();
  const OpDef& op = OpRegistry::catalog().get("aten.mul_.Tensor");
  Tensor a = Tensor::empty({300, 192}, DType::Float32);
  Tensor b = Tensor::empty({300, 1}, DType::Float32);
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, static_cast<double>(i % 13) - 6);
  for (int64_t r = 0; r < 300; ++r) b.set(r, static_cast<double>(r) * 0.5 - 7);
  const Tensor before = a.clone();
  cpu->run(op, {Value(a), Value(b)});
  for (int64_t r = 0; r < 300; ++r)
    for (int64_t j = 0; j < 192; ++j)
      ASSERT_EQ(a.get(r * 192 + j), before.get(r * 192 + j) * b.get(r)) << r << "," << j;
}

// Rows shorter than the engine's block run several to a block: a mask broadcast over heads and
// read through a transposed layout (every element its own mask value), and an in-place product
// into a view whose rows are not adjacent (written back row by row), split over threads at
// element boundaries inside rows.
TEST(CpuPointwise, ShortRowsRunManyToABlockAndEachKeepsItsOwnOperands) {
  auto cpu = make_cpu_backend();
  const Tensor self = Tensor::empty({64, 8, 33, 33}, DType::Float32);
  for (int64_t i = 0; i < self.numel(); ++i) self.set(i, static_cast<double>(i % 1001) - 500);
  const Tensor mask_t = Tensor::empty({33, 64}, DType::Bool);
  for (int64_t i = 0; i < mask_t.numel(); ++i) mask_t.set(i, (i * 7) % 5 < 2 ? 1 : 0);
  // [64, 1, 1, 33] with strides (1, 0, 0, 64): element (n, 0, 0, k) is mask_t[k, n].
  const Tensor mask = mask_t.as_strided({64, 1, 1, 33}, {1, 2112, 2112, 64}, 0);
  const Values out = cpu->run(OpRegistry::catalog().get("aten.masked_fill.Scalar"),
                              {Value(self), Value(mask), Value(-65504.0)});
  const Tensor& o = out.at(0).tensor();
  ASSERT_EQ(o.shape(), self.shape());
  for (int64_t n = 0; n < 64; ++n)
    for (int64_t h = 0; h < 8; ++h)
      for (int64_t q = 0; q < 33; ++q)
        for (int64_t k = 0; k < 33; ++k) {
          const int64_t i = ((n * 8 + h) * 33 + q) * 33 + k;
          const double want = mask_t.get(k * 64 + n) != 0 ? -65504.0 : self.get(i);
          ASSERT_EQ(o.get(i), want) << n << "," << h << "," << q << "," << k;
        }

  const Tensor base = Tensor::empty({300, 8, 40}, DType::Float32);
  for (int64_t i = 0; i < base.numel(); ++i) base.set(i, static_cast<double>(i % 89) - 44);
  const Tensor before = base.clone();
  const Tensor view = base.slice(2, 0, 33);  // rows of 33, 40 apart
  const Tensor other = Tensor::empty({8, 33}, DType::Float32);
  for (int64_t i = 0; i < other.numel(); ++i) other.set(i, static_cast<double>(i % 17) * 0.5 - 4);
  cpu->run(OpRegistry::catalog().get("aten.mul_.Tensor"), {Value(view), Value(other)});
  for (int64_t n = 0; n < 300; ++n)
    for (int64_t h = 0; h < 8; ++h)
      for (int64_t k = 0; k < 40; ++k) {
        const int64_t i = (n * 8 + h) * 40 + k;
        const double want = k < 33 ? before.get(i) * other.get(h * 33 + k) : before.get(i);
        ASSERT_EQ(base.get(i), want) << n << "," << h << "," << k;
      }
}

// Fresh outputs are laid out as ATen's TensorIterator lays them out (these strides are what
// libtorch returns for the same calls): the inputs' memory order, dense.
TEST(CpuPointwise, FreshOutputsTakeTheInputsMemoryLayoutAsATenDoes) {
  auto cpu = make_cpu_backend();
  auto run = [&](const char* name, const Values& args) {
    return cpu->run(OpRegistry::catalog().get(name), args).at(0).tensor();
  };
  auto filled = [](const Shape& shape, DType dt) {
    Tensor t = Tensor::empty(shape, dt);
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>((i * 7) % 11) - 5);
    return t;
  };
  // A transposed input: the output is transposed too.
  const Tensor xt = filled({5, 4}, DType::Float32).transpose(0, 1);
  EXPECT_EQ(run("aten.relu.default", {Value(xt)}).strides(), (Shape{1, 4}));
  // Channels-last times contiguous: channels-last (the first input decides).
  const Tensor cl = filled({2, 4, 5, 3}, DType::Float32).permute({0, 3, 1, 2});
  ASSERT_EQ(cl.strides(), (Shape{60, 1, 15, 3}));
  EXPECT_EQ(
      run("aten.mul.Tensor", {Value(cl), Value(filled({2, 3, 4, 5}, DType::Float32))}).strides(),
      (Shape{60, 1, 15, 3}));
  // Broadcast inputs decide dim by dim; a row-major result stays row-major.
  EXPECT_EQ(
      run("aten.lt.Tensor", {Value(filled({4}, DType::Int64)), Value(filled({4, 1}, DType::Int64))})
          .strides(),
      (Shape{4, 1}));
  // A strided bool mask and a broadcast one: the output follows the strided input's order, and
  // every value is the logical element's.
  const Tensor m = filled({31, 256}, DType::Bool).transpose(0, 1).unsqueeze(1);  // [256, 1, 31]
  ASSERT_EQ(m.strides(), (Shape{1, 7936, 256}));
  const Tensor k = filled({1, 31, 31}, DType::Bool);
  const Tensor o = run("aten.bitwise_and.Tensor", {Value(m), Value(k)});
  EXPECT_EQ(o.strides(), (Shape{1, 256, 7936}));
  ASSERT_EQ(o.shape(), (Shape{256, 31, 31}));
  for (int64_t i = 0; i < 256; ++i)
    for (int64_t j = 0; j < 31; ++j)
      for (int64_t l = 0; l < 31; ++l)
        ASSERT_EQ(o.get((i * 31 + j) * 31 + l) != 0,
                  m.get(i * 31 + l) != 0 && k.get(j * 31 + l) != 0)
            << i << "," << j << "," << l;
}

}  // namespace
}  // namespace crucible::cpu

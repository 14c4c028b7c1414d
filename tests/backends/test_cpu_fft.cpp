// The cpu backend's FFTs and complex views: hand-computed transforms (an impulse, a constant),
// every length from 1 to 70 and some large ones (powers of two, 3-smooth, primes through
// Bluestein) against the reference's DFT under the op's own judge, both directions, every
// normalisation, onesided and full r2c, multi-dim and strided inputs, c2r after r2c giving the
// signal back, and the views sharing storage.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType c64 = DType::Complex64, c128 = DType::Complex128;

Tensor complex_filled(const Shape& shape, DType dt, int seed = 1) {
  const Tensor re = filled(shape, DType::Float64, seed),
               im = filled(shape, DType::Float64, seed + 1);
  Tensor t = Tensor::empty(shape, dt);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_complex(i, {re.get(i), im.get(i)});
  return t;
}

Values run_cpu(const std::string& name, const Values& args) {
  auto cpu = make_cpu_backend();
  cpu->set_num_threads(2);
  return cpu->run(OpRegistry::catalog().get(name), args);
}

// The cpu outputs pass the op's judge against the reference.
void expect_judged(const std::string& name, const Values& args) {
  const OpDef& op = OpRegistry::catalog().get(name);
  const Values ref = op.run_ref(deep_copy(args));
  const Values got = run_cpu(name, deep_copy(args));
  for (const TensorCheck& c : op.compare.custom(args, ref, got))
    EXPECT_TRUE(c.passed) << name << " " << args[0].tensor().str() << ": " << c.reason;
}

Values c2c(const Tensor& x, std::vector<int64_t> dims, int64_t norm, bool forward) {
  return {x, Value(std::move(dims)), Value(norm), Value(forward)};
}

TEST(CpuFft, ImpulseAndConstant) {
  Tensor x = Tensor::zeros({6}, c128);
  x.set_complex(0, {1, 0});
  const Tensor y = run_cpu("aten._fft_c2c.default", c2c(x, {0}, 0, true))[0].tensor();
  for (int64_t k = 0; k < 6; ++k) EXPECT_EQ(y.get_complex(k), std::complex<double>(1, 0)) << k;
  // A constant of 1 + 2i over 5 points, backward with 1/n: (1 + 2i) at 0, zeros elsewhere.
  Tensor c = Tensor::empty({5}, c128);
  for (int64_t i = 0; i < 5; ++i) c.set_complex(i, {1, 2});
  const Tensor z = run_cpu("aten._fft_c2c.default", c2c(c, {0}, 2, false))[0].tensor();
  EXPECT_NEAR(z.get_complex(0).real(), 1, 1e-15);
  EXPECT_NEAR(z.get_complex(0).imag(), 2, 1e-15);
  for (int64_t k = 1; k < 5; ++k) EXPECT_NEAR(std::abs(z.get_complex(k)), 0, 1e-15) << k;
  // x[j] = exp(2 pi i 3 j / 16) forward: 16 at bin 3.
  Tensor w = Tensor::empty({16}, c64);
  for (int64_t j = 0; j < 16; ++j) w.set_complex(j, std::polar(1.0, 2 * M_PI * 3 * j / 16));
  const Tensor f = run_cpu("aten._fft_c2c.default", c2c(w, {0}, 0, true))[0].tensor();
  for (int64_t k = 0; k < 16; ++k) EXPECT_NEAR(std::abs(f.get_complex(k)), k == 3 ? 16 : 0, 1e-5);
}

TEST(CpuFft, EveryLengthMatchesTheDft) {
  for (int64_t n = 1; n <= 70; ++n)
    for (DType dt : {c64, c128}) {
      expect_judged("aten._fft_c2c.default", c2c(complex_filled({2, n}, dt), {1}, n % 3, n % 2));
      expect_judged("aten._fft_r2c.default",
                    {filled({2, n}, to_real(dt)), Value(std::vector<int64_t>{1}),
                     Value(int64_t{n % 3}), Value(n % 2 == 0)});
      expect_judged("aten._fft_c2r.default",
                    {complex_filled({2, n / 2 + 1}, dt), Value(std::vector<int64_t>{1}),
                     Value(int64_t{(n + 1) % 3}), Value(n)});
    }
  // Powers of two, 3-smooth and prime (Bluestein) lengths of several hundreds.
  for (int64_t n : {512, 768, 1000, 1021, 2048, 4099})
    for (DType dt : {c64, c128})
      expect_judged("aten._fft_c2c.default", c2c(complex_filled({n}, dt), {0}, 1, n % 2 == 0));
}

TEST(CpuFft, MultiDimStridedAndRoundTrip) {
  expect_judged("aten._fft_c2c.default",
                c2c(complex_filled({4, 6, 10}, c64).transpose(0, 2), {0, 2}, 0, false));
  expect_judged("aten._fft_c2c.default", c2c(complex_filled({3, 5}, c128), {}, 2, true));
  expect_judged("aten._fft_r2c.default",
                {filled({6, 8, 5}, DType::Float32).slice(1, 0, 8, 2),
                 Value(std::vector<int64_t>{2, 0}), Value(int64_t{1}), Value(true)});
  expect_judged("aten._fft_r2c.default",
                {filled({4, 9}, DType::Float64), Value(std::vector<int64_t>{0, 1}),
                 Value(int64_t{0}), Value(false)});
  expect_judged("aten._fft_c2r.default",
                {complex_filled({7, 3}, c64), Value(std::vector<int64_t>{0}), Value(int64_t{2}),
                 Value(int64_t{12})});
  // c2r(r2c(x)) with 1/n is x, along a dim that is not the last.
  const Tensor x = filled({10, 3}, DType::Float64);
  const Tensor spec = run_cpu("aten._fft_r2c.default", {x, Value(std::vector<int64_t>{0}),
                                                        Value(int64_t{0}), Value(true)})[0]
                          .tensor();
  EXPECT_EQ(spec.shape(), (Shape{6, 3}));
  const Tensor back = run_cpu("aten._fft_c2r.default", {spec, Value(std::vector<int64_t>{0}),
                                                        Value(int64_t{2}), Value(int64_t{10})})[0]
                          .tensor();
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_NEAR(back.get(i), x.get(i), 1e-14) << i;
  // An empty signal's onesided spectrum is one zero per line.
  const Tensor e = run_cpu("aten._fft_r2c.default",
                           {Tensor::empty({3, 0}, DType::Float32), Value(std::vector<int64_t>{1}),
                            Value(int64_t{0}), Value(true)})[0]
                       .tensor();
  ASSERT_EQ(e.shape(), (Shape{3, 1}));
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(e.get_complex(i), std::complex<double>(0, 0));
}

TEST(CpuFft, SpecialValuesStayNonFinite) {
  Tensor x = complex_filled({3, 12}, c64);
  x.set_complex(2, {NAN, 0});
  x.set_complex(12, {INFINITY, 1});
  expect_judged("aten._fft_c2c.default", c2c(x, {1}, 0, true));
  Tensor r = filled({2, 13}, DType::Float32);
  r.set(3, -INFINITY);
  expect_judged("aten._fft_r2c.default",
                {r, Value(std::vector<int64_t>{1}), Value(int64_t{0}), Value(true)});
}

TEST(CpuFft, ErrorsComeFromTheMetaLayer) {
  EXPECT_THROW(run_cpu("aten._fft_c2c.default", c2c(complex_filled({3}, c64), {1}, 0, true)),
               Error);
  EXPECT_THROW(
      run_cpu("aten._fft_r2c.default", {filled({8}, DType::Float16), Value(std::vector<int64_t>{0}),
                                        Value(int64_t{0}), Value(true)}),
      Error);
  EXPECT_THROW(run_cpu("aten._fft_c2c.default", c2c(complex_filled({3}, c64), {0}, 3, true)),
               Error);
}

TEST(CpuFft, ViewsShareStorage) {
  const Tensor z = complex_filled({3, 4}, c64).transpose(0, 1);
  const Tensor re = run_cpu("aten.view_as_real.default", {z})[0].tensor();
  EXPECT_TRUE(re.shares_storage(z));
  EXPECT_EQ(re.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(re.strides(), (Shape{2, 8, 1}));
  for (int64_t i = 0; i < z.numel(); ++i) {
    EXPECT_EQ(re.get(2 * i), z.get_complex(i).real());
    EXPECT_EQ(re.get(2 * i + 1), z.get_complex(i).imag());
  }
  const Tensor im = run_cpu("aten.imag.default", {z})[0].tensor();
  const Tensor real = run_cpu("aten.real.default", {z})[0].tensor();
  EXPECT_EQ(im.offset(), 1);
  for (int64_t i = 0; i < z.numel(); ++i) {
    EXPECT_EQ(im.get(i), z.get_complex(i).imag());
    EXPECT_EQ(real.get(i), z.get_complex(i).real());
  }
  const Tensor back = run_cpu("aten.view_as_complex.default", {re})[0].tensor();
  EXPECT_EQ(back.shape(), z.shape());
  EXPECT_EQ(back.strides(), z.strides());
  EXPECT_EQ(back.dtype(), c64);
  const Tensor f = filled({5}, DType::Int32);
  const Tensor same = run_cpu("aten.real.default", {f})[0].tensor();
  EXPECT_TRUE(same.shares_storage(f));
  EXPECT_THROW(run_cpu("aten.imag.default", {f}), Error);
  EXPECT_THROW(run_cpu("aten.view_as_complex.default", {filled({3, 3}, DType::Float32)}), Error);
}

}  // namespace
}  // namespace crucible::cpu_test

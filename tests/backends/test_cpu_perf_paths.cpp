// The cpu backend's speed paths against the reference: select_backward / slice_backward into
// rows of a few bytes (one typed loop instead of a piece list per row), and the elementwise
// engine's smaller thread grain for transcendental ops (the chunk boundaries of a split call).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/pointwise_kernels.h"
#include "backends/pointwise_kernel_sets.h"
#include "crucible/core/error.h"
#include "crucible/ops/op.h"

namespace crucible::cpu {
namespace {

Tensor filled(const Shape& shape, DType dt, int seed = 1) {
  Tensor t = Tensor::empty(shape, dt);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t v = (i * (seed * 7919 + 13) + seed) % 2003 - 1001;
    t.set_int(i, dt == DType::Bool ? (v & 1) : v);
  }
  return t;
}

void expect_same_bits(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(want.shape(), got.shape()) << what;
  ASSERT_EQ(want.dtype(), got.dtype()) << what;
  const size_t is = want.itemsize();
  const char* wb = static_cast<const char*>(want.storage()->data());
  const char* gb = static_cast<const char*>(got.storage()->data());
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (std::memcmp(wb + want.storage_index(i) * is, gb + got.storage_index(i) * is, is) != 0) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0) << what << ": first differing element " << first;
}

Values run_cpu(const char* name, const Values& args, int threads) {
  auto cpu = make_cpu_backend();
  cpu->set_num_threads(threads);
  return cpu->run(OpRegistry::catalog().get(name), args);
}

// The reference's bits, on 1, 2 and 3 threads.
Tensor expect_matches(const char* name, const Values& args) {
  const Values want = OpRegistry::catalog().get(name).run_ref(args);
  Tensor got;
  for (int threads : {1, 2, 3}) {
    got = run_cpu(name, args, threads).at(0).tensor();
    expect_same_bits(want.at(0).tensor(), got,
                     std::string(name) + ", " + std::to_string(threads) + " threads");
  }
  return got;
}

Value ints(std::vector<int64_t> v) { return Value(std::move(v)); }

TEST(CpuPerfPaths, SelectBackwardIntoNarrowRows) {
  // The traces' case: a [1, 512, 768] gradient into the first of 2 along the last dim.
  const Tensor g = filled({1, 512, 768}, DType::Float32);
  const Tensor out = expect_matches("aten.select_backward.default",
                                    {g, ints({1, 512, 768, 2}), Value(3), Value(0)});
  // By hand: element [0, r, c, 0] is g's, [0, r, c, 1] is zero.
  EXPECT_EQ(out.get(2 * 777), g.get(777));
  EXPECT_EQ(out.get(2 * 777 + 1), 0.0);
  EXPECT_EQ(out.get(2 * (512 * 768 - 1)), g.get(512 * 768 - 1));
  expect_matches("aten.select_backward.default", {g, ints({1, 512, 768, 2}), Value(-1), Value(-1)});
  // Every itemsize, rows of 1 to 64 bytes, odd row counts (chunks end inside no row).
  for (DType dt : {DType::Bool, DType::UInt8, DType::Int8, DType::Float16, DType::BFloat16,
                   DType::Int32, DType::Float32, DType::Int64, DType::Float64}) {
    const std::string what = std::string(dtype_code(dt));
    SCOPED_TRACE(what);
    expect_matches("aten.select_backward.default",
                   {filled({70001}, dt), ints({70001, 3}), Value(1), Value(1)});
    expect_matches("aten.select_backward.default",
                   {filled({3, 40000}, dt, 2), ints({3, 40000, 1}), Value(2), Value(0)});
    expect_matches("aten.select_backward.default",
                   {filled({1001, 2}, dt, 3), ints({1001, 4, 2}), Value(1), Value(-1)});
  }
}

TEST(CpuPerfPaths, SliceBackwardIntoNarrowRows) {
  expect_matches("aten.slice_backward.default",
                 {filled({50003, 3}, DType::Float32), ints({50003, 7}), Value(1), Value(2),
                  Value(5), Value(1)});
  expect_matches("aten.slice_backward.default",
                 {filled({20000, 2, 2}, DType::Float16), ints({20000, 5, 2}), Value(1), Value(0),
                  Value(2), Value(1)});
  // Not dense (a transposed gradient) and broadcast: the general path, same values.
  expect_matches("aten.slice_backward.default",
                 {filled({3, 30000}, DType::Float32).transpose(0, 1), ints({30000, 4}), Value(1),
                  Value(1), Value(4), Value(1)});
  expect_matches("aten.select_backward.default", {filled({1}, DType::Float32).expand({40000}),
                                                  ints({40000, 2}), Value(1), Value(1)});
}

// gelu, elu and their backward on sizes that split over threads at the transcendental grain
// (16K elements): every chunk boundary gives the one-thread bits, and the values meet the f32
// tolerance against libm in f64.
TEST(CpuPerfPaths, TranscendentalOpsSplitAtTheirGrain) {
  const int64_t n = 3 * 32768 + 5;
  Tensor x = Tensor::empty({n}, DType::Float32);
  Tensor g = Tensor::empty({n}, DType::Float32);
  for (int64_t i = 0; i < n; ++i) {
    x.set(i, -9.0 + 18.0 * static_cast<double>(i) / static_cast<double>(n));
    g.set(i, 0.5 + static_cast<double>(i % 7) / 8);
  }
  auto expect_close = [&](const Tensor& got, double (*ref)(double, double), const char* what) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double r = ref(x.get(i), g.get(i));
      if (!(std::abs(got.get(i) - r) <= 1e-5 + 1.3e-6 * std::abs(r))) ++bad;
    }
    EXPECT_EQ(bad, 0) << what;
  };
  const double a = 1.6732632423543772, s = 1.0507009873554805;
  struct Case {
    const char* op;
    Values args;
    double (*ref)(double, double);
  };
  const std::vector<Case> cases = {
      {"aten.gelu.default",
       {x},
       [](double v, double) { return 0.5 * v * std::erfc(-v / std::sqrt(2.0)); }},
      {"aten.gelu_backward.default",
       {g, x},
       [](double v, double gv) {
         return gv * (0.5 * std::erfc(-v / std::sqrt(2.0)) +
                      v * std::exp(-0.5 * v * v) / std::sqrt(2.0 * M_PI));
       }},
      {"aten.elu.default",
       {x, Value(a), Value(s), Value(1.0)},
       [](double v, double) {
         return v > 0 ? 1.0507009873554805 * v
                      : 1.0507009873554805 * 1.6732632423543772 * std::expm1(v);
       }},
      {"aten.elu_backward.default",
       {g, Value(a), Value(s), Value(1.0), Value(false), x},
       [](double v, double gv) {
         return v > 0 ? gv * 1.0507009873554805
                      : gv * 1.0507009873554805 * 1.6732632423543772 * std::exp(v);
       }},
  };
  for (const Case& c : cases) {
    const Tensor one = run_cpu(c.op, c.args, 1).at(0).tensor();
    expect_close(one, c.ref, c.op);
    for (int threads : {2, 3})
      expect_same_bits(one, run_cpu(c.op, c.args, threads).at(0).tensor(),
                       std::string(c.op) + ", " + std::to_string(threads) + " threads");
  }
}

// The 1-d scatter_add loop (a unit-stride dim, a dense source without extreme values): the
// traces' shape, sums by hand in f64, and an index out of range raises the reference's message.
TEST(CpuPerfPaths, ScatterAddOneDimensional) {
  const int64_t n = 54862, m = 965;
  Tensor self = Tensor::empty({m}, DType::Float32);
  Tensor src = Tensor::empty({n}, DType::Float32);
  Tensor idx = Tensor::empty({n}, DType::Int64);
  std::vector<double> want(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j) {
    self.set(j, static_cast<double>(j % 13) - 6);
    want[static_cast<size_t>(j)] = self.get(j);
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = (i * 7919 + 17) % m;
    idx.set_int(i, v);
    src.set(i, static_cast<double>(i % 29) * 0.125 - 1.5);
    want[static_cast<size_t>(v)] += src.get(i);
  }
  const Tensor out =
      run_cpu("aten.scatter_add.default", {self, Value(int64_t{0}), idx, src}, 1).at(0).tensor();
  for (int64_t j = 0; j < m; ++j) ASSERT_NEAR(out.get(j), want[static_cast<size_t>(j)], 1e-3) << j;
  idx.set_int(n - 3, m);
  try {
    run_cpu("aten.scatter_add.default", {self, Value(int64_t{0}), idx, src}, 1);
    ADD_FAILURE() << "an index out of range was accepted";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("index 965 is out of bounds for dimension 0 with size 965"),
        std::string::npos)
        << e.what();
  }
}

// Bool results of comparisons go through each ISA level's converters: v != 0 (NaN true) at
// lengths with vector tails; the traces' broadcast lt of [n] and [n, 1] int64 by hand.
TEST(CpuPerfPaths, ComparisonsIntoBool) {
  std::vector<float> f;
  std::vector<int64_t> q;
  for (int i = 0; i < 1037; ++i) {
    f.push_back(i % 3 == 0 ? 0.0f : (i % 3 == 1 ? -0.0f : static_cast<float>(i) * 0.5f));
    q.push_back(i % 5 == 0 ? 0 : (i % 5 == 1 ? INT64_MIN : static_cast<int64_t>(i) << 40));
  }
  f[7] = NAN;
  for (const PwKernels* k : kernel_sets()) {
    std::vector<uint8_t> bf(f.size(), 7), bq(q.size(), 7);
    k->convert.f32_to_bool(f.data(), bf.data(), static_cast<int64_t>(f.size()));
    k->convert.i64_to_bool(q.data(), bq.data(), static_cast<int64_t>(q.size()));
    for (size_t i = 0; i < f.size(); ++i) {
      ASSERT_EQ(bf[i], (f[i] != 0.0f || std::isnan(f[i])) ? 1 : 0) << i;
      ASSERT_EQ(bq[i], q[i] != 0 ? 1 : 0) << i;
    }
  }
  const int64_t n = 1024;
  Tensor a = Tensor::empty({n}, DType::Int64);
  Tensor b = Tensor::empty({n, 1}, DType::Int64);
  for (int64_t i = 0; i < n; ++i) {
    a.set_int(i, i);
    b.set_int(i, i);
  }
  for (int threads : {1, 2}) {
    const Tensor lt = run_cpu("aten.lt.Tensor", {a, b}, threads).at(0).tensor();
    ASSERT_EQ(lt.dtype(), DType::Bool);
    ASSERT_EQ(lt.shape(), (Shape{n, n}));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) bad += lt.get_int(i * n + j) != (j < i ? 1 : 0);
    EXPECT_EQ(bad, 0) << threads;
  }
}

// gelu's derivative from one exp (Abramowitz-Stegun's erfc sharing the density's exp(-x^2/2))
// and hardsigmoid as clamp((x + 3) / 6, 0, 1), on every ISA level this machine has: the f32
// tolerance against libm in f64 over a fine grid, at lengths that leave vector tails, and
// hardsigmoid bit for bit equal to min(max(x + 3, 0), 6) / 6 in f32 (ATen's formula).
TEST(CpuPerfPaths, GeluBackwardAndHardsigmoidOnEveryIsa) {
  std::vector<float> x;
  for (int i = 0; i <= 40001; ++i) x.push_back(-14.0f + 26.0f * static_cast<float>(i) / 40001.0f);
  for (float v : {0.0f, -0.0f, -3.0f, 3.0f, 1e-30f, -1e-30f, 1e30f, -1e30f}) x.push_back(v);
  const int64_t n = static_cast<int64_t>(x.size());  // 40010: not a multiple of 16
  std::vector<float> g(x.size());
  for (size_t i = 0; i < g.size(); ++i) g[i] = 0.25f + static_cast<float>(i % 11) * 0.5f;
  for (const PwKernels* k : kernel_sets()) {
    std::vector<float> y(x.size()), h(x.size());
    const float* in2[2] = {g.data(), x.data()};
    k->f32[static_cast<int>(PwOp::GeluBackward)](in2, y.data(), n, PwParams{});
    const float* in1[1] = {x.data()};
    k->f32[static_cast<int>(PwOp::Hardsigmoid)](in1, h.data(), n, PwParams{});
    int64_t bad = 0, bad_h = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double r = g[i] * (0.5 * std::erfc(-v / std::sqrt(2.0)) +
                               v * std::exp(-0.5 * v * v) / std::sqrt(2.0 * M_PI));
      if (!(std::abs(y[i] - r) <= 1e-5 + 1.3e-6 * std::abs(r))) ++bad;
      const float t = std::min(std::max(x[i] + 3.0f, 0.0f), 6.0f) / 6.0f;
      if (std::memcmp(&t, &h[i], 4) != 0) ++bad_h;
    }
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(bad_h, 0);
    // NaN propagates through both; +-inf inputs of hardsigmoid give 1 and 0.
    const float sp[3] = {NAN, INFINITY, -INFINITY}, one[3] = {1, 1, 1};
    float out[3], hs[3];
    const float* s2[2] = {one, sp};
    k->f32[static_cast<int>(PwOp::GeluBackward)](s2, out, 1, PwParams{});
    EXPECT_TRUE(std::isnan(out[0]));
    const float* s1[1] = {sp};
    k->f32[static_cast<int>(PwOp::Hardsigmoid)](s1, hs, 3, PwParams{});
    EXPECT_TRUE(std::isnan(hs[0]));
    EXPECT_EQ(hs[1], 1.0f);
    EXPECT_EQ(hs[2], 0.0f);
  }
}

}  // namespace
}  // namespace crucible::cpu

// The cpu backend's small-row f32 products (gemm_small.h): every ISA level's loops against an
// f64 product on odd sizes (row, column and depth tails), strided and transposed operands,
// alpha/beta, and the extreme-value test on every position of B; then mm, addmm and bmm calls
// that take the path against the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/gemm_small.h"
#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;

std::vector<std::pair<std::string, const cpu::SmallGemmKernels*>> kernel_sets() {
  std::vector<std::pair<std::string, const cpu::SmallGemmKernels*>> out;
  out.emplace_back("portable", &cpu::small_gemm_kernels_portable());
  const cpu::CpuFeatures& f = cpu::cpu_features();
  if (f.avx2 && f.fma) out.emplace_back("avx2", &cpu::small_gemm_kernels_avx2());
  if (f.avx512f && f.avx512bw && f.avx512vl)
    out.emplace_back("avx512", &cpu::small_gemm_kernels_avx512());
  return out;
}

std::vector<float> values(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>(
        std::fmod(static_cast<double>((i + 1) * (seed * 37 + 11) % 1009) / 250.0, 4.0) - 2.0);
  return v;
}

// One product through `kern`: A [m, k] stored with strides (ars, acs), B [k, n] row-major
// (nn) or as its transpose [n, k] (nt), C [m, n] with row stride n + 3 holding `init`. Checks
// every element of C against the f64 product, and the columns outside [j0, j1) untouched.
void check_product(const cpu::SmallGemmKernels& kern, bool transposed, int64_t m, int64_t n,
                   int64_t k, int64_t j0, int64_t j1, float alpha, float beta, bool a_cols,
                   const std::string& what) {
  // a_cols: A stored column-major (acs = m), else row-major with 2 spare columns per row.
  const int64_t ars = a_cols ? 1 : k + 2, acs = a_cols ? m : 1;
  const std::vector<float> a = values(a_cols ? m * k : m * (k + 2), 1);
  const std::vector<float> b = values(k * n, 2);
  const int64_t ldc = n + 3;
  std::vector<float> c = values(m * ldc, 3);
  const std::vector<float> init = c;
  const bool bad =
      transposed
          ? kern.nt(m, j0, j1, k, alpha, a.data(), ars, acs, b.data(), k, beta, c.data(), ldc)
          : kern.nn(m, j0, j1, k, alpha, a.data(), ars, acs, b.data(), n, beta, c.data(), ldc);
  EXPECT_FALSE(bad) << what;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const size_t o = static_cast<size_t>(i * ldc + j);
      if (j < j0 || j >= j1) {
        ASSERT_EQ(c[o], init[o]) << what << ": C[" << i << ", " << j << "] written";
        continue;
      }
      double s = 0, mag = 0;
      for (int64_t q = 0; q < k; ++q) {
        const double x = a[static_cast<size_t>(i * ars + q * acs)];
        const double y =
            transposed ? b[static_cast<size_t>(j * k + q)] : b[static_cast<size_t>(q * n + j)];
        s += x * y;
        mag += std::fabs(x * y);
      }
      const double want = alpha * s + beta * init[o];
      // Any order of f32 sums: at most (k + 3) roundings of 2^-24 relative to the magnitudes.
      const double tol = static_cast<double>(k + 3) * 0x1p-24 *
                             (std::fabs(alpha) * mag + std::fabs(beta * init[o])) +
                         1e-30;
      ASSERT_NEAR(c[o], want, tol) << what << ": C[" << i << ", " << j << "]";
    }
  }
}

TEST(CpuGemmSmall, EveryLevelMatchesTheProductOnOddSizes) {
  for (const auto& [level, kern] : kernel_sets()) {
    for (const bool t : {false, true}) {
      for (const int64_t m : {1, 2, 3, 4, 5, 7, 13, 16}) {
        for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{
                 {1, 1}, {3, 7}, {17, 33}, {67, 129}, {300, 19}, {129, 300}, {1100, 21}}) {
          const std::string what = level + (t ? " nt" : " nn") + " m=" + std::to_string(m) +
                                   " n=" + std::to_string(n) + " k=" + std::to_string(k);
          check_product(*kern, t, m, n, k, 0, n, 1.0f, 0.0f, false, what);
          check_product(*kern, t, m, n, k, 0, n, -0.5f, 2.0f, false, what + " alpha beta");
          if (!t) check_product(*kern, t, m, n, k, 0, n, 1.0f, 0.0f, true, what + " A by cols");
          // A column range (one task's block): columns outside it stay as they were.
          if (n > 2) check_product(*kern, t, m, n, k, 1, n - 1, 1.0f, 1.0f, false, what + " cols");
        }
      }
    }
  }
}

TEST(CpuGemmSmall, EveryExtremeValueOfBIsSeen) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float huge = 0x1p51f, limit = 0x1p50f;
  const int64_t m = 5, n = 67, k = 37;  // vector tiles, one-vector tiles and scalar tails
  const std::vector<float> a = values(m * k, 1);
  for (const auto& [level, kern] : kernel_sets()) {
    for (const bool t : {false, true}) {
      for (int64_t pos = 0; pos < n * k; pos += 1 + pos % 7) {
        for (const float x : {inf, -inf, nan, huge, -huge}) {
          std::vector<float> b = values(n * k, 2), c(static_cast<size_t>(m * n));
          b[static_cast<size_t>(pos)] = x;
          const bool bad =
              t ? kern->nt(m, 0, n, k, 1.0f, a.data(), k, 1, b.data(), k, 0.0f, c.data(), n)
                : kern->nn(m, 0, n, k, 1.0f, a.data(), k, 1, b.data(), n, 0.0f, c.data(), n);
          ASSERT_TRUE(bad) << level << (t ? " nt" : " nn") << " value " << x << " at " << pos;
        }
      }
      // 2^50 itself is not extreme.
      std::vector<float> b(static_cast<size_t>(n * k), limit), c(static_cast<size_t>(m * n));
      EXPECT_FALSE(t ? kern->nt(m, 0, n, k, 1.0f, a.data(), k, 1, b.data(), k, 0.0f, c.data(), n)
                     : kern->nn(m, 0, n, k, 1.0f, a.data(), k, 1, b.data(), n, 0.0f, c.data(), n))
          << level;
    }
  }
}

TEST(CpuGemmSmall, CallsOnThePathMatchTheReference) {
  // Odd sizes, B as stored and transposed (a linear layer's weight), A transposed (packed for
  // the dot products), on one and two threads.
  for (const int threads : {1, 2}) {
    expect_matches_ref("aten.mm.default", {filled({1, 301}, f32), filled({301, 67}, f32, 2)},
                       threads);
    expect_matches_ref("aten.mm.default",
                       {filled({13, 301}, f32), filled({67, 301}, f32, 2).transpose(0, 1)},
                       threads);
    expect_matches_ref(
        "aten.mm.default",
        {filled({301, 7}, f32).transpose(0, 1), filled({517, 301}, f32, 2).transpose(0, 1)},
        threads);
    expect_matches_ref("aten.addmm.default",
                       {filled({517}, f32, 3), filled({3, 129}, f32),
                        filled({517, 129}, f32, 2).transpose(0, 1), Value(0.5), Value(-2.0)},
                       threads);
    expect_matches_ref("aten.bmm.default",
                       {filled({9, 1, 129}, f32), filled({9, 129, 300}, f32, 2)}, threads);
    expect_matches_ref("aten.baddbmm.default",
                       {filled({1, 300}, f32, 3), filled({4, 5, 33}, f32),
                        filled({4, 300, 33}, f32, 2).transpose(1, 2), Value(1.5), Value(0.25)},
                       threads);
  }
}

TEST(CpuGemmSmall, ExtremeValuesInBTakeTheReferencesOrder) {
  // Cancelling huge terms: an f32 product in another order than the reference's gives another
  // answer; the call must be computed as the reference computes it.
  Tensor b = filled({40, 70}, f32, 2);
  b.set(5 * 70 + 3, 3.0e38);
  b.set(6 * 70 + 3, -3.0e38);
  b.set(9 * 70 + 66, std::numeric_limits<double>::infinity());
  b.set(11 * 70 + 20, std::numeric_limits<double>::quiet_NaN());
  b.set(30 * 70 + 40, 1.0e20);
  b.set(31 * 70 + 40, -1.0e20);
  expect_matches_ref("aten.mm.default", {filled({3, 40}, f32), b});
  expect_matches_ref("aten.mm.default",
                     {filled({3, 40}, f32), b.transpose(0, 1).contiguous().transpose(0, 1)});
}

}  // namespace
}  // namespace crucible::cpu_test

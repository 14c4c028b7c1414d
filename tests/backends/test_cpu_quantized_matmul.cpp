// The cpu backend's quantized products and dequantize steps (quantized_matmul.h,
// quantized_deq.h): every ISA level's dequantizing loops against the scalar definitions (every
// fp8 code, every int4 nibble, partial int4 blocks), the strip/panel driver against an exact
// product for every panel size and thread count, and the ops against the reference on shapes
// that take each path (m = 1, 16 on the decode strips, m = 300 on the panels; K not a multiple
// of the group, the vector width or the strip's K chunk; odd N).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/quantized_deq.h"
#include "backends/cpu/quantized_kernels.h"
#include "backends/cpu/quantized_matmul.h"
#include "crucible/core/half.h"
#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

std::vector<std::pair<std::string, const cpu::QuantDeqKernels*>> deq_sets() {
  std::vector<std::pair<std::string, const cpu::QuantDeqKernels*>> out;
  out.emplace_back("portable", &cpu::quant_deq_kernels_portable());
  const cpu::CpuFeatures& f = cpu::cpu_features();
  if (f.avx2 && f.fma) out.emplace_back("avx2", &cpu::quant_deq_kernels_avx2());
  if (f.avx512f && f.avx512bw && f.avx512vl)
    out.emplace_back("avx512", &cpu::quant_deq_kernels_avx512());
  return out;
}

bool same_float(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;  // -0 and +0 differ
}

TEST(CpuQuantDeq, Fp8CodesWidenExactlyOnEveryLevel) {
  std::vector<uint8_t> codes(259);
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint8_t>(i);
  for (const auto& [name, k] : deq_sets())
    for (const bool e4 : {true, false})
      for (const float s : {1.0f, 0.375f}) {
        std::vector<float> out(codes.size());
        k->fp8_scaled(codes.data(), static_cast<int64_t>(codes.size()), e4, s, out.data());
        for (size_t i = 0; i < codes.size(); ++i) {
          const float v = e4 ? fp8e4m3fn_to_float(codes[i]) : fp8e5m2_to_float(codes[i]);
          const float want = static_cast<float>(static_cast<double>(v) * s);
          ASSERT_TRUE(same_float(out[i], want))
              << name << (e4 ? " e4m3 " : " e5m2 ") << "code " << int(codes[i]) << " got " << out[i]
              << " want " << want;
        }
      }
}

TEST(CpuQuantDeq, Int4BlocksAndAffineRunsOnEveryLevel) {
  for (const int64_t width : {16, 32, 48, 64}) {
    const int64_t rows = 7, half = width / 2;
    std::vector<uint8_t> blk(static_cast<size_t>(rows * half));
    for (size_t i = 0; i < blk.size(); ++i) blk[i] = static_cast<uint8_t>(i * 37 + 5);
    std::vector<float> s(64), z(64);
    for (int64_t d = 0; d < 64; ++d) {
      s[d] = 0.125f * static_cast<float>(d + 1);
      z[d] = -0.5f + 0.0625f * static_cast<float>(d);
    }
    const int64_t ld = width + 5;
    for (const auto& [name, k] : deq_sets()) {
      std::vector<float> out(static_cast<size_t>(rows * ld), -7.0f);
      k->int4_block(blk.data(), width, 2, rows, s.data(), z.data(), out.data(), ld);
      for (int64_t q = 2; q < rows; ++q)
        for (int64_t d = 0; d < width; ++d) {
          // The layout's definition: full blocks split at 32, partial ones interleave.
          const uint8_t byte = width == 64 ? blk[q * half + d % 32] : blk[q * half + d / 2];
          const bool high = width == 64 ? d >= 32 : d % 2 == 1;
          const int v = high ? byte >> 4 : byte & 0xF;
          const float want = static_cast<float>(v - 8) * s[d] + z[d];
          ASSERT_FLOAT_EQ(out[(q - 2) * ld + d], want) << name << " width " << width;
        }
      EXPECT_EQ(out[width], -7.0f) << name << ": wrote past the block's columns";
    }
  }
  std::vector<uint8_t> u(67);
  std::vector<int8_t> i8(67);
  std::vector<int32_t> i32(67);
  for (size_t i = 0; i < u.size(); ++i) {
    u[i] = static_cast<uint8_t>(i * 11);
    i8[i] = static_cast<int8_t>(i * 13);
    i32[i] = static_cast<int32_t>(i * 100003) - 3000000;
  }
  const double z = 7.25, s = 0.1;
  for (const auto& [name, k] : deq_sets()) {
    std::vector<float> a(67), b(67), c(67);
    k->affine_u8(u.data(), 67, z, s, a.data());
    k->affine_i8(i8.data(), 67, z, s, b.data());
    k->affine_i32(i32.data(), 67, z, s, c.data());
    for (size_t i = 0; i < 67; ++i) {
      EXPECT_EQ(a[i], static_cast<float>((u[i] - z) * s)) << name;
      EXPECT_EQ(b[i], static_cast<float>((i8[i] - z) * s)) << name;
      EXPECT_EQ(c[i], static_cast<float>((i32[i] - z) * s)) << name;
    }
  }
}

// The float8 quantize's encoders against the generic ones: every code's value, every midpoint
// between neighbours (the ties) and a step either side of it, and values spread over the range.
TEST(CpuQuantDeq, Float8EncodersRoundAsTheGenericOnes) {
  for (const bool e4 : {true, false}) {
    const double mx = e4 ? 448.0 : 57344.0;
    std::vector<double> vals = {0.0, -0.0, mx, -mx};
    std::vector<double> codes;
    for (int c = 0; c < 128; ++c) {
      const double v = e4 ? fp8e4m3fn_to_float(static_cast<uint8_t>(c))
                          : fp8e5m2_to_float(static_cast<uint8_t>(c));
      if (std::isfinite(v) && v <= mx) codes.push_back(v);
    }
    for (size_t i = 0; i < codes.size(); ++i) {
      vals.push_back(codes[i]);
      if (i + 1 < codes.size()) {
        const double mid = (codes[i] + codes[i + 1]) / 2;
        vals.insert(vals.end(), {mid, std::nextafter(mid, 0.0), std::nextafter(mid, mx)});
      }
    }
    uint64_t state = 12345;
    for (int i = 0; i < 20000; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const double u = static_cast<double>(state >> 11) * 0x1p-53;
      vals.push_back(std::min(mx, std::ldexp(1.0 + u, static_cast<int>(state % 40) - 24)));
    }
    for (const double v0 : vals)
      for (const double v : {v0, -v0}) {
        const uint8_t want = e4 ? fp8e4m3fn_from_double(v) : fp8e5m2_from_double(v);
        const uint8_t got = e4 ? cpu::qk::e4m3_from_double(v) : cpu::qk::e5m2_from_double(v);
        ASSERT_EQ(int(got), int(want)) << (e4 ? "e4m3 " : "e5m2 ") << v;
      }
  }
}

// W [n, k] of small integers (exact f32 products and sums), as row-major or k-major source.
struct IntWeight {
  int64_t n, k;
  std::vector<float> w;
  IntWeight(int64_t n_, int64_t k_) : n(n_), k(k_), w(static_cast<size_t>(n_ * k_)) {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t q = 0; q < k; ++q) w[j * k + q] = static_cast<float>((j * 7 + q * 3) % 9 - 4);
  }
  cpu::WeightSource source(bool k_major, int64_t align) const {
    cpu::WeightSource s;
    s.k_major = k_major;
    s.align = align;
    s.fill = [this, k_major](int64_t j0, int64_t j1, int64_t q0, int64_t q1, float* out,
                             int64_t ld) {
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t q = q0; q < q1; ++q)
          (k_major ? out[(q - q0) * ld + (j - j0)] : out[(j - j0) * ld + (q - q0)]) = w[j * k + q];
    };
    return s;
  }
};

// Every element of the product, for every panel size and thread count: a strip or panel
// written to the wrong columns, skipped, or filled from the wrong rows of W changes an exact
// integer result.
TEST(CpuQuantMatmul, EveryPanelAndThreadSplitGivesTheExactProduct) {
  const int64_t n = 203, k = 1030;  // K beyond one row-major strip chunk, N odd
  const IntWeight w(n, k);
  const int threads_before = cpu::num_threads();
  for (const int64_t m : {1, 5, 16, 20}) {
    std::vector<float> a(static_cast<size_t>(m * k));
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
    std::vector<double> want(static_cast<size_t>(m * n), 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t q = 0; q < k; ++q) want[i * n + j] += a[i * k + q] * w.w[j * k + q];
    for (const bool k_major : {false, true})
      for (const int64_t align : {int64_t{1}, int64_t{16}})
        for (const int threads : {1, 2, 3})
          for (const int64_t panel : {int64_t{0}, int64_t{1}, int64_t{17}, int64_t{64}, n + 5}) {
            cpu::set_num_threads(threads);
            std::vector<float> c(static_cast<size_t>(m * n), -1e30f);
            cpu::quantized_matmul(m, n, k, a.data(), w.source(k_major, align), c.data(), n, panel);
            for (int64_t e = 0; e < m * n; ++e)
              ASSERT_EQ(c[e], want[e]) << "m " << m << (k_major ? " k-major" : " row-major")
                                       << " align " << align << " threads " << threads << " panel "
                                       << panel << " at (" << e / n << ", " << e % n << ")";
          }
  }
  cpu::set_num_threads(threads_before);
}

Tensor int_tensor(const Shape& shape, DType dt, int64_t lo, int64_t span, int seed) {
  Tensor t = Tensor::empty(shape, dt);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_int(i, lo + (i * (seed * 31 + 7) + seed) % span);
  return t;
}

// f32 values in [lo, lo + 2): scales.
Tensor positive(const Shape& shape, int seed, double lo) {
  Tensor t = Tensor::empty(shape, DType::Float32);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set(i, lo + std::fmod(static_cast<double>((i + 1) * (seed * 37 + 11) % 1009) / 250.0, 2.0));
  return t;
}

Tensor fp8_tensor(const Shape& shape, DType dt, int seed) {
  Tensor t = Tensor::empty(shape, dt);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set(i, std::fmod(static_cast<double>((i + 1) * (seed * 37 + 11) % 1009) / 50.0, 40.0) - 20.0);
  return t;
}

// Weights in [-8, 8): with the full int8 range, f32 sums of 100 terms of up to 256 already
// differ from the f64 reference by more than the op's tolerance, whatever the summation order.
TEST(CpuQuantMatmul, Int8PackMmMatchesReferenceOnEveryPath) {
  for (const int64_t m : {1, 6, 13, 16, 300})
    for (const int threads : {1, 3}) {
      const int64_t n = 37, k = 100;
      expect_matches_ref("aten._weight_int8pack_mm.default",
                         {filled({m, k}, DType::Float32, 1),
                          int_tensor({n, k}, DType::Int8, -8, 16, 2), positive({n}, 3, 0.01)},
                         threads);
    }
}

TEST(CpuQuantMatmul, EmptyInnerDimensionGivesZeros) {
  for (const int64_t m : {3, 40}) {
    const Values got =
        expect_matches_ref("aten._weight_int8pack_mm.default",
                           {filled({m, 0}, DType::Float32, 1), Tensor::zeros({5, 0}, DType::Int8),
                            positive({5}, 3, 0.01)});
    for (int64_t i = 0; i < m * 5; ++i) EXPECT_EQ(got[0].tensor().get(i), 0.0);
  }
}

TEST(CpuQuantMatmul, Int4PackMmMatchesReferenceOnEveryPath) {
  // N = 144: two full blocks of 64 and a partial one of 16. K = 300: not a multiple of the
  // group (32), beyond one k-major strip chunk (256).
  const int64_t n = 144, k = 300, group = 32, groups = (k + group - 1) / group;
  const Tensor packed =
      OpRegistry::catalog()
          .get("aten._convert_weight_to_int4pack_for_cpu.default")
          .run_ref({int_tensor({n, k}, DType::Int32, 0, 16, 4), Value(int64_t{2})})[0]
          .tensor();
  Tensor sz = Tensor::empty({groups, n, 2}, DType::Float32);
  for (int64_t i = 0; i < sz.numel(); ++i)
    sz.set(i, i % 2 == 0 ? 0.01 + 0.001 * static_cast<double>(i % 97)
                         : -0.05 + 0.001 * static_cast<double>(i % 89));
  for (const int64_t m : {1, 6, 13, 16, 300})
    for (const int threads : {1, 3})
      expect_matches_ref("aten._weight_int4pack_mm_for_cpu.default",
                         {filled({m, k}, DType::Float32, 5), packed, Value(group), sz}, threads);
}

TEST(CpuQuantMatmul, ScaledMmMatchesReferenceForBothLayoutsAndScalings) {
  const int64_t n = 37, k = 100;
  for (const int64_t m : {1, 6, 13, 16, 300})
    for (const DType wt : {DType::Float8E5M2, DType::Float8E4M3FN})
      for (const bool column_major : {true, false})
        for (const bool rowwise : {false, true}) {
          const Tensor a = fp8_tensor({m, k}, DType::Float8E4M3FN, 6);
          // A linear weight's transpose (column-major [k, n]) or a contiguous [k, n].
          const Tensor b =
              column_major ? fp8_tensor({n, k}, wt, 7).transpose(0, 1) : fp8_tensor({k, n}, wt, 7);
          const Tensor sa =
              rowwise ? positive({m, 1}, 8, 0.1) : Tensor::scalar(0.5, DType::Float32);
          const Tensor sb =
              rowwise ? positive({1, n}, 9, 0.1) : Tensor::scalar(0.25, DType::Float32);
          expect_matches_ref("aten._scaled_mm.default",
                             {a, b, sa, sb, filled({n}, DType::Float32, 10), Value(),
                              Value(DType::Float32), Value(false)},
                             3);
        }
}

// A NaN code in the weight: the f32 strip loops see it and the strip is computed again in
// double; the NaN column stays NaN and every other column stays right.
TEST(CpuQuantMatmul, ScaledMmWithANanWeightMatchesReference) {
  const int64_t n = 40, k = 50;
  Tensor w = fp8_tensor({n, k}, DType::Float8E4M3FN, 11);
  static_cast<uint8_t*>(w.data_ptr())[3 * k + 4] = 0x7F;  // NaN in W's row 3
  for (const int64_t m : {2, 17})
    expect_matches_ref("aten._scaled_mm.default",
                       {fp8_tensor({m, k}, DType::Float8E4M3FN, 12), w.transpose(0, 1),
                        Tensor::scalar(1.0, DType::Float32), Tensor::scalar(1.0, DType::Float32),
                        Value(), Value(), Value(DType::Float32), Value(false)});
}

TEST(CpuQuantDequantize, GroupAndFloat8DequantizeAreTheReferenceBits) {
  const int64_t n = 9, k = 96, group = 32;
  const Tensor q = int_tensor({n, k}, DType::UInt8, 0, 16, 13);
  const Tensor s = positive({n, k / group}, 14, 0.01);
  const Tensor z = int_tensor({n, k / group}, DType::Int32, 0, 16, 15);
  const Values got = expect_matches_ref("quantized_decomposed.dequantize_per_channel_group.default",
                                        {q, s, z, Value(int64_t{0}), Value(int64_t{15}),
                                         Value(DType::UInt8), Value(group), Value(DType::Float32)});
  const Values ref = OpRegistry::catalog()
                         .get("quantized_decomposed.dequantize_per_channel_group.default")
                         .run_ref({q, s, z, Value(int64_t{0}), Value(int64_t{15}),
                                   Value(DType::UInt8), Value(group), Value(DType::Float32)});
  for (int64_t i = 0; i < n * k; ++i)
    ASSERT_EQ(got[0].tensor().get(i), ref[0].tensor().get(i)) << i;
  // Float8 with a scale per row (the float8wo weight) and one scale for all.
  for (const bool per_row : {true, false}) {
    const Tensor w = fp8_tensor({n, 77}, DType::Float8E4M3FN, 16);
    const Tensor sc = per_row ? positive({n, 1}, 17, 0.01) : Tensor::full({1}, 0.3, DType::Float32);
    const OpDef& op =
        OpRegistry::catalog().get("torchao.dequantize_affine_float8_non_decomposed.default");
    const Values r = op.run_ref({w, sc, Value(DType::Float32)});
    const Values g = expect_matches_ref("torchao.dequantize_affine_float8_non_decomposed.default",
                                        {w, sc, Value(DType::Float32)});
    for (int64_t i = 0; i < w.numel(); ++i)
      ASSERT_EQ(g[0].tensor().get(i), r[0].tensor().get(i)) << i;
  }
}

}  // namespace
}  // namespace crucible::cpu_test

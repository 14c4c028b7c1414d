// Weight quantization for the recipes, computed in double and rounded once into the stored
// dtypes; the quantized values are computed from the stored (rounded) scales, so the operators
// dequantize exactly what was meant.
#include "quant/weights.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace crucible::quant {
namespace {

std::vector<double> doubles(const Tensor& w) {
  const Tensor c = w.contiguous().to(DType::Float64);
  return std::vector<double>(c.data<double>(), c.data<double>() + c.numel());
}

// The value `v` rounded to `dtype` (as stored).
double stored(double v, DType dtype) {
  Tensor t = Tensor::uninitialized({1}, dtype);
  t.set(0, v);
  return t.get(0);
}

}  // namespace

Int8Weight quantize_int8_per_channel(const Tensor& w, DType scale_dtype) {
  const int64_t n = w.size(0), k = w.size(1);
  const std::vector<double> v = doubles(w);
  Int8Weight out{Tensor::uninitialized({n, k}, DType::Int8),
                 Tensor::uninitialized({n}, scale_dtype)};
  for (int64_t j = 0; j < n; ++j) {
    double amax = 0;
    for (int64_t q = 0; q < k; ++q) amax = std::max(amax, std::abs(v[j * k + q]));
    out.scale.set(j, std::max(amax, 1e-5) / 127.0);
    const double s = out.scale.get(j);
    for (int64_t q = 0; q < k; ++q)
      out.q.set_int(j * k + q, static_cast<int64_t>(
                                   std::clamp(std::nearbyint(v[j * k + q] / s), -128.0, 127.0)));
  }
  return out;
}

Int4Weight quantize_int4_groups(const Tensor& w, int64_t group, DType dtype) {
  const int64_t n = w.size(0), k = w.size(1), groups = k / group;
  const std::vector<double> v = doubles(w);
  Int4Weight out{Tensor::uninitialized({n, k}, DType::Int32),
                 Tensor::uninitialized({groups, n, 2}, dtype)};
  for (int64_t j = 0; j < n; ++j)
    for (int64_t g = 0; g < groups; ++g) {
      double lo = INFINITY, hi = -INFINITY;
      for (int64_t q = g * group; q < (g + 1) * group; ++q)
        lo = std::min(lo, v[j * k + q]), hi = std::max(hi, v[j * k + q]);
      const double s = stored(std::max(hi - lo, 1e-6) / 15.0, dtype);
      const double zero = stored(lo + 8 * s, dtype);
      out.scale_and_zero.set((g * n + j) * 2, s);
      out.scale_and_zero.set((g * n + j) * 2 + 1, zero);
      for (int64_t q = g * group; q < (g + 1) * group; ++q)
        out.values.set_int(
            j * k + q, static_cast<int64_t>(
                           std::clamp(std::nearbyint((v[j * k + q] - zero) / s) + 8, 0.0, 15.0)));
    }
  return out;
}

Float8Weight quantize_float8(const Tensor& w, bool per_channel, DType scale_dtype) {
  const int64_t n = w.size(0), k = w.size(1);
  const std::vector<double> v = doubles(w);
  Float8Weight out{Tensor::uninitialized({n, k}, DType::Float8E4M3FN),
                   per_channel ? Tensor::uninitialized({n, 1}, scale_dtype)
                               : Tensor::uninitialized({}, scale_dtype)};
  double total = 0;
  for (double x : v) total = std::max(total, std::abs(x));
  for (int64_t j = 0; j < n; ++j) {
    double amax = total;
    if (per_channel) {
      amax = 0;
      for (int64_t q = 0; q < k; ++q) amax = std::max(amax, std::abs(v[j * k + q]));
    }
    const double s = stored(std::max(amax, 1e-12) / 448.0, scale_dtype);
    if (per_channel || j == 0) out.scale.set(per_channel ? j : 0, s);
    for (int64_t q = 0; q < k; ++q)
      out.q.set(j * k + q, std::clamp(v[j * k + q] / s, -448.0, 448.0));
  }
  return out;
}

UIntXWeight quantize_uintx_groups(const Tensor& w, int bits, int64_t group) {
  const int64_t n = w.size(0), k = w.size(1), groups = n * k / group;
  const double qmax = std::ldexp(1.0, bits) - 1;
  const std::vector<double> v = doubles(w);
  UIntXWeight out{Tensor::uninitialized({n, k}, DType::UInt8),
                  Tensor::uninitialized({groups}, DType::Float32),
                  Tensor::uninitialized({groups}, DType::Float32)};
  for (int64_t g = 0; g < groups; ++g) {
    double lo = 0, hi = 0;  // the range includes 0, so zero is representable
    for (int64_t i = g * group; i < (g + 1) * group; ++i)
      lo = std::min(lo, v[i]), hi = std::max(hi, v[i]);
    const double s = stored(std::max(hi - lo, 1e-6) / qmax, DType::Float32);
    const double zp = std::clamp(std::nearbyint(-lo / s), 0.0, qmax);
    out.scale.set(g, s);
    out.zero.set(g, zp);
    for (int64_t i = g * group; i < (g + 1) * group; ++i)
      out.q.set_int(i, static_cast<int64_t>(std::clamp(std::nearbyint(v[i] / s + zp), 0.0, qmax)));
  }
  return out;
}

}  // namespace crucible::quant

// Elementwise comparison with per-dtype tolerances and error metrics.
#include "crucible/eval/compare.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace crucible {

Tolerance default_tolerance(DType t) {
  switch (t) {
    case DType::Float64: return {1e-7, 1e-7};
    case DType::Float32: return {1e-5, 1.3e-6};
    case DType::Float16: return {1e-5, 1e-3};
    case DType::BFloat16: return {1e-5, 1.6e-2};
    // fp8: half a unit in the last place relative (3 and 2 fraction bits).
    case DType::Float8E4M3FN: return {1e-5, 0.0625};
    case DType::Float8E5M2: return {1e-5, 0.125};
    default: return {0, 0};
  }
}

double ulp_of(double x, DType t) {
  if (!is_floating(t)) return 1.0;
  const FloatInfo fi = float_info(t);
  double a = std::fabs(x);
  if (!std::isfinite(a)) return std::numeric_limits<double>::infinity();
  if (a < fi.tiny) return fi.true_min;
  int e = std::ilogb(a);
  return std::ldexp(1.0, e - fi.mantissa_bits);
}

namespace {

// Cosine similarity of the finite element pairs, scaled so that values near the dtype's
// maximum do not overflow the sums.
double cosine_similarity(const Tensor& ref, const Tensor& cand) {
  const int64_t n = ref.numel();
  double m = 0;
  for (int64_t i = 0; i < n; ++i) {
    double r = ref.get(i), v = cand.get(i);
    if (std::isfinite(r) && std::isfinite(v)) m = std::max({m, std::fabs(r), std::fabs(v)});
  }
  if (m == 0) return 1.0;
  double dot = 0, rr = 0, vv = 0;
  for (int64_t i = 0; i < n; ++i) {
    double r = ref.get(i) / m, v = cand.get(i) / m;
    if (!std::isfinite(r) || !std::isfinite(v)) continue;
    dot += r * v, rr += r * r, vv += v * v;
  }
  if (rr == 0 && vv == 0) return 1.0;
  if (rr == 0 || vv == 0) return 0.0;
  return dot / std::sqrt(rr * vv);
}

void note_mismatch(TensorCheck& c, int64_t i, std::string_view why, double r, double v) {
  ++c.mismatches;
  if (c.reason.empty())
    c.reason = fmt::format("first at element {}: expected {}, got {} ({})", i, r, v, why);
}

}  // namespace

TensorCheck compare_tensors(const Tensor& ref, const Tensor& cand, double scale,
                            const std::string& what) {
  TensorCheck c;
  c.what = what;
  c.numel = ref.numel();
  if (ref.shape() != cand.shape()) {
    c.passed = false;
    c.reason = fmt::format("wrong shape in {}: expected {}, got {}", what, shape_str(ref.shape()),
                           shape_str(cand.shape()));
    return c;
  }
  if (ref.dtype() != cand.dtype()) {
    c.passed = false;
    c.reason = fmt::format("wrong dtype in {}: expected {}, got {}", what, dtype_code(ref.dtype()),
                           dtype_code(cand.dtype()));
    return c;
  }
  const DType t = ref.dtype();
  const int64_t n = ref.numel();
  if (!is_floating(t)) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t r = ref.get_int(i), v = cand.get_int(i);
      if (r != v) {
        double d = std::fabs(static_cast<double>(r) - static_cast<double>(v));
        c.max_abs_err = std::max(c.max_abs_err, d);
        c.max_ulp_err = std::max(c.max_ulp_err, d);
        if (r != 0) c.max_rel_err = std::max(c.max_rel_err, d / std::fabs(static_cast<double>(r)));
        note_mismatch(c, i, "integers must match exactly", static_cast<double>(r),
                      static_cast<double>(v));
      }
    }
  } else {
    const Tolerance tol = default_tolerance(t);
    c.atol = tol.atol * scale;
    c.rtol = tol.rtol * scale;
    for (int64_t i = 0; i < n; ++i) {
      double r = ref.get(i), v = cand.get(i);
      if (std::isnan(r) || std::isnan(v)) {
        if (std::isnan(r) != std::isnan(v)) note_mismatch(c, i, "NaN must meet NaN", r, v);
        continue;
      }
      if (std::isinf(r) || std::isinf(v)) {
        if (r != v) note_mismatch(c, i, "inf must meet the same inf", r, v);
        continue;
      }
      double d = std::fabs(v - r);
      c.max_abs_err = std::max(c.max_abs_err, d);
      if (r != 0) c.max_rel_err = std::max(c.max_rel_err, d / std::fabs(r));
      c.max_ulp_err = std::max(c.max_ulp_err, d / ulp_of(r, t));
      if (d > c.atol + c.rtol * std::fabs(r)) note_mismatch(c, i, "outside tolerance", r, v);
    }
  }
  c.pcc = cosine_similarity(ref, cand);
  if (c.mismatches > 0) {
    c.passed = false;
    c.reason = fmt::format("wrong values in {}: {} of {} elements mismatch, max abs err {:.3g}, "
                           "max rel err {:.3g}; {}",
                           what, c.mismatches, n, c.max_abs_err, c.max_rel_err, c.reason);
  }
  return c;
}

}  // namespace crucible

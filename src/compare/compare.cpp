// Elementwise comparison with per-dtype tolerances and error metrics.
#include "crucible/compare/compare.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "crucible/core/half_bulk.h"

namespace crucible {

Tolerance default_tolerance(DType t) {
  if (is_complex(t)) return default_tolerance(to_real(t));  // c64 as f32, c32 as f16, ...
  switch (t) {
    case DType::Float64:
      return {1e-7, 1e-7};
    case DType::Float32:
      return {1e-5, 1.3e-6};
    case DType::Float16:
      return {1e-5, 1e-3};
    case DType::BFloat16:
      return {1e-5, 1.6e-2};
    // fp8: half a unit in the last place relative (3 and 2 fraction bits).
    case DType::Float8E4M3FN:
      return {1e-5, 0.0625};
    case DType::Float8E5M2:
      return {1e-5, 0.125};
    default:
      return {0, 0};
  }
}

double ulp_of(double x, DType t) {
  if (is_complex(t)) t = to_real(t);
  if (!is_floating(t)) return 1.0;
  const FloatInfo fi = float_info(t);
  double a = std::fabs(x);
  if (!std::isfinite(a)) return std::numeric_limits<double>::infinity();
  if (a < fi.tiny) return fi.true_min;
  int e = std::ilogb(a);
  return std::ldexp(1.0, e - fi.mantissa_bits);
}

namespace {

// Whether a pair disagrees in a way no tolerance covers: NaN against a number, or an infinity
// against anything but the same infinity.
bool nonfinite_mismatch(double r, double v) {
  if (std::isnan(r) || std::isnan(v)) return std::isnan(r) != std::isnan(v);
  return (std::isinf(r) || std::isinf(v)) && r != v;
}

// Cosine similarity over the element pairs, scaled so that values near the dtype's maximum do
// not overflow the sums. Finite pairs count as they are; pairs that agree on a NaN or on the
// same infinity are left out; each non-finite mismatch counts as a pair of opposite values of
// the largest finite magnitude (+1 against -1 after scaling), so a NaN where the reference has
// a number lowers the figure instead of vanishing from it.
// The sums of cosine_similarity, accumulated a block of pairs at a time (in element order, so
// any split gives the same figure): first the largest finite magnitude, then the scaled sums.
struct CosineSums {
  double m = 0, dot = 0, rr = 0, vv = 0;
  void scale(const double* ref, const double* cand, size_t n) {
    constexpr double kMax = std::numeric_limits<double>::max();
    double mb = m;  // without branches (a NaN fails both comparisons): the loop vectorises
    for (size_t i = 0; i < n; ++i) {
      const double ar = std::fabs(ref[i]), av = std::fabs(cand[i]);
      const double big = ar > av ? ar : av;
      mb = ar <= kMax && av <= kMax && big > mb ? big : mb;
    }
    m = mb;
  }
  void add(const double* ref, const double* cand, size_t n) {
    const double mm = m == 0 ? 1 : m;
    constexpr double kMax = std::numeric_limits<double>::max();
    for (size_t i = 0; i < n; ++i) {
      const double r0 = ref[i], v0 = cand[i];
      if (std::fabs(r0) <= kMax && std::fabs(v0) <= kMax) {  // finite: |r0|, |v0| <= mm
        const double r = r0 / mm, v = v0 / mm;
        dot += r * v, rr += r * r, vv += v * v;
        continue;
      }
      // A pair with a NaN or an infinity: a mismatch counts as opposite values, an agreement
      // (NaN and NaN, the same infinity) is left out.
      if (nonfinite_mismatch(r0, v0)) dot -= 1, rr += 1, vv += 1;
    }
  }
  double value() const {
    if (rr == 0 && vv == 0) return 1.0;
    if (rr == 0 || vv == 0) return 0.0;
    return dot / std::sqrt(rr * vv);
  }
};

// A NaN against a number, or an infinity against anything but the same infinity: the error
// figures are infinite (the metrics of the finite pairs alone would hide the mismatch).
void note_nonfinite_error(TensorCheck& c) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  c.max_abs_err = inf;
  c.max_rel_err = inf;
  c.max_ulp_err = inf;
}

// Elements may be read out of logical order (ReadOrder): the reason names the mismatch of the
// lowest logical index.
void note_mismatch(TensorCheck& c, int64_t i, std::string_view why, double r, double v) {
  ++c.mismatches;
  if (c.first_mismatch >= 0 && c.first_mismatch < i) return;
  c.first_mismatch = i;
  c.reason = fmt::format("first at element {}: expected {}, got {} ({})", i, r, v, why);
}

std::string complex_str(std::complex<double> z) {
  return fmt::format("{}{}{}j", z.real(), std::signbit(z.imag()) ? "" : "+", z.imag());
}

void note_complex_mismatch(TensorCheck& c, int64_t i, std::string_view why, std::complex<double> r,
                           std::complex<double> v) {
  ++c.mismatches;
  if (c.first_mismatch >= 0 && c.first_mismatch < i) return;
  c.first_mismatch = i;
  c.reason = fmt::format("first at element {}: expected {}, got {} ({})", i, complex_str(r),
                         complex_str(v), why);
}

// Cosine similarity of complex tensors as real vectors of (re, im) pairs, over the elements
// whose parts are all finite, with non-finite mismatches counted as cosine_similarity does.
double complex_cosine_similarity(const Tensor& ref, const Tensor& cand) {
  const int64_t n = ref.numel();
  auto finite = [](std::complex<double> z) {
    return std::isfinite(z.real()) && std::isfinite(z.imag());
  };
  double m = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto r = ref.get_complex(i), v = cand.get_complex(i);
    if (finite(r) && finite(v))
      m = std::max(
          {m, std::fabs(r.real()), std::fabs(r.imag()), std::fabs(v.real()), std::fabs(v.imag())});
  }
  if (m == 0) m = 1;
  double dot = 0, rr = 0, vv = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto r = ref.get_complex(i), v = cand.get_complex(i);
    if (nonfinite_mismatch(r.real(), v.real()) || nonfinite_mismatch(r.imag(), v.imag())) {
      dot -= 1, rr += 1, vv += 1;  // as for real tensors
      continue;
    }
    if (!finite(r) || !finite(v)) continue;
    const auto a = r / m, b = v / m;
    dot += a.real() * b.real() + a.imag() * b.imag();
    rr += std::norm(a);
    vv += std::norm(b);
  }
  if (rr == 0 && vv == 0) return 1.0;
  if (rr == 0 || vv == 0) return 0.0;
  return dot / std::sqrt(rr * vv);
}

// Complex outputs: elementwise |c - r| <= atol + rtol * |r| on complex magnitudes, with the
// component dtype's tolerances (c64 as f32, c128 as f64, c32 as f16). A NaN part must meet a
// NaN in the same part; an infinite part must meet the same infinity in the same part (the
// other part is then compared on its own). ULPs are counted in the component dtype, of the
// larger part difference against the spacing at |r|.
void compare_complex(const Tensor& ref, const Tensor& cand, TensorCheck& c) {
  const DType comp = to_real(ref.dtype());
  const int64_t n = ref.numel();
  for (int64_t i = 0; i < n; ++i) {
    const std::complex<double> r = ref.get_complex(i), v = cand.get_complex(i);
    const bool nan_re = std::isnan(r.real()) || std::isnan(v.real());
    const bool nan_im = std::isnan(r.imag()) || std::isnan(v.imag());
    if ((nan_re && std::isnan(r.real()) != std::isnan(v.real())) ||
        (nan_im && std::isnan(r.imag()) != std::isnan(v.imag()))) {
      note_nonfinite_error(c);
      note_complex_mismatch(c, i, "NaN must meet NaN in the same part", r, v);
      continue;
    }
    const bool inf_re = std::isinf(r.real()) || std::isinf(v.real());
    const bool inf_im = std::isinf(r.imag()) || std::isinf(v.imag());
    if ((inf_re && r.real() != v.real()) || (inf_im && r.imag() != v.imag())) {
      note_nonfinite_error(c);
      note_complex_mismatch(c, i, "inf must meet the same inf in the same part", r, v);
      continue;
    }
    if (nan_re || nan_im || inf_re || inf_im) {
      // The remaining finite parts are compared componentwise.
      for (int part = 0; part < 2; ++part) {
        const double rp = part ? r.imag() : r.real(), vp = part ? v.imag() : v.real();
        if (!std::isfinite(rp)) continue;
        const double d = std::fabs(vp - rp);
        c.max_abs_err = std::max(c.max_abs_err, d);
        if (rp != 0) c.max_rel_err = std::max(c.max_rel_err, d / std::fabs(rp));
        c.max_ulp_err = std::max(c.max_ulp_err, d / ulp_of(rp, comp));
        if (d > c.atol + c.rtol * std::fabs(rp)) {
          note_complex_mismatch(c, i, "outside tolerance", r, v);
          break;
        }
      }
      continue;
    }
    const double d = std::abs(v - r);
    const double mag = std::abs(r);
    c.max_abs_err = std::max(c.max_abs_err, d);
    if (mag != 0) c.max_rel_err = std::max(c.max_rel_err, d / mag);
    const double part_err =
        std::max(std::fabs(v.real() - r.real()), std::fabs(v.imag() - r.imag()));
    c.max_ulp_err = std::max(c.max_ulp_err, part_err / ulp_of(mag, comp));
    if (d > c.atol + c.rtol * mag) note_complex_mismatch(c, i, "outside tolerance", r, v);
  }
}

// The values are compared a block at a time, as doubles: the comparator holds two blocks of at
// most 64K values (1 MiB, in the core's cache as they are checked and summed), never f64 copies
// of whole tensors (a 1 GiB f32 output took 4 GiB more than the case's tensors). A tensor that
// fits in one block is read once; a larger one twice, for the PCC's two passes. (Blocks of 4M
// values went out to memory between the passes over them: 15.7 ns an f16 element.)
constexpr int64_t kCompareBlock = int64_t{1} << 16;

// The order the elements are read in: logical order, except for two tensors laid out alike in
// a dense layout that is not row-major (a transposed output: logical order would touch a new
// cache line for every element, 70 s for a [2048, 128256] f32 transpose). Those are read in
// memory order through permuted views, which are contiguous, and a position maps back to its
// logical index for the mismatch report. The PCC's sums then run in memory order.
struct ReadOrder {
  Tensor ref, cand;           // the views read: position p is their logical element p
  std::vector<int64_t> perm;  // the original dims in read order; empty: logical order
  Shape shape;                // the original shape

  int64_t logical(int64_t p) const {
    if (perm.empty()) return p;
    std::vector<int64_t> m(shape.size());
    for (size_t k = perm.size(); k-- > 0;) {
      const int64_t size = shape[static_cast<size_t>(perm[k])];
      m[static_cast<size_t>(perm[k])] = p % size;
      p /= size;
    }
    int64_t i = 0;
    for (size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + m[d];
    return i;
  }
};

ReadOrder read_order(const Tensor& ref, const Tensor& cand) {
  ReadOrder o{ref, cand, {}, ref.shape()};
  if (ref.dim() < 2 || ref.is_contiguous() || cand.is_contiguous() ||
      ref.strides() != cand.strides() || ref.numel() == 0)
    return o;
  std::vector<int64_t> perm(static_cast<size_t>(ref.dim()));
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    return ref.strides()[static_cast<size_t>(a)] > ref.strides()[static_cast<size_t>(b)];
  });
  Tensor r = ref.permute(perm), v = cand.permute(perm);
  if (!r.is_contiguous() || !v.is_contiguous()) return o;
  return {r, v, perm, ref.shape()};
}

// Whether the views read hold the same bytes, both contiguous (the candidate returned the
// reference's bits, as exact ops and data movement do): the comparison has nothing to find.
bool same_bytes(const ReadOrder& o) {
  if (!o.ref.is_contiguous() || !o.cand.is_contiguous()) return false;
  const size_t n = static_cast<size_t>(o.ref.numel()) * o.ref.itemsize();
  return n == 0 || std::memcmp(o.ref.data_ptr(), o.cand.data_ptr(), n) == 0;
}

// x's elements [at, at + len) as doubles: contiguous f32, f64, f16 and bf16 (what most large
// outputs are) straight from memory, the rest element by element.
void read_block(const Tensor& x, int64_t at, int64_t len, std::vector<double>& out) {
  if (x.is_contiguous() && x.dtype() == DType::Float32) {
    const float* p = x.data<float>() + at;
    std::copy(p, p + len, out.begin());
  } else if (x.is_contiguous() && x.dtype() == DType::Float64) {
    const double* p = x.data<double>() + at;
    std::copy(p, p + len, out.begin());
  } else if (x.is_contiguous() && x.dtype() == DType::Float16) {
    half_to_double_n(static_cast<const uint16_t*>(x.data_ptr()) + at, out.data(),
                     static_cast<size_t>(len));
  } else if (x.is_contiguous() && x.dtype() == DType::BFloat16) {
    bf16_to_double_n(static_cast<const uint16_t*>(x.data_ptr()) + at, out.data(),
                     static_cast<size_t>(len));
  } else {
    for (int64_t i = 0; i < len; ++i) out[static_cast<size_t>(i)] = x.get(at + i);
  }
}

// Integers and bool, elements [at, at + len): exactly equal or a mismatch.
void check_integer_block(const ReadOrder& o, int64_t at, int64_t len, TensorCheck& c) {
  for (int64_t p = at; p < at + len; ++p) {
    const int64_t r = o.ref.get_int(p), v = o.cand.get_int(p);
    if (r == v) continue;
    const double d = std::fabs(static_cast<double>(r) - static_cast<double>(v));
    c.max_abs_err = std::max(c.max_abs_err, d);
    c.max_ulp_err = std::max(c.max_ulp_err, d);
    if (r != 0) c.max_rel_err = std::max(c.max_rel_err, d / std::fabs(static_cast<double>(r)));
    note_mismatch(c, o.logical(p), "integers must match exactly", static_cast<double>(r),
                  static_cast<double>(v));
  }
}

// Floating values of elements [at, at + len) (rb, vb: the block read): NaN and inf rules, the
// error metrics, c.atol + c.rtol |r| as the tolerance.
void check_floating_block(const ReadOrder& o, const std::vector<double>& rb,
                          const std::vector<double>& vb, int64_t at, int64_t len, DType t,
                          TensorCheck& c) {
  for (int64_t k = 0; k < len; ++k) {
    const int64_t p = at + k;
    const double r = rb[static_cast<size_t>(k)], v = vb[static_cast<size_t>(k)];
    if (r == v) continue;  // equal (the common case): no error to note, no NaN
    if (std::isnan(r) || std::isnan(v)) {
      if (std::isnan(r) != std::isnan(v)) {
        note_nonfinite_error(c);
        note_mismatch(c, o.logical(p), "NaN must meet NaN", r, v);
      }
      continue;
    }
    if (std::isinf(r) || std::isinf(v)) {
      if (r != v) {
        note_nonfinite_error(c);
        note_mismatch(c, o.logical(p), "inf must meet the same inf", r, v);
      }
      continue;
    }
    const double d = std::fabs(v - r);
    c.max_abs_err = std::max(c.max_abs_err, d);
    if (r != 0) c.max_rel_err = std::max(c.max_rel_err, d / std::fabs(r));
    c.max_ulp_err = std::max(c.max_ulp_err, d / ulp_of(r, t));
    if (d > c.atol + c.rtol * std::fabs(r))
      note_mismatch(c, o.logical(p), "outside tolerance", r, v);
  }
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
  const bool floating = is_floating(t);
  if (floating || is_complex(t)) {  // integers and bool must match exactly
    const Tolerance tol = default_tolerance(t);
    c.atol = tol.atol * scale;
    c.rtol = tol.rtol * scale;
  }
  if (is_complex(t)) {
    compare_complex(ref, cand, c);
    c.pcc = complex_cosine_similarity(ref, cand);
  } else if (const ReadOrder o = read_order(ref, cand); same_bytes(o)) {
    // Every pair equal: no error, no mismatch, and the cosine similarity's three sums are the
    // same sum (1 when it is 0: no finite pair, or every finite value 0).
    c.pcc = 1.0;
  } else {
    std::vector<double> rb(static_cast<size_t>(std::min(n, kCompareBlock)));
    std::vector<double> vb(rb.size());
    CosineSums cos;
    for (int64_t at = 0; at < n; at += kCompareBlock) {
      const int64_t len = std::min(kCompareBlock, n - at);
      if (!floating) check_integer_block(o, at, len, c);
      read_block(o.ref, at, len, rb);
      read_block(o.cand, at, len, vb);
      if (floating) check_floating_block(o, rb, vb, at, len, t, c);
      cos.scale(rb.data(), vb.data(), static_cast<size_t>(len));
    }
    if (n <= kCompareBlock) {
      cos.add(rb.data(), vb.data(), static_cast<size_t>(n));  // the one block, still read
    } else {
      for (int64_t at = 0; at < n; at += kCompareBlock) {
        const int64_t len = std::min(kCompareBlock, n - at);
        read_block(o.ref, at, len, rb);
        read_block(o.cand, at, len, vb);
        cos.add(rb.data(), vb.data(), static_cast<size_t>(len));
      }
    }
    c.pcc = cos.value();
  }
  if (c.mismatches > 0) {
    c.passed = false;
    c.reason = fmt::format(
        "wrong values in {}: {} of {} elements mismatch, max abs err {:.3g}, "
        "max rel err {:.3g}; {}",
        what, c.mismatches, n, c.max_abs_err, c.max_rel_err, c.reason);
  }
  return c;
}

TensorCheck compare_tensors(const Tensor& ref, const Tensor& cand, double scale,
                            const std::string& what, const Tensor& overflow_ok) {
  if (ref.shape() != cand.shape() || ref.dtype() != cand.dtype() || !is_floating(ref.dtype()) ||
      overflow_ok.shape() != ref.shape())
    return compare_tensors(ref, cand, scale, what);
  // The accepted elements take the reference's value; the rest is compared as usual.
  Tensor adjusted = cand.contiguous().clone();
  int64_t accepted = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double v = adjusted.get(i);
    if (overflow_ok.get(i) != 0 && !std::isfinite(v) &&
        !(std::isnan(v) && std::isnan(ref.get(i))) && v != ref.get(i)) {
      adjusted.set(i, ref.get(i));
      ++accepted;
    }
  }
  TensorCheck c = compare_tensors(ref, adjusted, scale, what);
  if (accepted > 0 && !c.passed) {
    const std::string note = fmt::format(
        "{} non-finite elements accepted where an accumulation in {} overflows (as ATen's)",
        accepted, dtype_code(ref.dtype()));
    c.reason = c.reason.empty() ? note : c.reason + "; " + note;
  }
  return c;
}

}  // namespace crucible

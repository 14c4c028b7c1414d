// The f64 arbiter for whole-model outputs (see arbiter.h).
#include "crucible/compare/arbiter.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible {

double arbiter_floor(DType t) {
  if (is_complex(t)) t = to_real(t);
  switch (t) {
    case DType::Float64:
      return 1e-9;
    case DType::Float32:
      return 1e-5;
    case DType::Float16:
    case DType::BFloat16:
      return 1e-4;
    default:
      return 1e-3;  // fp8
  }
}

namespace {

bool same_nonfinite(double g, double v) {
  if (std::isnan(g) || std::isnan(v)) return std::isnan(g) && std::isnan(v);
  return g == v;  // equal infinities (or equal finite values)
}

struct Errors {
  double rmse = 0;
  double max_abs = 0;
  double max_rel = 0;
  int64_t nonfinite = 0;  // pairs where one side is NaN/inf and the other is not the same
};

// Calls fn(golden value, other value) for every real component: one per element, two (real
// and imaginary parts) for complex tensors.
template <class Fn>
void for_each_pair(const Tensor& g, const Tensor& x, Fn&& fn) {
  const bool complex = is_complex(g.dtype()) || is_complex(x.dtype());
  for (int64_t i = 0; i < g.numel(); ++i) {
    if (complex) {
      const auto a = g.get_complex(i), b = x.get_complex(i);
      fn(a.real(), b.real());
      fn(a.imag(), b.imag());
    } else {
      fn(g.get(i), x.get(i));
    }
  }
}

// Errors of `x` against golden `g` over their finite pairs; pairs that agree on a NaN or an
// infinity are exact, any other non-finite pair is counted (and fails the output).
Errors errors_of(const Tensor& g, const Tensor& x) {
  Errors e;
  double sum_sq = 0;
  int64_t n = 0;
  for_each_pair(g, x, [&](double a, double b) {
    ++n;
    if (!std::isfinite(a) || !std::isfinite(b)) {
      if (!same_nonfinite(a, b)) ++e.nonfinite;
      return;
    }
    const double d = std::fabs(a - b);
    sum_sq += d * d;
    e.max_abs = std::max(e.max_abs, d);
    if (a != 0) e.max_rel = std::max(e.max_rel, d / std::fabs(a));
  });
  e.rmse = n > 0 ? std::sqrt(sum_sq / static_cast<double>(n)) : 0.0;
  return e;
}

double cosine(const Tensor& g, const Tensor& x) {
  double dot = 0, gg = 0, xx = 0;
  for_each_pair(g, x, [&](double a, double b) {
    if (!std::isfinite(a) || !std::isfinite(b)) return;
    dot += a * b;
    gg += a * a;
    xx += b * b;
  });
  if (gg == 0 && xx == 0) return 1.0;
  if (gg == 0 || xx == 0) return 0.0;
  return dot / std::sqrt(gg * xx);
}

}  // namespace

ArbiterCheck arbitrate(const Tensor& golden, const Tensor& baseline, const Tensor& candidate,
                       const ArbiterOptions& options, const std::string& what) {
  return arbitrate(golden, std::vector<Tensor>{baseline}, candidate, options, what);
}

ArbiterCheck arbitrate(const Tensor& golden, const std::vector<Tensor>& baselines,
                       const Tensor& candidate, const ArbiterOptions& options,
                       const std::string& what) {
  ArbiterCheck c;
  c.what = what;
  if (baselines.empty()) internal_error("arbitrate: no baseline run for " + what);
  const Tensor& baseline = baselines.front();
  for (const Tensor& b : baselines)
    if (b.shape() != golden.shape() || b.dtype() != baseline.dtype())
      internal_error("arbitrate: the baseline runs of " + what + " disagree in shape or dtype");
  if (candidate.shape() != golden.shape() || baseline.shape() != golden.shape()) {
    c.passed = false;
    c.reason = fmt::format("wrong shape in {}: expected {}, got {}", what,
                           shape_str(golden.shape()), shape_str(candidate.shape()));
    return c;
  }
  if (candidate.dtype() != baseline.dtype()) {
    c.passed = false;
    c.reason = fmt::format("wrong dtype in {}: expected {}, got {}", what,
                           dtype_code(baseline.dtype()), dtype_code(candidate.dtype()));
    return c;
  }
  const DType t = candidate.dtype();
  if (!is_floating(t) && !is_complex(t)) {
    for (int64_t i = 0; i < golden.numel(); ++i) {
      if (golden.get_int(i) != candidate.get_int(i)) {
        c.passed = false;
        c.reason = fmt::format("{}: element {} is {}, expected {} (integers must match exactly)",
                               what, i, candidate.get_int(i), golden.get_int(i));
        c.max_abs_err = std::fabs(static_cast<double>(golden.get_int(i) - candidate.get_int(i)));
        return c;
      }
    }
    return c;
  }
  const Errors cand = errors_of(golden, candidate);
  // The honest spread: the largest error of any baseline run.
  Errors base;
  for (const Tensor& b : baselines) {
    const Errors e = errors_of(golden, b);
    base.rmse = std::max(base.rmse, e.rmse);
    base.nonfinite = std::max(base.nonfinite, e.nonfinite);
  }
  const double floor = options.floor >= 0 ? options.floor : arbiter_floor(t);
  c.candidate_rmse = cand.rmse;
  c.baseline_rmse = base.rmse;
  c.allowed_rmse = options.k * base.rmse + floor;
  c.max_abs_err = cand.max_abs;
  c.max_rel_err = cand.max_rel;
  c.nonfinite_mismatches = cand.nonfinite;
  c.pcc = cosine(golden, candidate);
  if (cand.nonfinite > base.nonfinite) {
    c.passed = false;
    c.reason = fmt::format(
        "{}: {} NaN or inf element(s) where the f64 run has other values "
        "(the {} baseline has {})",
        what, cand.nonfinite, dtype_code(t), base.nonfinite);
  } else if (cand.rmse > c.allowed_rmse) {
    c.passed = false;
    c.reason = fmt::format(
        "{}: error {:.3g} against the f64 run exceeds {:.3g} ({} x the {} "
        "baseline's {:.3g}{} + {:.1g}); max abs err {:.3g}, PCC {:.6f}",
        what, cand.rmse, c.allowed_rmse, options.k, dtype_code(t), base.rmse,
        baselines.size() > 1 ? fmt::format(", the largest of {} runs", baselines.size()) : "",
        floor, cand.max_abs, c.pcc);
  }
  return c;
}

}  // namespace crucible

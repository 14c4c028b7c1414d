// The comparison of products and convolutions that accepts ATen's overflow of an accumulation
// in the dtype (see judges.h, accumulation_overflow_policy).
//
// Why: ATen's CPU GEMM and convolution kernels sum the f32 products of f32 operands in f32.
// Where the exact result is finite but some partial sum exceeds the dtype's max (rows holding
// +3e38 and -3e38 terms), ATen returns inf or NaN; crucible's reference computes in f64 and
// rounds once, so it returns the finite value. Both are right by ATen's own standard, so a
// candidate may return a non-finite value exactly where the sum of the magnitudes of the terms
// overflows the dtype (the only places an accumulation in the dtype can overflow), and must
// match the reference everywhere else. docs/aten-differences.md lists the rule.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "crucible/compare/compare.h"
#include "crucible/core/error.h"
#include "ops/judges.h"

namespace crucible::judges {

namespace {

// |x| of every floating tensor (non-finite elements as 0: an infinity in the inputs makes the
// reference itself non-finite there, which the candidate must match), |s| of every number;
// `widen`: the tensors in f64, so that a sum of magnitudes is not rounded (or overflowed) into
// the inputs' dtype. `reach`: instead, 1 for a finite non-zero element, 0 for zero and the
// element itself where it is inf or NaN, so that the reference on them is non-finite exactly
// where a non-finite input reaches an output (and never overflows).
Values magnitudes(const Values& args, bool widen = false, bool integers = false,
                  bool reach = false) {
  Values out;
  out.reserve(args.size());
  for (const Value& v : args) {
    if (integers && v.is_tensor() && v.tensor().defined() &&
        is_integral(v.tensor().dtype(), false)) {
      // A quantized weight's |q| (never an index: only the products' own operands get here).
      Tensor t = v.tensor().contiguous().clone();
      for (int64_t i = 0; i < t.numel(); ++i) t.set_int(i, std::abs(t.get_int(i)));
      out.emplace_back(t);
    } else if (v.is_tensor() && v.tensor().defined() && is_floating(v.tensor().dtype())) {
      Tensor t = widen ? v.tensor().to(DType::Float64) : v.tensor().contiguous().clone();
      for (int64_t i = 0; i < t.numel(); ++i) {
        const double x = t.get(i);
        t.set(i, !std::isfinite(x) ? (reach ? std::fabs(x) : 0.0)
                 : reach           ? (x != 0 ? 1.0 : 0.0)
                                   : std::fabs(x));
      }
      out.emplace_back(t);
    } else if (v.kind() == ValueKind::Float) {
      out.emplace_back(std::fabs(v.to_double()));
    } else if (v.kind() == ValueKind::Int) {
      out.emplace_back(v.to_int() < 0 ? -v.to_int() : v.to_int());
    } else {
      out.push_back(v);
    }
  }
  return out;
}

// Judges each tensor output of a call: a missing tensor or another shape or dtype fails as
// Kind::Values would, an output `unspecified` says has no specified values passes there, else
// judge(k, reference, candidate, what) gives the check.
template <typename Judge>
std::vector<TensorCheck> judge_outputs(const Values& ref_out, const Values& cand_out,
                                       const std::function<bool(size_t)>& unspecified,
                                       Judge&& judge) {
  std::vector<TensorCheck> checks;
  for (size_t k = 0; k < ref_out.size() && k < cand_out.size(); ++k) {
    const std::string what = fmt::format("output {}", k);
    if (!ref_out[k].is_tensor()) continue;
    const Tensor& r = ref_out[k].tensor();
    if (!cand_out[k].is_tensor()) {
      TensorCheck c;
      c.what = what;
      c.passed = false;
      c.reason = what + ": expected a tensor";
      checks.push_back(std::move(c));
      continue;
    }
    TensorCheck meta = shape_dtype_check(r, cand_out[k].tensor(), what);
    checks.push_back(meta.passed && !unspecified(k) ? judge(k, r, cand_out[k].tensor(), what)
                                                    : std::move(meta));
  }
  return checks;
}

// Output k of `ref` run on the magnitudes of the inputs, computed on first use and kept for the
// call's other outputs; nullptr where it cannot be had in the reference's shape.
class MagnitudeBound {
 public:
  MagnitudeBound(const RefFn& ref, const Schema& schema, const Values& inputs, bool widen,
                 bool integers, bool reach = false)
      : ref_(ref),
        schema_(schema),
        inputs_(inputs),
        widen_(widen),
        integers_(integers),
        reach_(reach) {}
  const Tensor* output(size_t k, const Tensor& like) {
    if (!bound_) {
      try {
        bound_ = ref_(Args(magnitudes(inputs_, widen_, integers_, reach_), schema_));
      } catch (const Error&) {
        bound_ = Values{};
      }
    }
    if (bound_->size() <= k || !(*bound_)[k].is_tensor() ||
        (*bound_)[k].tensor().shape() != like.shape())
      return nullptr;
    return &(*bound_)[k].tensor();
  }

 private:
  const RefFn& ref_;
  const Schema& schema_;
  const Values& inputs_;
  bool widen_, integers_, reach_;
  std::optional<Values> bound_;
};

}  // namespace

ComparePolicy accumulation_overflow_policy(ComparePolicy base, RefFn ref, Schema schema) {
  ComparePolicy p = std::move(base);
  auto tol_scale = p.tol_scale;
  p.kind = ComparePolicy::Kind::Custom;
  p.custom = [tol_scale, ref, schema = std::move(schema), base = p](
                 const Values& inputs, const Values& ref_out, const Values& cand_out) {
    const double scale = tol_scale ? std::max(1.0, tol_scale(inputs)) : 1.0;
    MagnitudeBound bound(ref, schema, inputs, false, true);
    auto unspecified = [&](size_t k) { return base.output_unspecified(k, inputs); };
    return judge_outputs(ref_out, cand_out, unspecified,
                         [&](size_t k, const Tensor& r, const Tensor& c, const std::string& what) {
                           TensorCheck check = compare_tensors(r, c, scale, what);
                           if (check.passed || !is_floating(r.dtype())) return check;
                           const Tensor* b = bound.output(k, r);
                           if (!b) return check;
                           Tensor overflow = Tensor::empty(r.shape(), DType::Bool);
                           for (int64_t i = 0; i < r.numel(); ++i)
                             overflow.set_int(i, std::isfinite(b->get(i)) ? 0 : 1);
                           return compare_tensors(r, c, scale, what, overflow);
                         });
  };
  return p;
}

ComparePolicy unordered_accumulation_policy(ComparePolicy base, RefFn ref, Schema schema) {
  ComparePolicy p = std::move(base);
  auto tol_scale = p.tol_scale;
  p.kind = ComparePolicy::Kind::Custom;
  p.custom = [tol_scale, ref, schema = std::move(schema), base = p](
                 const Values& inputs, const Values& ref_out, const Values& cand_out) {
    const double terms = tol_scale ? std::max(1.0, tol_scale(inputs)) : 1.0;
    // The ordinary tolerance grows as sums of random terms do (sqrt of their count).
    const double scale = std::sqrt(terms);
    MagnitudeBound bound(ref, schema, inputs, true, false);
    // Non-finite where an infinite or NaN input reaches the output element.
    MagnitudeBound reached(ref, schema, inputs, true, false, true);
    auto unspecified = [&](size_t k) { return base.output_unspecified(k, inputs); };
    return judge_outputs(
        ref_out, cand_out, unspecified,
        [&](size_t k, const Tensor& r, const Tensor& c, const std::string& what) {
          TensorCheck check = compare_tensors(r, c, scale, what);
          if (check.passed || !is_floating(r.dtype()) || is_complex(r.dtype())) return check;
          const Tensor* mag = bound.output(k, r);
          if (!mag) return check;
          const Tensor* nonfinite = nullptr;  // computed only where a finite result meets inf
          // Unit roundoff of the dtype; k of them bound the k - 1 roundings of a sum of k terms
          // (with room to spare for the reference's own rounding).
          const FloatInfo info = float_info(r.dtype());
          const double u = std::ldexp(1.0, -(info.mantissa_bits + 1));
          const double gamma = terms * u;
          Tensor adjusted = c.contiguous().clone();
          int64_t accepted = 0;
          for (int64_t i = 0; i < r.numel(); ++i) {
            // The sum of the terms' magnitudes (the reference on |inputs|, whose sign is the
            // op's: nll_loss negates its sum).
            const double want = r.get(i), got = adjusted.get(i), m = std::fabs(mag->get(i));
            if (got == want || (std::isnan(got) && std::isnan(want))) continue;
            bool within = false;
            if (std::isfinite(got) && std::isfinite(want)) {
              within = std::fabs(got - want) <= gamma * m;
            } else if (!std::isfinite(got)) {
              // Partial sums can overflow only where the magnitudes add up past the dtype's
              // max; there a non-finite result (inf, or NaN where partial sums overflowed both
              // ways) is one of the orders' results.
              within = m > info.max;
            } else if (m > info.max) {
              // A finite result where the reference's own partial sums overflowed: another
              // order's, if no infinite or NaN input reaches this element and the result is
              // within the magnitudes.
              if (!nonfinite) nonfinite = reached.output(k, r);
              within = nonfinite && std::isfinite(nonfinite->get(i)) &&
                       std::fabs(got) <= m * (1 + gamma);
            }
            if (within) {
              adjusted.set(i, want);
              ++accepted;
            }
          }
          check = compare_tensors(r, adjusted, scale, what);
          if (accepted > 0 && !check.passed) {
            check.reason += fmt::format(
                "; {} elements accepted within the error of {} additions in {} in any order",
                accepted, static_cast<int64_t>(terms), dtype_code(r.dtype()));
          }
          return check;
        });
  };
  return p;
}

}  // namespace crucible::judges

// Reusable Custom judges (see judges.h).
#include "ops/judges.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "crucible/compare/compare.h"
#include "ops/statistics_internal.h"

namespace crucible::judges {

bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

TensorCheck shape_dtype_check(const Tensor& ref, const Tensor& cand, const std::string& what) {
  TensorCheck c;
  c.what = what;
  c.numel = ref.numel();
  if (!cand.defined()) {
    c.passed = false;
    c.reason = what + ": the candidate returned an undefined tensor";
  } else if (ref.shape() != cand.shape()) {
    c.passed = false;
    c.reason = fmt::format("wrong shape in {}: expected {}, got {}", what, shape_str(ref.shape()),
                           shape_str(cand.shape()));
  } else if (ref.dtype() != cand.dtype()) {
    c.passed = false;
    c.reason = fmt::format("wrong dtype in {}: expected {}, got {}", what, dtype_code(ref.dtype()),
                           dtype_code(cand.dtype()));
  }
  return c;
}

TensorCheck exact_values_check(const Tensor& ref, const Tensor& cand, const std::string& what) {
  TensorCheck c = shape_dtype_check(ref, cand, what);
  if (!c.passed) return c;
  c = compare_tensors(ref, cand, 1.0, what);
  if (!c.passed || !is_floating(ref.dtype())) return c;
  int64_t bad = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    if (same_value(ref.get(i), cand.get(i))) continue;
    if (bad++ == 0)
      c.reason = fmt::format(
          "wrong values in {}: first at element {}: expected {}, got {} "
          "(selected values must match exactly)",
          what, i, ref.get(i), cand.get(i));
  }
  if (bad > 0) {
    c.passed = false;
    c.mismatches = bad;
  }
  return c;
}

namespace {

void note(TensorCheck& c, const std::string& why) {
  if (c.mismatches++ == 0) c.reason = why;
}

TensorCheck finish(TensorCheck c, const std::string& what) {
  if (c.mismatches > 0) {
    c.passed = false;
    c.reason = fmt::format("wrong indices in {}: {} of {} mismatch; first: {}", what, c.mismatches,
                           c.numel, c.reason);
  }
  return c;
}

}  // namespace

TensorCheck selected_index_check(const Tensor& self, int64_t dim, const Tensor& ref_values,
                                 const Tensor& ref_indices, const Tensor& cand_indices,
                                 const std::string& what) {
  TensorCheck c = shape_dtype_check(ref_indices, cand_indices, what);
  if (!c.passed) return c;
  const stats::Rows rows = dim < 0 || self.dim() == 0 ? stats::flat_rows(self.numel())
                                                      : stats::rows_of(self.shape(), dim);
  for (int64_t r = 0; r < cand_indices.numel(); ++r) {
    const int64_t k = cand_indices.get_int(r);
    if (k < 0 || k >= rows.len) {
      note(c, fmt::format("element {}: index {} out of range [0, {})", r, k, rows.len));
      continue;
    }
    const double got = stats::element(self, rows.at(r, k));
    const double want = stats::element(ref_values, r);
    if (!same_value(got, want))
      note(c, fmt::format("element {}: index {} selects {}, but the reference's value is {} (at "
                          "index {})",
                          r, k, got, want, ref_indices.get_int(r)));
  }
  return finish(std::move(c), what);
}

TensorCheck gathered_index_check(const Tensor& self, int64_t dim, const Tensor& cand_values,
                                 const Tensor& ref_indices, const Tensor& cand_indices,
                                 const std::string& what) {
  TensorCheck c = shape_dtype_check(ref_indices, cand_indices, what);
  if (!c.passed) return c;
  if (cand_values.shape() != cand_indices.shape()) {
    c.passed = false;
    c.reason = what + ": values and indices have different shapes";
    return c;
  }
  const stats::Rows in = stats::rows_of(self.shape(), self.dim() == 0 ? 0 : dim);
  const stats::Rows out = stats::rows_of(cand_indices.shape(), self.dim() == 0 ? 0 : dim);
  for (int64_t r = 0; r < out.count(); ++r) {
    std::set<int64_t> seen;
    for (int64_t j = 0; j < out.len; ++j) {
      const int64_t at = out.at(r, j);
      const int64_t k = cand_indices.get_int(at);
      if (k < 0 || k >= in.len) {
        note(c, fmt::format("element {}: index {} out of range [0, {})", at, k, in.len));
        continue;
      }
      if (!seen.insert(k).second) {
        note(c, fmt::format("element {}: index {} appears twice in its row", at, k));
        continue;
      }
      const double got = stats::element(self, in.at(r, k));
      const double want = stats::element(cand_values, at);
      if (!same_value(got, want))
        note(c, fmt::format("element {}: index {} points to {}, but the value there is {}", at, k,
                            got, want));
    }
  }
  return finish(std::move(c), what);
}

TensorCheck same_multiset_check(const Tensor& ref, const Tensor& cand, int64_t dim,
                                const std::string& what) {
  TensorCheck c = shape_dtype_check(ref, cand, what);
  if (!c.passed) return c;
  const stats::Rows rows = stats::rows_of(ref.shape(), ref.dim() == 0 ? 0 : dim);
  auto less = [](double a, double b) { return !std::isnan(a) && (std::isnan(b) || a < b); };
  for (int64_t r = 0; r < rows.count(); ++r) {
    std::vector<double> a, b;
    for (int64_t j = 0; j < rows.len; ++j) {
      a.push_back(stats::element(ref, rows.at(r, j)));
      b.push_back(stats::element(cand, rows.at(r, j)));
    }
    std::sort(a.begin(), a.end(), less);
    std::sort(b.begin(), b.end(), less);
    for (size_t j = 0; j < a.size(); ++j) {
      if (!same_value(a[j], b[j])) {
        note(c, fmt::format("row {}: the values differ as sets ({} where the reference has {})", r,
                            b[j], a[j]));
        break;
      }
    }
  }
  if (c.mismatches > 0) {
    c.passed = false;
    c.reason =
        fmt::format("wrong values in {}: {} rows differ; first: {}", what, c.mismatches, c.reason);
  }
  return c;
}

}  // namespace crucible::judges

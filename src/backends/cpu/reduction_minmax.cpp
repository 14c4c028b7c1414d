// The cpu backend's selection reductions: amax/amin over dims, max/min over everything or one
// dim (values and first indices), argmax/argmin. Values are compared in the compute dtype (f32
// holds f16/bf16 exactly, i64 every integer and bool), so results are exact; a NaN is the
// extreme (its first index), ties keep the first index, as ATen's CPU kernels do.
#include <cmath>
#include <optional>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_ops.h"
#include "backends/cpu/reduction_rows.h"
#include "crucible/core/error.h"
#include "ops/statistics_internal.h"

namespace crucible::cpu {

namespace {

template <typename C>
bool isnan_(C v) {
  if constexpr (std::is_floating_point_v<C>)
    return v != v;
  else
    return false;
}

// For each (outer, inner) position of [outer, red, inner], the index along red of the max (or
// min) and its value.
template <typename C>
void pick(const C* x, int64_t outer, int64_t red, int64_t inner, bool want_max, C* val,
          int64_t* idx) {
  parallel_for(0, outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(red * inner, 1)),
               [&](int64_t lo, int64_t hi) {
                 std::vector<char> done(static_cast<size_t>(inner));
                 for (int64_t o = lo; o < hi; ++o) {
                   const C* base = x + o * red * inner;
                   C* bv = val + o * inner;
                   int64_t* bi = idx + o * inner;
                   for (int64_t j = 0; j < inner; ++j) {
                     bv[j] = base[j];
                     bi[j] = 0;
                     done[static_cast<size_t>(j)] = isnan_(base[j]);
                   }
                   for (int64_t r = 1; r < red; ++r) {
                     const C* row = base + r * inner;
                     for (int64_t j = 0; j < inner; ++j) {
                       if (done[static_cast<size_t>(j)]) continue;
                       const C v = row[j];
                       const bool better = want_max ? v > bv[j] : v < bv[j];
                       if (better || isnan_(v)) {
                         bv[j] = v;
                         bi[j] = r;
                         done[static_cast<size_t>(j)] = isnan_(v);
                       }
                     }
                   }
                 }
               });
}

struct Picked {
  std::vector<double> fval;
  std::vector<int64_t> ival, idx;
};

Picked pick_view(const RowsView& v, DType ct, bool want_max) {
  Picked p;
  const auto n = static_cast<size_t>(v.outer * v.inner);
  p.idx.resize(n);
  if (ct == DType::Float32) {
    std::vector<float> b(n);
    pick(v.src.data<float>(), v.outer, v.red, v.inner, want_max, b.data(), p.idx.data());
    p.fval.assign(b.begin(), b.end());
  } else if (ct == DType::Float64) {
    p.fval.resize(n);
    pick(v.src.data<double>(), v.outer, v.red, v.inner, want_max, p.fval.data(), p.idx.data());
  } else {
    p.ival.resize(n);
    pick(v.src.data<int64_t>(), v.outer, v.red, v.inner, want_max, p.ival.data(), p.idx.data());
  }
  return p;
}

void store_values(const Picked& p, const Tensor& out) {
  char* dst = static_cast<char*>(out.data_ptr());
  const auto isz = static_cast<int64_t>(out.itemsize());
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (p.fval.empty())
      store_from_int(dst + i * isz, out.dtype(), p.ival[static_cast<size_t>(i)]);
    else
      store_from_double(dst + i * isz, out.dtype(), p.fval[static_cast<size_t>(i)]);
  }
}

void store_indices(const Picked& p, const Tensor& out) {
  int64_t* d = out.data<int64_t>();
  for (int64_t i = 0; i < out.numel(); ++i) d[i] = p.idx[static_cast<size_t>(i)];
}

std::vector<bool> one_dim(const Tensor& x, int64_t dim) {
  std::vector<bool> r(static_cast<size_t>(x.dim()), false);
  if (x.dim() > 0) r[static_cast<size_t>(dim)] = true;
  return r;
}

Shape keep_shape(const Tensor& x, int64_t dim, bool keepdim) {
  Shape s = x.shape();
  if (x.dim() == 0) return s;
  if (keepdim)
    s[static_cast<size_t>(dim)] = 1;
  else
    s.erase(s.begin() + dim);
  return s;
}

void check_nonempty_dim(const char* name, const Tensor& x, int64_t given, int64_t dim) {
  if (x.numel() == 0 && x.dim() > 0 && x.size(dim) == 0)
    op_error(std::string(name) + "(): Expected reduction dim " + std::to_string(given) +
             " to have non-zero size.");
}

// amax / amin(self, dim=[], keepdim=False)
Values amaxmin(const Values& a, bool want_max) {
  const Tensor& x = a.at(0).tensor();
  const char* name = want_max ? "amax" : "amin";
  const std::vector<int64_t> dims = stats::dims_of(a.at(1));
  if (x.numel() == 0) {
    if (dims.empty())
      op_error(std::string(name) +
               "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
               "reduction dim with the 'dim' argument.");
    for (int64_t d : dims)
      if (x.dim() > 0 && x.size(wrap_dim(d, x.dim())) == 0)
        op_error(std::string(name) + "(): Expected reduction dim " + std::to_string(d) +
                 " to have non-zero size.");
  }
  const stats::ReducePlan plan = stats::plan_reduction(x, dims, a.at(2).to_bool());
  Tensor out = Tensor::empty(plan.out_shape, x.dtype());
  if (out.numel() == 0) return {Value(out)};
  const DType ct = reduce_compute_dtype(x.dtype());
  store_values(pick_view(reduce_rows(x, plan.reduced, ct), ct, want_max), out);
  return {Value(out)};
}

// max.default / min.default
Values minmax_all(const Values& a, bool want_max) {
  const Tensor& x = a.at(0).tensor();
  if (x.numel() == 0)
    op_error(std::string(want_max ? "max" : "min") +
             "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
             "reduction dim with the 'dim' argument.");
  Tensor out = Tensor::empty({}, x.dtype());
  const DType ct = reduce_compute_dtype(x.dtype());
  store_values(pick_view(reduce_rows(x, std::vector<bool>(x.dim(), true), ct), ct, want_max), out);
  return {Value(out)};
}

// max.dim / min.dim(self, dim, keepdim=False) -> (values, indices)
Values minmax_dim(const Values& a, bool want_max) {
  const Tensor& x = a.at(0).tensor();
  const int64_t given = a.at(1).to_int();
  const int64_t dim = wrap_dim(given, x.dim());
  check_nonempty_dim(want_max ? "max" : "min", x, given, dim);
  const Shape shape = keep_shape(x, dim, a.at(2).to_bool());
  Tensor values = Tensor::empty(shape, x.dtype());
  Tensor indices = Tensor::empty(shape, DType::Int64);
  if (values.numel() == 0) return {Value(values), Value(indices)};
  const DType ct = reduce_compute_dtype(x.dtype());
  const Picked p = pick_view(reduce_rows(x, one_dim(x, dim), ct), ct, want_max);
  store_values(p, values);
  store_indices(p, indices);
  return {Value(values), Value(indices)};
}

// argmax / argmin(self, dim=None, keepdim=False)
Values arg(const Values& a, bool want_max) {
  const Tensor& x = a.at(0).tensor();
  const char* name = want_max ? "argmax" : "argmin";
  const std::optional<int64_t> given = a.at(1).opt_int();
  const bool keepdim = a.at(2).to_bool();
  std::optional<int64_t> dim;
  if (given) dim = wrap_dim(*given, x.dim());
  if (x.dtype() == DType::Bool)
    op_error(std::string("\"") + name + "_cpu\" not implemented for 'Bool'");
  if (x.numel() == 0) {
    if (!dim)
      op_error(std::string(name) +
               "(): Expected reduction dim to be specified for input.numel() == 0.");
    check_nonempty_dim(name, x, *given, *dim);
  }
  Shape shape;
  std::vector<bool> reduced;
  if (dim) {
    shape = keep_shape(x, *dim, keepdim);
    reduced = one_dim(x, *dim);
  } else {
    if (keepdim) shape.assign(x.shape().size(), 1);
    reduced.assign(static_cast<size_t>(x.dim()), true);
  }
  Tensor out = Tensor::empty(shape, DType::Int64);
  if (out.numel() == 0) return {Value(out)};
  const DType ct = reduce_compute_dtype(x.dtype());
  store_indices(pick_view(reduce_rows(x, reduced, ct), ct, want_max), out);
  return {Value(out)};
}

Values amax(const OpDef&, const Values& a) { return amaxmin(a, true); }
Values amin(const OpDef&, const Values& a) { return amaxmin(a, false); }
Values max_all(const OpDef&, const Values& a) { return minmax_all(a, true); }
Values min_all(const OpDef&, const Values& a) { return minmax_all(a, false); }
Values max_dim(const OpDef&, const Values& a) { return minmax_dim(a, true); }
Values min_dim(const OpDef&, const Values& a) { return minmax_dim(a, false); }
Values argmax(const OpDef&, const Values& a) { return arg(a, true); }
Values argmin(const OpDef&, const Values& a) { return arg(a, false); }

}  // namespace

void register_minmax_kernels(KernelTable& t) {
  const auto all = pw_all_dtypes();
  t.add("aten.amax.default", {&amax, nullptr, all});
  t.add("aten.amin.default", {&amin, nullptr, all});
  t.add("aten.max.default", {&max_all, nullptr, all});
  t.add("aten.min.default", {&min_all, nullptr, all});
  t.add("aten.max.dim", {&max_dim, nullptr, all});
  t.add("aten.min.dim", {&min_dim, nullptr, all});
  t.add("aten.argmax.default", {&argmax, nullptr, all});
  t.add("aten.argmin.default", {&argmin, nullptr, all});
}

}  // namespace crucible::cpu

// The cpu backend's sums: sum and mean over any dims (reduction_rows.h gives the
// [outer, red, inner] view). Floating sums accumulate in f64 and round once to the output.
// Rows (inner == 1) of f32 are summed in blocks with eight accumulators, spread over the pool
// when there are few rows; when the worst-case effect of that order on the result (n * 2^-53 *
// sum |x|) could reach the comparison tolerance (cancellation of large terms), the row is
// summed again sequentially, in the reference's order. Columns (inner > 1) and f64 rows are
// summed sequentially along the reduced extent. Integer sums are exact in int64 and wrap in the
// output width; with dtype= the input is converted to that dtype first, as ATen does.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_ops.h"
#include "backends/cpu/reduction_rows.h"
#include "crucible/core/error.h"
#include "ops/statistics_internal.h"

namespace crucible::cpu {

void register_softmax_kernels(KernelTable& t);  // softmax.cpp
void register_minmax_kernels(KernelTable& t);   // reduction_minmax.cpp

namespace {

constexpr int64_t kBlock = 1 << 14;  // elements per partial sum of a long row

struct Partial {
  double sum = 0, abs = 0;
};

Partial sum_block_f32(const float* x, int64_t n) {
  double a[8] = {}, b[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) {
      const double v = x[i + k];
      a[k] += v;
      b[k] += std::abs(v);
    }
  for (; i < n; ++i) {
    a[0] += x[i];
    b[0] += std::abs(static_cast<double>(x[i]));
  }
  Partial p;
  p.sum = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  p.abs = ((b[0] + b[1]) + (b[2] + b[3])) + ((b[4] + b[5]) + (b[6] + b[7]));
  return p;
}

template <typename C>
double sum_sequential(const C* x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]);
  return s;
}

// f32 rows [outer, red] -> out[outer].
void sum_rows_f32(const float* x, int64_t outer, int64_t red, double* out) {
  const int64_t nblk = std::max<int64_t>(1, (red + kBlock - 1) / kBlock);
  std::vector<Partial> part(static_cast<size_t>(outer * nblk));
  parallel_for(0, outer * nblk, std::max<int64_t>(1, 32768 / std::min(red, kBlock) + 1),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t t = lo; t < hi; ++t) {
                   const int64_t o = t / nblk, b = t % nblk;
                   const int64_t beg = b * kBlock, len = std::min(kBlock, red - beg);
                   part[static_cast<size_t>(t)] = sum_block_f32(x + o * red + beg, len);
                 }
               });
  parallel_for(0, outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(red, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t o = lo; o < hi; ++o) {
                   double s = 0, a = 0;
                   for (int64_t b = 0; b < nblk; ++b) {
                     s += part[static_cast<size_t>(o * nblk + b)].sum;
                     a += part[static_cast<size_t>(o * nblk + b)].abs;
                   }
                   const double n = static_cast<double>(red);
                   const double bound = n * 0x1p-53 * a;
                   const double tol = 1.3e-6 * std::abs(s) + 1e-5 * std::sqrt(n);
                   out[o] = bound <= 0.5 * tol ? s : sum_sequential(x + o * red, red);
                 }
               });
}

// [outer, red, inner] -> out[outer * inner], sequential along red.
template <typename C>
void sum_seq(const C* x, int64_t outer, int64_t red, int64_t inner, double* out) {
  parallel_for(0, outer * inner, std::max<int64_t>(1, 32768 / std::max<int64_t>(red, 1)),
               [&](int64_t lo, int64_t hi) {
                 int64_t p = lo;
                 while (p < hi) {
                   const int64_t o = p / inner, j0 = p % inner;
                   const int64_t j1 = std::min(inner, j0 + (hi - p));
                   double* acc = out + o * inner;
                   for (int64_t j = j0; j < j1; ++j) acc[j] = 0;
                   for (int64_t r = 0; r < red; ++r) {
                     const C* row = x + (o * red + r) * inner;
                     for (int64_t j = j0; j < j1; ++j) acc[j] += static_cast<double>(row[j]);
                   }
                   p += j1 - j0;
                 }
               });
}

void sum_int(const int64_t* x, int64_t outer, int64_t red, int64_t inner, uint64_t* out) {
  parallel_for(0, outer * inner, std::max<int64_t>(1, 32768 / std::max<int64_t>(red, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t p = lo; p < hi; ++p) {
                   const int64_t o = p / inner, j = p % inner;
                   uint64_t s = 0;
                   for (int64_t r = 0; r < red; ++r)
                     s += static_cast<uint64_t>(x[(o * red + r) * inner + j]);
                   out[p] = s;
                 }
               });
}

Values reduce_sum(const Values& a, bool mean, bool all_dims) {
  const Tensor& x = a.at(0).tensor();
  std::vector<int64_t> dims;
  bool keepdim = false;
  size_t dtype_arg = 1;
  if (!all_dims) {
    dims = stats::dims_of(a.at(1));
    keepdim = a.at(2).to_bool();
    dtype_arg = 3;
  }
  const bool has_dtype = a.size() > dtype_arg && !a[dtype_arg].is_none();
  DType out_dtype = x.dtype();
  if (has_dtype)
    out_dtype = a[dtype_arg].to_dtype();
  else if (!mean && is_integral(x.dtype(), true))
    out_dtype = DType::Int64;
  if (mean && !is_floating(out_dtype))
    op_error(std::string("mean(): could not infer output dtype. ") +
             (has_dtype ? "Optional" : "Input") +
             " dtype must be either a floating point or complex dtype. Got: " +
             stats::scalar_type_name(out_dtype));
  const stats::ReducePlan plan = stats::plan_reduction(x, dims, keepdim);
  Tensor out = Tensor::empty(plan.out_shape, out_dtype);
  // dtype=: the input converted first (f32 summed as f16 values, floats truncated to ints).
  Tensor in = x;
  if (out_dtype != x.dtype() && x.numel() > 0) {
    in = Tensor::empty(x.shape(), out_dtype);
    const Tensor ins[] = {x};
    pw_run(PwOp::Identity, ins, in, compute_for(x.dtype()), PwParams{});
  }
  const DType ct = reduce_compute_dtype(out_dtype);
  const RowsView v = reduce_rows(in, plan.reduced, ct);
  const int64_t n = out.numel();
  char* dst = static_cast<char*>(out.data_ptr());
  const auto isz = static_cast<int64_t>(out.itemsize());
  if (ct == DType::Int64) {
    std::vector<uint64_t> acc(static_cast<size_t>(std::max<int64_t>(n, 1)), 0);
    if (x.numel() > 0) sum_int(v.src.data<int64_t>(), v.outer, v.red, v.inner, acc.data());
    for (int64_t i = 0; i < n; ++i)
      store_from_int(dst + i * isz, out_dtype, static_cast<int64_t>(acc[static_cast<size_t>(i)]));
    return {Value(out)};
  }
  std::vector<double> acc(static_cast<size_t>(std::max<int64_t>(n, 1)), 0.0);
  if (x.numel() > 0) {
    if (ct == DType::Float32 && v.inner == 1)
      sum_rows_f32(v.src.data<float>(), v.outer, v.red, acc.data());
    else if (ct == DType::Float32)
      sum_seq(v.src.data<float>(), v.outer, v.red, v.inner, acc.data());
    else
      sum_seq(v.src.data<double>(), v.outer, v.red, v.inner, acc.data());
  }
  const double count = static_cast<double>(plan.count);
  for (int64_t i = 0; i < n; ++i) {
    const double s = acc[static_cast<size_t>(i)];
    store_from_double(dst + i * isz, out_dtype, mean ? s / count : s);
  }
  return {Value(out)};
}

// dtype= must be a real dtype the engine converts to.
bool sum_supports(const OpDef&, const Values& a, std::string* why) {
  for (const Value& v : a) {
    if (v.kind() != ValueKind::DType && !v.is_tensor()) continue;
    const DType t = v.is_tensor() ? v.tensor().dtype() : v.to_dtype();
    if (is_complex(t) || t == DType::Float8E4M3FN || t == DType::Float8E5M2) {
      if (why) *why = "backend 'cpu' sums real dtypes other than fp8 only";
      return false;
    }
  }
  return true;
}

Values sum_dim(const OpDef&, const Values& a) { return reduce_sum(a, false, false); }
Values sum_all(const OpDef&, const Values& a) { return reduce_sum(a, false, true); }
Values mean_dim(const OpDef&, const Values& a) { return reduce_sum(a, true, false); }
Values mean_all(const OpDef&, const Values& a) { return reduce_sum(a, true, true); }

}  // namespace

void register_reduction_kernels(KernelTable& t) {
  const auto F = pw_float_dtypes(), all = pw_all_dtypes();
  t.add("aten.sum.dim_IntList", {&sum_dim, &sum_supports, all});
  t.add("aten.sum.default", {&sum_all, &sum_supports, all});
  t.add("aten.mean.dim", {&mean_dim, &sum_supports, F});
  t.add("aten.mean.default", {&mean_all, &sum_supports, F});
  register_minmax_kernels(t);
  register_softmax_kernels(t);
}

}  // namespace crucible::cpu

// The cpu backend's softmax and log-softmax and their backward ops. Rows along `dim` are made
// the innermost (a contiguous copy only when they are not already), computed in f32 (f64 for
// f64) with the vectorized exp loop, one row per task on the thread pool.
#include <cmath>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_engine.h"
#include "backends/cpu/pointwise_ops.h"
#include "crucible/core/error.h"

namespace crucible::cpu {

namespace {

// `t` with `dim` moved last, contiguous, converted to the compute dtype.
Tensor rows_of(const Tensor& t, int64_t dim, DType compute) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d != dim) perm.push_back(d);
  if (t.dim() > 0) perm.push_back(dim);
  Tensor p = t.dim() > 0 ? t.permute(perm) : t;
  if (p.is_contiguous() && p.dtype() == compute) return p;
  Tensor c = Tensor::empty(p.shape(), compute);
  const Tensor ins[] = {p};
  pw_run(PwOp::Identity, ins, c, compute_for(p.dtype()), PwParams{});
  return c;
}

// Writes rows (laid out as rows_of gives them) back into `out` (shape of the op's input).
void store_rows(const Tensor& rows, const Tensor& out, int64_t dim) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < out.dim(); ++d)
    if (d != dim) perm.push_back(d);
  if (out.dim() > 0) perm.push_back(dim);
  Tensor view = out.dim() > 0 ? out.permute(perm) : out;
  const Tensor ins[] = {rows};
  pw_run(PwOp::Identity, ins, view, compute_for(rows.dtype()), PwParams{});
}

template <typename C>
void forward_rows(const C* x, C* y, int64_t rows, int64_t n, bool log) {
  const PwKernels& k = pw_kernels();
  parallel_for(0, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t r = lo; r < hi; ++r) {
                   const C* xr = x + r * n;
                   C* yr = y + r * n;
                   C m = -INFINITY;
                   for (int64_t i = 0; i < n; ++i) m = xr[i] > m || xr[i] != xr[i] ? xr[i] : m;
                   for (int64_t i = 0; i < n; ++i) yr[i] = xr[i] - m;
                   PwParams p;
                   const C* in[1] = {yr};
                   std::vector<C> e(log ? n : 0);
                   C* ex = log ? e.data() : yr;
                   if constexpr (std::is_same_v<C, float>)
                     k.f32[static_cast<int>(PwOp::Exp)](in, ex, n, p);
                   else
                     k.f64[static_cast<int>(PwOp::Exp)](in, ex, n, p);
                   double s = 0;
                   for (int64_t i = 0; i < n; ++i) s += ex[i];
                   if (log) {
                     const C ls = static_cast<C>(std::log(s));
                     for (int64_t i = 0; i < n; ++i) yr[i] -= ls;
                   } else {
                     const C inv = static_cast<C>(1.0 / s);
                     for (int64_t i = 0; i < n; ++i) yr[i] *= inv;
                   }
                 }
               });
}

template <typename C>
void backward_rows(const C* g, const C* y, C* gi, int64_t rows, int64_t n, bool log) {
  parallel_for(0, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t r = lo; r < hi; ++r) {
                   const C* gr = g + r * n;
                   const C* yr = y + r * n;
                   C* o = gi + r * n;
                   double s = 0;
                   if (log) {
                     for (int64_t i = 0; i < n; ++i) s += gr[i];
                     for (int64_t i = 0; i < n; ++i)
                       o[i] = static_cast<C>(gr[i] - std::exp(static_cast<double>(yr[i])) * s);
                   } else {
                     for (int64_t i = 0; i < n; ++i) s += static_cast<double>(gr[i]) * yr[i];
                     // In f64: grad - sum may exceed the f32 range where the product does not.
                     for (int64_t i = 0; i < n; ++i)
                       o[i] = static_cast<C>(static_cast<double>(yr[i]) * (gr[i] - s));
                   }
                 }
               });
}

DType compute_dtype(DType t) { return t == DType::Float64 ? DType::Float64 : DType::Float32; }

Values softmax_impl(const Values& a, bool log) {
  const Tensor& x = a.at(0).tensor();
  const int64_t dim = wrap_dim(a.at(1).to_int(), x.dim());
  if (a.at(2).to_bool()) op_error("softmax with half to float conversion is not supported on CPU");
  const DType out_dtype = x.dtype();
  Tensor out = Tensor::empty(x.shape(), out_dtype);
  if (x.numel() == 0) return {Value(out)};
  const DType ct = compute_dtype(x.dtype());
  Tensor rows = rows_of(x, dim, ct);
  Tensor res = Tensor::empty(rows.shape(), ct);
  const int64_t n = x.dim() > 0 ? x.size(dim) : 1;
  const int64_t nrows = x.numel() / n;
  if (ct == DType::Float32)
    forward_rows(rows.data<float>(), res.data<float>(), nrows, n, log);
  else
    forward_rows(rows.data<double>(), res.data<double>(), nrows, n, log);
  store_rows(res, out, dim);
  return {Value(out)};
}

Values backward_impl(const Values& a, bool log) {
  const Tensor& g = a.at(0).tensor();
  const Tensor& y = a.at(1).tensor();
  const int64_t dim = wrap_dim(a.at(2).to_int(), y.dim());
  const DType in_dtype = a.at(3).to_dtype();
  if (g.shape() != y.shape())
    op_error(
        "Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 "
        "'output'; but " +
        shape_str(g.shape()) + " does not equal " + shape_str(y.shape()) +
        " (while checking arguments for softmax_backward)");
  // The result has grad's dtype; grad f32 with input_dtype f16 asks for f16, which ATen's CPU
  // kernels reject, as they reject an output of another dtype than grad.
  const DType out_dtype = g.dtype();
  const auto name = [](DType t) { return std::string(dtype_scalar_type_name(t)); };
  if (y.dtype() != g.dtype())
    op_error("expected scalar type " + name(g.dtype()) + " but found " + name(y.dtype()));
  if (g.dtype() == DType::Float32 && in_dtype == DType::Float16)
    op_error("expected scalar type Float but found Half");
  Tensor out = Tensor::empty(y.shape(), out_dtype);
  if (y.numel() == 0) return {Value(out)};
  const DType ct = compute_dtype(g.dtype());
  Tensor gr = rows_of(g, dim, ct), yr = rows_of(y, dim, ct);
  Tensor res = Tensor::empty(gr.shape(), ct);
  const int64_t n = y.dim() > 0 ? y.size(dim) : 1;
  const int64_t nrows = y.numel() / n;
  if (ct == DType::Float32)
    backward_rows(gr.data<float>(), yr.data<float>(), res.data<float>(), nrows, n, log);
  else
    backward_rows(gr.data<double>(), yr.data<double>(), res.data<double>(), nrows, n, log);
  store_rows(res, out, dim);
  return {Value(out)};
}

Values softmax(const OpDef&, const Values& a) { return softmax_impl(a, false); }
Values log_softmax(const OpDef&, const Values& a) { return softmax_impl(a, true); }
Values softmax_bw(const OpDef&, const Values& a) { return backward_impl(a, false); }
Values log_softmax_bw(const OpDef&, const Values& a) { return backward_impl(a, true); }

}  // namespace

void register_softmax_kernels(KernelTable& t) {
  const auto F = pw_float_dtypes();
  t.add("aten._softmax.default", {&softmax, nullptr, F});
  t.add("aten._log_softmax.default", {&log_softmax, nullptr, F});
  t.add("aten._softmax_backward_data.default", {&softmax_bw, nullptr, F});
  t.add("aten._log_softmax_backward_data.default", {&log_softmax_bw, nullptr, F});
}

}  // namespace crucible::cpu

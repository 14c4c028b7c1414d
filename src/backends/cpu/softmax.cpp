// The cpu backend's softmax and log-softmax and their backward ops. The input is seen as
// [outer, n, inner] (softmax over n) and used in place when it is contiguous and of the compute
// dtype (f32, f64 for f64; other inputs are converted, a band of rows at a time where they can
// be); rows (inner == 1) or blocks of adjacent columns are spread over the thread pool and
// computed by the ISA's loops (softmax_kernels.h), which write the output directly.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_engine.h"
#include "backends/cpu/pointwise_ops.h"
#include "backends/cpu/softmax_kernels.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {

namespace {

// Elements per task: below this a call stays on one thread.
constexpr int64_t kGrainElems = 32768;
// Outputs of at least this many bytes are streamed past the caches (they exceed the private
// caches anyway; a streaming store saves the read of each line before it is written), when
// their rows are long enough that the partly written lines at the rows' ends do not matter.
constexpr int64_t kStreamBytes = int64_t{4} << 20;
constexpr int64_t kStreamRow = 256;

bool stream_out(const Tensor& res, int64_t n) {
  return n >= kStreamRow && res.numel() * static_cast<int64_t>(res.itemsize()) >= kStreamBytes;
}

DType compute_dtype(DType t) { return t == DType::Float64 ? DType::Float64 : DType::Float32; }

// `t` itself when contiguous and of dtype `ct`, else a contiguous copy in `ct`.
Tensor as_compute(const Tensor& t, DType ct) {
  if (t.is_contiguous() && t.dtype() == ct) return t;
  Tensor c = Tensor::uninitialized(t.shape(), ct);
  const Tensor ins[] = {t};
  pw_run(PwOp::Identity, ins, c, compute_for(t.dtype()), PwParams{});
  return c;
}

// `res` (compute dtype) as `out` (the op's dtype): `res` itself, or converted into `out`.
Tensor finish(const Tensor& res, const Tensor& out) {
  if (res.dtype() == out.dtype()) return res;
  const Tensor ins[] = {res};
  pw_run(PwOp::Identity, ins, out, compute_for(res.dtype()), PwParams{});
  return out;
}

// [outer, n, inner] of `t` around `dim` (a 0-d tensor is one element).
struct Layout {
  int64_t outer = 1, n = 1, inner = 1;
};

// Inputs that need converting to the compute dtype (f16, bf16) are converted a band of rows at a
// time when the call is over the last dim and contiguous: a [8192, 30522] f16 backward widened
// both inputs and its result whole, 3 GB of f32 for 250M elements. Each row is computed alone,
// so a band gives the same bits as the whole tensor.
constexpr int64_t kBandElems = int64_t{1} << 22;  // elements per band: 16 MiB a buffer in f32

// The bands of rows to convert, or one band of every row when the call is not banded.
std::vector<std::pair<int64_t, int64_t>> bands(const Layout& l, bool banded) {
  const int64_t per = banded ? std::max<int64_t>(1, kBandElems / std::max<int64_t>(l.n, 1)) : 0;
  if (!banded || per >= l.outer) return {{0, l.outer}};
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t r = 0; r < l.outer; r += per) out.push_back({r, std::min(per, l.outer - r)});
  return out;
}

// Rows [r0, r0 + rows) of the contiguous `t` seen as [outer, n] (t itself for every row).
Tensor rows_of(const Tensor& t, const Layout& l, int64_t r0, int64_t rows) {
  if (r0 == 0 && rows == l.outer) return t;
  return t.view({l.outer, l.n}).slice(0, r0, r0 + rows);
}

Layout layout_of(const Tensor& t, int64_t dim) {
  Layout l;
  if (t.dim() == 0) return l;
  l.n = t.size(dim);
  for (int64_t d = 0; d < dim; ++d) l.outer *= t.size(d);
  for (int64_t d = dim + 1; d < t.dim(); ++d) l.inner *= t.size(d);
  return l;
}

// Calls last(row0, rows) over row ranges (inner == 1) or cols(offset, w) over column blocks.
template <typename Last, typename Cols>
void split(const Layout& l, const Last& last, const Cols& cols) {
  if (l.inner == 1) {
    parallel_for(0, l.outer, std::max<int64_t>(1, kGrainElems / l.n),
                 [&](int64_t lo, int64_t hi) { last(lo, hi - lo); });
    return;
  }
  const int64_t blocks = (l.inner + kSoftmaxCols - 1) / kSoftmaxCols;
  const int64_t per_task = l.n * std::min(l.inner, kSoftmaxCols);
  parallel_for(0, l.outer * blocks, std::max<int64_t>(1, kGrainElems / per_task),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t t = lo; t < hi; ++t) {
                   const int64_t o = t / blocks, j0 = (t % blocks) * kSoftmaxCols;
                   cols(o * l.n * l.inner + j0, std::min(kSoftmaxCols, l.inner - j0));
                 }
               });
}

template <typename C>
void forward(const SoftmaxFns<C>& f, const C* x, C* y, const Layout& l, bool log, bool nt) {
  split(
      l,
      [&](int64_t r0, int64_t rows) { f.fwd_last(x + r0 * l.n, y + r0 * l.n, rows, l.n, log, nt); },
      [&](int64_t off, int64_t w) { f.fwd_cols(x + off, y + off, l.n, l.inner, w, log, nt); });
}

template <typename C>
void backward(const SoftmaxFns<C>& f, const C* g, const C* y, C* o, const Layout& l, bool log,
              bool nt) {
  split(
      l,
      [&](int64_t r0, int64_t rows) {
        const int64_t at = r0 * l.n;
        f.bwd_last(g + at, y + at, o + at, rows, l.n, log, nt);
      },
      [&](int64_t off, int64_t w) {
        f.bwd_cols(g + off, y + off, o + off, l.n, l.inner, w, log, nt);
      });
}

// The meta function's output, contiguous (rows_of reads it in the logical order).
const Tensor& contiguous_output(const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  if (!out.is_contiguous()) internal_error("cpu softmax: a non-contiguous meta output");
  return out;
}

// Into the meta function's output, which raised ATen's errors (half_to_float on another dtype
// than f16, the integral dtypes' dispatch errors) and gave its dtype.
void softmax_impl(const Args& a, const Values& outputs, bool log) {
  const Tensor& out = contiguous_output(outputs);
  const Tensor& x = a.tensor("self");
  if (x.numel() == 0) return;
  const int64_t dim = wrap_dim(a.integer("dim"), x.dim());
  const DType out_dtype = out.dtype();
  const DType ct = compute_dtype(x.dtype());
  const Layout l = layout_of(x, dim);
  const SoftmaxKernels& k = softmax_kernels();
  const bool banded = l.inner == 1 && x.is_contiguous() && x.dtype() != ct;
  // Streamed stores only into the output itself (a band's buffer is read back at once).
  const bool nt = stream_out(out, l.n) && (out_dtype == ct || !banded);
  for (const auto& [r0, rows] : bands(l, banded)) {
    const Tensor band_out = rows_of(out, l, r0, rows);
    const Tensor xs = as_compute(rows_of(x, l, r0, rows), ct);
    const Tensor res = out_dtype == ct ? band_out : Tensor::uninitialized(band_out.shape(), ct);
    const Layout bl{rows, l.n, l.inner};
    if (ct == DType::Float32)
      forward(k.f32, xs.data<float>(), res.data<float>(), bl, log, nt);
    else
      forward(k.f64, xs.data<double>(), res.data<double>(), bl, log, nt);
    finish(res, band_out);
  }
}

// Into the meta function's output (its checks in ATen's order, the reference's).
void backward_impl(const Args& a, const Values& outputs, bool log) {
  const Tensor& out = contiguous_output(outputs);
  const Tensor& g = a.tensor("grad_output");
  const Tensor& y = a.tensor("output");
  if (y.numel() == 0) return;
  const int64_t dim = wrap_dim(a.integer("dim"), g.dim());
  const DType out_dtype = out.dtype();
  const DType ct = compute_dtype(g.dtype());
  const Layout l = layout_of(y, dim);
  const SoftmaxKernels& k = softmax_kernels();
  const bool banded = l.inner == 1 && g.is_contiguous() && y.is_contiguous() &&
                      (g.dtype() != ct || y.dtype() != ct || out_dtype != ct);
  const bool nt = stream_out(out, l.n) && (out_dtype == ct || !banded);
  for (const auto& [r0, rows] : bands(l, banded)) {
    const Tensor band_out = rows_of(out, l, r0, rows);
    const Tensor gs = as_compute(rows_of(g, l, r0, rows), ct);
    const Tensor ys = as_compute(rows_of(y, l, r0, rows), ct);
    const Tensor res = out_dtype == ct ? band_out : Tensor::uninitialized(band_out.shape(), ct);
    const Layout bl{rows, l.n, l.inner};
    if (ct == DType::Float32)
      backward(k.f32, gs.data<float>(), ys.data<float>(), res.data<float>(), bl, log, nt);
    else
      backward(k.f64, gs.data<double>(), ys.data<double>(), res.data<double>(), bl, log, nt);
    finish(res, band_out);
  }
}

void softmax(const OpDef&, const Args& a, const Values& o) { softmax_impl(a, o, false); }
void log_softmax(const OpDef&, const Args& a, const Values& o) { softmax_impl(a, o, true); }
void softmax_bw(const OpDef&, const Args& a, const Values& o) { backward_impl(a, o, false); }
void log_softmax_bw(const OpDef&, const Args& a, const Values& o) { backward_impl(a, o, true); }

}  // namespace

void register_softmax_kernels(KernelTable& t) {
  // Integer inputs are taken to raise ATen's dispatch error (or, empty, to return).
  const std::vector<DType> F = pw_all_dtypes();
  t.add("aten._softmax.default", {.dtypes = F, .run_into = &softmax});
  t.add("aten._log_softmax.default", {.dtypes = F, .run_into = &log_softmax});
  t.add("aten._softmax_backward_data.default", {.dtypes = F, .run_into = &softmax_bw});
  t.add("aten._log_softmax_backward_data.default", {.dtypes = F, .run_into = &log_softmax_bw});
}

}  // namespace crucible::cpu

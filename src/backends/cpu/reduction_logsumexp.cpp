// The `cpu` backend's logsumexp: log(sum(exp(x - m))) + m over the reduced dims, with m the
// maximum (NaN if any element is NaN; an infinite maximum is replaced by 0, so a row of -inf
// gives -inf and a row holding +inf gives +inf). Bool and integer inputs are converted to f32
// first. The maxima and the f64 sums come from the reduction kernels' vector loops; f32, f16
// and bf16 compute exp in f32 with the vectorised exp of the elementwise kernels (blocks of
// differences x - m in L1); f64 computes exp in f64. Each
// result is rounded once. Rows (the reduced extent innermost) or column blocks (the reduced
// extent outside contiguous columns) are spread over the pool.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "backends/cpu/index_util.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_kernels.h"
#include "backends/cpu/pointwise_ops.h"
#include "backends/cpu/reduction_kernels.h"
#include "backends/cpu/reduction_rows.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace {

constexpr int64_t kCols = 256;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The shift of a row: its maximum, 0 when infinite (NaN stays NaN).
inline double shift_of(double m) { return std::isinf(m) ? 0.0 : m; }

// exp over n floats (in -> out), through the elementwise kernels' f32 exp.
inline void exp_f32(const float* in, float* out, int64_t n) {
  static const PwLoop<float> loop = pw_kernels().f32[static_cast<int>(PwOp::Exp)];
  const float* ins[1] = {in};
  loop(ins, out, n, PwParams{});
}

// d[j] = x[j] - s (one s, or s[j] per column).
__attribute__((optimize("O3"))) void minus(const float* __restrict x, float s, float* __restrict d,
                                           int64_t n) {
  for (int64_t j = 0; j < n; ++j) d[j] = x[j] - s;
}
__attribute__((optimize("O3"))) void minus_cols(const float* __restrict x,
                                                const float* __restrict s, float* __restrict d,
                                                int64_t n) {
  for (int64_t j = 0; j < n; ++j) d[j] = x[j] - s[j];
}
// acc[j] += e[j] in f64.
__attribute__((optimize("O3"))) void add_cols(const float* __restrict e, double* __restrict acc,
                                              int64_t n) {
  for (int64_t j = 0; j < n; ++j) acc[j] += static_cast<double>(e[j]);
}

// The result of every row of [outer, red] (inner == 1), in out[outer]: the maximum and the
// sums from the reduction kernels' row loops (f64 lanes), exp over blocks in L1.
template <typename T>
void rows(const T* x, int64_t outer, int64_t red, double* out) {
  const StatLoops<T>& k = stat_loops<T>();
  parallel_for(0, outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(red, 1)),
               [&](int64_t r0, int64_t r1) {
                 float buf[kCols];
                 for (int64_t r = r0; r < r1; ++r) {
                   const T* row = x + r * red;
                   const double m = static_cast<double>(k.row_extreme(row, red, true));
                   if (std::isnan(m)) {
                     out[r] = kNaN;
                     continue;
                   }
                   const double s = shift_of(m);
                   double sum = 0;
                   if constexpr (std::is_same_v<T, double>) {
                     for (int64_t q = 0; q < red; ++q) sum += std::exp(row[q] - s);
                   } else {
                     for (int64_t q0 = 0; q0 < red; q0 += kCols) {
                       const int64_t w = std::min(kCols, red - q0);
                       minus(row + q0, static_cast<float>(s), buf, w);
                       exp_f32(buf, buf, w);
                       sum += k.sum(buf, w);
                     }
                   }
                   out[r] = std::log(sum) + s;
                 }
               });
}

// The result of every column of [outer, red, inner] (inner > 1), in out[outer * inner]:
// blocks of kCols columns, each with its own maxima and f64 sums.
template <typename T>
void columns(const T* x, int64_t outer, int64_t red, int64_t inner, double* out) {
  const StatLoops<T>& k = stat_loops<T>();
  const int64_t blocks = (inner + kCols - 1) / kCols;
  parallel_for(0, outer * blocks, std::max<int64_t>(1, 16384 / std::max<int64_t>(red * kCols, 1)),
               [&](int64_t b0, int64_t b1) {
                 T mx[kCols];
                 float shf[kCols], buf[kCols];
                 double sh[kCols], sum[kCols];
                 for (int64_t b = b0; b < b1; ++b) {
                   const int64_t o = b / blocks, j0 = (b % blocks) * kCols;
                   const int64_t w = std::min(kCols, inner - j0);
                   const T* base = x + o * red * inner + j0;
                   k.col_pick(base, red, inner, w, true, mx, nullptr);
                   for (int64_t j = 0; j < w; ++j) {
                     sh[j] = shift_of(static_cast<double>(mx[j]));
                     shf[j] = static_cast<float>(sh[j]);
                     sum[j] = 0;
                   }
                   for (int64_t r = 0; r < red; ++r) {
                     const T* row = base + r * inner;
                     if constexpr (std::is_same_v<T, double>) {
                       for (int64_t j = 0; j < w; ++j) sum[j] += std::exp(row[j] - sh[j]);
                     } else {
                       minus_cols(row, shf, buf, w);
                       exp_f32(buf, buf, w);
                       add_cols(buf, sum, w);
                     }
                   }
                   double* dst = out + o * inner + j0;
                   for (int64_t j = 0; j < w; ++j)
                     dst[j] = std::isnan(sh[j]) ? kNaN : std::log(sum[j]) + sh[j];
                 }
               });
}

// Into the meta function's output (contiguous; its dtype the input's, f32 for an integral one).
void logsumexp_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& out = outs.at(0).tensor();
  const Tensor& x = a.tensor("self");
  const DType dt = out.dtype();
  const std::vector<int64_t> dims = a.ints("dim");
  std::vector<bool> reduced(static_cast<size_t>(x.dim()), dims.empty());
  for (int64_t d : dims)
    if (x.dim() > 0) reduced[static_cast<size_t>(wrap_dim(d, x.dim()))] = true;
  const int64_t n = out.numel();
  std::vector<double> res(static_cast<size_t>(n), -kInf);  // an empty reduction gives -inf
  if (x.numel() > 0) {
    const DType ct = dt == DType::Float64 ? DType::Float64 : DType::Float32;
    // A contiguous input of another dtype is converted in its own layout first (a block of
    // reduced dims then stays in place instead of being permuted while converted).
    const Tensor xin = x.is_contiguous() && x.dtype() != ct ? contiguous_as(x, ct) : x;
    const RowsView v = reduce_rows(xin, reduced, ct);
    if (ct == DType::Float64) {
      if (v.inner == 1)
        rows(v.src.data<double>(), v.outer, v.red, res.data());
      else
        columns(v.src.data<double>(), v.outer, v.red, v.inner, res.data());
    } else {
      if (v.inner == 1)
        rows(v.src.data<float>(), v.outer, v.red, res.data());
      else
        columns(v.src.data<float>(), v.outer, v.red, v.inner, res.data());
    }
  }
  // A fresh meta output is contiguous: element i of the logical order is at i.
  if (!out.is_contiguous()) internal_error("cpu logsumexp: a non-contiguous meta output");
  char* o = static_cast<char*>(out.data_ptr());
  const auto isz = static_cast<int64_t>(out.itemsize());
  for (int64_t i = 0; i < n; ++i) store_from_double(o + i * isz, dt, res[static_cast<size_t>(i)]);
}

}  // namespace

void register_logsumexp_kernels(KernelTable& t) {
  t.add("aten.logsumexp.default", {.dtypes = pw_all_dtypes(), .run_into = &logsumexp_kernel});
}

}  // namespace crucible::cpu

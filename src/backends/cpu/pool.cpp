// The `cpu` backend's pooling: max_pool{2,3}d_with_indices, adaptive_max_pool2d, avg_pool{2,3}d,
// _adaptive_avg_pool{2,3}d and their backwards, floating dtypes (f16/bf16 in f32). Planes
// (N * C) are split over the thread pool. The window geometry and its checks are the catalog's
// own (ops/pooling_internal.h), so the kernels raise exactly where the reference does.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/nn.h"
#include "backends/cpu/nn_util.h"
#include "backends/cpu/norm_rows.h"
#include "backends/cpu/parallel.h"
#include "crucible/core/error.h"
#include "ops/pooling_internal.h"

namespace crucible::cpu {
namespace {

using pooling::Geo;

// One output's window along every dim: [lo, hi) clamped to the input, and (average pooling)
// its divisor.
struct Win {
  int64_t lo[3], hi[3];
  int64_t divisor = 1;
};

enum class Kind { Max, Avg, Adaptive };

struct PoolSpec {
  Kind kind = Kind::Max;
  bool count_include_pad = true;
  std::optional<int64_t> divisor_override;
};

Win window(const Geo& g, const PoolSpec& s, const int64_t o[3]) {
  Win w;
  if (s.kind == Kind::Adaptive) {
    w.divisor = 1;
    for (int i = 0; i < 3; ++i) {
      w.lo[i] = g.start(i, o[i]);
      w.hi[i] = g.end(i, o[i]);
      w.divisor *= w.hi[i] - w.lo[i];
    }
    return w;
  }
  if (s.kind == Kind::Avg) {
    int64_t pool = 1, inside = 1;
    for (int i = 0; i < 3; ++i) {
      const int64_t a = o[i] * g.s[i] - g.p[i];
      const int64_t b = std::min(a + g.k[i], g.in[i] + g.p[i]);
      pool *= b - a;
      w.lo[i] = std::max<int64_t>(a, 0);
      w.hi[i] = std::min(b, g.in[i]);
      inside *= std::max<int64_t>(w.hi[i] - w.lo[i], 0);
    }
    w.divisor = s.divisor_override ? *s.divisor_override : s.count_include_pad ? pool : inside;
    return w;
  }
  return w;  // max pooling walks the dilated window itself
}

void unflatten(const Geo& g, int64_t o, int64_t out[3]) {
  out[2] = o % g.out[2];
  out[1] = (o / g.out[2]) % g.out[1];
  out[0] = o / (g.out[1] * g.out[2]);
}

// Max over the dilated window of output `o` (NaN wins; the first in-range position starts).
template <typename T>
inline void max_window(const Geo& g, const T* x, const int64_t o[3], T* best_out, int64_t* at_out) {
  T best = -std::numeric_limits<T>::infinity();
  int64_t at = -1;
  for (int64_t ka = 0; ka < g.k[0]; ++ka) {
    const int64_t a = o[0] * g.s[0] - g.p[0] + ka * g.d[0];
    if (a < 0 || a >= g.in[0]) continue;
    for (int64_t kb = 0; kb < g.k[1]; ++kb) {
      const int64_t b = o[1] * g.s[1] - g.p[1] + kb * g.d[1];
      if (b < 0 || b >= g.in[1]) continue;
      const int64_t row = (a * g.in[1] + b) * g.in[2];
      for (int64_t kc = 0; kc < g.k[2]; ++kc) {
        const int64_t c = o[2] * g.s[2] - g.p[2] + kc * g.d[2];
        if (c < 0 || c >= g.in[2]) continue;
        const T v = x[row + c];
        if (at < 0) at = row + c;
        if (v > best || std::isnan(v)) {
          best = v;
          at = row + c;
        }
      }
    }
  }
  *best_out = best;
  *at_out = at;
}

template <typename T>
Values forward_t(const Geo& g, const PoolSpec& s, const Tensor& self, DType work,
                 bool adaptive_max) {
  const Tensor x = norm_in(self, work);
  Tensor out = Tensor::empty(g.out_shape, work);
  const bool with_index = s.kind == Kind::Max;
  Tensor idx = with_index ? Tensor::empty(g.out_shape, DType::Int64) : Tensor();
  const int64_t ip = g.in_plane(), op = g.out_plane();
  const T* xp = x.data<T>();
  T* yp = out.data<T>();
  int64_t* ix = with_index ? idx.data<int64_t>() : nullptr;
  parallel_for(0, g.planes, std::max<int64_t>(1, 4096 / std::max<int64_t>(op, 1)),
               [&](int64_t p0, int64_t p1) {
                 for (int64_t pl = p0; pl < p1; ++pl) {
                   const T* xpl = xp + pl * ip;
                   for (int64_t o = 0; o < op; ++o) {
                     int64_t oo[3];
                     unflatten(g, o, oo);
                     if (with_index && !adaptive_max) {
                       max_window(g, xpl, oo, &yp[pl * op + o], &ix[pl * op + o]);
                       continue;
                     }
                     Win w = window(g, s.kind == Kind::Max ? PoolSpec{Kind::Adaptive} : s, oo);
                     if (with_index) {  // adaptive max
                       T best = -std::numeric_limits<T>::infinity();
                       int64_t at = -1;
                       for (int64_t a = w.lo[0]; a < w.hi[0]; ++a)
                         for (int64_t b = w.lo[1]; b < w.hi[1]; ++b)
                           for (int64_t c = w.lo[2]; c < w.hi[2]; ++c) {
                             const int64_t pos = (a * g.in[1] + b) * g.in[2] + c;
                             if (at < 0) at = pos;
                             if (xpl[pos] > best || std::isnan(xpl[pos])) {
                               best = xpl[pos];
                               at = pos;
                             }
                           }
                       yp[pl * op + o] = best;
                       ix[pl * op + o] = at;
                       continue;
                     }
                     bool empty = false;
                     for (int i = 0; i < 3; ++i) empty = empty || w.lo[i] >= w.hi[i];
                     if (empty) {
                       yp[pl * op + o] = T(0);
                       continue;
                     }
                     T sum = 0;
                     for (int64_t a = w.lo[0]; a < w.hi[0]; ++a)
                       for (int64_t b = w.lo[1]; b < w.hi[1]; ++b) {
                         const T* r = xpl + (a * g.in[1] + b) * g.in[2];
                         for (int64_t c = w.lo[2]; c < w.hi[2]; ++c) sum += r[c];
                       }
                     yp[pl * op + o] = sum / static_cast<T>(w.divisor);
                   }
                 }
               });
  Values res{Value(norm_out(out, self.dtype()))};
  if (with_index) res.push_back(idx);
  return res;
}

template <typename T>
Tensor backward_t(const Geo& g, const PoolSpec& s, const Tensor& grad_out, const Tensor& self,
                  const Tensor& indices, DType work) {
  pooling::check_shape(grad_out, g.out_shape, "grad_output");
  if (s.kind == Kind::Max) pooling::check_shape(indices, g.out_shape, "indices");
  const Tensor go = norm_in(grad_out, work);
  const Tensor ind = s.kind == Kind::Max ? indices.to(DType::Int64) : Tensor();
  Tensor gi = Tensor::zeros(self.shape(), work);
  const int64_t ip = g.in_plane(), op = g.out_plane();
  const T* gp = go.data<T>();
  const int64_t* ix = s.kind == Kind::Max ? ind.data<int64_t>() : nullptr;
  T* out = gi.data<T>();
  parallel_for(0, g.planes, std::max<int64_t>(1, 4096 / std::max<int64_t>(op, 1)),
               [&](int64_t p0, int64_t p1) {
                 for (int64_t pl = p0; pl < p1; ++pl) {
                   T* gpl = out + pl * ip;
                   for (int64_t o = 0; o < op; ++o) {
                     const T v = gp[pl * op + o];
                     if (ix) {
                       const int64_t at = ix[pl * op + o];
                       if (at < 0 || at >= ip)
                         op_error("index " + std::to_string(at) + " is out of bounds");
                       gpl[at] += v;
                       continue;
                     }
                     int64_t oo[3];
                     unflatten(g, o, oo);
                     const Win w = window(g, s, oo);
                     bool empty = false;
                     for (int i = 0; i < 3; ++i) empty = empty || w.lo[i] >= w.hi[i];
                     if (empty) continue;
                     const T share = v / static_cast<T>(w.divisor);
                     for (int64_t a = w.lo[0]; a < w.hi[0]; ++a)
                       for (int64_t b = w.lo[1]; b < w.hi[1]; ++b) {
                         T* r = gpl + (a * g.in[1] + b) * g.in[2];
                         for (int64_t c = w.lo[2]; c < w.hi[2]; ++c) r[c] += share;
                       }
                   }
                 }
               });
  return norm_out(gi, grad_out.dtype());
}

Values run_forward(const Geo& g, const PoolSpec& s, const Tensor& self, bool adaptive_max) {
  if (self.dtype() == DType::Float64 || extreme(self))
    return forward_t<double>(g, s, self, DType::Float64, adaptive_max);
  return forward_t<float>(g, s, self, DType::Float32, adaptive_max);
}

Tensor run_backward(const Geo& g, const PoolSpec& s, const Tensor& go, const Tensor& self,
                    const Tensor& indices) {
  CRUCIBLE_CHECK(go.dtype() == self.dtype(),
                 "expected grad_output and self to have the same dtype");
  if (self.dtype() == DType::Float64 || extreme(go))
    return backward_t<double>(g, s, go, self, indices, DType::Float64);
  return backward_t<float>(g, s, go, self, indices, DType::Float32);
}

std::optional<int64_t> divisor_of(const Value& v) {
  std::optional<int64_t> d = v.opt_int();
  if (d && *d == 0) op_error("divisor must be not zero");
  return d;
}

template <int N>
Values max_pool_kernel(const OpDef&, const Values& a) {
  const Tensor& self = a.at(0).tensor();
  const Geo g = pooling::window_geo(N == 2 ? "max_pool2d" : "max_pool3d", self, N, a.at(1), a.at(2),
                                    a.at(3), &a.at(4), a.at(5).to_bool());
  pooling::check_dtype("max_pool", self.dtype(), false);
  return run_forward(g, PoolSpec{Kind::Max}, self, false);
}

template <int N>
Values max_pool_backward_kernel(const OpDef&, const Values& a) {
  const Tensor& go = a.at(0).tensor();
  const Tensor& self = a.at(1).tensor();
  const Geo g = pooling::window_geo(N == 2 ? "max_pool2d" : "max_pool3d", self, N, a.at(2), a.at(3),
                                    a.at(4), &a.at(5), a.at(6).to_bool());
  pooling::check_dtype("max_pool_backward", self.dtype(), false);
  return {run_backward(g, PoolSpec{Kind::Max}, go, self, a.at(7).tensor())};
}

Values adaptive_max_kernel(const OpDef&, const Values& a) {
  const Tensor& self = a.at(0).tensor();
  const Geo g = pooling::adaptive_geo("adaptive_max_pool2d", self, 2, a.at(1));
  pooling::check_dtype("adaptive_max_pool2d", self.dtype(), false);
  return run_forward(g, PoolSpec{Kind::Max}, self, true);
}

Values adaptive_max_backward_kernel(const OpDef&, const Values& a) {
  const Tensor& go = a.at(0).tensor();
  const Tensor& self = a.at(1).tensor();
  CRUCIBLE_CHECK(go.dim() >= 2,
                 "adaptive_max_pool2d_backward(): grad_output must have 2 spatial dims");
  const Geo g = pooling::adaptive_geo("adaptive_max_pool2d", self, 2,
                                      Value(std::vector<int64_t>{go.size(-2), go.size(-1)}));
  pooling::check_dtype("adaptive_max_pool2d_backward", self.dtype(), false);
  return {run_backward(g, PoolSpec{Kind::Max}, go, self, a.at(2).tensor())};
}

template <int N>
Values avg_pool_kernel(const OpDef&, const Values& a) {
  const Tensor& self = a.at(0).tensor();
  const Geo g = pooling::window_geo(N == 2 ? "avg_pool2d" : "avg_pool3d", self, N, a.at(1), a.at(2),
                                    a.at(3), nullptr, a.at(4).to_bool());
  PoolSpec s{Kind::Avg, a.at(5).to_bool(), divisor_of(a.at(6))};
  pooling::check_dtype("avg_pool", self.dtype(), false);
  return run_forward(g, s, self, false);
}

template <int N>
Values avg_pool_backward_kernel(const OpDef&, const Values& a) {
  const Tensor& go = a.at(0).tensor();
  const Tensor& self = a.at(1).tensor();
  const Geo g = pooling::window_geo(N == 2 ? "avg_pool2d" : "avg_pool3d", self, N, a.at(2), a.at(3),
                                    a.at(4), nullptr, a.at(5).to_bool());
  PoolSpec s{Kind::Avg, a.at(6).to_bool(), divisor_of(a.at(7))};
  pooling::check_dtype("avg_pool_backward", self.dtype(), false);
  return {run_backward(g, s, go, self, Tensor())};
}

template <int N>
Values adaptive_avg_kernel(const OpDef&, const Values& a) {
  const Tensor& self = a.at(0).tensor();
  const Geo g = pooling::adaptive_geo(N == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d", self,
                                      N, a.at(1));
  pooling::check_dtype("adaptive_avg_pool", self.dtype(), false);
  return run_forward(g, PoolSpec{Kind::Adaptive}, self, false);
}

template <int N>
Values adaptive_avg_backward_kernel(const OpDef&, const Values& a) {
  const Tensor& go = a.at(0).tensor();
  const Tensor& self = a.at(1).tensor();
  const std::string name = N == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d";
  CRUCIBLE_CHECK(go.dim() == self.dim(),
                 name + "_backward(): grad_output and self must have the same number of dims");
  std::vector<int64_t> os;
  for (int64_t i = N; i >= 1; --i) {
    CRUCIBLE_CHECK(go.size(-i) != 0, name +
                                         "_backward(): Expected grad_output to have non-zero "
                                         "size for non-batch dimensions");
    os.push_back(go.size(-i));
  }
  const Geo g = pooling::adaptive_geo(name, self, N, Value(os));
  pooling::check_dtype(name + "_backward", self.dtype(), false);
  return {run_backward(g, PoolSpec{Kind::Adaptive}, go, self, Tensor())};
}

std::vector<DType> pool_dtypes() {
  return {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_pool_kernels(KernelTable& t) {
  const std::vector<DType> d = pool_dtypes();
  t.add("aten.max_pool2d_with_indices.default", {max_pool_kernel<2>, nullptr, d});
  t.add("aten.max_pool3d_with_indices.default", {max_pool_kernel<3>, nullptr, d});
  t.add("aten.max_pool2d_with_indices_backward.default", {max_pool_backward_kernel<2>, nullptr, d});
  t.add("aten.max_pool3d_with_indices_backward.default", {max_pool_backward_kernel<3>, nullptr, d});
  t.add("aten.adaptive_max_pool2d.default", {adaptive_max_kernel, nullptr, d});
  t.add("aten.adaptive_max_pool2d_backward.default", {adaptive_max_backward_kernel, nullptr, d});
  t.add("aten.avg_pool2d.default", {avg_pool_kernel<2>, nullptr, d});
  t.add("aten.avg_pool3d.default", {avg_pool_kernel<3>, nullptr, d});
  t.add("aten.avg_pool2d_backward.default", {avg_pool_backward_kernel<2>, nullptr, d});
  t.add("aten.avg_pool3d_backward.default", {avg_pool_backward_kernel<3>, nullptr, d});
  t.add("aten._adaptive_avg_pool2d.default", {adaptive_avg_kernel<2>, nullptr, d});
  t.add("aten._adaptive_avg_pool3d.default", {adaptive_avg_kernel<3>, nullptr, d});
  t.add("aten._adaptive_avg_pool2d_backward.default",
        {adaptive_avg_backward_kernel<2>, nullptr, d});
  t.add("aten._adaptive_avg_pool3d_backward.default",
        {adaptive_avg_backward_kernel<3>, nullptr, d});
}

}  // namespace crucible::cpu

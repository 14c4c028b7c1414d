// The `cpu` backend's spectral ops: _fft_r2c, _fft_c2c and _fft_c2r (what torch.fft.* lowers
// to), and the complex views view_as_real, view_as_complex, real and imag.
//
// Transforms run in the precision of the dtype (c64 in float, c128 in double) with the
// one-dimensional plans of fft_plan.h, one transformed dim at a time over a contiguous complex
// buffer: the output itself for c2c and r2c, a trimmed copy of the input for c2r. The lines of
// a dim are spread over the pool; each is gathered into a contiguous buffer, transformed and
// written back. r2c transforms its last dim first, straight from the real input, keeping
// n / 2 + 1 entries when onesided; c2r transforms every dim but the last backwards, then
// extends each line of the last dim to its Hermitian spectrum of last_dim_size entries (the
// imaginary parts of entry 0 and of the Nyquist entry dropped, as pocketfft and MKL do) and
// keeps the real parts of its backward transform. The normalisation (none, 1/sqrt(n), 1/n) is
// applied once at the end.
//
// The views share the input's storage: view_as_real reads a complex tensor as its components
// (a trailing dim of 2, strides doubled), view_as_complex the reverse, real and imag a
// component as a real view (real of a real tensor is itself).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

#include "backends/cpu/fft_plan.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace {

// Lines of length shape[d] along dim d of a contiguous tensor: `outer` x `inner` of them, line
// l starting at (l / inner) * n * inner + l % inner with step `inner`.
struct Lines {
  int64_t n = 1, outer = 1, inner = 1;
  int64_t count() const { return outer * inner; }
  int64_t base(int64_t l, int64_t len) const { return (l / inner) * len * inner + l % inner; }
};

Lines lines_of(const Shape& shape, int64_t d) {
  Lines g;
  g.n = shape[static_cast<size_t>(d)];
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (i < d) g.outer *= shape[static_cast<size_t>(i)];
    if (i > d) g.inner *= shape[static_cast<size_t>(i)];
  }
  return g;
}

// Transforms the `count` lines of a call kLanes<R> at a time (one line per vector lane, so
// every butterfly runs on vectors): load(l, lane, x) fills lane `lane` of x (n complex values)
// with line l, store(l, lane, y) writes lane `lane` of the transform back. Groups of lines
// are spread over the pool.
template <typename R, typename Load, typename Store>
void each_line(int64_t count, const Fft1d<R>& plan, Load load, Store store) {
  using V = Lanes<R>;
  constexpr int64_t kL = kLanes<R>;
  const int64_t n = plan.size();
  const int64_t groups = (count + kL - 1) / kL;
  parallel_for(0, groups, std::max<int64_t>(1, 4096 / std::max<int64_t>(n * kL, 1)),
               [&](int64_t g0, int64_t g1) {
                 std::vector<Cx<V>> x(static_cast<size_t>(n)), y(static_cast<size_t>(n)),
                     s(static_cast<size_t>(plan.scratch_size()));
                 for (int64_t g = g0; g < g1; ++g) {
                   const int64_t l0 = g * kL, lanes = std::min(kL, count - l0);
                   if (lanes < kL) std::fill(x.begin(), x.end(), Cx<V>{});
                   for (int64_t lane = 0; lane < lanes; ++lane) load(l0 + lane, lane, x.data());
                   plan.run(x.data(), y.data(), s.data());
                   for (int64_t lane = 0; lane < lanes; ++lane) store(l0 + lane, lane, y.data());
                 }
               });
}

// Transforms every line along dim d of the contiguous complex buffer `buf` in place.
template <typename R>
void transform_dim(Cx<R>* buf, const Shape& shape, int64_t d, int sign) {
  using V = Lanes<R>;
  const Lines g = lines_of(shape, d);
  if (g.n <= 1 || g.count() == 0) return;  // a length-1 DFT is the identity
  const Fft1d<R> plan(g.n, sign);
  each_line(
      g.count(), plan,
      [&](int64_t l, int64_t lane, Cx<V>* x) {
        const Cx<R>* line = buf + g.base(l, g.n);
        for (int64_t j = 0; j < g.n; ++j) {
          x[j].re[lane] = line[j * g.inner].re;
          x[j].im[lane] = line[j * g.inner].im;
        }
      },
      [&](int64_t l, int64_t lane, const Cx<V>* y) {
        Cx<R>* line = buf + g.base(l, g.n);
        for (int64_t j = 0; j < g.n; ++j) line[j * g.inner] = {y[j].re[lane], y[j].im[lane]};
      });
}

// Multiplies the n values of `buf` (real or complex components) by `scale`.
template <typename R>
void scale_all(R* buf, int64_t n, double scale) {
  if (scale == 1.0) return;
  const R s = static_cast<R>(scale);
  parallel_for(0, n, 1 << 16, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) buf[i] *= s;
  });
}

// The normalisation factor of `normalization` (checked by the meta layer) for signal size n.
double norm_scale(int64_t normalization, double n) {
  if (n <= 0 || normalization == 0) return 1.0;
  return normalization == 1 ? 1.0 / std::sqrt(n) : 1.0 / n;
}

// Copies `src` into the contiguous `dst` of the same shape and dtype (a plain memcpy when `src`
// is contiguous too).
void copy_into(const Tensor& dst, const Tensor& src) {
  if (src.is_contiguous())
    std::memcpy(dst.data_ptr(), src.data_ptr(), static_cast<size_t>(src.numel()) * src.itemsize());
  else
    dst.copy_from(src);
}

// W_n^k = exp(sign 2 pi i k / n) for k in [0, n/2], computed in double.
template <typename R>
std::vector<Cx<R>> half_turn_twiddles(int64_t n, int sign) {
  std::vector<Cx<R>> w(static_cast<size_t>(n / 2 + 1));
  for (int64_t k = 0; k <= n / 2; ++k) {
    const double a = 2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
    w[static_cast<size_t>(k)] = {static_cast<R>(std::cos(a)), static_cast<R>(sign * std::sin(a))};
  }
  return w;
}

// ---- c2c -------------------------------------------------------------------------------------

template <typename R>
void c2c_typed(const Tensor& out, const std::vector<int64_t>& dims, int sign, double scale) {
  auto* buf = static_cast<Cx<R>*>(out.data_ptr());
  for (int64_t d : dims) transform_dim(buf, out.shape(), d, sign);
  scale_all(reinterpret_cast<R*>(buf), 2 * out.numel(), scale);
}

// _fft_c2c(self, dim, normalization, forward)
void c2c_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const Tensor& self = a.tensor("self");
  if (out.numel() == 0) return;
  const std::vector<int64_t> dims = a.ints("dim");
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(self.size(d));
  const double scale = norm_scale(a.integer("normalization"), n);
  const int sign = a.flag("forward") ? -1 : +1;
  copy_into(out, self);
  if (out.dtype() == DType::Complex64)
    c2c_typed<float>(out, dims, sign, scale);
  else
    c2c_typed<double>(out, dims, sign, scale);
}

// ---- r2c -------------------------------------------------------------------------------------

template <typename R>
void r2c_typed(const Tensor& self, const Tensor& out, const std::vector<int64_t>& dims,
               double scale) {
  const Tensor x = self.contiguous();
  const R* in = x.data<R>();
  auto* o = static_cast<Cx<R>*>(out.data_ptr());
  const int64_t last = dims.back();
  const Lines g = lines_of(x.shape(), last);
  const int64_t out_len = out.size(last);
  using V = Lanes<R>;
  if (g.n % 2 == 0) {
    // Even n = 2m: the even and odd samples as one complex signal z of length m, Z = DFT(z);
    // A = DFT(evens) = (Z[k] + conj Z[m-k]) / 2, B = DFT(odds) = (Z[k] - conj Z[m-k]) / 2i,
    // X[k] = A[k] + W_n^k B[k] (indices mod m), X[n-k] = conj X[k].
    const int64_t m = g.n / 2;
    const Fft1d<R> plan(m, -1);
    const std::vector<Cx<R>> wn = half_turn_twiddles<R>(g.n, -1);
    each_line(
        g.count(), plan,
        [&](int64_t l, int64_t lane, Cx<V>* zs) {
          const R* line = in + g.base(l, g.n);
          for (int64_t j = 0; j < m; ++j) {
            zs[j].re[lane] = line[2 * j * g.inner];
            zs[j].im[lane] = line[(2 * j + 1) * g.inner];
          }
        },
        [&](int64_t l, int64_t lane, const Cx<V>* zs) {
          Cx<R>* dst = o + g.base(l, out_len);
          for (int64_t k = 0; k < out_len; ++k) {
            const int64_t kk = k <= m ? k : g.n - k;
            const int64_t a = kk == m ? 0 : kk, b = kk == 0 ? 0 : m - kk;  // kk, -kk mod m
            const Cx<R> z = {zs[a].re[lane], zs[a].im[lane]};
            const Cx<R> zc = {zs[b].re[lane], -zs[b].im[lane]};
            const Cx<R> e = {R(0.5) * (z.re + zc.re), R(0.5) * (z.im + zc.im)};
            const Cx<R> d = {R(0.5) * (z.im - zc.im), R(-0.5) * (z.re - zc.re)};  // (z - zc) / 2i
            const Cx<R> xk = e + mul(d, wn[static_cast<size_t>(kk)]);
            dst[k * g.inner] = k <= m ? xk : Cx<R>{xk.re, -xk.im};
          }
        });
  } else {
    const Fft1d<R> plan(g.n, -1);
    each_line(
        g.count(), plan,
        [&](int64_t l, int64_t lane, Cx<V>* xs) {
          const R* line = in + g.base(l, g.n);
          for (int64_t j = 0; j < g.n; ++j) {
            xs[j].re[lane] = line[j * g.inner];
            xs[j].im[lane] = R(0);
          }
        },
        [&](int64_t l, int64_t lane, const Cx<V>* ys) {
          Cx<R>* dst = o + g.base(l, out_len);
          for (int64_t j = 0; j < out_len; ++j) dst[j * g.inner] = {ys[j].re[lane], ys[j].im[lane]};
        });
  }
  for (size_t i = 0; i + 1 < dims.size(); ++i) transform_dim(o, out.shape(), dims[i], -1);
  scale_all(reinterpret_cast<R*>(o), 2 * out.numel(), scale);
}

// _fft_r2c(self, dim, normalization, onesided)
void r2c_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const Tensor& self = a.tensor("self");
  if (out.numel() == 0) return;
  if (self.numel() == 0) {
    // An empty signal: each of its (one) outputs is the empty sum.
    std::memset(out.data_ptr(), 0, static_cast<size_t>(out.numel()) * out.itemsize());
    return;
  }
  const std::vector<int64_t> dims = a.ints("dim");
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(self.size(d));
  const double scale = norm_scale(a.integer("normalization"), n);
  if (self.dtype() == DType::Float32)
    r2c_typed<float>(self, out, dims, scale);
  else
    r2c_typed<double>(self, out, dims, scale);
}

// ---- c2r -------------------------------------------------------------------------------------

template <typename R>
void c2r_typed(const Tensor& self, const Tensor& out, const std::vector<int64_t>& dims,
               double scale) {
  const int64_t last = dims.back();
  const int64_t n = out.size(last), half = n / 2 + 1;
  // The entries the transform reads, contiguous; every dim but the last transformed in place.
  const Tensor work = Tensor::uninitialized(
      [&] {
        Shape s = self.shape();
        s[static_cast<size_t>(last)] = half;
        return s;
      }(),
      self.dtype());
  copy_into(work, self.slice(last, 0, half));
  auto* w = static_cast<Cx<R>*>(work.data_ptr());
  for (size_t i = 0; i + 1 < dims.size(); ++i) transform_dim(w, work.shape(), dims[i], +1);
  R* o = out.data<R>();
  const Lines g = lines_of(work.shape(), last);
  using V = Lanes<R>;
  if (n % 2 == 0) {
    // Even n = 2m: with X[0] and X[m] real, P = X[k] + conj X[m-k] = 2 DFT(evens)[k] and
    // Q = (X[k] - conj X[m-k]) W_n^-k = 2 DFT(odds)[k]; the backward transform of P + iQ
    // (length m) holds n x[2j] + i n x[2j+1].
    const int64_t m = n / 2;
    const Fft1d<R> plan(m, +1);
    const std::vector<Cx<R>> wn = half_turn_twiddles<R>(n, +1);
    each_line(
        g.count(), plan,
        [&](int64_t l, int64_t lane, Cx<V>* zs) {
          const Cx<R>* line = w + g.base(l, half);
          auto entry = [&](int64_t k) {
            const Cx<R> z = line[k * g.inner];
            return k == 0 || k == m ? Cx<R>{z.re, R(0)} : z;
          };
          for (int64_t k = 0; k < m; ++k) {
            const Cx<R> xk = entry(k), xc = entry(m - k);
            const Cx<R> p = {xk.re + xc.re, xk.im - xc.im};
            const Cx<R> q = mul(Cx<R>{xk.re - xc.re, xk.im + xc.im}, wn[static_cast<size_t>(k)]);
            zs[k].re[lane] = p.re - q.im;
            zs[k].im[lane] = p.im + q.re;
          }
        },
        [&](int64_t l, int64_t lane, const Cx<V>* zs) {
          R* dst = o + g.base(l, n);
          for (int64_t j = 0; j < m; ++j) {
            dst[2 * j * g.inner] = zs[j].re[lane];
            dst[(2 * j + 1) * g.inner] = zs[j].im[lane];
          }
        });
  } else {
    const Fft1d<R> plan(n, +1);
    each_line(
        g.count(), plan,
        [&](int64_t l, int64_t lane, Cx<V>* xs) {
          const Cx<R>* line = w + g.base(l, half);
          xs[0].re[lane] = line[0].re;
          xs[0].im[lane] = R(0);
          for (int64_t k = 1; k < (n + 1) / 2; ++k) {
            const Cx<R> z = line[k * g.inner];
            xs[k].re[lane] = z.re;
            xs[k].im[lane] = z.im;
            xs[n - k].re[lane] = z.re;
            xs[n - k].im[lane] = -z.im;
          }
        },
        [&](int64_t l, int64_t lane, const Cx<V>* ys) {
          R* dst = o + g.base(l, n);
          for (int64_t t = 0; t < n; ++t) dst[t * g.inner] = ys[t].re[lane];
        });
  }
  scale_all(o, out.numel(), scale);
}

// _fft_c2r(self, dim, normalization, last_dim_size)
void c2r_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const Tensor& self = a.tensor("self");
  if (out.numel() == 0) return;
  const std::vector<int64_t> dims = a.ints("dim");
  double n = static_cast<double>(out.size(dims.back()));
  for (size_t i = 0; i + 1 < dims.size(); ++i) n *= static_cast<double>(self.size(dims[i]));
  const double scale = norm_scale(a.integer("normalization"), n);
  if (self.dtype() == DType::Complex64)
    c2r_typed<float>(self, out, dims, scale);
  else
    c2r_typed<double>(self, out, dims, scale);
}

// ---- complex views ---------------------------------------------------------------------------

// Component `part` (0 real, 1 imaginary) of complex `t`: a real view, strides doubled.
Tensor component(const Tensor& t, int64_t part) {
  Shape strides = t.strides();
  for (int64_t& s : strides) s *= 2;
  return Tensor::from_storage(t.storage(), 2 * t.offset() + part, t.shape(), strides,
                              to_real(t.dtype()));
}

Values view_as_real_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  op.run_meta(a);
  const Tensor& self = a.tensor("self");
  Shape shape = self.shape(), strides = self.strides();
  for (int64_t& s : strides) s *= 2;
  shape.push_back(2);
  strides.push_back(1);
  return {Tensor::from_storage(self.storage(), 2 * self.offset(), shape, strides,
                               to_real(self.dtype()))};
}

Values view_as_complex_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  op.run_meta(a);
  const Tensor& self = a.tensor("self");
  Shape shape = self.shape(), strides = self.strides();
  shape.pop_back();
  strides.pop_back();
  for (int64_t& s : strides) s /= 2;
  return {Tensor::from_storage(self.storage(), self.offset() / 2, shape, strides,
                               *to_complex(self.dtype()))};
}

Values real_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  op.run_meta(a);
  const Tensor& self = a.tensor("self");
  if (!is_complex(self.dtype()))
    return {self.as_strided(self.shape(), self.strides(), self.offset())};
  return {component(self, 0)};
}

Values imag_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  op.run_meta(a);
  return {component(a.tensor("self"), 1)};
}

}  // namespace

void register_fft_kernels(KernelTable& t) {
  const std::vector<DType> complex = {DType::Complex64, DType::Complex128};
  // f16, bf16 and integral inputs of r2c, and c32 of c2c / c2r, raise in the meta layer (CPU
  // FFTs are float and double only); the kernels take the calls to raise.
  const std::vector<DType> real_inputs = {DType::Bool,    DType::UInt8,    DType::Int8,
                                          DType::Int16,   DType::Int32,    DType::Int64,
                                          DType::Float16, DType::BFloat16, DType::Float32,
                                          DType::Float64, DType::Complex64};
  const std::vector<DType> complex_inputs = {DType::Complex32, DType::Complex64, DType::Complex128,
                                             DType::Float32};
  t.add("aten._fft_r2c.default", {.dtypes = real_inputs, .run_into = r2c_kernel});
  t.add("aten._fft_c2c.default", {.dtypes = complex_inputs, .run_into = c2c_kernel});
  t.add("aten._fft_c2r.default", {.dtypes = complex_inputs, .run_into = c2r_kernel});
  const std::vector<DType> every = {
      DType::Bool,      DType::UInt8,     DType::Int8,      DType::Int16,   DType::Int32,
      DType::Int64,     DType::Float16,   DType::BFloat16,  DType::Float32, DType::Float64,
      DType::Complex32, DType::Complex64, DType::Complex128};
  t.add("aten.view_as_real.default", {view_as_real_kernel, nullptr, every});
  t.add("aten.view_as_complex.default", {view_as_complex_kernel, nullptr, every});
  t.add("aten.real.default", {real_kernel, nullptr, every});
  t.add("aten.imag.default", {imag_kernel, nullptr, every});
}

}  // namespace crucible::cpu

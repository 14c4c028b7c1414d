// Op family: fft. ATen's FFT primitives _fft_r2c, _fft_c2r and _fft_c2c (what torch.fft.*
// lowers to), and the complex views view_as_real, view_as_complex, real and imag
// (fft_views.cpp).
//
// Reference: a direct O(n^2) DFT in double per transformed dim (a multi-dim transform is
// applied one dim at a time, which is exact in exact arithmetic), twiddles taken from a table
// indexed by (j * k) mod n so that they are accurate to a rounding. Outputs are contiguous
// and round once to the output dtype.
//
// ATen conventions (aten/src/ATen/native/mkl/SpectralOps.cpp, PyTorch 2.x CPU):
//  - `dim` is already wrapped by torch.fft (non-negative); a negative, out-of-range or
//    repeated dim raises here (pocketfft: "bad axis number" / "axis specified repeatedly";
//    MKL reads out of bounds);
//  - normalization 0: none, 1: 1/sqrt(n), 2: 1/n, with n the product of the signal sizes
//    (for c2r: the output's sizes, last_dim_size in the last dim); anything else raises
//    "Unsupported normalization type";
//  - r2c: real floating input (f32, f64); the output is the complex type of the input's;
//    onesided keeps n/2 + 1 entries of the last dim, otherwise the full Hermitian spectrum;
//  - c2c: complex input; forward uses exp(-2 pi i jk/n), backward exp(+2 pi i jk/n);
//  - c2r: complex input; a c2c backward over all but the last dim, then a 1-D complex-to-real
//    transform of length last_dim_size over the last dim, which reads its first
//    last_dim_size/2 + 1 entries and ignores the imaginary parts of entry 0 and (even length)
//    of the Nyquist entry, as pocketfft and MKL do;
//  - CPU FFT supports float and double only: f16/bf16 (and c32) raise (on CUDA, half needs
//    power-of-two sizes: the FNet trace's [1, 512, 768] c32 transform raises there too).
#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "crucible/compare/compare.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/fft_internal.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"

namespace crucible {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary
using cd = std::complex<double>;

// A dense row-major complex buffer over `shape`.
struct Field {
  Shape shape;
  std::vector<cd> v;
};

Field load_field(const Tensor& t) {
  Field f{t.shape(), std::vector<cd>(static_cast<size_t>(t.numel()))};
  for (int64_t i = 0; i < t.numel(); ++i) f.v[i] = t.get_complex(i);
  return f;
}

void store_field(const Field& f, const Tensor& out) {
  for (int64_t i = 0; i < out.numel(); ++i) out.set_complex(i, f.v[i]);
}

// exp(sign * 2 pi i m / n) for m in [0, n).
std::vector<cd> twiddles(int64_t n, int sign) {
  std::vector<cd> w(static_cast<size_t>(n));
  for (int64_t m = 0; m < n; ++m) {
    const double a = 2.0 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n);
    w[m] = {std::cos(a), sign * std::sin(a)};
  }
  return w;
}

// Applies `line(in, out)` to every line of `f` along dim `d`, giving lines of `out_len`.
template <typename LineFn>
void per_line(Field& f, int64_t d, int64_t out_len, LineFn line) {
  const int64_t len = f.shape[d];
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= f.shape[i];
  for (size_t i = d + 1; i < f.shape.size(); ++i) inner *= f.shape[i];
  Field g{f.shape, {}};
  g.shape[d] = out_len;
  g.v.assign(static_cast<size_t>(outer * out_len * inner), cd{});
  std::vector<cd> in(static_cast<size_t>(len)), out(static_cast<size_t>(out_len));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      for (int64_t j = 0; j < len; ++j) in[j] = f.v[(o * len + j) * inner + k];
      line(in, out);
      for (int64_t j = 0; j < out_len; ++j) g.v[(o * out_len + j) * inner + k] = out[j];
    }
  }
  f = std::move(g);
}

// out[k] = sum_j x[j] exp(sign 2 pi i jk / n), k < out_len (n = the dim's size).
void dft_dim(Field& f, int64_t d, int sign, int64_t out_len) {
  const int64_t n = f.shape[d];
  if (n == 0) {
    // The sum over an empty signal is 0 (ATen leaves such outputs uninitialised).
    per_line(f, d, out_len, [](const std::vector<cd>&, std::vector<cd>& out) {
      std::fill(out.begin(), out.end(), cd{});
    });
    return;
  }
  const std::vector<cd> w = twiddles(n, sign);
  per_line(f, d, out_len, [&](const std::vector<cd>& in, std::vector<cd>& out) {
    for (int64_t k = 0; k < out_len; ++k) {
      cd acc{};
      for (int64_t j = 0; j < n; ++j) acc += in[j] * w[(j * k) % n];
      out[k] = acc;
    }
  });
}

// The 1-D complex-to-real inverse transform of length n along dim `d` (no normalisation).
void c2r_dim(Field& f, int64_t d, int64_t n) {
  const std::vector<cd> w = twiddles(std::max<int64_t>(n, 1), +1);
  const int64_t half = n / 2;
  per_line(f, d, n, [&](const std::vector<cd>& in, std::vector<cd>& out) {
    for (int64_t t = 0; t < n; ++t) {
      double acc = in[0].real();
      for (int64_t k = 1; k < (n + 1) / 2; ++k) acc += 2.0 * (in[k] * w[(k * t) % n]).real();
      if (n % 2 == 0 && half > 0) acc += (t % 2 ? -1.0 : 1.0) * in[half].real();
      out[t] = {acc, 0.0};
    }
  });
}

double norm_factor(int64_t normalization, double n) {
  switch (normalization) {
    case 0:
      return 1.0;
    case 1:
      return n > 0 ? 1.0 / std::sqrt(n) : 1.0;
    case 2:
      return n > 0 ? 1.0 / n : 1.0;
    default:
      op_error("Unsupported normalization type" + std::to_string(normalization));
  }
}

void scale(Field& f, double s) {
  if (s == 1.0) return;
  for (cd& z : f.v) z *= s;
}

// Checks the transformed dims: each in [0, ndim), none repeated; `need_one`: at least one.
std::vector<int64_t> fft_dims(const Value& v, int64_t ndim, bool need_one) {
  std::vector<int64_t> dims = v.to_int_list();
  if (need_one && dims.empty()) op_error("ArrayRef: attempted to access back() of empty list");
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(ndim, 0)), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= ndim) {
      op_error("bad axis number: FFT dim " + std::to_string(d) + " is out of range for a " +
               std::to_string(ndim) + "-d tensor (the _fft_* ops take wrapped, non-negative dims)");
    }
    if (seen[d]) op_error("axis specified repeatedly");
    seen[d] = true;
  }
  return dims;
}

// CPU FFT (MKL / pocketfft) computes in float and double only.
void check_fft_precision(DType t) {
  const DType r = to_real(t);
  if (r != DType::Float32 && r != DType::Float64)
    op_error("Unsupported dtype " + std::string(dtype_scalar_type_name(t)));
}

// The checked plan of one transform: its dims, normalisation factor and output.
struct FftPlan {
  std::vector<int64_t> dims;
  double scale = 1;
  Shape out_shape;
  DType out_dtype = DType::Float32;
};

FftPlan r2c_plan(const Args& args) {
  const Tensor& self = args.tensor("self");
  CRUCIBLE_CHECK(is_floating(self.dtype()),
                 "Expected self.is_floating_point() to be true, but got false.");
  FftPlan p;
  p.dims = fft_dims(args.value("dim"), self.dim(), true);
  const int64_t normalization = args.integer("normalization");
  const bool onesided = args.flag("onesided");
  check_fft_precision(self.dtype());
  double n = 1;
  for (int64_t d : p.dims) n *= static_cast<double>(self.size(d));
  p.scale = norm_factor(normalization, n);
  const int64_t last = p.dims.back();
  p.out_shape = self.shape();
  if (onesided) p.out_shape[static_cast<size_t>(last)] = self.size(last) / 2 + 1;
  p.out_dtype = *to_complex(self.dtype());
  return p;
}

// The transform into the output fft_meta describes (p.out_shape, contiguous, p.out_dtype).
void r2c_impl(const Args& args, const Values& outputs) {
  const Tensor& self = args.tensor("self");
  const FftPlan p = r2c_plan(args);
  Field f = load_field(self);
  const int64_t last = p.dims.back();
  dft_dim(f, last, -1, p.out_shape[static_cast<size_t>(last)]);
  for (size_t i = 0; i + 1 < p.dims.size(); ++i) dft_dim(f, p.dims[i], -1, f.shape[p.dims[i]]);
  scale(f, p.scale);
  store_field(f, outputs.at(0).tensor());
}

FftPlan c2c_plan(const Args& args) {
  const Tensor& self = args.tensor("self");
  CRUCIBLE_CHECK(is_complex(self.dtype()), "Expected self.is_complex() to be true, but got false.");
  FftPlan p;
  p.dims = fft_dims(args.value("dim"), self.dim(), false);
  const int64_t normalization = args.integer("normalization");
  check_fft_precision(self.dtype());
  double n = 1;
  for (int64_t d : p.dims) n *= static_cast<double>(self.size(d));
  p.scale = norm_factor(normalization, n);
  p.out_shape = self.shape();
  p.out_dtype = self.dtype();
  return p;
}

void c2c_impl(const Args& args, const Values& outputs) {
  const Tensor& self = args.tensor("self");
  const FftPlan p = c2c_plan(args);
  const int sign = args.flag("forward") ? -1 : +1;
  Field f = load_field(self);
  for (int64_t d : p.dims) dft_dim(f, d, sign, f.shape[d]);
  scale(f, p.scale);
  store_field(f, outputs.at(0).tensor());
}

FftPlan c2r_plan(const Args& args) {
  const Tensor& self = args.tensor("self");
  CRUCIBLE_CHECK(is_complex(self.dtype()), "Expected self.is_complex() to be true, but got false.");
  FftPlan p;
  p.dims = fft_dims(args.value("dim"), self.dim(), true);
  const int64_t normalization = args.integer("normalization");
  const int64_t last_dim_size = args.integer("last_dim_size");
  check_fft_precision(self.dtype());
  CRUCIBLE_CHECK(last_dim_size >= 0, "Trying to create tensor with negative dimension " +
                                         std::to_string(last_dim_size));
  const int64_t last = p.dims.back();
  CRUCIBLE_CHECK(self.size(last) >= last_dim_size / 2 + 1,
                 "_fft_c2r: the last transformed dim holds " + std::to_string(self.size(last)) +
                     " values, a real signal of length " + std::to_string(last_dim_size) +
                     " needs at least " + std::to_string(last_dim_size / 2 + 1));
  double n = static_cast<double>(last_dim_size);
  for (size_t i = 0; i + 1 < p.dims.size(); ++i) n *= static_cast<double>(self.size(p.dims[i]));
  p.scale = norm_factor(normalization, n);
  p.out_shape = self.shape();
  p.out_shape[static_cast<size_t>(last)] = last_dim_size;
  p.out_dtype = to_real(self.dtype());
  return p;
}

void c2r_impl(const Args& args, const Values& outputs) {
  const Tensor& self = args.tensor("self");
  const FftPlan p = c2r_plan(args);
  Field f = load_field(self);
  for (size_t i = 0; i + 1 < p.dims.size(); ++i) dft_dim(f, p.dims[i], +1, f.shape[p.dims[i]]);
  c2r_dim(f, p.dims.back(), p.out_shape[static_cast<size_t>(p.dims.back())]);
  scale(f, p.scale);
  store_field(f, outputs.at(0).tensor());
}

// The meta function of a transform with plan `plan`.
MetaFn fft_meta(FftPlan (*plan)(const Args&)) {
  return [plan](const Args& args) {
    const FftPlan p = plan(args);
    return Values{meta::fresh(p.out_shape, p.out_dtype)};
  };
}

// ---- comparison and cost ----------------------------------------------------------------

// The signal length n of a call (the product of the transformed sizes; c2r: last_dim_size in
// the last dim), or 1 when the arguments do not describe a valid transform.
double signal_length(const Args& a, bool c2r) {
  if (a.size() < 4 || !a.value("self").is_tensor()) return 1;
  const Tensor& t = a.tensor("self");
  double n = 1;
  const std::vector<int64_t> dims = a.ints("dim");
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= t.dim()) return 1;
    n *= c2r && i + 1 == dims.size() ? static_cast<double>(a.integer("last_dim_size"))
                                     : static_cast<double>(t.size(dims[i]));
  }
  return std::max(n, 1.0);
}

// For each element (logical index) of a tensor of `shape`, the signal it belongs to: its linear
// index over the dims that are not transformed (the input and the output of a transform agree
// on those dims, so the keys of both match).
std::vector<int64_t> signal_keys(const Shape& shape, const std::vector<int64_t>& dims) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  std::vector<bool> transformed(shape.size(), false);
  for (int64_t d : dims) {
    const int64_t w = d < 0 ? d + nd : d;
    if (w >= 0 && w < nd) transformed[static_cast<size_t>(w)] = true;
  }
  int64_t numel = 1;
  for (int64_t e : shape) numel *= e;
  std::vector<int64_t> keys(static_cast<size_t>(numel), 0);
  for (int64_t i = 0; i < numel; ++i) {
    int64_t rem = i, key = 0, mult = 1;
    for (int64_t d = nd - 1; d >= 0; --d) {
      const int64_t c = rem % shape[d];
      rem /= shape[d];
      if (!transformed[static_cast<size_t>(d)]) {
        key += c * mult;
        mult *= shape[d];
      }
    }
    keys[static_cast<size_t>(i)] = key;
  }
  return keys;
}

// What the precision of the computation allows for one signal x of length n. A fast transform
// in the output's precision is within eps * log2(n) * ||x||_2 of the exact value at every
// output element, and ||x||_2 <= sqrt(n) * max|x_k| (factor 2 of slack): `bound`. Its
// intermediates reach up to n * max|x_k|: where that passes the largest finite value, any
// element of the signal may come out infinite or NaN in one order of the sums and finite in
// another (an overflowing intermediate, or +max and -max cancelling first): `may_overflow`.
struct SignalLimits {
  double bound = 0;
  bool may_overflow = false;
};

std::vector<SignalLimits> signal_limits(const Tensor& x, const std::vector<int64_t>& keys, double n,
                                        const FloatInfo& fi) {
  int64_t nkeys = 0;
  for (int64_t k : keys) nkeys = std::max(nkeys, k + 1);
  std::vector<double> m(static_cast<size_t>(nkeys), 0.0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const cd z = x.get_complex(i);
    double& mk = m[static_cast<size_t>(keys[static_cast<size_t>(i)])];
    if (std::isfinite(z.real())) mk = std::max(mk, std::abs(z.real()));
    if (std::isfinite(z.imag())) mk = std::max(mk, std::abs(z.imag()));
  }
  std::vector<SignalLimits> out(m.size());
  for (size_t k = 0; k < m.size(); ++k) {
    out[k].bound = 2 * fi.eps * std::max(1.0, std::log2(n)) * std::sqrt(n) * m[k];
    out[k].may_overflow = n * m[k] >= fi.max;
  }
  return out;
}

// Whether the candidate's component `c` may stand for the reference's `r` within `lim`.
bool within_limits(double r, double c, const SignalLimits& lim) {
  if (std::isfinite(r) && std::isfinite(c)) return std::abs(c - r) <= lim.bound;
  return lim.may_overflow;
}

// Each output is a sum of n products: a fast transform's rounding error grows like
// eps * log2(n) * ||x||, about eps * log2(n) * sqrt(n) times the typical output for normal
// data, so the tolerances grow by sqrt(n) (documented choice; the log factor is absorbed in the
// per-dtype rtol's slack). The elementwise tolerances cannot judge signals with values near
// overflow (an output where +max and -max cancel is decided by the order of the sums, one near
// max may overflow in an intermediate), so an element also passes when it is within its
// signal's normwise limits (`SignalLimits`): for ordinary data about the elementwise tolerance,
// for near-max inputs far above it. Non-finite outputs of NaN or inf inputs depend on the order
// of the sums too: an element that is non-finite (in any part) in the reference must be
// non-finite in the candidate, unless its signal may overflow.
ComparePolicy fft_compare(const Schema& schema, bool c2r) {
  ComparePolicy c;
  c.tol_scale = [schema, c2r](const Values& a) {
    return std::sqrt(signal_length(Args(a, schema), c2r));
  };
  c.kind = ComparePolicy::Kind::Custom;
  c.custom = [schema, c2r](const Values& inputs, const Values& ref, const Values& cand) {
    const Args in(inputs, schema);
    std::vector<TensorCheck> checks;
    const double s = std::max(1.0, std::sqrt(signal_length(in, c2r)));
    for (size_t o = 0; o < ref.size(); ++o) {
      const std::string what = "output " + std::to_string(o);
      if (o >= cand.size() || !cand[o].is_tensor() || !ref[o].is_tensor()) {
        TensorCheck bad;
        bad.what = what;
        bad.passed = false;
        bad.reason = "missing tensor output " + std::to_string(o);
        checks.push_back(bad);
        continue;
      }
      const Tensor& r = ref[o].tensor();
      const Tensor& v = cand[o].tensor();
      if (r.shape() != v.shape() || r.dtype() != v.dtype()) {
        checks.push_back(compare_tensors(r, v, s, what));
        continue;
      }
      auto finite = [](cd z) { return std::isfinite(z.real()) && std::isfinite(z.imag()); };
      const DType comp = is_complex(r.dtype()) ? to_real(r.dtype()) : r.dtype();
      const FloatInfo fi = float_info(comp);
      const Tensor& x = in.tensor("self");
      const std::vector<int64_t> dims = in.ints("dim");
      const std::vector<int64_t> in_keys = signal_keys(x.shape(), dims);
      const std::vector<int64_t> out_keys = signal_keys(r.shape(), dims);
      const std::vector<SignalLimits> lims = signal_limits(x, in_keys, signal_length(in, c2r), fi);
      Tensor rr = r.clone(), vv = v.clone();
      for (int64_t i = 0; i < r.numel(); ++i) {
        const cd a = rr.get_complex(i), b = vv.get_complex(i);
        const size_t key = static_cast<size_t>(out_keys[static_cast<size_t>(i)]);
        if (!finite(a) && !finite(b)) {
          rr.set_complex(i, cd{});
          vv.set_complex(i, cd{});
        } else if (key < lims.size() && within_limits(a.real(), b.real(), lims[key]) &&
                   within_limits(a.imag(), b.imag(), lims[key])) {
          vv.set_complex(i, a);
        }
      }
      checks.push_back(compare_tensors(rr, vv, s, what));
    }
    return checks;
  };
  return c;
}

// 5 n log2(n) flops per complex transform of length n (the usual FFT count); bytes: the input
// and output once.
Cost fft_cost(const Args& a, const Values& out, bool c2r) {
  Cost c;
  if (a.size() == 0 || !a.value("self").is_tensor() || out.empty() || !out[0].is_tensor()) return c;
  const Tensor& in = a.tensor("self");
  const Tensor& o = out[0].tensor();
  const double n = signal_length(a, c2r);
  const double batches = static_cast<double>(std::max(in.numel(), o.numel())) / n;
  c.flops = 5.0 * n * std::log2(std::max(n, 2.0)) * batches;
  c.bytes = static_cast<double>(in.numel() * in.itemsize() + o.numel() * o.itemsize());
  return c;
}

}  // namespace

void register_fft_ops(OpRegistry& r) {
  {
    OpDef op = OpDef::from_schema(
        "aten::_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor",
        "fft");
    op.dtypes = {DType::Float32, DType::Float64};
    op.meta = fft_meta(r2c_plan);
    op.ref = structured_ref(op.meta, r2c_impl);
    op.samples = fft_r2c_samples;
    op.cost = [](const Args& a, const Values& o) { return fft_cost(a, o, false); };
    op.compare = fft_compare(op.schema, false);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> "
        "Tensor",
        "fft");
    op.dtypes = {DType::Complex64, DType::Complex128};
    op.meta = fft_meta(c2r_plan);
    op.ref = structured_ref(op.meta, c2r_impl);
    op.samples = fft_c2r_samples;
    op.cost = [](const Args& a, const Values& o) { return fft_cost(a, o, true); };
    op.compare = fft_compare(op.schema, true);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor",
        "fft");
    op.dtypes = {DType::Complex64, DType::Complex128};
    op.meta = fft_meta(c2c_plan);
    op.ref = structured_ref(op.meta, c2c_impl);
    op.samples = fft_c2c_samples;
    op.cost = [](const Args& a, const Values& o) { return fft_cost(a, o, false); };
    op.compare = fft_compare(op.schema, false);
    r.add(std::move(op));
  }
  register_complex_view_ops(r);
}

}  // namespace crucible

// The `cpu` backend's scatters along a dim: scatter (.src, .value, .reduce, .value_reduce),
// scatter_reduce.two (sum, prod, mean, amax, amin, with or without self) and masked_scatter.
// Destination-passing: the meta functions checked the arguments and sized the contiguous output;
// the kernels check only the index values, in the reference's order and with its message.
//
// A plain scatter (no reduction) copies self once and then writes each target element by
// width. A reduction works on a copy of self in its accumulation dtype and is converted back
// once at the end: f64 for floating sums, means and products (the reference's precision),
// f32 for floating amax/amin (exact: f32 holds every f16, bf16 and f32 value), wrapping i64
// for integral and bool as ATen's integer arithmetic. Contributions are applied in the
// index's row-major order, on one thread (targets along `dim` may collide).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/index_util.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_kernels.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace {

enum class Reduce { None, Sum, Prod, Mean, Amax, Amin };

// The reduce argument; its validity was checked by the meta function.
Reduce parse_reduce(const std::string& s) {
  if (s == "sum" || s == "add") return Reduce::Sum;
  if (s == "prod" || s == "multiply") return Reduce::Prod;
  if (s == "mean") return Reduce::Mean;
  if (s == "amax") return Reduce::Amax;
  if (s == "amin") return Reduce::Amin;
  internal_error("cpu scatter: unknown reduce " + s);
}

// Calls fn(offset in a, offset in b) for every index element in row-major order, checking
// each index value as it is used (the output is discarded on an error).
template <typename Fn>
void walk_targets(const IndexWalk& w, const int64_t* idx, int64_t bound, Fn fn) {
  const int64_t sa = w.step_a(), sd = w.as[w.dim], sb = w.bs[w.nd - 1];
  for (int64_t r = 0; r < w.rows; ++r) {
    const int64_t ra = w.row_a(r), rb = w.row_b(r);
    const int64_t* iv = idx + r * w.last;
    for (int64_t k = 0; k < w.last; ++k) {
      const int64_t v = iv[k];
      if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(bound)) [[unlikely]]
        index_out_of_bounds(v, w.dim, bound);
      fn(ra + k * sa + v * sd, rb + k * sb);
    }
  }
}

// A Scalar value as a 0-d tensor of `t` (converted as fill_ converts).
Tensor value_tensor(const Value& v, DType t) {
  Tensor out = Tensor::uninitialized({}, t);
  if (v.kind() == ValueKind::Float)
    store_from_double(out.data_ptr(), t, v.to_double());
  else
    store_from_int(out.data_ptr(), t, v.to_int());
  return out;
}

// Plain scatter: out = copy of self; out[target] = src element (bytes of one width).
void scatter_plain(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                   bool src_is_value, const Tensor& out) {
  copy_to_contiguous(self, out);
  if (index.numel() == 0) return;
  const IndexValues idx(index);
  const IndexWalk w = make_index_walk(index, dim, out, src_is_value ? Tensor() : src);
  const size_t isz = out.itemsize();
  char* o = static_cast<char*>(out.data_ptr());
  const char* s = static_cast<const char*>(src.data_ptr());
  walk_targets(w, idx.data(), size_or_1(self, dim), [&](int64_t ta, int64_t sb) {
    std::memcpy(o + ta * static_cast<int64_t>(isz), s + sb * static_cast<int64_t>(isz), isz);
  });
}

template <typename W>
inline W combine(Reduce r, W x, W v) {
  if constexpr (std::is_integral_v<W>) {
    switch (r) {
      case Reduce::Prod:
        return static_cast<W>(static_cast<uint64_t>(x) * static_cast<uint64_t>(v));
      case Reduce::Amax:
        return std::max(x, v);
      case Reduce::Amin:
        return std::min(x, v);
      default:
        return static_cast<W>(static_cast<uint64_t>(x) + static_cast<uint64_t>(v));
    }
  } else {
    switch (r) {
      case Reduce::Prod:
        return x * v;
      case Reduce::Amax:
        return (std::isnan(x) || std::isnan(v)) ? std::numeric_limits<W>::quiet_NaN()
                                                : std::max(x, v);
      case Reduce::Amin:
        return (std::isnan(x) || std::isnan(v)) ? std::numeric_limits<W>::quiet_NaN()
                                                : std::min(x, v);
      default:
        return x + v;
    }
  }
}

// The reduction into `acc` (a contiguous copy of self in W). Counts contributions per element
// when the mean or include_self=False needs them.
template <typename W>
void scatter_reduce_t(const Tensor& acc, const Tensor& src, const IndexWalk& w, const int64_t* idx,
                      int64_t bound, Reduce r, bool include_self, bool src_is_value) {
  W* o = acc.data<W>();
  const W* s = src.data<W>();
  const bool counted = r == Reduce::Mean || !include_self;
  std::vector<int32_t> count(counted ? static_cast<size_t>(acc.numel()) : 0, 0);
  walk_targets(w, idx, bound, [&](int64_t ta, int64_t sb) {
    const W v = s[src_is_value ? 0 : sb];
    if (counted && count[static_cast<size_t>(ta)]++ == 0 && !include_self) {
      o[ta] = v;
      return;
    }
    o[ta] = combine(r, o[ta], v);
  });
  if (r != Reduce::Mean) return;
  const int64_t n = acc.numel();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = count[static_cast<size_t>(i)];
    if (c == 0) continue;  // untouched: keeps self
    const int64_t d = c + (include_self ? 1 : 0);
    if constexpr (std::is_integral_v<W>) {
      // Floor division (ATen's div_ with rounding_mode='floor' for integers).
      const int64_t x = o[i];
      int64_t q = x / d;
      if (x % d != 0 && x < 0) --q;
      o[i] = q;
    } else {
      o[i] = o[i] / static_cast<double>(d);
    }
  }
}

// v rounded to f32 toward zero, with the lowest bit set when inexact ("round to odd"): the
// f32 -> f16/bf16 conversion of the result then rounds as a direct conversion of v would.
inline float round_to_odd(double v) {
  float f = static_cast<float>(v);
  if (!std::isfinite(f) || static_cast<double>(f) == v) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  uint32_t b = 0;
  std::memcpy(&b, &f, 4);
  b |= 1;
  std::memcpy(&f, &b, 4);
  return f;
}

// A contiguous f64 tensor into the contiguous f16/bf16 `out`, each value rounded once, through
// the elementwise kernels' vector converters in blocks that stay in L1.
void narrow16(const Tensor& acc, const Tensor& out) {
  const PwConvert& c = pw_kernels().convert;
  const auto conv = out.dtype() == DType::Float16 ? c.f32_to_f16 : c.f32_to_bf16;
  const double* in = acc.data<double>();
  auto* o = static_cast<uint16_t*>(out.data_ptr());
  parallel_for(0, acc.numel(), int64_t{1} << 15, [&](int64_t i0, int64_t i1) {
    constexpr int64_t kSub = 1024;
    float buf[kSub];
    for (int64_t i = i0; i < i1; i += kSub) {
      const int64_t w = std::min(kSub, i1 - i);
      for (int64_t j = 0; j < w; ++j) buf[j] = round_to_odd(in[i + j]);
      conv(buf, o + i, w);
    }
  });
}

// `t` as a contiguous tensor of `work` (never `t` itself when `fresh`); f16/bf16 reach f64
// through f32 (both conversions exact and vectorised).
Tensor as_work(const Tensor& t, DType work, bool fresh) {
  const bool half = t.dtype() == DType::Float16 || t.dtype() == DType::BFloat16;
  if (half && work == DType::Float64) return fresh_copy(contiguous_as(t, DType::Float32), work);
  return fresh ? fresh_copy(t, work) : contiguous_as(t, work);
}

void scatter_reduced(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                     bool src_is_value, Reduce r, bool include_self, const Tensor& out) {
  const DType t = self.dtype();
  // amax/amin of floating values are exact in f32 (which holds f16 and bf16 values).
  const bool exact32 = (r == Reduce::Amax || r == Reduce::Amin) &&
                       (t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32);
  const DType work = exact32 ? DType::Float32 : is_floating(t) ? DType::Float64 : DType::Int64;
  // Accumulated in the output itself when it is the work dtype.
  Tensor acc = work == t ? out : as_work(self, work, true);
  if (work == t) copy_to_contiguous(self, acc);
  if (index.numel() > 0) {
    const Tensor s = as_work(src, work, false);
    const IndexValues idx(index);
    const IndexWalk w = make_index_walk(index, dim, acc, src_is_value ? Tensor() : s);
    const int64_t bound = size_or_1(self, dim);
    if (work == DType::Float64)
      scatter_reduce_t<double>(acc, s, w, idx.data(), bound, r, include_self, src_is_value);
    else if (work == DType::Float32)
      scatter_reduce_t<float>(acc, s, w, idx.data(), bound, r, include_self, src_is_value);
    else
      scatter_reduce_t<int64_t>(acc, s, w, idx.data(), bound, r, include_self, src_is_value);
  }
  // Each value rounded once.
  if (work == DType::Float64 && (t == DType::Float16 || t == DType::BFloat16))
    return narrow16(acc, out);
  if (work != t) copy_to_contiguous(acc, out);
}

// Into the meta function's output (self's shape, contiguous). `reduce`: whether the op has a
// `reduce` argument; `self_arg`: whether it has include_self (without it: included).
void run_scatter(const Args& a, const Values& outputs, bool src_is_value, bool reduce,
                 bool self_arg) {
  const Tensor& out = outputs[0].tensor();
  const Tensor& self = a.tensor("self");
  const int64_t dim = wrap_dim(a.integer("dim"), self.dim());
  const Tensor& index = a.tensor("index");
  const Tensor src = src_is_value ? value_tensor(a.value("value"), self.dtype()) : a.tensor("src");
  if (!reduce) return scatter_plain(self, dim, index, src, src_is_value, out);
  const Reduce r = parse_reduce(a.str("reduce"));
  const bool include_self = !self_arg || a.flag("include_self");
  scatter_reduced(self, dim, index, src, src_is_value, r, include_self, out);
}

// The overloads: a src tensor or a value; with a reduce argument; with include_self.
template <bool kValue, bool kReduce, bool kSelfArg>
void scatter_kernel(const OpDef&, const Args& a, const Values& out) {
  run_scatter(a, out, kValue, kReduce, kSelfArg);
}

// masked_scatter: the k-th true position of the mask (broadcast with self, row-major) takes
// source's k-th element; the others keep self.
void masked_scatter_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const Tensor& mask = a.tensor("mask");
  const Tensor& source = a.tensor("source");
  const Tensor& m = outputs[0].tensor();
  if (m.numel() == 0) return;
  // Computed row-major (in the output itself when it is contiguous), then laid out into it.
  const Tensor out = output_buffer(outputs[0], m.shape(), m.dtype());
  copy_to_contiguous(self.expand(m.shape()), out);
  const Tensor mk = contiguous_as(mask.expand(m.shape()), DType::Bool);
  const Tensor src = contiguous_as(source, source.dtype());
  const uint8_t* mp = mk.data<uint8_t>();
  const int64_t n = out.numel(), avail = src.numel();
  const auto isz = static_cast<int64_t>(out.itemsize());
  char* o = static_cast<char*>(out.data_ptr());
  const char* s = static_cast<const char*>(src.data_ptr());
  int64_t used = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (mp[i] == 0) continue;
    if (used >= avail) op_error("Number of elements of source < number of ones in mask");
    std::memcpy(o + i * isz, s + used * isz, static_cast<size_t>(isz));
    ++used;
  }
  store_output(out, outputs[0]);
}

std::vector<DType> every_dtype() {
  return {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
          DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_scatter_kernels(KernelTable& t) {
  for (auto [name, fn] : {std::pair{"aten.scatter.src", &scatter_kernel<false, false, false>},
                          {"aten.scatter.value", &scatter_kernel<true, false, false>},
                          {"aten.scatter.reduce", &scatter_kernel<false, true, false>},
                          {"aten.scatter.value_reduce", &scatter_kernel<true, true, false>},
                          {"aten.scatter_reduce.two", &scatter_kernel<false, true, true>},
                          {"aten.masked_scatter.default", &masked_scatter_kernel}})
    t.add(name, {.dtypes = every_dtype(), .run_into = fn});
}

}  // namespace crucible::cpu

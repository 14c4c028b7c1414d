// The `cpu` backend's quantize and dequantize steps per channel, per group and the per-token
// dequantize, and the float8 steps: one pass over a contiguous f32 (or integer) copy, the parameter
// of each element found from its position, split over the thread pool. Argument checks are the
// catalog's meta functions; values follow its definition (x / scale in double, round half to even,
// NaN to 0).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/quantized_kernels.h"
#include "crucible/core/error.h"
#include "crucible/core/half.h"

namespace crucible::cpu {
namespace {

// Which parameter an element (flat index of a contiguous tensor) uses.
struct ParamMap {
  int64_t inner = 1;  // elements per parameter run
  int64_t count = 1;  // parameters before the pattern repeats
  int64_t param(int64_t i) const { return (i / inner) % count; }
};

std::vector<double> as_doubles(const Tensor& t) {
  const Tensor c = t.contiguous().to(DType::Float64);
  return std::vector<double>(c.data<double>(), c.data<double>() + c.numel());
}

Tensor quantize(const Tensor& x0, const Tensor& out_meta, const std::vector<double>& s,
                const std::vector<double>& z, ParamMap map, double qmin, double qmax) {
  const Tensor x = x0.contiguous().to(DType::Float32);
  Tensor out = Tensor::uninitialized(x.shape(), out_meta.dtype());
  const float* xd = x.data<float>();
  const DType dt = out.dtype();
  parallel_for(0, x.numel(), 4096, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t p = map.param(i);
      const double t = std::nearbyint(xd[i] / s[p] + (z.empty() ? 0.0 : z[p]));
      const double v = std::clamp(std::isnan(t) ? 0.0 : t, qmin, qmax);
      if (dt == DType::Int8)
        out.data<int8_t>()[i] = static_cast<int8_t>(v);
      else if (dt == DType::UInt8)
        out.data<uint8_t>()[i] = static_cast<uint8_t>(v);
      else if (dt == DType::Int16)
        out.data<int16_t>()[i] = static_cast<int16_t>(v);
      else
        out.data<int32_t>()[i] = static_cast<int32_t>(v);
    }
  });
  return out;
}

Tensor dequantize(const Tensor& q0, DType out_dtype, const std::vector<double>& s,
                  const std::vector<double>& z, ParamMap map) {
  const Tensor q = q0.contiguous().to(DType::Int32);
  Tensor out = Tensor::uninitialized(q.shape(), DType::Float64);
  const int32_t* qd = q.data<int32_t>();
  double* od = out.data<double>();
  parallel_for(0, q.numel(), 4096, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t p = map.param(i);
      od[i] = (qd[i] - (z.empty() ? 0.0 : z[p])) * s[p];
    }
  });
  return out.to(out_dtype);
}

ParamMap per_token(const Tensor& x) {
  return {x.dim() == 0 ? 1 : std::max<int64_t>(x.size(x.dim() - 1), 1), INT64_MAX};
}

ParamMap per_channel(const Tensor& x, int64_t axis) {
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.dim(); ++d) inner *= x.size(d);
  return {std::max<int64_t>(inner, 1), x.size(axis)};
}

std::vector<double> opt_doubles(const Value& v) {
  const std::optional<Tensor> t = v.opt_tensor();
  return t ? as_doubles(*t) : std::vector<double>();
}

Values dequantize_per_token_kernel(const OpDef& op, const Values& a) {
  const Tensor meta = op.run_meta(a).at(0).tensor();
  const Tensor& q = a.at(0).tensor();
  return {dequantize(q, meta.dtype(), as_doubles(a.at(1).tensor()), as_doubles(a.at(2).tensor()),
                     per_token(q))};
}

Values quantize_per_channel_kernel(const OpDef& op, const Values& a) {
  const Tensor meta = op.run_meta(a).at(0).tensor();
  const Tensor& x = a.at(0).tensor();
  return {quantize(x, meta, as_doubles(a.at(1).tensor()), as_doubles(a.at(2).tensor()),
                   per_channel(x, a.at(3).to_int()), static_cast<double>(a.at(4).to_int()),
                   static_cast<double>(a.at(5).to_int()))};
}

Values dequantize_per_channel_kernel(const OpDef& op, const Values& a) {
  const Tensor meta = op.run_meta(a).at(0).tensor();
  const Tensor& q = a.at(0).tensor();
  return {dequantize(q, meta.dtype(), as_doubles(a.at(1).tensor()), opt_doubles(a.at(2)),
                     per_channel(q, a.at(3).to_int()))};
}

Values quantize_group_kernel(const OpDef& op, const Values& a) {
  const Tensor meta = op.run_meta(a).at(0).tensor();
  return {quantize(a.at(0).tensor(), meta, as_doubles(a.at(1).tensor()),
                   as_doubles(a.at(2).tensor()), {a.at(6).to_int(), INT64_MAX},
                   static_cast<double>(a.at(3).to_int()), static_cast<double>(a.at(4).to_int()))};
}

Values dequantize_group_kernel(const OpDef& op, const Values& a) {
  const Tensor meta = op.run_meta(a).at(0).tensor();
  return {dequantize(a.at(0).tensor(), meta.dtype(), as_doubles(a.at(1).tensor()),
                     opt_doubles(a.at(2)), {a.at(6).to_int(), INT64_MAX})};
}

// The scale of element i: tensor-wise, or per row of length k.
double scale_of(const std::vector<double>& s, int64_t i, int64_t k) {
  return s.size() == 1 ? s[0] : s[static_cast<size_t>(i / k)];
}

int64_t last_dim(const Tensor& x) {
  return x.dim() == 0 ? 1 : std::max<int64_t>(x.size(x.dim() - 1), 1);
}

Values quantize_float8_kernel(const OpDef& op, const Values& a) {
  const Tensor meta = op.run_meta(a).at(0).tensor();
  const Tensor x = a.at(0).tensor().contiguous().to(DType::Float32);
  const std::vector<double> s = as_doubles(a.at(1).tensor());
  const DType dt = meta.dtype();
  const bool e4 = dt == DType::Float8E4M3FN;
  const double mx = float_info(dt).max;
  const int64_t k = last_dim(x);
  Tensor out = Tensor::uninitialized(x.shape(), dt);
  const float* xd = x.data<float>();
  uint8_t* od = static_cast<uint8_t*>(out.data_ptr());
  parallel_for(0, x.numel(), 4096, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      double v = xd[i] / scale_of(s, i, k);
      if (!std::isnan(v)) v = std::clamp(v, -mx, mx);
      od[i] = e4 ? fp8e4m3fn_from_double(v) : fp8e5m2_from_double(v);
    }
  });
  return {out};
}

Values dequantize_float8_kernel(const OpDef& op, const Values& a) {
  const Tensor meta = op.run_meta(a).at(0).tensor();
  const Tensor q = a.at(0).tensor().contiguous();
  const std::vector<double> s = as_doubles(a.at(1).tensor());
  const bool e4 = q.dtype() == DType::Float8E4M3FN;
  const int64_t k = last_dim(q);
  // The product is formed in double and rounded once to the output dtype, as the reference.
  Tensor out = Tensor::uninitialized(q.shape(), DType::Float64);
  const uint8_t* qd = static_cast<const uint8_t*>(q.data_ptr());
  double* od = out.data<double>();
  parallel_for(0, q.numel(), 4096, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      od[i] = static_cast<double>(e4 ? fp8e4m3fn_to_float(qd[i]) : fp8e5m2_to_float(qd[i])) *
              scale_of(s, i, k);
  });
  return {out.to(meta.dtype())};
}

}  // namespace

void register_quantize_kernels(KernelTable& t) {
  const std::vector<DType> low = {DType::Float32, DType::BFloat16, DType::Float16};
  const std::vector<DType> ints = {DType::Int8, DType::UInt8, DType::Int32};
  t.add("quantized_decomposed.dequantize_per_token.default",
        {dequantize_per_token_kernel, nullptr, ints});
  t.add("quantized_decomposed.quantize_per_channel.default",
        {quantize_per_channel_kernel, nullptr, low});
  t.add("quantized_decomposed.dequantize_per_channel.default",
        {dequantize_per_channel_kernel, nullptr, ints});
  t.add("quantized_decomposed.quantize_per_channel_group.default",
        {quantize_group_kernel, nullptr, low});
  t.add("quantized_decomposed.quantize_float8.default", {quantize_float8_kernel, nullptr, low});
  t.add("quantized_decomposed.dequantize_float8.default",
        {dequantize_float8_kernel, nullptr, {DType::Float8E4M3FN, DType::Float8E5M2}});
  t.add("quantized_decomposed.dequantize_per_channel_group.default",
        {dequantize_group_kernel, nullptr, ints});
}

}  // namespace crucible::cpu

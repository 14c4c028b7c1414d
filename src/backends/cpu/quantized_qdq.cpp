// The `cpu` backend's quantize and dequantize steps per channel, per group and the per-token
// dequantize, and the float8 steps: one pass over a contiguous f32 (or integer) copy, the parameter
// of each element found from its position, split over the thread pool. Destination-passing: the
// meta functions checked the call and sized the outputs; values follow the catalog's definition
// (x / scale in double, round half to even, NaN to 0).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/quantized_deq.h"
#include "backends/cpu/quantized_kernels.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/error.h"
#include "crucible/core/half.h"
#include "crucible/ops/args.h"

namespace crucible::cpu::qk {

// Round to nearest, ties to even, by keeping the format's mantissa bits of the double (the
// carry of the rounding moves into the exponent by itself); below the smallest normal the
// quantum is fixed and nearbyint rounds.
uint8_t e4m3_from_double(double v) {
  const auto sign = static_cast<uint8_t>((std::bit_cast<uint64_t>(v) >> 63) << 7);
  const double a = std::fabs(v);
  if (a < 0x1p-6)
    return static_cast<uint8_t>(sign | static_cast<uint8_t>(std::nearbyint(a * 0x1p9)));
  uint64_t b = std::bit_cast<uint64_t>(a);
  b += ((uint64_t{1} << 48) - 1) + ((b >> 49) & 1);
  const auto e = static_cast<int>(b >> 52) - 1023;
  return static_cast<uint8_t>(sign | ((e + 7) << 3) | ((b >> 49) & 7));
}

uint8_t e5m2_from_double(double v) {
  const auto sign = static_cast<uint8_t>((std::bit_cast<uint64_t>(v) >> 63) << 7);
  const double a = std::fabs(v);
  if (a < 0x1p-14)
    return static_cast<uint8_t>(sign | static_cast<uint8_t>(std::nearbyint(a * 0x1p16)));
  uint64_t b = std::bit_cast<uint64_t>(a);
  b += ((uint64_t{1} << 49) - 1) + ((b >> 50) & 1);
  const auto e = static_cast<int>(b >> 52) - 1023;
  return static_cast<uint8_t>(sign | ((e + 15) << 2) | ((b >> 50) & 3));
}

}  // namespace crucible::cpu::qk

namespace crucible::cpu {
namespace {

// Which parameter an element (flat index of a contiguous tensor) uses.
struct ParamMap {
  int64_t inner = 1;  // elements per parameter run
  int64_t count = 1;  // parameters before the pattern repeats
  int64_t param(int64_t i) const { return (i / inner) % count; }
};

// A buffer of dtype `dt` for the output `out` (out itself when it is contiguous of dt), which
// store_output rounds into out.
Tensor buffer_for(const Tensor& out, DType dt) {
  return output_buffer(Value(out), out.shape(), dt);
}

std::vector<double> as_doubles(const Tensor& t) {
  const Tensor c = t.contiguous().to(DType::Float64);
  return std::vector<double>(c.data<double>(), c.data<double>() + c.numel());
}

void quantize(const Tensor& x0, const Tensor& result, const std::vector<double>& s,
              const std::vector<double>& z, ParamMap map, double qmin, double qmax) {
  const Tensor x = x0.contiguous().to(DType::Float32);
  const Tensor out = buffer_for(result, result.dtype());
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
  store_output(out, Value(result));
}

// An f32 dequantize of 8-bit or int32 values: run by run of elements sharing a parameter,
// each run one call of the vector loops (the same double arithmetic, rounded once).
void dequantize_f32(const Tensor& q0, const std::vector<double>& s, const std::vector<double>& z,
                    ParamMap map, const Tensor& result) {
  const Tensor q = q0.contiguous();
  const Tensor out = buffer_for(result, DType::Float32);
  float* od = out.data<float>();
  const QuantDeqKernels& deq = quant_deq_kernels();
  const DType dt = q.dtype();
  const void* qd = q.data_ptr();
  parallel_for(0, q.numel(), 16384, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1;) {
      const int64_t p = map.param(i);
      const int64_t len = std::min(i1, (i / map.inner + 1) * map.inner) - i;
      const double zp = z.empty() ? 0.0 : z[static_cast<size_t>(p)];
      const double sc = s[static_cast<size_t>(p)];
      if (dt == DType::UInt8)
        deq.affine_u8(static_cast<const uint8_t*>(qd) + i, len, zp, sc, od + i);
      else if (dt == DType::Int8)
        deq.affine_i8(static_cast<const int8_t*>(qd) + i, len, zp, sc, od + i);
      else
        deq.affine_i32(static_cast<const int32_t*>(qd) + i, len, zp, sc, od + i);
      i += len;
    }
  });
  store_output(out, Value(result));
}

void dequantize(const Tensor& q0, const Tensor& result, const std::vector<double>& s,
                const std::vector<double>& z, ParamMap map) {
  const DType in = q0.dtype();
  if (result.dtype() == DType::Float32 &&
      (in == DType::UInt8 || in == DType::Int8 || in == DType::Int32))
    return dequantize_f32(q0, s, z, map, result);
  const Tensor q = q0.contiguous().to(DType::Int32);
  const Tensor out = buffer_for(result, DType::Float64);
  const int32_t* qd = q.data<int32_t>();
  double* od = out.data<double>();
  parallel_for(0, q.numel(), 4096, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t p = map.param(i);
      od[i] = (qd[i] - (z.empty() ? 0.0 : z[p])) * s[p];
    }
  });
  store_output(out, Value(result));
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

void dequantize_per_token_kernel(const OpDef&, const Args& a, const Values& out) {
  const Tensor& q = a.tensor("input");
  dequantize(q, out[0].tensor(), as_doubles(a.tensor("scales")),
             as_doubles(a.tensor("zero_points")), per_token(q));
}

void quantize_per_channel_kernel(const OpDef&, const Args& a, const Values& out) {
  const Tensor& x = a.tensor("input");
  quantize(x, out[0].tensor(), as_doubles(a.tensor("scales")), as_doubles(a.tensor("zero_points")),
           per_channel(x, a.integer("axis")), static_cast<double>(a.integer("quant_min")),
           static_cast<double>(a.integer("quant_max")));
}

void dequantize_per_channel_kernel(const OpDef&, const Args& a, const Values& out) {
  const Tensor& q = a.tensor("input");
  dequantize(q, out[0].tensor(), as_doubles(a.tensor("scales")),
             opt_doubles(a.value("zero_points")), per_channel(q, a.integer("axis")));
}

void quantize_group_kernel(const OpDef&, const Args& a, const Values& out) {
  quantize(a.tensor("input"), out[0].tensor(), as_doubles(a.tensor("scales")),
           as_doubles(a.tensor("zero_points")), {a.integer("group_size"), INT64_MAX},
           static_cast<double>(a.integer("quant_min")),
           static_cast<double>(a.integer("quant_max")));
}

void dequantize_group_kernel(const OpDef&, const Args& a, const Values& out) {
  dequantize(a.tensor("input"), out[0].tensor(), as_doubles(a.tensor("scales")),
             opt_doubles(a.value("zero_points")), {a.integer("group_size"), INT64_MAX});
}

// Where each element finds its scale (TorchAO's block-wise expansion; the meta function has
// checked the shapes): one element for all, or, for row r of the last dim and element j of it,
// base(r) + j / block.
class ScaleMap {
 public:
  ScaleMap(const Shape& shape, const Shape& scale_shape, int64_t scale_numel)
      : shape_(shape), scale_(scale_shape), single_(scale_numel == 1) {
    k_ = shape.empty() ? 1 : std::max<int64_t>(shape.back(), 1);
    if (!single_ && !shape.empty()) block_ = shape.back() / std::max<int64_t>(scale_.back(), 1);
  }
  int64_t row_len() const { return k_; }
  int64_t base(int64_t row) const {
    if (single_ || shape_.size() <= 1) return 0;
    int64_t index = 0, stride = scale_.back();
    for (int64_t d = static_cast<int64_t>(shape_.size()) - 2; d >= 0; --d) {
      const auto u = static_cast<size_t>(d);
      const int64_t at = row % shape_[u];
      row /= shape_[u];
      index += at / (shape_[u] / scale_[u]) * stride;
      stride *= scale_[u];
    }
    return index;
  }
  int64_t at(int64_t base, int64_t j) const { return single_ ? 0 : base + j / block_; }
  // The end of the run of a row's elements that share element j's scale.
  int64_t run_end(int64_t j) const {
    return single_ ? k_ : std::min(k_, (j / block_ + 1) * block_);
  }

 private:
  Shape shape_, scale_;
  bool single_;
  int64_t k_ = 1, block_ = 1;
};

void quantize_float8_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& meta = outputs[0].tensor();
  const Tensor x = a.tensor("tensor").contiguous().to(DType::Float32);
  const Tensor& scale = a.tensor("scale");
  const std::vector<double> s = as_doubles(scale);
  const ScaleMap map(x.shape(), scale.shape(), scale.numel());
  const DType dt = meta.dtype();
  const double mx = float_info(dt).max;
  const int64_t k = map.row_len();
  const float* xd = x.data<float>();
  if (dt == DType::Float8E4M3FN || dt == DType::Float8E5M2) {
    // Quotients in double, rounded once to the float8 code, written directly.
    const bool e4 = dt == DType::Float8E4M3FN;
    const Tensor out = buffer_for(meta, dt);
    uint8_t* od = static_cast<uint8_t*>(out.data_ptr());
    parallel_for(0, x.numel() / k, std::max<int64_t>(1, 4096 / k), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t base = map.base(r);
        for (int64_t j = 0; j < k;) {
          const double sc = s[static_cast<size_t>(map.at(base, j))];
          const int64_t e = map.run_end(j);
          for (; j < e; ++j) {
            const double v = xd[r * k + j] / sc;
            od[r * k + j] = std::isnan(v) ? (e4 ? fp8e4m3fn_from_double(v) : fp8e5m2_from_double(v))
                            : e4          ? qk::e4m3_from_double(std::clamp(v, -mx, mx))
                                          : qk::e5m2_from_double(std::clamp(v, -mx, mx));
          }
        }
      }
    });
    return store_output(out, Value(meta));
  }
  // Quotients in double, rounded once to the target dtype.
  const Tensor wide = buffer_for(meta, DType::Float64);
  double* wd = wide.data<double>();
  parallel_for(0, x.numel() / k, std::max<int64_t>(1, 4096 / k), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t base = map.base(r);
      for (int64_t j = 0; j < k; ++j) {
        double v = xd[r * k + j] / s[static_cast<size_t>(map.at(base, j))];
        if (!std::isnan(v)) v = std::clamp(v, -mx, mx);
        wd[r * k + j] = v;
      }
    }
  });
  store_output(wide, Value(meta));
}

void dequantize_float8_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& meta = outputs[0].tensor();
  const Tensor q = a.tensor("tensor").contiguous();
  const Tensor& scale = a.tensor("scale");
  const std::vector<double> s = as_doubles(scale);
  const ScaleMap map(q.shape(), scale.shape(), scale.numel());
  const int64_t k = map.row_len();
  const bool fp8 = q.dtype() == DType::Float8E4M3FN || q.dtype() == DType::Float8E5M2;
  const bool e4 = q.dtype() == DType::Float8E4M3FN;
  if (fp8 && scale.dtype() == DType::Float32 && meta.dtype() == DType::Float32) {
    // fp8 x f32 is exact in double, so one f32 multiply rounds as the reference does.
    const Tensor sf = scale.contiguous();
    const float* sd = sf.data<float>();
    const uint8_t* qd = static_cast<const uint8_t*>(q.data_ptr());
    const Tensor out = buffer_for(meta, DType::Float32);
    float* od = out.data<float>();
    const QuantDeqKernels& deq = quant_deq_kernels();
    parallel_for(0, q.numel() / k, std::max<int64_t>(1, 16384 / k), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t base = map.base(r);
        for (int64_t j = 0; j < k;) {
          const int64_t at = map.at(base, j);
          const int64_t e = map.run_end(j);
          deq.fp8_scaled(qd + r * k + j, e - j, e4, sd[at], od + r * k + j);
          j = e;
        }
      }
    });
    return store_output(out, Value(meta));
  }
  const Tensor wide_in = fp8 ? q : q.to(DType::Float64);
  // The product is formed in double and rounded once to the output dtype, as the reference.
  const Tensor out = buffer_for(meta, DType::Float64);
  double* od = out.data<double>();
  parallel_for(0, q.numel() / k, std::max<int64_t>(1, 4096 / k), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t base = map.base(r);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t i = r * k + j;
        double v;
        if (fp8) {
          const uint8_t bits = static_cast<const uint8_t*>(wide_in.data_ptr())[i];
          v = static_cast<double>(e4 ? fp8e4m3fn_to_float(bits) : fp8e5m2_to_float(bits));
        } else {
          v = wide_in.data<double>()[i];
        }
        od[i] = v * s[static_cast<size_t>(map.at(base, j))];
      }
    }
  });
  store_output(out, Value(meta));
}

}  // namespace

void register_quantize_kernels(KernelTable& t) {
  const std::vector<DType> low = {DType::Float32, DType::BFloat16, DType::Float16};
  const std::vector<DType> ints = {DType::Int8, DType::UInt8, DType::Int32};
  auto add = [&](const char* name, KernelIntoFn fn, std::vector<DType> dtypes) {
    t.add(name, {.dtypes = std::move(dtypes), .run_into = fn});
  };
  add("quantized_decomposed.dequantize_per_token.default", &dequantize_per_token_kernel, ints);
  add("quantized_decomposed.quantize_per_channel.default", &quantize_per_channel_kernel, low);
  add("quantized_decomposed.dequantize_per_channel.default", &dequantize_per_channel_kernel, ints);
  add("quantized_decomposed.quantize_per_channel_group.default", &quantize_group_kernel, low);
  add("torchao.quantize_affine_float8_non_decomposed.default", &quantize_float8_kernel,
      {DType::Float32, DType::BFloat16, DType::Float16, DType::Int32});
  add("torchao.dequantize_affine_float8_non_decomposed.default", &dequantize_float8_kernel,
      {DType::Float8E4M3FN, DType::Float8E5M2, DType::Float32});
  add("quantized_decomposed.dequantize_per_channel_group.default", &dequantize_group_kernel, ints);
}

}  // namespace crucible::cpu

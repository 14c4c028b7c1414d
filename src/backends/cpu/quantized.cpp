// The `cpu` backend's quantized family: _int_mm (AVX-512 VNNI vpdpbusd), _weight_int8pack_mm
// and _weight_int4pack_mm_for_cpu (decode-sized calls fused int8 -> f32 FMA; larger ones
// dequantize the weight once and run the f32 gemm), _convert_weight_to_int4pack_for_cpu,
// _scaled_mm (fp8 widened to f32, f32 gemm, scales and bias applied, rounded once), and the
// per-token quantize steps the dynamic recipes run on every call. Argument checks are the
// catalog's meta functions.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/quantized_kernels.h"
#include "crucible/core/error.h"
#include "ops/quantized_internal.h"

namespace crucible::cpu {
namespace {

// Decode-sized products (at most this many rows) run the fused int8 kernel.
constexpr int64_t kFusedRows = 8;

bool vnni() { return isa_level() == "avx512" && cpu_features().avx512vnni; }

Tensor as_f32(const Tensor& t) {
  return t.dtype() == DType::Float32 ? t.contiguous() : t.contiguous().to(DType::Float32);
}

Tensor finish(const Tensor& f32, DType dt) { return dt == DType::Float32 ? f32 : f32.to(dt); }

// C [m, n] = A [m, k] @ W^T for an f32 W [n, k].
void gemm_nt(const Tensor& a, const float* w, int64_t n, float* c) {
  const int64_t m = a.size(0), k = a.size(1);
  gemm_f32(m, n, k, 1.0f, {a.data<float>(), k, 1}, {w, 1, k}, 0.0f, c, n);
}

Values int_mm_kernel(const OpDef& op, const Values& call_values) {
  const Args args(call_values, op.schema);
  const Tensor out_meta = op.run_meta(args).at(0).tensor();
  const Tensor& self = args.tensor("self");
  const Tensor& mat2 = args.tensor("mat2");
  const int64_t m = self.size(0), k = self.size(1), n = mat2.size(1);
  Tensor out = Tensor::uninitialized({m, n}, DType::Int32);
  if (out.numel() == 0) return {out};
  if (k == 0) return {Tensor::zeros({m, n}, DType::Int32)};
  const Tensor a = self.contiguous();
  // W = mat2^T, row-major [n, k]: a linear weight's transpose is already that.
  const Tensor w = mat2.transpose(0, 1).contiguous();
  const int8_t* ad = a.data<int8_t>();
  const int8_t* wd = w.data<int8_t>();
  int32_t* cd = out.data<int32_t>();
  if (vnni()) {
    qk::int8_gemm_nt_vnni(m, n, k, ad, wd, cd, n);
    return {out};
  }
  parallel_for(0, n, 16, [&](int64_t j0, int64_t j1) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = j0; j < j1; ++j) {
        int32_t acc = 0;
        for (int64_t q = 0; q < k; ++q) acc += int32_t{ad[i * k + q]} * int32_t{wd[j * k + q]};
        cd[i * n + j] = acc;
      }
  });
  return {out};
}

Values weight_int8pack_mm_kernel(const OpDef& op, const Values& call_values) {
  const Args args(call_values, op.schema);
  op.run_meta(args);
  const Tensor& a0 = args.tensor("self");
  const Tensor& w = args.tensor("mat2");
  const int64_t m = a0.size(0), k = a0.size(1), n = w.size(0);
  const Tensor a = as_f32(a0), s = as_f32(args.tensor("scales"));
  Tensor c = Tensor::uninitialized({m, n}, DType::Float32);
  if (c.numel() == 0) return {finish(c, a0.dtype())};
  const int8_t* wd = w.data<int8_t>();
  const float* sd = s.data<float>();
  if (m <= kFusedRows && isa_level() == "avx512") {
    qk::int8_weight_gemv_avx512(m, n, k, a.data<float>(), wd, sd, c.data<float>());
    return {finish(c, a0.dtype())};
  }
  // Dequantize once (the scale folded into the weight) and multiply in f32.
  std::vector<float> wf(static_cast<size_t>(n * k));
  parallel_for(0, n, 16, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j)
      for (int64_t q = 0; q < k; ++q) wf[j * k + q] = static_cast<float>(wd[j * k + q]) * sd[j];
  });
  gemm_nt(a, wf.data(), n, c.data<float>());
  return {finish(c, a0.dtype())};
}

Values convert_int4pack_kernel(const OpDef& op, const Values& call_values) {
  const Args args(call_values, op.schema);
  const Tensor meta = op.run_meta(args).at(0).tensor();
  const Tensor w = args.tensor("self").contiguous();
  const int64_t n_total = w.size(0), k_total = w.size(1);
  Tensor out = Tensor::zeros(meta.shape(), DType::UInt8);
  uint8_t* od = out.data<uint8_t>();
  const int32_t* wd = w.data<int32_t>();
  const int64_t blocks = (n_total + quantized::kInt4BlockN - 1) / quantized::kInt4BlockN;
  parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      for (int64_t n = b * quantized::kInt4BlockN;
           n < std::min(n_total, (b + 1) * quantized::kInt4BlockN); ++n)
        for (int64_t k = 0; k < k_total; ++k) {
          const auto v = static_cast<uint8_t>(wd[n * k_total + k]);
          const quantized::NibblePlace p = quantized::int4_place(n, k, n_total, k_total);
          od[p.byte] |= p.high ? static_cast<uint8_t>(v << 4) : v;
        }
  });
  return {out};
}

Values weight_int4pack_mm_kernel(const OpDef& op, const Values& call_values) {
  const Args args(call_values, op.schema);
  op.run_meta(args);
  const Tensor& a0 = args.tensor("self");
  const Tensor& b = args.tensor("mat2");
  const int64_t group = args.integer("qGroupSize");
  const Tensor sz = as_f32(args.tensor("qScaleAndZeros"));
  const int64_t m = a0.size(0), k = a0.size(1), n = b.size(0);
  const Tensor a = as_f32(a0);
  Tensor c = Tensor::uninitialized({m, n}, DType::Float32);
  if (c.numel() == 0) return {finish(c, a0.dtype())};
  const uint8_t* bd = b.data<uint8_t>();
  const float* szd = sz.data<float>();
  // Dequantize W [n, k] once: (q - 8) * scale + zero per group.
  std::vector<float> wf(static_cast<size_t>(n * k));
  const int64_t blocks = (n + quantized::kInt4BlockN - 1) / quantized::kInt4BlockN;
  parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t blk = b0; blk < b1; ++blk)
      for (int64_t j = blk * quantized::kInt4BlockN;
           j < std::min(n, (blk + 1) * quantized::kInt4BlockN); ++j)
        for (int64_t q = 0; q < k; ++q) {
          const quantized::NibblePlace p = quantized::int4_place(j, q, n, k);
          const int v = p.high ? bd[p.byte] >> 4 : bd[p.byte] & 0xF;
          const int64_t g = q / group;
          wf[j * k + q] =
              static_cast<float>(v - 8) * szd[(g * n + j) * 2] + szd[(g * n + j) * 2 + 1];
        }
  });
  gemm_nt(a, wf.data(), n, c.data<float>());
  return {finish(c, a0.dtype())};
}

Values scaled_mm_kernel(const OpDef& op, const Values& call_values) {
  const Args args(call_values, op.schema);
  const Tensor meta = op.run_meta(args).at(0).tensor();
  const Tensor a = as_f32(args.tensor("self"));
  const Tensor b = as_f32(args.tensor("mat2"));
  const Tensor sa = as_f32(args.tensor("scale_a")), sb = as_f32(args.tensor("scale_b"));
  const std::optional<Tensor> bias = args.opt_tensor("bias");
  const std::optional<Tensor> scale_result = args.opt_tensor("scale_result");
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  Tensor c = Tensor::uninitialized({m, n}, DType::Float32);
  if (c.numel() == 0) return {finish(c, meta.dtype())};
  float* cd = c.data<float>();
  gemm_f32(m, n, k, 1.0f, {a.data<float>(), k, 1}, {b.data<float>(), n, 1}, 0.0f, cd, n);
  const bool rowwise = sa.numel() != 1 || sb.numel() != 1;
  const bool fp8_out = meta.dtype() == DType::Float8E4M3FN || meta.dtype() == DType::Float8E5M2;
  const float post = scale_result && fp8_out ? as_f32(*scale_result).data<float>()[0] : 1.0f;
  const Tensor bf = bias ? as_f32(*bias) : Tensor();
  const float* bd = bias ? bf.data<float>() : nullptr;
  const float* sad = sa.data<float>();
  const float* sbd = sb.data<float>();
  parallel_for(0, m, 16, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float v = cd[i * n + j] * (rowwise ? sad[i] * sbd[j] : sad[0] * sbd[0]);
        if (bd) v += bd[j];
        cd[i * n + j] = v * post;
      }
  });
  return {finish(c, meta.dtype())};
}

Values choose_qparams_kernel(const OpDef& op, const Values& call_values) {
  const Args args(call_values, op.schema);
  const Values meta = op.run_meta(args);
  const Tensor x = as_f32(args.tensor("input"));
  const int64_t k = x.size(x.dim() - 1), rows = k == 0 ? 0 : x.numel() / k;
  const DType st = meta[0].tensor().dtype();
  Tensor scales = Tensor::uninitialized(meta[0].tensor().shape(), DType::Float64);
  const float* xd = x.data<float>();
  double* sd = scales.data<double>();
  parallel_for(0, rows, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      float amax = 0;
      bool nan = false;
      for (int64_t q = 0; q < k; ++q) {
        const float v = std::fabs(xd[r * k + q]);
        nan |= std::isnan(v);
        amax = std::max(amax, v);
      }
      sd[r] = nan ? std::nan("") : std::max<double>(amax, 1e-5) / 127.0;
    }
  });
  return {scales.to(st), Tensor::zeros(meta[1].tensor().shape(), st)};
}

Values quantize_per_token_kernel(const OpDef& op, const Values& call_values) {
  const Args args(call_values, op.schema);
  const Tensor meta = op.run_meta(args).at(0).tensor();
  const Tensor x = as_f32(args.tensor("input"));
  const Tensor s = args.tensor("scales").contiguous().to(DType::Float64);
  const Tensor z = args.tensor("zero_points").contiguous().to(DType::Float64);
  const double qmin = static_cast<double>(args.integer("quant_min"));
  const double qmax = static_cast<double>(args.integer("quant_max"));
  const int64_t k = x.dim() == 0 ? 1 : x.size(x.dim() - 1);
  const int64_t rows = k == 0 ? 0 : x.numel() / k;
  Tensor out = Tensor::uninitialized(x.shape(), meta.dtype());
  const float* xd = x.data<float>();
  const double* sd = s.data<double>();
  const double* zd = z.data<double>();
  const DType dt = meta.dtype();
  if (dt == DType::Int8 && isa_level() == "avx512") {
    int8_t* od = out.data<int8_t>();
    parallel_for(0, rows, 16, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        qk::quantize_int8_avx512(xd + r * k, k, sd[r], zd[r], qmin, qmax, od + r * k);
    });
    return {out};
  }
  parallel_for(0, rows, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const double sc = sd[r], zp = zd[r];
      for (int64_t q = 0; q < k; ++q) {
        const double t = std::nearbyint(xd[r * k + q] / sc + zp);
        const double v = std::clamp(std::isnan(t) ? 0.0 : t, qmin, qmax);
        const int64_t i = r * k + q;
        if (dt == DType::Int8)
          out.data<int8_t>()[i] = static_cast<int8_t>(v);
        else if (dt == DType::UInt8)
          out.data<uint8_t>()[i] = static_cast<uint8_t>(v);
        else if (dt == DType::Int16)
          out.data<int16_t>()[i] = static_cast<int16_t>(v);
        else
          out.data<int32_t>()[i] = static_cast<int32_t>(v);
      }
    }
  });
  return {out};
}

}  // namespace

void register_quantized_kernels(KernelTable& t) {
  const std::vector<DType> low = {DType::Float32, DType::BFloat16, DType::Float16};
  t.add("aten._int_mm.default", {int_mm_kernel, nullptr, {DType::Int8}});
  t.add("aten._weight_int8pack_mm.default", {weight_int8pack_mm_kernel, nullptr, low});
  t.add("aten._convert_weight_to_int4pack_for_cpu.default",
        {convert_int4pack_kernel, nullptr, {DType::Int32}});
  t.add("aten._weight_int4pack_mm_for_cpu.default", {weight_int4pack_mm_kernel, nullptr, low});
  t.add("aten._scaled_mm.default",
        {scaled_mm_kernel, nullptr, {DType::Float8E4M3FN, DType::Float8E5M2}});
  t.add("quantized_decomposed.choose_qparams_per_token.default",
        {choose_qparams_kernel, nullptr, low});
  t.add("quantized_decomposed.quantize_per_token.default",
        {quantize_per_token_kernel, nullptr, low});
}

}  // namespace crucible::cpu

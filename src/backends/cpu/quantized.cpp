// The `cpu` backend's quantized family: _int_mm (AVX-512 VNNI vpdpbusd), _weight_int8pack_mm,
// _weight_int4pack_mm_for_cpu and _scaled_mm (up to 16 rows: the packed weight widened in
// registers, quantized_decode.h; otherwise read in strips or panels that are dequantized into an
// f32 buffer and multiplied there, quantized_matmul.h; _scaled_mm's scales and bias applied
// after, rounded once), _convert_weight_to_int4pack_for_cpu, and the
// per-token quantize steps the dynamic recipes run on every call. Argument checks are the
// catalog's meta functions.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/quantized_decode.h"
#include "backends/cpu/quantized_deq.h"
#include "backends/cpu/quantized_kernels.h"
#include "backends/cpu/quantized_matmul.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/error.h"
#include "crucible/ops/rules/int4_layout.h"

namespace crucible::cpu {
namespace {

bool vnni() { return isa_level() == "avx512" && cpu_features().avx512vnni; }

Tensor as_f32(const Tensor& t) {
  return t.dtype() == DType::Float32 ? t.contiguous() : t.contiguous().to(DType::Float32);
}

// The f32 buffer of a product's output: the output itself when it is f32 (store_output then
// rounds it into any other dtype).
Tensor f32_buffer(const Value& out) {
  return output_buffer(out, out.tensor().shape(), DType::Float32);
}

bool is_e4m3(DType t) { return t == DType::Float8E4M3FN; }

// Whether a product of m rows takes the register-fused AVX-512 loops (quantized_decode.h).
bool fused_decode(int64_t m) {
  const CpuFeatures& f = cpu_features();
  return m >= 1 && m <= qk::kFusedDecodeRows && isa_level() == "avx512" && f.avx512bw && f.avx512vl;
}

// Weight values per task of the fused loops (fewer stay on the calling thread).
constexpr int64_t kFusedTaskValues = int64_t{1} << 18;

// The fused row-major loops over W's rows, four at a time, spread over the pool; false when a
// tile gave up (an e4m3 NaN code).
bool fused_rows(qk::RowCode code, int64_t m, int64_t n, int64_t k, const float* a, const uint8_t* w,
                int64_t ldw, float* c) {
  const int64_t tiles = (n + 3) / 4;
  std::atomic<bool> ok{true};
  parallel_for(
      0, tiles, std::max<int64_t>(1, kFusedTaskValues / std::max<int64_t>(1, 4 * k)),
      [&](int64_t t0, int64_t t1) {
        if (!qk::fused_rows_avx512(code, m, t0 * 4, std::min(n, t1 * 4), k, a, k, w, ldw, c, n))
          ok = false;
      });
  return ok;
}

void int_mm_kernel(const OpDef&, const Args& args, const Values& outputs) {
  const Tensor& out = outputs[0].tensor();  // [m, n] int32, contiguous
  const Tensor& self = args.tensor("self");
  const Tensor& mat2 = args.tensor("mat2");
  const int64_t m = self.size(0), k = self.size(1), n = mat2.size(1);
  if (out.numel() == 0) return;
  if (k == 0) return fill_output(out, pattern_of_int(0, DType::Int32));
  const Tensor a = self.contiguous();
  // W = mat2^T, row-major [n, k]: a linear weight's transpose is already that.
  const Tensor w = mat2.transpose(0, 1).contiguous();
  const int8_t* ad = a.data<int8_t>();
  const int8_t* wd = w.data<int8_t>();
  int32_t* cd = out.data<int32_t>();
  if (vnni()) {
    qk::int8_gemm_nt_vnni(m, n, k, ad, wd, cd, n);
    return;
  }
  parallel_for(0, n, 16, [&](int64_t j0, int64_t j1) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = j0; j < j1; ++j) {
        int32_t acc = 0;
        for (int64_t q = 0; q < k; ++q) acc += int32_t{ad[i * k + q]} * int32_t{wd[j * k + q]};
        cd[i * n + j] = acc;
      }
  });
}

void weight_int8pack_mm_kernel(const OpDef&, const Args& args, const Values& outputs) {
  const Tensor& a0 = args.tensor("self");
  const Tensor& w = args.tensor("mat2");
  const int64_t m = a0.size(0), k = a0.size(1), n = w.size(0);
  const Tensor a = as_f32(a0), s = as_f32(args.tensor("scales"));
  const Tensor c = f32_buffer(outputs[0]);
  if (c.numel() == 0) return;
  const int8_t* wd = w.data<int8_t>();
  const float* sd = s.data<float>();
  const QuantDeqKernels& deq = quant_deq_kernels();
  // The int8 values widened exactly, the scales applied to the sums (the reference's order:
  // an infinite scale gives +-inf, not the NaN of an inf - inf inside the sum).
  WeightSource src;
  src.fill = [&](int64_t j0, int64_t j1, int64_t q0, int64_t q1, float* out, int64_t ld) {
    for (int64_t j = j0; j < j1; ++j)
      deq.int8_scaled(wd + j * k + q0, q1 - q0, 1.0f, out + (j - j0) * ld);
  };
  float* cd = c.data<float>();
  if (!fused_decode(m) || !fused_rows(qk::RowCode::Int8, m, n, k, a.data<float>(),
                                      reinterpret_cast<const uint8_t*>(wd), k, cd))
    quantized_matmul(m, n, k, a.data<float>(), src, cd, n);
  parallel_for(0, m, std::max<int64_t>(1, 16384 / n), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t j = 0; j < n; ++j) cd[i * n + j] *= sd[j];
  });
  store_output(c, outputs[0]);
}

void convert_int4pack_kernel(const OpDef&, const Args& args, const Values& outputs) {
  const Tensor w = args.tensor("self").contiguous();
  const int64_t n_total = w.size(0), k_total = w.size(1);
  const Tensor& out = outputs[0].tensor();
  fill_output(out, pattern_of_int(0, DType::UInt8));
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
}

void weight_int4pack_mm_kernel(const OpDef&, const Args& args, const Values& outputs) {
  const Tensor& a0 = args.tensor("self");
  const Tensor& b = args.tensor("mat2");
  const int64_t group = args.integer("qGroupSize");
  const Tensor sz = as_f32(args.tensor("qScaleAndZeros"));
  const int64_t m = a0.size(0), k = a0.size(1), n = b.size(0);
  const Tensor a = as_f32(a0);
  const Tensor c = f32_buffer(outputs[0]);
  if (c.numel() == 0) return;
  const uint8_t* bd = b.data<uint8_t>();
  const float* szd = sz.data<float>();
  const QuantDeqKernels& deq = quant_deq_kernels();
  constexpr int64_t kBlock = quantized::kInt4BlockN;
  // W^T's rows, block by block (64 columns, k-major) and group by group (one scale and zero
  // per column of a group).
  WeightSource src;
  src.k_major = true;
  src.align = kBlock;
  src.fill = [&](int64_t j0, int64_t j1, int64_t q0, int64_t q1, float* out, int64_t ld) {
    float sc[kBlock], ze[kBlock];
    for (int64_t jb = j0; jb < j1; jb += kBlock) {
      const int64_t width = std::min(kBlock, n - jb);
      const uint8_t* blk = bd + jb * k / 2;
      for (int64_t qa = q0; qa < q1;) {
        const int64_t g = qa / group, qb = std::min(q1, (g + 1) * group);
        for (int64_t d = 0; d < width; ++d) {
          sc[d] = szd[(g * n + jb + d) * 2];
          ze[d] = szd[(g * n + jb + d) * 2 + 1];
        }
        deq.int4_block(blk, width, qa, qb, sc, ze, out + (qa - q0) * ld + (jb - j0), ld);
        qa = qb;
      }
    }
  };
  float* cd = c.data<float>();
  const int64_t full = n / kBlock;  // full blocks; a last one of 16, 32 or 48 columns follows
  if (!fused_decode(m)) {
    quantized_matmul(m, n, k, a.data<float>(), src, cd, n);
  } else {
    parallel_for(0, full, std::max<int64_t>(1, kFusedTaskValues / std::max<int64_t>(1, kBlock * k)),
                 [&](int64_t b0, int64_t b1) {
                   qk::fused_int4_avx512(m, b0, b1, n, k, a.data<float>(), k, bd, szd, group, cd,
                                         n);
                 });
    if (full * kBlock < n) {
      const int64_t j0 = full * kBlock;
      WeightSource last = src;
      last.fill = [&](int64_t r0, int64_t r1, int64_t q0, int64_t q1, float* out, int64_t ld) {
        src.fill(j0 + r0, j0 + r1, q0, q1, out, ld);
      };
      quantized_matmul(m, n - j0, k, a.data<float>(), last, cd + j0, n);
    }
  }
  store_output(c, outputs[0]);
}

void scaled_mm_kernel(const OpDef&, const Args& args, const Values& outputs) {
  const Tensor& meta = outputs[0].tensor();
  const Tensor& a8 = args.tensor("self");
  const Tensor& b8 = args.tensor("mat2");
  const Tensor sa = as_f32(args.tensor("scale_a")), sb = as_f32(args.tensor("scale_b"));
  const std::optional<Tensor> bias = args.opt_tensor("bias");
  const std::optional<Tensor> scale_result = args.opt_tensor("scale_result");
  const int64_t m = a8.size(0), k = a8.size(1), n = b8.size(1);
  const Tensor c = f32_buffer(outputs[0]);
  if (c.numel() == 0) return;
  float* cd = c.data<float>();
  // The fp8 values widened exactly (their products and sums are then the f32 gemm's).
  const QuantDeqKernels& deq = quant_deq_kernels();
  const Tensor ac = a8.contiguous();
  Tensor a = Tensor::uninitialized({m, k}, DType::Float32);
  deq.fp8_scaled(static_cast<const uint8_t*>(ac.data_ptr()), m * k, is_e4m3(a8.dtype()), 1.0f,
                 a.data<float>());
  // mat2 [k, n] as W^T: column-major (a linear weight's transpose) gives W's rows, any other
  // layout is made contiguous and gives W^T's rows.
  const bool column_major = b8.stride(0) == 1 && k > 1;
  const Tensor bc = column_major ? b8 : b8.contiguous();
  const uint8_t* bd = static_cast<const uint8_t*>(bc.data_ptr());
  const int64_t ldb = column_major ? b8.stride(1) : n;
  const bool e4b = is_e4m3(b8.dtype());
  WeightSource src;
  src.k_major = !column_major;
  src.fill = [&](int64_t j0, int64_t j1, int64_t q0, int64_t q1, float* out, int64_t ld) {
    if (column_major)
      for (int64_t j = j0; j < j1; ++j)
        deq.fp8_scaled(bd + j * ldb + q0, q1 - q0, e4b, 1.0f, out + (j - j0) * ld);
    else
      for (int64_t q = q0; q < q1; ++q)
        deq.fp8_scaled(bd + q * ldb + j0, j1 - j0, e4b, 1.0f, out + (q - q0) * ld);
  };
  bool done = false;
  if (column_major && fused_decode(m)) {
    // e4m3 widens as value * 2^-8 there: the sums times 2^8 (exact) are the products' sums.
    done = fused_rows(e4b ? qk::RowCode::E4M3Over256 : qk::RowCode::E5M2, m, n, k, a.data<float>(),
                      bd, ldb, cd);
    if (done && e4b)
      for (int64_t i = 0; i < m * n; ++i) cd[i] *= 256.0f;
  }
  if (!done) quantized_matmul(m, n, k, a.data<float>(), src, cd, n);
  const bool rowwise = sa.numel() != 1 || sb.numel() != 1;
  const bool fp8_out = meta.dtype() == DType::Float8E4M3FN || meta.dtype() == DType::Float8E5M2;
  const float post = scale_result && fp8_out ? as_f32(*scale_result).data<float>()[0] : 1.0f;
  const Tensor bf = bias ? as_f32(*bias) : Tensor();
  const float* biasd = bias ? bf.data<float>() : nullptr;
  const float* sad = sa.data<float>();
  const float* sbd = sb.data<float>();
  parallel_for(0, m, 16, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float v = cd[i * n + j] * (rowwise ? sad[i] * sbd[j] : sad[0] * sbd[0]);
        if (biasd) v += biasd[j];
        cd[i * n + j] = v * post;
      }
  });
  store_output(c, outputs[0]);
}

void choose_qparams_kernel(const OpDef&, const Args& args, const Values& meta) {
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
  meta[0].tensor().copy_from(scales);
  fill_output(meta[1].tensor(), pattern_of_int(0, st));
}

void quantize_per_token_kernel(const OpDef&, const Args& args, const Values& outputs) {
  const Tensor& meta = outputs[0].tensor();
  const Tensor x = as_f32(args.tensor("input"));
  const Tensor s = args.tensor("scales").contiguous().to(DType::Float64);
  const Tensor z = args.tensor("zero_points").contiguous().to(DType::Float64);
  const double qmin = static_cast<double>(args.integer("quant_min"));
  const double qmax = static_cast<double>(args.integer("quant_max"));
  const int64_t k = x.dim() == 0 ? 1 : x.size(x.dim() - 1);
  const int64_t rows = k == 0 ? 0 : x.numel() / k;
  const Tensor out = output_buffer(outputs[0], x.shape(), meta.dtype());
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
    return store_output(out, outputs[0]);
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
  store_output(out, outputs[0]);
}

}  // namespace

void register_quantized_kernels(KernelTable& t) {
  const std::vector<DType> low = {DType::Float32, DType::BFloat16, DType::Float16};
  auto add = [&](const char* name, KernelIntoFn fn, std::vector<DType> dtypes) {
    t.add(name, {.dtypes = std::move(dtypes), .run_into = fn});
  };
  add("aten._int_mm.default", &int_mm_kernel, {DType::Int8});
  add("aten._weight_int8pack_mm.default", &weight_int8pack_mm_kernel, low);
  add("aten._convert_weight_to_int4pack_for_cpu.default", &convert_int4pack_kernel, {DType::Int32});
  add("aten._weight_int4pack_mm_for_cpu.default", &weight_int4pack_mm_kernel, low);
  add("aten._scaled_mm.default", &scaled_mm_kernel, {DType::Float8E4M3FN, DType::Float8E5M2});
  add("quantized_decomposed.choose_qparams_per_token.default", &choose_qparams_kernel, low);
  add("quantized_decomposed.quantize_per_token.default", &quantize_per_token_kernel, low);
}

}  // namespace crucible::cpu

// Quantized matrix products: aten._weight_int8pack_mm, aten._int_mm,
// aten._convert_weight_to_int4pack_for_cpu, aten._weight_int4pack_mm_for_cpu, aten._scaled_mm.
//
// Reference semantics (PyTorch 2.x, CPU; LinearAlgebra.cpp, cpu/int8mm_kernel.cpp,
// cpu/int4mm_kernel.cpp, Blas.cpp):
//  - _weight_int8pack_mm(A [M, K] f32/bf16/f16 contiguous, B [N, K] int8 contiguous, scales [N]
//    of A's dtype) = (A @ B^T) * scales, in A's dtype.
//  - _int_mm(self [M, K] int8, mat2 [K, N] int8) = the exact product in int32 (wrapping).
//  - _convert_weight_to_int4pack_for_cpu(w [N, K] int32 of 4-bit values, innerKTiles) packs two
//    values per byte into [N, K/2] uint8, blocks of 64 columns laid out as AVX-512 ATen does:
//    per k, byte d of a full block holds column d (low nibble) and d + 32 (high nibble); a
//    partial block (16, 32 or 48 columns) holds columns n (low) and n + 1 (high) per byte.
//  - _weight_int4pack_mm_for_cpu(A [M, K], B packed, qGroupSize, qScaleAndZeros [K/g, N, 2])
//    = A @ W^T with W[n, k] = (q - 8) * scale + zero, scale and zero of group k / qGroupSize.
//  - _scaled_mm(self [M, K] fp8, mat2 [K, N] fp8, scale_a, scale_b f32, bias [N], ...)
//    = (self * scale_a) @ (mat2 * scale_b) + bias, scaled by scale_result for fp8 outputs, in
//    out_dtype (default: self's). Scales are tensor-wise (one element each) or row-wise
//    (scale_a [M, 1], scale_b [1, N], as ATen's CUDA kernel takes them).
// Every result is computed in double (exactly for _int_mm) and rounded once.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/judges.h"
#include "ops/meta_fn.h"
#include "ops/quantized_internal.h"

namespace crucible {
namespace quantized {
namespace {

[[noreturn]] void fail(const char* fn, const std::string& msg) {
  op_error(std::string(fn) + " : " + msg);
}

bool is_fp8(DType t) { return t == DType::Float8E4M3FN || t == DType::Float8E5M2; }
bool is_low_float(DType t) {
  return t == DType::Float32 || t == DType::BFloat16 || t == DType::Float16;
}

// caffe2::TypeMeta's names, which _int_mm's dtype checks print.
std::string type_meta_name(DType t) {
  switch (t) {
    case DType::Int8:
      return "signed char";
    case DType::UInt8:
      return "unsigned char";
    case DType::Int16:
      return "short int";
    case DType::Int32:
      return "int";
    case DType::Int64:
      return "long int";
    case DType::Float32:
      return "float";
    case DType::Float64:
      return "double";
    default:
      return scalar_type_name(t);
  }
}

}  // namespace

NibblePlace int4_place(int64_t n, int64_t k, int64_t N, int64_t K) {
  const int64_t nb = n / kInt4BlockN, j = n % kInt4BlockN;
  const int64_t nb_size = std::min(kInt4BlockN, N - nb * kInt4BlockN);
  const int64_t base = nb * kInt4BlockN * K / 2;
  if (nb_size == kInt4BlockN) return {base + k * 32 + j % 32, j >= 32};
  return {base + k * nb_size / 2 + j / 2, (j % 2) == 1};
}

Shape weight_int8pack_mm_shape(const Args& args) {
  static const char* fn = "_weight_int8pack_mm_cpu";
  const Tensor& a = args.tensor("self");
  const Tensor& b = args.tensor("mat2");
  const Tensor& scales = args.tensor("scales");
  if (!is_low_float(a.dtype())) fail(fn, "expect A to be either 32-bit or 16-bit float tensor.");
  if (!a.is_contiguous()) fail(fn, "expect A to be contiguous.");
  if (a.dim() != 2) fail(fn, "expect A to be 2D tensor.");
  if (b.dtype() != DType::Int8) fail(fn, "expect B to be int8 tensor.");
  if (!b.is_contiguous()) fail(fn, "expect B to be contiguous.");
  if (b.dim() != 2 || b.size(1) != a.size(1))
    fail(fn, "expect B.size(1) == " + std::to_string(a.size(1)));
  const int64_t n = b.size(0);
  if (scales.dim() != 1 || scales.size(0) != n)
    fail(fn, "expect scales to be 1d tensor with size " + std::to_string(n));
  if (scales.dtype() != a.dtype()) {
    op_error("expected scalar type " + scalar_type_name(a.dtype()) + " but found " +
             scalar_type_name(scales.dtype()));
  }
  return {a.size(0), n};
}

Shape int_mm_shape(const Args& args) {
  static const std::string fn = "int_mm_out_cpu";
  const Tensor& self = args.tensor("self");
  const Tensor& mat2 = args.tensor("mat2");
  if (self.dim() != 2)
    op_error(fn + ": Expected self to be of dimension 2 but got " + std::to_string(self.dim()));
  if (mat2.dim() != 2)
    op_error(fn + ": Expected mat2 to be of dimension 2 but got " + std::to_string(mat2.dim()));
  if (self.size(1) != mat2.size(0)) {
    op_error(fn + ": self.size(1) needs to match mat2.size(0) but got " +
             std::to_string(self.size(1)) + " and " + std::to_string(mat2.size(0)));
  }
  if (self.dtype() != DType::Int8) {
    op_error(fn + ": Expected self dtype to be of type int8 but got " +
             type_meta_name(self.dtype()));
  }
  if (mat2.dtype() != DType::Int8) {
    op_error(fn + ": Expected mat2 dtype to be of type int8 but got " +
             type_meta_name(mat2.dtype()));
  }
  return {self.size(0), mat2.size(1)};
}

Shape convert_int4pack_shape(const Args& args) {
  static const char* fn = "_convert_weight_to_int4pack_cpu";
  const Tensor& w = args.tensor("self");
  if (w.dim() != 2) fail(fn, "expect weight to be 2D tensor.");
  if (w.dtype() != DType::Int32) fail(fn, "expect weight to be kInt.");
  // ATen's kernel reads past the weight where these do not hold (pairs of columns, whole
  // bytes per row); crucible refuses them.
  if (w.size(0) % 16 != 0)
    fail(fn, "expect N (" + std::to_string(w.size(0)) + ") to be a multiple of 16");
  if (w.size(1) % 2 != 0) fail(fn, "expect K (" + std::to_string(w.size(1)) + ") to be even");
  return {w.size(0), w.size(1) / 2};
}

Shape weight_int4pack_mm_shape(const Args& args) {
  static const char* fn = "_weight_int4pack_mm_cpu";
  const Tensor& a = args.tensor("self");
  const Tensor& b = args.tensor("mat2");
  const int64_t group = args.integer("qGroupSize");
  const Tensor& sz = args.tensor("qScaleAndZeros");
  if (!is_low_float(a.dtype())) fail(fn, "expect A to be either 32-bit or 16-bit float tensor.");
  if (!a.is_contiguous()) fail(fn, "expect A to be contiguous.");
  if (a.dim() != 2) fail(fn, "expect A to be 2D tensor.");
  if (b.dtype() != DType::UInt8) fail(fn, "expect B to be uint8 tensor.");
  if (!b.is_contiguous()) fail(fn, "expect B to be contiguous.");
  const int64_t k = a.size(1);
  if (b.dim() != 2 || b.size(1) != k / 2)
    fail(fn, "expect B.size(1) to be K/2, got " + std::to_string(b.dim() == 2 ? b.size(1) : -1));
  if (group != 32 && group != 64 && group != 128 && group != 256)
    op_error(std::string(fn) + ": expect qGroupSize to be 32, 64, 128 or 256, got " +
             std::to_string(group));
  const int64_t n = b.size(0);
  if (sz.dim() != 3 || sz.size(1) != n || sz.size(2) != 2)
    op_error(std::string(fn) + ": expect qScaleAndZeros to be 3d tensor with sizes [:, " +
             std::to_string(n) + ", 2]");
  if (sz.dtype() != a.dtype()) {
    op_error("expected scalar type " + scalar_type_name(a.dtype()) + " but found " +
             scalar_type_name(sz.dtype()));
  }
  // The kernel's block sizes and the groups it reads (out of bounds in ATen otherwise).
  if (n % 16 != 0) op_error("Unsupported n block size: " + std::to_string(n % kInt4BlockN));
  if (k % 2 != 0) fail(fn, "expect K (" + std::to_string(k) + ") to be even");
  const int64_t groups = (k + group - 1) / group;
  if (sz.size(0) < groups) {
    op_error(std::string(fn) + ": expect qScaleAndZeros to have " + std::to_string(groups) +
             " groups of " + std::to_string(group) + " along K = " + std::to_string(k) + ", got " +
             std::to_string(sz.size(0)));
  }
  return {a.size(0), n};
}

Shape scaled_mm_shape(const Args& args, DType* out_dtype) {
  const Tensor& a = args.tensor("self");
  const Tensor& b = args.tensor("mat2");
  const Tensor& sa = args.tensor("scale_a");
  const Tensor& sb = args.tensor("scale_b");
  const std::optional<Tensor> bias = args.opt_tensor("bias");
  const std::optional<DType> od = args.opt_dtype("out_dtype");
  CRUCIBLE_CHECK(a.dim() == 2, "mat1 must be a matrix");
  CRUCIBLE_CHECK(b.dim() == 2, "mat2 must be a matrix");
  if (a.size(1) != b.size(0)) {
    op_error("mat1 and mat2 shapes cannot be multiplied (" + std::to_string(a.size(0)) + "x" +
             std::to_string(a.size(1)) + " and " + std::to_string(b.size(0)) + "x" +
             std::to_string(b.size(1)) + ")");
  }
  const int64_t m = a.size(0), n = b.size(1);
  if (sa.dtype() != DType::Float32 || sb.dtype() != DType::Float32)
    op_error("Both scale_a and scale_b must be float (fp32) tensors.");
  const bool tensorwise = sa.numel() == 1 && sb.numel() == 1;
  const bool rowwise = sa.dim() == 2 && sb.dim() == 2 && sa.size(0) == m && sa.size(1) == 1 &&
                       sb.size(0) == 1 && sb.size(1) == n;
  if (!tensorwise && !rowwise) {
    op_error(
        "Invalid scaling configuration: for tensor-wise scaling scale_a and scale_b must have "
        "one element each; for row-wise scaling scale_a must be [" +
        std::to_string(m) + ", 1] and scale_b [1, " + std::to_string(n) + "], got scale_a " +
        shape_str(sa.shape()) + " and scale_b " + shape_str(sb.shape()));
  }
  if (bias && bias->numel() != n)
    op_error("Bias must be size " + std::to_string(n) + " but got " +
             std::to_string(bias->numel()));
  if (!is_fp8(a.dtype()))
    op_error("Expected mat1 to be Float8 matrix got " + scalar_type_name(a.dtype()));
  if (!is_fp8(b.dtype()))
    op_error("Expected mat2 to be Float8 matrix got " + scalar_type_name(b.dtype()));
  const DType out = od.value_or(a.dtype());
  if (!is_low_float(out) && !is_fp8(out))
    op_error("out_dtype must be a float8, bfloat16, float16 or float32 type, got " +
             scalar_type_name(out));
  if (bias && !is_low_float(bias->dtype()))
    op_error("Bias must be a bfloat16, float16 or float32 tensor, got " +
             scalar_type_name(bias->dtype()));
  *out_dtype = out;
  return {m, n};
}

namespace {

// Every element of a 2-d tensor as doubles, row-major.
std::vector<double> load(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.get(i);
  return v;
}

// Each op's meta function checks the call (the *_shape functions above) and describes its
// output; the implementation computes into that output, contiguous and allocated for it.
Values weight_int8pack_mm_meta(const Args& args) {
  return {meta::fresh(weight_int8pack_mm_shape(args), args.tensor("self").dtype())};
}

void weight_int8pack_mm_impl(const Args& args, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const Tensor& a = args.tensor("self");
  const std::vector<double> av = load(a), bv = load(args.tensor("mat2")),
                            sv = load(args.tensor("scales"));
  const int64_t m = out.size(0), n = out.size(1), k = a.size(1);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t q = 0; q < k; ++q) acc += av[i * k + q] * bv[j * k + q];
      out.set(i * n + j, acc * sv[j]);
    }
}

Values int_mm_meta(const Args& args) { return {meta::fresh(int_mm_shape(args), DType::Int32)}; }

void int_mm_impl(const Args& args, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const Tensor& a = args.tensor("self");
  const Tensor& b = args.tensor("mat2");
  const int64_t m = out.size(0), n = out.size(1), k = a.size(1);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = 0;
      for (int64_t q = 0; q < k; ++q) acc += a.get_int(i * k + q) * b.get_int(q * n + j);
      out.set_int(i * n + j, static_cast<int32_t>(static_cast<uint32_t>(acc)));
    }
}

Values convert_int4pack_meta(const Args& args) {
  return {meta::fresh(convert_int4pack_shape(args), DType::UInt8)};
}

void convert_int4pack_impl(const Args& args, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const Tensor& w = args.tensor("self");
  const int64_t n_total = w.size(0), k_total = w.size(1);
  std::vector<uint8_t> bytes(static_cast<size_t>(out.numel()), 0);
  for (int64_t n = 0; n < n_total; ++n)
    for (int64_t k = 0; k < k_total; ++k) {
      // ATen's (uint8_t)(val) << 4 | (uint8_t)(val0): the low byte of each int32, unmasked.
      const auto v = static_cast<uint8_t>(w.get_int(n * k_total + k));
      const NibblePlace p = int4_place(n, k, n_total, k_total);
      bytes[p.byte] |= p.high ? static_cast<uint8_t>(v << 4) : v;
    }
  for (int64_t i = 0; i < out.numel(); ++i) out.set_int(i, bytes[i]);
}

Values weight_int4pack_mm_meta(const Args& args) {
  return {meta::fresh(weight_int4pack_mm_shape(args), args.tensor("self").dtype())};
}

void weight_int4pack_mm_impl(const Args& args, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const Tensor& a = args.tensor("self");
  const Tensor& b = args.tensor("mat2");
  const int64_t group = args.integer("qGroupSize");
  const Tensor& sz = args.tensor("qScaleAndZeros");
  const int64_t m = out.size(0), n = out.size(1), k = a.size(1);
  const std::vector<double> av = load(a), szv = load(sz);
  std::vector<double> w(static_cast<size_t>(n * k));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t q = 0; q < k; ++q) {
      const NibblePlace p = int4_place(j, q, n, k);
      const auto byte = static_cast<uint8_t>(b.get_int(p.byte));
      const int v = p.high ? byte >> 4 : byte & 0xF;
      const int64_t g = q / group;
      w[j * k + q] = (v - 8) * szv[(g * n + j) * 2] + szv[(g * n + j) * 2 + 1];
    }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t q = 0; q < k; ++q) acc += av[i * k + q] * w[j * k + q];
      out.set(i * n + j, acc);
    }
}

Values scaled_mm_meta(const Args& args) {
  DType out = DType::Float32;
  const Shape s = scaled_mm_shape(args, &out);
  return {meta::fresh(s, out)};
}

void scaled_mm_impl(const Args& args, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const Tensor& a = args.tensor("self");
  const Tensor& b = args.tensor("mat2");
  const Tensor& sa = args.tensor("scale_a");
  const Tensor& sb = args.tensor("scale_b");
  const std::optional<Tensor> bias = args.opt_tensor("bias");
  const std::optional<Tensor> scale_result = args.opt_tensor("scale_result");
  const int64_t m = out.size(0), n = out.size(1), k = a.size(1);
  const Tensor ac = a.contiguous(), bc = b.contiguous();
  const std::vector<double> av = load(ac), bv = load(bc);
  const bool rowwise = sa.numel() != 1 || sb.numel() != 1;
  const double post = scale_result && is_fp8(out.dtype()) ? scale_result->get(0) : 1.0;
  const std::vector<double> biasv = bias ? load(bias->contiguous()) : std::vector<double>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t q = 0; q < k; ++q) acc += av[i * k + q] * bv[q * n + j];
      acc *= (rowwise ? sa.get(i) : sa.get(0)) * (rowwise ? sb.get(j) : sb.get(0));
      if (bias) acc += biasv[j];
      out.set(i * n + j, acc * post);
    }
}

// The inner length widens the tolerance by sqrt(K), as for mm.
ComparePolicy inner_length_compare(int a_arg) {
  ComparePolicy c;
  c.tol_scale = [a_arg](const Values& a) {
    if (static_cast<int>(a.size()) <= a_arg || !a[a_arg].is_tensor()) return 1.0;
    const Tensor& t = a[a_arg].tensor();
    if (t.dim() < 2) return 1.0;
    return std::sqrt(static_cast<double>(std::max<int64_t>(t.size(1), 1)));
  };
  return c;
}

double bytes_of(const Value& v) {
  if (!v.is_tensor()) return 0;
  return static_cast<double>(v.tensor().numel() * v.tensor().itemsize());
}

// flops = 2 * M * N * K (K from argument `a_arg`'s dim 1); bytes = operands once + output.
CostFn product_cost(int a_arg) {
  return [a_arg](const Values& a, const Values& out) {
    Cost c;
    if (out.empty() || !out[0].is_tensor()) return c;
    const Tensor& lhs = a.at(a_arg).tensor();
    const double k = lhs.dim() == 2 ? static_cast<double>(lhs.size(1)) : 0.0;
    c.flops = 2.0 * static_cast<double>(out[0].tensor().numel()) * k;
    for (const Value& v : a) c.bytes += bytes_of(v);
    c.bytes += bytes_of(out[0]);
    return c;
  };
}

}  // namespace
}  // namespace quantized

void register_quantized_ops(OpRegistry& r) {
  using namespace quantized;  // NOLINT(google-build-using-namespace)
  const std::vector<DType> low = {DType::Float32, DType::BFloat16, DType::Float16};
  {
    OpDef op = OpDef::from_schema(
        "aten::_weight_int8pack_mm(Tensor self, Tensor mat2, Tensor scales) -> Tensor",
        "quantized");
    op.dtypes = low;
    op.meta = weight_int8pack_mm_meta;
    op.ref = structured_ref(weight_int8pack_mm_meta, weight_int8pack_mm_impl);
    op.samples = weight_int8pack_mm_samples;
    op.roles["scales"] = ArgRole::positive();
    op.cost = product_cost(0);
    // ATen's CPU kernel sums the f32 products in f32: where the partial sums overflow it
    // returns inf or NaN (judges.h).
    op.compare = judges::accumulation_overflow_policy(inner_length_compare(0), op.ref, op.schema);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema("aten::_int_mm(Tensor self, Tensor mat2) -> Tensor", "quantized");
    op.dtypes = {DType::Int8};
    op.meta = int_mm_meta;
    op.ref = structured_ref(int_mm_meta, int_mm_impl);
    op.samples = int_mm_samples;
    op.cost = product_cost(0);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::_convert_weight_to_int4pack_for_cpu(Tensor self, int innerKTiles) -> Tensor",
        "quantized");
    op.dtypes = {DType::Int32};
    op.meta = convert_int4pack_meta;
    op.ref = structured_ref(convert_int4pack_meta, convert_int4pack_impl);
    op.samples = convert_int4pack_samples;
    op.cost = [](const Args& a, const Values& out) {
      return Cost{0, bytes_of(a.value("self")) + (out.empty() ? 0 : bytes_of(out[0]))};
    };
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::_weight_int4pack_mm_for_cpu(Tensor self, Tensor mat2, int qGroupSize, Tensor "
        "qScaleAndZeros) -> Tensor",
        "quantized");
    op.dtypes = low;
    op.meta = weight_int4pack_mm_meta;
    op.ref = structured_ref(weight_int4pack_mm_meta, weight_int4pack_mm_impl);
    op.samples = weight_int4pack_mm_samples;
    op.cost = product_cost(0);
    op.compare = inner_length_compare(0);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::_scaled_mm(Tensor self, Tensor mat2, Tensor scale_a, Tensor scale_b, Tensor? "
        "bias=None, Tensor? scale_result=None, ScalarType? out_dtype=None, bool "
        "use_fast_accum=False) -> Tensor",
        "quantized");
    op.dtypes = {DType::Float8E4M3FN, DType::Float8E5M2};
    op.meta = scaled_mm_meta;
    op.ref = structured_ref(scaled_mm_meta, scaled_mm_impl);
    op.samples = scaled_mm_samples;
    op.roles["scale_a"] = ArgRole::positive();
    op.roles["scale_b"] = ArgRole::positive();
    op.cost = product_cost(0);
    op.compare = inner_length_compare(0);
    r.add(std::move(op));
  }
  register_quantize_ops(r);
  register_float8_quantize_ops(r);
}

}  // namespace crucible

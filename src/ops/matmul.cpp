// Matrix products: aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default.
//
// Reference semantics (PyTorch 2.x, CPU; LinearAlgebra.cpp):
//  - mm: both operands 2-D, inner sizes equal, same dtype; addmm: self, mat1 and mat2 share a
//    dtype, self broadcasts to [M, N] (expand semantics), out = beta * self + alpha * mat1 @ mat2,
//    and beta == 0 means self is not read at all (NaN/inf in self do not propagate);
//    bmm: both operands 3-D with matching batch and inner sizes; baddbmm: bmm plus
//    beta * self, self broadcast to [B, M, N] (expand) and of batch1's dtype ("Input dtypes must
//    be the same"), beta == 0 ignoring self as addmm does.
//  - dtypes: every integer and floating dtype (integer products wrap in the output width, like
//    ATen's integer gemm, which accumulates in the element type); bool raises from the kernel's
//    dispatch. An empty result or an empty inner dimension never reaches the dispatch.
//  - Floating results are computed in double and rounded once; integer results exactly in
//    int64 (wrapping commutes with + and *, so this equals ATen's in-width arithmetic).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/rules/matmul.h"
#include "ops/families.h"
#include "ops/judges.h"
#include "ops/matmul_internal.h"
#include "ops/meta_fn.h"
#include "ops/ref_gemm.h"

namespace crucible {
namespace {

using namespace matmul;  // NOLINT(google-build-using-namespace): the sample generators

// caffe2::TypeMeta's names, which mm's dtype check prints ("float != double").
std::string type_meta_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::UInt8:
      return "unsigned char";
    case DType::Int8:
      return "signed char";
    case DType::Int16:
      return "short int";
    case DType::Int32:
      return "int";
    case DType::Int64:
      return "long int";
    case DType::Float16:
      return "c10::Half";
    case DType::BFloat16:
      return "c10::BFloat16";
    case DType::Float32:
      return "float";
    case DType::Float64:
      return "double";
    case DType::Float8E4M3FN:
      return "c10::Float8_e4m3fn";
    case DType::Float8E5M2:
      return "c10::Float8_e5m2";
    case DType::Complex32:
      return "c10::complex<c10::Half>";
    case DType::Complex64:
      return "c10::complex<float>";
    case DType::Complex128:
      return "c10::complex<double>";
  }
  return "unknown";
}

std::string sizes_str(const Shape& s) { return shape_str(s); }

bool is_fp8(DType t) { return t == DType::Float8E4M3FN || t == DType::Float8E5M2; }

// self.expand(target)'s checks (expand_size in addmm/baddbmm): self's sizes padded with leading
// 1s to target's rank, each equal to target's or 1; the padded sizes are returned.
Shape expand_checked(const Tensor& self, const Shape& target) {
  const auto rank = static_cast<int64_t>(target.size());
  if (self.dim() > rank) {
    op_error("expand(torch." + scalar_type_name(self.dtype()) + "Tensor{" +
             sizes_str(self.shape()) + "}, size=" + sizes_str(target) +
             "): the number of sizes provided (" + std::to_string(rank) +
             ") must be greater or equal to the number of dimensions in the tensor (" +
             std::to_string(self.dim()) + ")");
  }
  Shape padded(target.size(), 1);
  for (int64_t d = 0; d < self.dim(); ++d) padded[rank - self.dim() + d] = self.size(d);
  for (int64_t d = 0; d < rank; ++d) {
    if (padded[d] != target[d] && padded[d] != 1) {
      op_error("The expanded size of the tensor (" + std::to_string(target[d]) +
               ") must match the existing size (" + std::to_string(padded[d]) +
               ") at non-singleton dimension " + std::to_string(d) + ".  Target sizes: " +
               sizes_str(target) + ".  Tensor sizes: " + sizes_str(self.shape()));
    }
  }
  return padded;
}

// The kernel's dtype dispatch (AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND2(Half, BFloat16)).
void check_kernel_dtype(DType t, const char* kernel) {
  if (t == DType::Bool || is_fp8(t)) {
    not_implemented_for(kernel, t);
  }
}

}  // namespace

namespace matmul {

Shape mm_shape(const Args& args) {
  const Tensor& self = args.tensor("self");
  const Tensor& mat2 = args.tensor("mat2");
  CRUCIBLE_CHECK(self.dim() == 2, "self must be a matrix");
  CRUCIBLE_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  if (self.size(1) != mat2.size(0)) {
    op_error("mat1 and mat2 shapes cannot be multiplied (" + std::to_string(self.size(0)) + "x" +
             std::to_string(self.size(1)) + " and " + std::to_string(mat2.size(0)) + "x" +
             std::to_string(mat2.size(1)) + ")");
  }
  if (self.dtype() != mat2.dtype()) {
    op_error("expected m1 and m2 to have the same dtype, but got: " + type_meta_name(self.dtype()) +
             " != " + type_meta_name(mat2.dtype()));
  }
  const Shape out_shape{self.size(0), mat2.size(1)};
  if (numel_of(out_shape) > 0 && self.size(1) > 0)
    check_kernel_dtype(self.dtype(), "addmm_impl_cpu_");
  return out_shape;
}

Shape addmm_self_shape(const Args& args) {
  const Tensor& self = args.tensor("self");
  const Tensor& mat1 = args.tensor("mat1");
  const Tensor& mat2 = args.tensor("mat2");
  if (self.dtype() != mat2.dtype()) {
    op_error("self and mat2 must have the same dtype, but got " + scalar_type_name(self.dtype()) +
             " and " + scalar_type_name(mat2.dtype()));
  }
  if (mat1.dtype() != mat2.dtype()) {
    op_error("mat1 and mat2 must have the same dtype, but got " + scalar_type_name(mat1.dtype()) +
             " and " + scalar_type_name(mat2.dtype()));
  }
  CRUCIBLE_CHECK(mat1.dim() == 2,
                 "mat1 must be a matrix, got " + std::to_string(mat1.dim()) + "-D tensor");
  CRUCIBLE_CHECK(mat2.dim() == 2,
                 "mat2 must be a matrix, got " + std::to_string(mat2.dim()) + "-D tensor");
  if (mat1.size(1) != mat2.size(0)) {
    op_error("mat1 and mat2 shapes cannot be multiplied (" + std::to_string(mat1.size(0)) + "x" +
             std::to_string(mat1.size(1)) + " and " + std::to_string(mat2.size(0)) + "x" +
             std::to_string(mat2.size(1)) + ")");
  }
  // self.expand({M, N}) (expand_size in addmm_out_cpu).
  const Shape target{mat1.size(0), mat2.size(1)};
  const Shape s2 = expand_checked(self, target);
  if (numel_of(target) > 0 && mat1.size(1) > 0) check_kernel_dtype(self.dtype(), "addmm_impl_cpu_");
  return s2;
}

Shape bmm_shape(const Args& args) {
  const Tensor& b1 = args.tensor("self");
  const Tensor& b2 = args.tensor("mat2");
  CRUCIBLE_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  CRUCIBLE_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  if (b2.size(0) != b1.size(0) || b2.size(1) != b1.size(2)) {
    op_error("Expected size for first two dimensions of batch2 tensor to be: [" +
             std::to_string(b1.size(0)) + ", " + std::to_string(b1.size(2)) + "] but got: [" +
             std::to_string(b2.size(0)) + ", " + std::to_string(b2.size(1)) + "].");
  }
  const Shape out_shape{b1.size(0), b1.size(1), b2.size(2)};
  if (numel_of(out_shape) > 0 && b1.size(2) > 0) {
    if (b1.dtype() != b2.dtype()) {
      op_error("expected scalar type " + scalar_type_name(b1.dtype()) + " but found " +
               scalar_type_name(b2.dtype()));
    }
    check_kernel_dtype(b1.dtype(), "bmm");
  }
  return out_shape;
}

Shape baddbmm_self_shape(const Args& args) {
  const Tensor& self = args.tensor("self");
  const Tensor& b1 = args.tensor("batch1");
  const Tensor& b2 = args.tensor("batch2");
  CRUCIBLE_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  CRUCIBLE_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  const Shape target{b1.size(0), b1.size(1), b2.size(2)};
  // expand_size(self, {B, M, N}, "baddbmm").
  const Shape s3 = expand_checked(self, target);
  if (self.dtype() != b1.dtype()) {
    op_error("Input dtypes must be the same, got: input " + type_meta_name(self.dtype()) +
             ", batch1: " + type_meta_name(b1.dtype()) + ", batch2: " + type_meta_name(b2.dtype()));
  }
  if (b2.size(0) != b1.size(0) || b2.size(1) != b1.size(2)) {
    op_error("Expected size for first two dimensions of batch2 tensor to be: [" +
             std::to_string(b1.size(0)) + ", " + std::to_string(b1.size(2)) + "] but got: [" +
             std::to_string(b2.size(0)) + ", " + std::to_string(b2.size(1)) + "].");
  }
  if (numel_of(target) > 0 && b1.size(2) > 0) {
    if (b1.dtype() != b2.dtype()) {
      op_error("expected scalar type " + scalar_type_name(b1.dtype()) + " but found " +
               scalar_type_name(b2.dtype()));
    }
    check_kernel_dtype(b1.dtype(), "bmm");
  }
  return s3;
}

}  // namespace matmul

namespace {

// out[b] = beta * bias(b, i, j) + alpha * sum_k a[b, i, k] * w[b, k, j] for 3-d views a, w
// ([B, M, K], [B, K, N]); `bias` (may be null) gives self's element index for (i, j).
struct Product {
  Tensor a, w;  // 3-d views
  const Tensor* self = nullptr;
  std::function<int64_t(int64_t b, int64_t i, int64_t j)> self_index;
  double beta = 0, alpha = 1;
  int64_t ibeta = 0, ialpha = 1;
};

// Every element of `t` in logical (row-major) order, as exact integers.
std::vector<int64_t> load_ints(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.get_int(i);
  return v;
}

// f64 elements of the product computed at a time (a block of whole rows).
constexpr int64_t kRowBlockElements = int64_t{1} << 22;

// The [B, M, N] product, in double (floating) or exactly modulo 2^64 (integers, wrapped to the
// output width when stored).
// The product into `out` (contiguous, of the result's shape and dtype: the meta function's).
void compute(const Product& p, const Tensor& out) {
  const DType dt = out.dtype();
  const int64_t batches = p.a.size(0), m = p.a.size(1), k = p.a.size(2), n = p.w.size(2);
  if (is_integral(dt, /*include_bool=*/true)) {
    const std::vector<int64_t> a = load_ints(p.a), w = load_ints(p.w);
    for (int64_t b = 0; b < batches; ++b) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          uint64_t acc = 0;
          for (int64_t q = 0; q < k; ++q) {
            acc += static_cast<uint64_t>(a[(b * m + i) * k + q]) *
                   static_cast<uint64_t>(w[(b * k + q) * n + j]);
          }
          acc *= static_cast<uint64_t>(p.ialpha);
          if (p.self && p.ibeta != 0) {
            acc += static_cast<uint64_t>(p.ibeta) *
                   static_cast<uint64_t>(p.self->get_int(p.self_index(b, i, j)));
          }
          out.set_int((b * m + i) * n + j, static_cast<int64_t>(acc));
        }
      }
    }
    return;
  }
  // Floating: the product in f64 through dgemm, then alpha and beta * self applied per element
  // exactly as written (alpha * (a @ w) + beta * self, self unread when beta == 0), rounded once.
  // Blocks of rows keep the f64 result small next to the output.
  const Tensor a = refgemm::to_f64(p.a), w = refgemm::to_f64(p.w);
  const bool with_self = p.self && p.beta != 0;
  const Tensor self64 = with_self ? refgemm::to_f64(*p.self) : Tensor();
  const double* sd = with_self ? self64.data<double>() : nullptr;
  const Tensor out3 = out.view({batches, m, n});
  const int64_t block = std::max<int64_t>(1, kRowBlockElements / std::max<int64_t>(n, 1));
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i0 = 0; i0 < m; i0 += block) {
      const int64_t rows = std::min(block, m - i0);
      const Tensor prod = Tensor::uninitialized({rows, n}, DType::Float64);
      double* pd = prod.data<double>();
      refgemm::gemm(false, false, rows, n, k, a.data<double>() + (b * m + i0) * k,
                    std::max<int64_t>(k, 1), w.data<double>() + b * k * n, std::max<int64_t>(n, 1),
                    0.0, pd, std::max<int64_t>(n, 1));
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double v = p.alpha * pd[i * n + j];
          if (with_self) v += p.beta * sd[p.self_index(b, i0 + i, j)];
          pd[i * n + j] = v;
        }
      }
      out3.select(0, b).slice(0, i0, i0 + rows).copy_from(prod);
    }
  }
}

Values mm_meta(const Args& args) {
  return {meta::fresh(mm_shape(args), args.tensor("self").dtype())};
}

void mm_impl(const Args& args, const Values& out) {
  Product p;
  p.a = args.tensor("self").unsqueeze(0);
  p.w = args.tensor("mat2").unsqueeze(0);
  compute(p, out.at(0).tensor());
}

Values addmm_meta(const Args& args) {
  addmm_self_shape(args);
  const Tensor& mat1 = args.tensor("mat1");
  return {meta::fresh({mat1.size(0), args.tensor("mat2").size(1)}, mat1.dtype())};
}

void addmm_impl(const Args& args, const Values& out) {
  const Tensor& self = args.tensor("self");
  const Tensor& mat1 = args.tensor("mat1");
  const Tensor& mat2 = args.tensor("mat2");
  const Scalar beta = args.scalar("beta");
  const Scalar alpha = args.scalar("alpha");
  const Shape s2 = addmm_self_shape(args);
  // self's logical index for output (i, j) under broadcasting.
  const int64_t self_cols = s2[1];
  Product p;
  p.a = mat1.unsqueeze(0);
  p.w = mat2.unsqueeze(0);
  p.self = &self;
  p.self_index = [s2, self_cols](int64_t /*b*/, int64_t i, int64_t j) {
    const int64_t ii = s2[0] == 1 ? 0 : i;
    const int64_t jj = s2[1] == 1 ? 0 : j;
    return ii * self_cols + jj;
  };
  p.beta = beta.to_double();
  p.alpha = alpha.to_double();
  // Integer tensors take the scalars converted to the element type (Scalar::to<int>).
  p.ibeta = beta.is_floating() ? static_cast<int64_t>(beta.to_double()) : beta.to_int();
  p.ialpha = alpha.is_floating() ? static_cast<int64_t>(alpha.to_double()) : alpha.to_int();
  compute(p, out.at(0).tensor());
}

Values bmm_meta(const Args& args) {
  return {meta::fresh(bmm_shape(args), args.tensor("mat2").dtype())};
}

void bmm_impl(const Args& args, const Values& out) {
  Product p;
  p.a = args.tensor("self");
  p.w = args.tensor("mat2");
  compute(p, out.at(0).tensor());
}

Values baddbmm_meta(const Args& args) {
  baddbmm_self_shape(args);
  const Tensor& b1 = args.tensor("batch1");
  return {meta::fresh({b1.size(0), b1.size(1), args.tensor("batch2").size(2)}, b1.dtype())};
}

void baddbmm_impl(const Args& args, const Values& out) {
  const Tensor& self = args.tensor("self");
  const Tensor& b1 = args.tensor("batch1");
  const Tensor& b2 = args.tensor("batch2");
  const Scalar beta = args.scalar("beta");
  const Scalar alpha = args.scalar("alpha");
  const Shape s3 = baddbmm_self_shape(args);
  Product p;
  p.a = b1;
  p.w = b2;
  p.self = &self;
  p.self_index = [s3](int64_t b, int64_t i, int64_t j) {
    const int64_t bb = s3[0] == 1 ? 0 : b, ii = s3[1] == 1 ? 0 : i, jj = s3[2] == 1 ? 0 : j;
    return (bb * s3[1] + ii) * s3[2] + jj;
  };
  p.beta = beta.to_double();
  p.alpha = alpha.to_double();
  p.ibeta = beta.is_floating() ? static_cast<int64_t>(beta.to_double()) : beta.to_int();
  p.ialpha = alpha.is_floating() ? static_cast<int64_t>(alpha.to_double()) : alpha.to_int();
  compute(p, out.at(0).tensor());
}

// A dot product of length K rounded in the candidate's accumulator is off by about sqrt(K)
// roundoffs of its partial sums when errors are independent; sqrt(K) widens the per-dtype
// tolerance to admit every sound blocking and summation order (and no more).
// K is dim `k_dim` of argument `mat`.
ComparePolicy inner_length_compare(const Schema& schema, const char* mat, int k_dim) {
  ComparePolicy c;
  c.tol_scale = [schema, mat, k_dim](const Values& v) {
    const Args a(v, schema);
    if (a.size() <= a.index(mat) || !a.value(mat).is_tensor()) return 1.0;
    const Tensor& t = a.tensor(mat);
    if (t.dim() <= k_dim) return 1.0;
    return std::sqrt(static_cast<double>(std::max<int64_t>(t.size(k_dim), 1)));
  };
  return c;
}

double bytes_of(const Value& v) {
  if (!v.is_tensor()) return 0;
  return static_cast<double>(v.tensor().numel() * v.tensor().itemsize());
}

// flops = 2 * (output elements) * K (dim `k_dim` of argument `lhs_name`); bytes = every operand
// read once and the output written.
CostFn product_cost(const char* lhs_name, int k_dim) {
  return [lhs_name, k_dim](const Args& a, const Values& out) {
    Cost c;
    if (out.empty() || !out[0].is_tensor() || a.size() <= a.index(lhs_name)) return c;
    const Tensor& lhs = a.tensor(lhs_name);
    const double k = lhs.dim() > k_dim ? static_cast<double>(lhs.size(k_dim)) : 0.0;
    c.flops = 2.0 * static_cast<double>(out[0].tensor().numel()) * k;
    for (const Value& v : a.values()) c.bytes += bytes_of(v);
    c.bytes += bytes_of(out[0]);
    return c;
  };
}

}  // namespace

void register_matmul_ops(OpRegistry& r) {
  {
    OpDef op = OpDef::from_schema("aten::mm(Tensor self, Tensor mat2) -> Tensor", "matmul");
    op.dtypes = matmul_dtypes();
    op.meta = mm_meta;
    op.ref = structured_ref(op.meta, mm_impl);
    op.samples = mm_samples;
    op.cost = product_cost("self", 1);
    op.compare = judges::accumulation_overflow_policy(inner_length_compare(op.schema, "self", 1),
                                                      op.ref, op.schema);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> "
        "Tensor",
        "matmul");
    op.dtypes = matmul_dtypes();
    op.meta = addmm_meta;
    op.ref = structured_ref(op.meta, addmm_impl);
    op.samples = addmm_samples;
    op.cost = product_cost("mat1", 1);
    op.compare = judges::accumulation_overflow_policy(inner_length_compare(op.schema, "mat1", 1),
                                                      op.ref, op.schema);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema("aten::bmm(Tensor self, Tensor mat2) -> Tensor", "matmul");
    op.dtypes = matmul_dtypes();
    op.meta = bmm_meta;
    op.ref = structured_ref(op.meta, bmm_impl);
    op.samples = bmm_samples;
    op.cost = product_cost("self", 2);
    op.compare = judges::accumulation_overflow_policy(inner_length_compare(op.schema, "self", 2),
                                                      op.ref, op.schema);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar "
        "alpha=1) -> Tensor",
        "matmul");
    op.dtypes = matmul_dtypes();
    op.meta = baddbmm_meta;
    op.ref = structured_ref(op.meta, baddbmm_impl);
    op.samples = baddbmm_samples;
    op.cost = product_cost("batch1", 2);
    op.compare = judges::accumulation_overflow_policy(inner_length_compare(op.schema, "batch1", 2),
                                                      op.ref, op.schema);
    r.add(std::move(op));
  }
}

}  // namespace crucible

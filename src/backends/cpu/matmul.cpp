// The `cpu` backend's matmul family: mm, addmm, bmm, baddbmm.
//
// Floating products go through gemm_f32 / gemm_f64 (OpenBLAS; f16 and bf16 are converted to
// f32 and the result rounded once), f32 products of up to 16 rows through gemm_small.h. Transposed
// operands reach BLAS without a copy. bmm and baddbmm split the batch over the thread pool (one
// BLAS thread each) when there are at least as many batch items as threads. Integer products are
// exact modulo 2^64 and wrap to the output width, as ATen's integer gemm does. The kernels
// compute into the meta function's output; the argument checks are the meta function's.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/gemm.h"
#include "backends/cpu/gemm_small.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/nn_util.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace {

// Scalars as the integer kernels see them (Scalar::to<int64_t>).
int64_t int_scalar(const Scalar& s) {
  return s.is_floating() ? static_cast<int64_t>(s.to_double()) : s.to_int();
}

// Copies a 3-d strided (possibly expanded) `src` of element type T into contiguous `dst`.
template <typename T>
void copy_rows(const Tensor& src, T* dst) {
  const int64_t nb = src.size(0), m = src.size(1), n = src.size(2);
  const int64_t s0 = src.stride(0), s1 = src.stride(1), s2 = src.stride(2);
  const T* base = src.data<T>();
  parallel_for(0, nb * m, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const T* in = base + (r / m) * s0 + (r % m) * s1;
                   T* o = dst + r * n;
                   if (s2 == 1) {
                     std::copy(in, in + n, o);
                   } else {
                     for (int64_t j = 0; j < n; ++j) o[j] = in[j * s2];
                   }
                 }
               });
}

// The product in f64, summed over k in order as the reference does (calls with non-finite or
// huge values: see extreme()).
Tensor ordered_product(const Tensor& a, const Tensor& w, const Tensor& self, double beta,
                       double alpha, DType dt) {
  const int64_t nb = a.size(0), m = a.size(1), k = a.size(2), n = w.size(2);
  const Tensor ad = a.to(DType::Float64), wd = w.to(DType::Float64);
  const Tensor sd = self.defined() ? self.to(DType::Float64) : Tensor();
  Tensor out = Tensor::empty({nb, m, n}, DType::Float64);
  const double* ap = ad.data<double>();
  const double* wp = wd.data<double>();
  double* op = out.data<double>();
  std::vector<double> row(static_cast<size_t>(n));
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t q = 0; q < k; ++q) {
        const double x = ap[(b * m + i) * k + q];
        const double* wr = wp + (b * k + q) * n;
        for (int64_t j = 0; j < n; ++j) row[j] += x * wr[j];
      }
      for (int64_t j = 0; j < n; ++j) {
        const int64_t o = (b * m + i) * n + j;
        double v = alpha * row[j];
        if (sd.defined()) v += beta * sd.data<double>()[o];
        op[o] = v;
      }
    }
  }
  return out.to(dt);
}

// out[b] = alpha * a[b] @ w[b] + beta * self[b] for 3-d a [B, M, K], w [B, K, N] and an optional
// self already expanded to [B, M, N]; beta == 0 does not read self. Computed into the meta
// function's output `dst` where it can be (output_buffer); returns where the result is.
Tensor product(const Tensor& a, const Tensor& w, const Tensor& self, const Scalar& beta_s,
               const Scalar& alpha_s, DType dt, const Value& dst) {
  const int64_t nb = a.size(0), m = a.size(1), k = a.size(2), n = w.size(2);
  const Shape out_shape{nb, m, n};
  const bool use_self = self.defined() && beta_s.to_double() != 0.0;
  if (is_integral(dt, /*include_bool=*/true)) {  // bool: an empty product only (see below)
    Tensor out = output_buffer(dst, out_shape, dt);
    if (out.numel() > 0)
      std::memset(out.data_ptr(), 0, static_cast<size_t>(out.numel()) * out.itemsize());
    const int64_t ib = use_self ? int_scalar(beta_s) : 0, ia = int_scalar(alpha_s);
    std::vector<uint64_t> av(static_cast<size_t>(a.numel())), wv(static_cast<size_t>(w.numel()));
    for (int64_t i = 0; i < a.numel(); ++i) av[i] = static_cast<uint64_t>(a.get_int(i));
    for (int64_t i = 0; i < w.numel(); ++i) wv[i] = static_cast<uint64_t>(w.get_int(i));
    std::vector<uint64_t> row(static_cast<size_t>(n));
    for (int64_t b = 0; b < nb; ++b) {
      for (int64_t i = 0; i < m; ++i) {
        std::fill(row.begin(), row.end(), 0);
        for (int64_t q = 0; q < k; ++q) {
          const uint64_t x = av[(b * m + i) * k + q];
          const uint64_t* wr = wv.data() + (b * k + q) * n;
          for (int64_t j = 0; j < n; ++j) row[j] += x * wr[j];
        }
        for (int64_t j = 0; j < n; ++j) {
          const int64_t o = (b * m + i) * n + j;
          uint64_t v = row[j] * static_cast<uint64_t>(ia);
          if (use_self && ib != 0)
            v += static_cast<uint64_t>(ib) * static_cast<uint64_t>(self.get_int(o));
          out.set_int(o, static_cast<int64_t>(v));
        }
      }
    }
    return out;
  }
  const double alpha = alpha_s.to_double(), beta = use_self ? beta_s.to_double() : 0.0;
  if (dt == DType::Float32 && a.dtype() == dt && w.dtype() == dt &&
      small_gemm_applies(m, n, k, w.stride(1), w.stride(2))) {
    // A few rows: B is read once, by loops that also test it for extreme values.
    if (!any_extreme({&a, use_self ? &self : nullptr})) {
      Tensor out = output_buffer(dst, out_shape, dt);
      if (use_self) copy_rows<float>(self, out.data<float>());
      if (small_gemm_f32(nb, m, n, k, static_cast<float>(alpha), a.data<float>(), a.stride(0),
                         a.stride(1), a.stride(2), w.data<float>(), w.stride(0), w.stride(1),
                         w.stride(2), static_cast<float>(beta), out.data<float>(), m * n, n))
        return out;
    }
    return ordered_product(a, w, use_self ? self : Tensor(), beta, alpha, dt);
  }
  if (any_extreme({&a, &w, use_self ? &self : nullptr})) {
    return ordered_product(a, w, use_self ? self : Tensor(), beta_s.to_double(),
                           alpha_s.to_double(), dt);
  }
  const bool f64 = dt == DType::Float64;
  const DType work = f64 ? DType::Float64 : DType::Float32;
  // Written in full: by the copy of self, or by the GEMM itself (beta = 0 sets C, whatever it
  // held; k = 0 fills it in gemm.cpp).
  Tensor out = output_buffer(dst, out_shape, work);
  if (use_self) {
    if (self.dtype() == work && f64) {
      copy_rows<double>(self, out.data<double>());
    } else if (self.dtype() == work) {
      copy_rows<float>(self, out.data<float>());
    } else {
      out.copy_from(self);
    }
  }
  const Tensor aw = a.dtype() == work ? a : a.to(work);
  const Tensor ww = w.dtype() == work ? w : w.to(work);
  auto one = [&](int64_t b) {
    if (f64) {
      gemm_f64(m, n, k, alpha, {aw.data<double>() + b * aw.stride(0), aw.stride(1), aw.stride(2)},
               {ww.data<double>() + b * ww.stride(0), ww.stride(1), ww.stride(2)}, beta,
               out.data<double>() + b * m * n, n);
    } else {
      gemm_f32(m, n, k, static_cast<float>(alpha),
               {aw.data<float>() + b * aw.stride(0), aw.stride(1), aw.stride(2)},
               {ww.data<float>() + b * ww.stride(0), ww.stride(1), ww.stride(2)},
               static_cast<float>(beta), out.data<float>() + b * m * n, n);
    }
  };
  const int threads = num_threads();
  if (nb >= 2 && nb >= threads && threads > 1) {
    set_gemm_threads(1);
    parallel_for(0, nb, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) one(b);
    });
  } else {
    set_gemm_threads(threads);
    for (int64_t b = 0; b < nb; ++b) one(b);
  }
  return out;
}

// The kernels compute into the meta function's output (KernelEntry::run_into; the shape and
// dtype checks are the meta function's, src/ops/matmul.cpp).

void mm_kernel(const OpDef&, const Args& args, const Values& outs) {
  const Tensor& a = args.tensor("self");
  const Tensor& out = outs.at(0).tensor();
  store_output(product(a.unsqueeze(0), args.tensor("mat2").unsqueeze(0), Tensor(), Scalar(0.0),
                       Scalar(1.0), out.dtype(), outs.at(0)),
               outs.at(0));
}

void addmm_kernel(const OpDef&, const Args& args, const Values& outs) {
  const Tensor& a = args.tensor("mat1");
  const Tensor& b = args.tensor("mat2");
  const Tensor& out = outs.at(0).tensor();
  const Tensor s = args.tensor("self").expand(out.shape());
  store_output(product(a.unsqueeze(0), b.unsqueeze(0), s.unsqueeze(0), args.scalar("beta"),
                       args.scalar("alpha"), out.dtype(), outs.at(0)),
               outs.at(0));
}

void bmm_kernel(const OpDef&, const Args& args, const Values& outs) {
  const Tensor& out = outs.at(0).tensor();
  store_output(product(args.tensor("self"), args.tensor("mat2"), Tensor(), Scalar(0.0), Scalar(1.0),
                       out.dtype(), outs.at(0)),
               outs.at(0));
}

void baddbmm_kernel(const OpDef&, const Args& args, const Values& outs) {
  const Tensor& out = outs.at(0).tensor();
  const Tensor s = args.tensor("self").expand(out.shape());
  store_output(product(args.tensor("batch1"), args.tensor("batch2"), s, args.scalar("beta"),
                       args.scalar("alpha"), out.dtype(), outs.at(0)),
               outs.at(0));
}

// Every float and integer dtype, and bool: ATen's kernel dispatch raises for bool, but an
// empty result or an empty inner dimension never reaches it (the result is zeros, or beta *
// self as integers for addmm/baddbmm), so cpu computes bool calls of those shapes only.
std::vector<DType> matmul_kernel_dtypes() {
  return {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
          DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

// A bool call whose product is not empty reaches ATen's dispatch: the meta function raises.
bool matmul_supports(const OpDef& op, const Values& args, std::string* why) {
  const bool batched = op.name == "aten.bmm.default" || op.name == "aten.baddbmm.default";
  const size_t first = op.name == "aten.mm.default" || op.name == "aten.bmm.default" ? 0 : 1;
  const Tensor& a = args.at(first).tensor();
  const Tensor& b = args.at(first + 1).tensor();
  if (a.dtype() != DType::Bool && b.dtype() != DType::Bool) return true;
  const int64_t want = batched ? 3 : 2;
  if (a.dim() == want && b.dim() == want && (a.numel() == 0 || b.numel() == 0 || a.size(-1) == 0))
    return true;
  if (why) *why = "backend 'cpu' multiplies bool matrices only where the product is empty";
  return false;
}

}  // namespace

void register_matmul_kernels(KernelTable& t) {
  const std::pair<const char*, KernelIntoFn> kernels[] = {
      {"aten.mm.default", &mm_kernel},
      {"aten.addmm.default", &addmm_kernel},
      {"aten.bmm.default", &bmm_kernel},
      {"aten.baddbmm.default", &baddbmm_kernel}};
  for (const auto& [name, fn] : kernels)
    t.add(name, {.supports = matmul_supports, .dtypes = matmul_kernel_dtypes(), .run_into = fn});
}

}  // namespace crucible::cpu

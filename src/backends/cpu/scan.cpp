// The `cpu` backend's scans: cumsum, cumsum_ and cumprod. The input is converted to the result
// dtype first (as ATen does), then every row along `dim` is scanned: floating values accumulate
// in f64 and each prefix is rounded once (what ATen's CPU kernel and the reference compute),
// integers accumulate in 64 bits and wrap in the result's width. Rows are independent and
// spread over the pool; when `dim` is not innermost, the inner extent is scanned as a vector
// of accumulators so that the loop runs along contiguous memory. Destination-passing: the meta
// functions checked the call (the dim, cumsum_'s dtype) and gave the result's dtype.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/nn.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace {

// The accumulator of a scan over T: f64 for floating types, wrapping u64 for integers.
template <typename T>
struct AccOf {
  using type = uint64_t;
  static uint64_t in(T v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }
  static T out(uint64_t a) { return static_cast<T>(a); }
};
// bool elements: the sum (product) of 0/1 values stored as "not zero".
struct Bool8 {
  uint8_t v;
};
template <>
struct AccOf<Bool8> {
  using type = uint64_t;
  static uint64_t in(Bool8 b) { return b.v != 0 ? 1 : 0; }
  static Bool8 out(uint64_t a) { return Bool8{static_cast<uint8_t>(a != 0 ? 1 : 0)}; }
};
template <>
struct AccOf<float> {
  using type = double;
  static double in(float v) { return v; }
  static float out(double a) { return static_cast<float>(a); }
};
template <>
struct AccOf<double> {
  using type = double;
  static double in(double v) { return v; }
  static double out(double a) { return a; }
};
template <>
struct AccOf<Half> {
  using type = double;
  static double in(Half v) { return static_cast<float>(v); }
  static Half out(double a) { return Half(a); }
};
template <>
struct AccOf<BFloat16> {
  using type = double;
  static double in(BFloat16 v) { return static_cast<float>(v); }
  static BFloat16 out(double a) { return BFloat16(a); }
};

// Scans contiguous x ([outer, len, inner]) into contiguous y (may be x itself).
template <typename T, bool kProduct>
__attribute__((optimize("O3"))) void scan_rows(const T* x, T* y, int64_t outer, int64_t len,
                                               int64_t inner) {
  using A = AccOf<T>;
  using Acc = typename A::type;
  const Acc init = kProduct ? Acc(1) : Acc(0);
  if (inner == 1) {
    parallel_for(0, outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(len, 1)),
                 [&](int64_t r0, int64_t r1) {
                   for (int64_t r = r0; r < r1; ++r) {
                     const T* xr = x + r * len;
                     T* yr = y + r * len;
                     Acc acc = init;
                     for (int64_t k = 0; k < len; ++k) {
                       acc = kProduct ? acc * A::in(xr[k]) : acc + A::in(xr[k]);
                       yr[k] = A::out(acc);
                     }
                   }
                 });
    return;
  }
  // Blocks of 256 inner columns, each scanned down `len` with its own accumulators.
  constexpr int64_t kCols = 256;
  const int64_t blocks = (inner + kCols - 1) / kCols;
  parallel_for(0, outer * blocks, std::max<int64_t>(1, 16384 / std::max<int64_t>(len * kCols, 1)),
               [&](int64_t b0, int64_t b1) {
                 Acc acc[kCols];
                 for (int64_t b = b0; b < b1; ++b) {
                   const int64_t o = b / blocks, j0 = (b % blocks) * kCols;
                   const int64_t w = std::min(kCols, inner - j0);
                   for (int64_t j = 0; j < w; ++j) acc[j] = init;
                   for (int64_t k = 0; k < len; ++k) {
                     const T* xr = x + (o * len + k) * inner + j0;
                     T* yr = y + (o * len + k) * inner + j0;
                     for (int64_t j = 0; j < w; ++j) {
                       acc[j] = kProduct ? acc[j] * A::in(xr[j]) : acc[j] + A::in(xr[j]);
                       yr[j] = A::out(acc[j]);
                     }
                   }
                 }
               });
}

template <bool kProduct>
void scan_typed(const Tensor& x, const Tensor& y, int64_t outer, int64_t len, int64_t inner) {
  switch (x.dtype()) {
#define CRUCIBLE_SCAN_CASE(DT, T)                                        \
  case DType::DT:                                                        \
    scan_rows<T, kProduct>(x.data<T>(), y.data<T>(), outer, len, inner); \
    return;
    CRUCIBLE_SCAN_CASE(Bool, Bool8)
    CRUCIBLE_SCAN_CASE(UInt8, uint8_t)
    CRUCIBLE_SCAN_CASE(Int8, int8_t)
    CRUCIBLE_SCAN_CASE(Int16, int16_t)
    CRUCIBLE_SCAN_CASE(Int32, int32_t)
    CRUCIBLE_SCAN_CASE(Int64, int64_t)
    CRUCIBLE_SCAN_CASE(Float16, Half)
    CRUCIBLE_SCAN_CASE(BFloat16, BFloat16)
    CRUCIBLE_SCAN_CASE(Float32, float)
    CRUCIBLE_SCAN_CASE(Float64, double)
#undef CRUCIBLE_SCAN_CASE
    default:
      unsupported(std::string("the cpu backend does not scan ") +
                  std::string(dtype_code(x.dtype())));
  }
}

// The result dtypes the scan handles (fp8 and complex results are left to other backends).
bool scan_dtype(DType t) {
  return t == DType::Bool || t == DType::UInt8 || t == DType::Int8 || t == DType::Int16 ||
         t == DType::Int32 || t == DType::Int64 || t == DType::Float16 || t == DType::BFloat16 ||
         t == DType::Float32 || t == DType::Float64;
}

DType result_dtype(const Tensor& self, const Value& dtype) {
  if (!dtype.is_none()) return dtype.to_dtype();
  return is_integral(self.dtype(), /*include_bool=*/true) ? DType::Int64 : self.dtype();
}

// Scans `self` (converted to the output's dtype) along `dim` into the meta function's output
// (a fresh tensor, or self for cumsum_), through a contiguous buffer where it is not contiguous.
void scan(const Tensor& self, int64_t dim_arg, bool product, const Value& out) {
  const Tensor& o = out.tensor();
  if (o.numel() == 0) return;
  const DType dt = o.dtype();
  // A 0-d tensor accepts dims 0 and -1 and is one row of one element.
  const int64_t dim = wrap_dim(dim_arg, self.dim());
  const Tensor src = self.dtype() == dt ? self.contiguous() : self.to(dt);
  const Tensor buf = output_buffer(out, self.shape(), dt);  // may be self: scanned in place
  int64_t outer = 1, len = 1, inner = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d < dim) outer *= self.size(d);
    if (d == dim) len = self.size(d);
    if (d > dim) inner *= self.size(d);
  }
  if (product)
    scan_typed<true>(src, buf, outer, len, inner);
  else
    scan_typed<false>(src, buf, outer, len, inner);
  store_output(buf, out);
}

bool scan_supports(const OpDef& op, const Values& args, std::string* why) {
  const Args a(args, op.schema);
  const DType dt = result_dtype(a.tensor("self"), a.value("dtype"));
  if (scan_dtype(dt)) return true;
  if (why) *why = "the cpu backend scans into bool, integral and floating dtypes other than fp8";
  return false;
}

template <bool kProduct>
void scan_kernel(const OpDef&, const Args& a, const Values& out) {
  scan(a.tensor("self"), a.integer("dim"), kProduct, out[0]);
}

bool inplace_supports(const OpDef& op, const Values& args, std::string* why) {
  const Args a(args, op.schema);
  if (scan_dtype(a.tensor("self").dtype())) return true;
  if (why) *why = "the cpu backend scans bool, integral and floating dtypes other than fp8";
  return false;
}

}  // namespace

void register_scan_kernels(KernelTable& t) {
  const std::vector<DType> numeric = {
      DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
      DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
  t.add("aten.cumsum.default",
        {.supports = scan_supports, .dtypes = numeric, .run_into = &scan_kernel<false>});
  t.add("aten.cumprod.default",
        {.supports = scan_supports, .dtypes = numeric, .run_into = &scan_kernel<true>});
  // cumsum_: the meta function checked that `dtype` is self's; the output is self.
  t.add("aten.cumsum_.default",
        {.supports = inplace_supports, .dtypes = numeric, .run_into = &scan_kernel<false>});
}

}  // namespace crucible::cpu

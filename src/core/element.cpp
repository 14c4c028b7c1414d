// Loads and stores of single elements of any dtype, with the conversions crucible uses
// everywhere (tensor copies, reference kernels):
//  - to a floating dtype: round to nearest, ties to even, once (int64 sources too);
//  - floating to integral: truncation toward zero as a C++ cast does on x86-64, which is what
//    ATen's CPU kernels produce: the value goes through a 32-bit conversion for i8/i16/i32
//    (NaN, inf and out-of-range give INT32_MIN, then wrapped to the width: 0 for i8/i16) and a
//    64-bit conversion for u8/i64 (NaN and out-of-range give INT64_MIN, wrapped: 0 for u8);
//  - integral to integral: two's complement wrap to the destination width;
//  - to bool: value != 0 (NaN is true).
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>

#include "crucible/core/element_runs.h"
#include "crucible/core/error.h"
#include "crucible/core/tensor.h"

namespace crucible {

namespace {

template <typename T>
T load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void store(void* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// x86-64 cvttsd2si semantics: truncate; NaN and out-of-range give the "integer indefinite".
int64_t truncate_to_i64(double v) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(v);
}

int32_t truncate_to_i32(double v) {
  if (!(v > -2147483649.0 && v < 2147483648.0)) return INT32_MIN;
  return static_cast<int32_t>(v);
}

// Converts an int64 to a double rounded to odd (sticky last bit) when it does not fit in 53
// bits. Rounding that double once more to any format of at most 51 significand bits gives the
// correctly rounded value of the integer (no double rounding).
double int_to_double_round_odd(int64_t v) {
  const bool negative = v < 0;
  uint64_t mag = negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  const int width = std::bit_width(mag);
  if (width <= 53) return negative ? -static_cast<double>(mag) : static_cast<double>(mag);
  const int shift = width - 53;
  uint64_t kept = mag >> shift;
  if ((mag & ((uint64_t{1} << shift) - 1)) != 0) kept |= 1;
  const double d = std::ldexp(static_cast<double>(kept), shift);
  return negative ? -d : d;
}

}  // namespace

[[gnu::always_inline]] static inline double load_as_double_impl(const void* p, DType t) {
  switch (t) {
    case DType::Bool:
      return load<uint8_t>(p) != 0 ? 1.0 : 0.0;
    case DType::UInt8:
      return load<uint8_t>(p);
    case DType::Int8:
      return load<int8_t>(p);
    case DType::Int16:
      return load<int16_t>(p);
    case DType::Int32:
      return load<int32_t>(p);
    case DType::Int64:
      return static_cast<double>(load<int64_t>(p));
    case DType::Float16:
      return half_to_float(load<uint16_t>(p));
    case DType::BFloat16:
      return bf16_to_float(load<uint16_t>(p));
    case DType::Float32:
      return load<float>(p);
    case DType::Float64:
      return load<double>(p);
    case DType::Float8E4M3FN:
      return fp8e4m3fn_to_float(load<uint8_t>(p));
    case DType::Float8E5M2:
      return fp8e5m2_to_float(load<uint8_t>(p));
    case DType::Complex32:
    case DType::Complex64:
    case DType::Complex128:
      return load_as_complex(p, t).real();
  }
  internal_error("load_as_double: invalid dtype");
}

[[gnu::always_inline]] static inline int64_t load_as_int_impl(const void* p, DType t) {
  switch (t) {
    case DType::Bool:
      return load<uint8_t>(p) != 0 ? 1 : 0;
    case DType::UInt8:
      return load<uint8_t>(p);
    case DType::Int8:
      return load<int8_t>(p);
    case DType::Int16:
      return load<int16_t>(p);
    case DType::Int32:
      return load<int32_t>(p);
    case DType::Int64:
      return load<int64_t>(p);
    default:
      return truncate_to_i64(load_as_double(p, t));
  }
}

[[gnu::always_inline]] static inline void store_from_double_impl(void* p, DType t, double v) {
  switch (t) {
    case DType::Bool:
      store<uint8_t>(p, v != 0.0 ? 1 : 0);
      return;
    case DType::UInt8:
      store(p, static_cast<uint8_t>(truncate_to_i64(v)));
      return;
    case DType::Int8:
      store(p, static_cast<int8_t>(truncate_to_i32(v)));
      return;
    case DType::Int16:
      store(p, static_cast<int16_t>(truncate_to_i32(v)));
      return;
    case DType::Int32:
      store(p, truncate_to_i32(v));
      return;
    case DType::Int64:
      store(p, truncate_to_i64(v));
      return;
    case DType::Float16:
      store(p, half_from_double(v));
      return;
    case DType::BFloat16:
      store(p, bf16_from_double(v));
      return;
    case DType::Float32:
      store(p, static_cast<float>(v));
      return;
    case DType::Float64:
      store(p, v);
      return;
    case DType::Float8E4M3FN:
      store(p, fp8e4m3fn_from_double(v));
      return;
    case DType::Float8E5M2:
      store(p, fp8e5m2_from_double(v));
      return;
    case DType::Complex32:
    case DType::Complex64:
    case DType::Complex128:
      store_from_complex(p, t, {v, 0.0});
      return;
  }
  internal_error("store_from_double: invalid dtype");
}

std::complex<double> load_as_complex(const void* p, DType t) {
  const char* c = static_cast<const char*>(p);
  switch (t) {
    case DType::Complex32:
      return {half_to_float(load<uint16_t>(c)), half_to_float(load<uint16_t>(c + 2))};
    case DType::Complex64:
      return {load<float>(c), load<float>(c + 4)};
    case DType::Complex128:
      return {load<double>(c), load<double>(c + 8)};
    default:
      return {load_as_double(p, t), 0.0};
  }
}

void store_from_complex(void* p, DType t, std::complex<double> v) {
  char* c = static_cast<char*>(p);
  switch (t) {
    case DType::Complex32:
      store(c, half_from_double(v.real()));
      store(c + 2, half_from_double(v.imag()));
      return;
    case DType::Complex64:
      store(c, static_cast<float>(v.real()));
      store(c + 4, static_cast<float>(v.imag()));
      return;
    case DType::Complex128:
      store(c, v.real());
      store(c + 8, v.imag());
      return;
    case DType::Bool:
      store<uint8_t>(p, (v.real() != 0.0 || v.imag() != 0.0) ? 1 : 0);
      return;
    default:
      store_from_double(p, t, v.real());
      return;
  }
}

[[gnu::always_inline]] static inline void store_from_int_impl(void* p, DType t, int64_t v) {
  switch (t) {
    case DType::Bool:
      store<uint8_t>(p, v != 0 ? 1 : 0);
      return;
    case DType::UInt8:
      store(p, static_cast<uint8_t>(v));
      return;
    case DType::Int8:
      store(p, static_cast<int8_t>(v));
      return;
    case DType::Int16:
      store(p, static_cast<int16_t>(v));
      return;
    case DType::Int32:
      store(p, static_cast<int32_t>(v));
      return;
    case DType::Int64:
      store(p, v);
      return;
    case DType::Float64:
      store(p, static_cast<double>(v));
      return;
    case DType::Complex128:
      store_from_complex(p, t, {static_cast<double>(v), 0.0});
      return;
    default:
      store_from_double(p, t, int_to_double_round_odd(v));
      return;
  }
}

double load_as_double(const void* p, DType t) { return load_as_double_impl(p, t); }
int64_t load_as_int(const void* p, DType t) { return load_as_int_impl(p, t); }
void store_from_double(void* p, DType t, double v) { store_from_double_impl(p, t, v); }
void store_from_int(void* p, DType t, int64_t v) { store_from_int_impl(p, t, v); }

// The runs: the per-element conversions above, inlined with the dtype known, so each run
// takes one switch instead of one per element.
namespace {

template <typename F>
void with_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool:
      return f.template operator()<DType::Bool>();
    case DType::UInt8:
      return f.template operator()<DType::UInt8>();
    case DType::Int8:
      return f.template operator()<DType::Int8>();
    case DType::Int16:
      return f.template operator()<DType::Int16>();
    case DType::Int32:
      return f.template operator()<DType::Int32>();
    case DType::Int64:
      return f.template operator()<DType::Int64>();
    case DType::Float16:
      return f.template operator()<DType::Float16>();
    case DType::BFloat16:
      return f.template operator()<DType::BFloat16>();
    case DType::Float32:
      return f.template operator()<DType::Float32>();
    case DType::Float64:
      return f.template operator()<DType::Float64>();
    case DType::Float8E4M3FN:
      return f.template operator()<DType::Float8E4M3FN>();
    case DType::Float8E5M2:
      return f.template operator()<DType::Float8E5M2>();
    case DType::Complex32:
      return f.template operator()<DType::Complex32>();
    case DType::Complex64:
      return f.template operator()<DType::Complex64>();
    case DType::Complex128:
      return f.template operator()<DType::Complex128>();
  }
  internal_error("element runs: invalid dtype");
}

int64_t step_bytes(int64_t stride, DType t) { return stride * static_cast<int64_t>(itemsize(t)); }

}  // namespace

void load_run_as_double(const void* base, int64_t stride, int64_t n, DType t, double* out) {
  const char* p = static_cast<const char*>(base);
  const int64_t step = step_bytes(stride, t);
  with_dtype(t, [&]<DType kT>() {
    for (int64_t i = 0; i < n; ++i) out[i] = load_as_double_impl(p + i * step, kT);
  });
}

void load_run_as_int(const void* base, int64_t stride, int64_t n, DType t, int64_t* out) {
  const char* p = static_cast<const char*>(base);
  const int64_t step = step_bytes(stride, t);
  with_dtype(t, [&]<DType kT>() {
    for (int64_t i = 0; i < n; ++i) out[i] = load_as_int_impl(p + i * step, kT);
  });
}

void store_run_from_double(void* base, int64_t stride, int64_t n, DType t, const double* in) {
  char* p = static_cast<char*>(base);
  const int64_t step = step_bytes(stride, t);
  with_dtype(t, [&]<DType kT>() {
    for (int64_t i = 0; i < n; ++i) store_from_double_impl(p + i * step, kT, in[i]);
  });
}

void store_run_from_int(void* base, int64_t stride, int64_t n, DType t, const int64_t* in) {
  char* p = static_cast<char*>(base);
  const int64_t step = step_bytes(stride, t);
  with_dtype(t, [&]<DType kT>() {
    for (int64_t i = 0; i < n; ++i) store_from_int_impl(p + i * step, kT, in[i]);
  });
}

}  // namespace crucible

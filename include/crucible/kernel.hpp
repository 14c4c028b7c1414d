// Header-only C++17 helpers over crucible's C kernel ABI (crucible/kernel.h), so that a kernel is
// a few lines:
//
//   #include <crucible/kernel.hpp>
//   namespace ck = crucible::kernel;
//   static int32_t relu(ck::Call& k) {
//     ck::Tensor x = k.tensor(0), out = k.output(0);
//     ck::for_each(out.shape(), {x.strides(), out.strides()}, [&](const int64_t* off) {
//       const double v = x.load(off[0]);
//       out.store(off[1], v < 0 ? 0.0 : v);
//     });
//     return CRUCIBLE_OK;
//   }
//   CRUCIBLE_KERNEL("aten.relu.default", relu)
//
// Including this header defines the library's entry point crucible_plugin_v1 (a weak symbol,
// so several kernel files can be linked into one plugin); it lists every kernel registered with
// CRUCIBLE_KERNEL in the library. CRUCIBLE_PLUGIN_NAME("name", "version") names the library.
// Exceptions thrown by a kernel are caught at the boundary and reported as CRUCIBLE_INTERNAL.
// docs/kernel-abi.md is the guide.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <string>
#include <vector>

#include "crucible/kernel.h"

// Everything here is hidden: a plugin exports its entry point only, and two plugins loaded into
// one process never share (or clash over) these helpers.
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

#include "crucible/numeric.h"  // NOLINT(build/include_order): hidden in the plugin too

namespace crucible::kernel {

// ---- element types ---------------------------------------------------------------------------

// ATen's scalar types and rules, shared with crucible itself (crucible/numeric.h).
using numeric::can_cast;
using numeric::is_complex;
using numeric::is_floating;
using numeric::is_integral;
using numeric::promote_types;
using numeric::ScalarType;
using numeric::to_complex;
using numeric::to_real;

// The DLPack code and bits, and ATen's name ("Float", "Long", as its error messages spell it),
// of each ScalarType, in enum order.
struct TypeInfo {
  uint8_t code;
  uint8_t bits;
  const char* name;
};
inline const TypeInfo& type_info(ScalarType t) {
  static const TypeInfo table[] = {
      {CRUCIBLE_DL_BOOL, 8, "Bool"},
      {kDLUInt, 8, "Byte"},
      {kDLInt, 8, "Char"},
      {kDLInt, 16, "Short"},
      {kDLInt, 32, "Int"},
      {kDLInt, 64, "Long"},
      {kDLFloat, 16, "Half"},
      {kDLBfloat, 16, "BFloat16"},
      {kDLFloat, 32, "Float"},
      {kDLFloat, 64, "Double"},
      {kDLComplex, 32, "ComplexHalf"},
      {kDLComplex, 64, "ComplexFloat"},
      {kDLComplex, 128, "ComplexDouble"},
      {CRUCIBLE_DL_FLOAT8_E4M3FN, 8, "Float8_e4m3fn"},
      {CRUCIBLE_DL_FLOAT8_E5M2, 8, "Float8_e5m2"},
      {kDLOpaqueHandle, 0, "Undefined"},
  };
  return table[static_cast<int>(t)];
}

inline ScalarType scalar_type(DLDataType t) {
  for (int i = 0; i < static_cast<int>(ScalarType::Undefined); ++i) {
    const TypeInfo& info = type_info(static_cast<ScalarType>(i));
    if (t.lanes == 1 && t.code == info.code && t.bits == info.bits)
      return static_cast<ScalarType>(i);
  }
  return ScalarType::Undefined;
}

inline DLDataType dl_dtype(ScalarType t) { return {type_info(t).code, type_info(t).bits, 1}; }
inline const char* type_name(ScalarType t) { return type_info(t).name; }
inline size_t itemsize(ScalarType t) { return type_info(t).bits / 8u; }

// ---- fp16 / bf16 conversions (round to nearest, ties to even, once) --------------------------

inline double half_bits_to_double(uint16_t h) { return numeric::decode(h, numeric::kHalf); }
inline double bf16_bits_to_double(uint16_t b) { return numeric::decode(b, numeric::kBFloat16); }
inline uint16_t double_to_half_bits(double d) {
  return static_cast<uint16_t>(numeric::encode(d, numeric::kHalf));
}
inline uint16_t double_to_bf16_bits(double d) {
  return static_cast<uint16_t>(numeric::encode(d, numeric::kBFloat16));
}

// ---- element loads and stores, any dtype ------------------------------------------------------

// Reads one element as a double (complex: the real part; float8: not supported, NaN).
inline double load_double(const void* p, ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return *static_cast<const uint8_t*>(p) ? 1.0 : 0.0;
    case ScalarType::UInt8:
      return *static_cast<const uint8_t*>(p);
    case ScalarType::Int8:
      return *static_cast<const int8_t*>(p);
    case ScalarType::Int16:
      return *static_cast<const int16_t*>(p);
    case ScalarType::Int32:
      return *static_cast<const int32_t*>(p);
    case ScalarType::Int64:
      return static_cast<double>(*static_cast<const int64_t*>(p));
    case ScalarType::Float16:
      return half_bits_to_double(*static_cast<const uint16_t*>(p));
    case ScalarType::BFloat16:
      return bf16_bits_to_double(*static_cast<const uint16_t*>(p));
    case ScalarType::Float32:
      return *static_cast<const float*>(p);
    case ScalarType::Float64:
      return *static_cast<const double*>(p);
    case ScalarType::Complex32:
      return half_bits_to_double(*static_cast<const uint16_t*>(p));
    case ScalarType::Complex64:
      return *static_cast<const float*>(p);
    case ScalarType::Complex128:
      return *static_cast<const double*>(p);
    default:
      return NAN;
  }
}

// Reads one element as an int64 (exact for integer dtypes; floats truncate toward zero).
inline int64_t load_int(const void* p, ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return *static_cast<const uint8_t*>(p) ? 1 : 0;
    case ScalarType::UInt8:
      return *static_cast<const uint8_t*>(p);
    case ScalarType::Int8:
      return *static_cast<const int8_t*>(p);
    case ScalarType::Int16:
      return *static_cast<const int16_t*>(p);
    case ScalarType::Int32:
      return *static_cast<const int32_t*>(p);
    case ScalarType::Int64:
      return *static_cast<const int64_t*>(p);
    default: {
      double d = load_double(p, t);
      return std::isfinite(d) && std::fabs(d) < 9.2e18 ? static_cast<int64_t>(d) : INT64_MIN;
    }
  }
}

// Writes an integer, wrapping to the width of integer dtypes (two's complement).
inline void store_int(void* p, ScalarType t, int64_t v) {
  switch (t) {
    case ScalarType::Bool:
      *static_cast<uint8_t*>(p) = v != 0;
      return;
    case ScalarType::UInt8:
      *static_cast<uint8_t*>(p) = static_cast<uint8_t>(v);
      return;
    case ScalarType::Int8:
      *static_cast<int8_t*>(p) = static_cast<int8_t>(v);
      return;
    case ScalarType::Int16:
      *static_cast<int16_t*>(p) = static_cast<int16_t>(v);
      return;
    case ScalarType::Int32:
      *static_cast<int32_t*>(p) = static_cast<int32_t>(v);
      return;
    case ScalarType::Int64:
      *static_cast<int64_t*>(p) = v;
      return;
    default:
      break;
  }
  // Floating dtypes: round once from the exact integer when it fits a double exactly.
  const double d = static_cast<double>(v);
  switch (t) {
    case ScalarType::Float16:
      *static_cast<uint16_t*>(p) = double_to_half_bits(d);
      return;
    case ScalarType::BFloat16:
      *static_cast<uint16_t*>(p) = double_to_bf16_bits(d);
      return;
    case ScalarType::Float32:
      *static_cast<float*>(p) = static_cast<float>(v);
      return;
    case ScalarType::Float64:
      *static_cast<double*>(p) = d;
      return;
    default:
      return;
  }
}

// Writes a double, rounding once to floating dtypes (nearest, ties to even); integer dtypes take
// the value truncated toward zero (NaN, inf and out-of-range values are undefined in ATen too).
inline void store_double(void* p, ScalarType t, double v) {
  switch (t) {
    case ScalarType::Bool:
      *static_cast<uint8_t*>(p) = v != 0;
      return;
    case ScalarType::Float16:
      *static_cast<uint16_t*>(p) = double_to_half_bits(v);
      return;
    case ScalarType::BFloat16:
      *static_cast<uint16_t*>(p) = double_to_bf16_bits(v);
      return;
    case ScalarType::Float32:
      *static_cast<float*>(p) = static_cast<float>(v);
      return;
    case ScalarType::Float64:
      *static_cast<double*>(p) = v;
      return;
    case ScalarType::Complex32: {
      uint16_t* c = static_cast<uint16_t*>(p);
      c[0] = double_to_half_bits(v);
      c[1] = 0;
      return;
    }
    case ScalarType::Complex64: {
      float* c = static_cast<float*>(p);
      c[0] = static_cast<float>(v);
      c[1] = 0;
      return;
    }
    case ScalarType::Complex128: {
      double* c = static_cast<double*>(p);
      c[0] = v;
      c[1] = 0;
      return;
    }
    default:
      store_int(p, t,
                std::isfinite(v) && std::fabs(v) < 9.2e18 ? static_cast<int64_t>(v) : INT64_MIN);
  }
}

// Reads one element as a complex number (a real element reads as (value, 0)).
inline std::complex<double> load_complex(const void* p, ScalarType t) {
  switch (t) {
    case ScalarType::Complex32: {
      const uint16_t* c = static_cast<const uint16_t*>(p);
      return {half_bits_to_double(c[0]), half_bits_to_double(c[1])};
    }
    case ScalarType::Complex64: {
      const float* c = static_cast<const float*>(p);
      return {c[0], c[1]};
    }
    case ScalarType::Complex128: {
      const double* c = static_cast<const double*>(p);
      return {c[0], c[1]};
    }
    default:
      return {load_double(p, t), 0.0};
  }
}

// Writes a complex number, each part rounded once; a real dtype keeps the real part (bool:
// re != 0 || im != 0).
inline void store_complex(void* p, ScalarType t, std::complex<double> v) {
  switch (t) {
    case ScalarType::Complex32: {
      uint16_t* c = static_cast<uint16_t*>(p);
      c[0] = double_to_half_bits(v.real());
      c[1] = double_to_half_bits(v.imag());
      return;
    }
    case ScalarType::Complex64: {
      float* c = static_cast<float*>(p);
      c[0] = static_cast<float>(v.real());
      c[1] = static_cast<float>(v.imag());
      return;
    }
    case ScalarType::Complex128: {
      double* c = static_cast<double*>(p);
      c[0] = v.real();
      c[1] = v.imag();
      return;
    }
    case ScalarType::Bool:
      *static_cast<uint8_t*>(p) = v.real() != 0 || v.imag() != 0;
      return;
    default:
      store_double(p, t, v.real());
  }
}

// `v` rounded to dtype `t` and read back (what a computation in `t` would hold).
inline double round_to(ScalarType t, double v) {
  unsigned char buf[16];
  store_double(buf, t, v);
  return load_double(buf, t);
}

// ---- tensors -----------------------------------------------------------------------------------

// A non-owning view of a DLTensor: shape, strides (in elements), dtype and element access by
// element offset (the sum of index * stride).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(DLTensor* t) : t_(t) {}

  bool defined() const { return t_ != nullptr; }
  DLTensor* dl() const { return t_; }
  int64_t dim() const { return t_->ndim; }
  int64_t size(int64_t d) const { return t_->shape[d < 0 ? d + dim() : d]; }
  int64_t stride(int64_t d) const { return t_->strides[d < 0 ? d + dim() : d]; }
  std::vector<int64_t> shape() const { return {t_->shape, t_->shape + t_->ndim}; }
  std::vector<int64_t> strides() const { return {t_->strides, t_->strides + t_->ndim}; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < t_->ndim; ++i) n *= t_->shape[i];
    return n;
  }
  ScalarType dtype() const { return scalar_type(t_->dtype); }
  size_t itemsize() const { return (t_->dtype.bits * t_->dtype.lanes + 7) / 8; }
  bool is_contiguous() const {
    int64_t expected = 1;
    for (int i = t_->ndim - 1; i >= 0; --i) {
      if (t_->shape[i] != 1 && t_->strides[i] != expected) return false;
      expected *= t_->shape[i];
    }
    return true;
  }

  // The first element (data + byte_offset).
  void* data_ptr() const { return static_cast<char*>(t_->data) + t_->byte_offset; }
  template <typename T>
  T* data() const {
    return static_cast<T*>(data_ptr());
  }
  void* ptr(int64_t offset) const {
    return static_cast<char*>(data_ptr()) + offset * static_cast<int64_t>(itemsize());
  }

  double load(int64_t offset) const { return load_double(ptr(offset), dtype()); }
  int64_t load_int(int64_t offset) const { return kernel::load_int(ptr(offset), dtype()); }
  void store(int64_t offset, double v) const { store_double(ptr(offset), dtype(), v); }
  void store_int(int64_t offset, int64_t v) const { kernel::store_int(ptr(offset), dtype(), v); }
  std::complex<double> load_complex(int64_t offset) const {
    return kernel::load_complex(ptr(offset), dtype());
  }
  void store_complex(int64_t offset, std::complex<double> v) const {
    kernel::store_complex(ptr(offset), dtype(), v);
  }

  // ATen's "more than one element of the written-to tensor refers to a single memory location":
  // a dim of size > 1 with stride 0. In-place and out= kernels refuse to write such a tensor.
  bool has_internal_overlap() const {
    for (int i = 0; i < t_->ndim; ++i)
      if (t_->shape[i] > 1 && t_->strides[i] == 0) return true;
    return false;
  }

 private:
  DLTensor* t_ = nullptr;
};

// Calls fn(const int64_t* offsets) for every index of `shape` in row-major order, where
// offsets[j] is the element offset of that index under strides[j] (one stride list per tensor;
// a broadcast dim has stride 0).
template <typename Fn>
void for_each(const std::vector<int64_t>& shape,
              std::initializer_list<std::vector<int64_t>> strides, Fn&& fn) {
  const std::vector<std::vector<int64_t>> st(strides);
  const size_t n = st.size(), nd = shape.size();
  for (int64_t s : shape)
    if (s == 0) return;
  std::vector<int64_t> idx(nd, 0), off(n, 0);
  for (;;) {
    fn(static_cast<const int64_t*>(off.data()));
    size_t d = nd;
    for (;;) {
      if (d == 0) return;
      --d;
      if (++idx[d] < shape[d]) {
        for (size_t j = 0; j < n; ++j) off[j] += st[j][d];
        break;
      }
      for (size_t j = 0; j < n; ++j) off[j] -= st[j][d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

// Broadcasts two shapes as ATen does; false when they do not broadcast.
inline bool broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                             std::vector<int64_t>* out) {
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  out->assign(n, 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    (*out)[i] = x == 1 ? y : x;
  }
  return true;
}

// The strides of `t` seen as broadcast to `shape` (0 where it is broadcast). `shape` must be a
// broadcast of t's shape.
inline std::vector<int64_t> broadcast_strides(const Tensor& t, const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 0);
  const size_t lead = shape.size() - static_cast<size_t>(t.dim());
  for (size_t i = 0; i < static_cast<size_t>(t.dim()); ++i)
    st[lead + i] = t.size(static_cast<int64_t>(i)) == 1 ? 0 : t.stride(static_cast<int64_t>(i));
  return st;
}

// Wraps a possibly negative dim as ATen's maybe_wrap_dim (a 0-d tensor takes -1 and 0); false
// when out of range.
inline bool wrap_dim(int64_t dim, int64_t ndim, int64_t* out) {
  const int64_t n = ndim == 0 ? 1 : ndim;
  if (dim < -n || dim >= n) return false;
  *out = dim < 0 ? dim + n : dim;
  return true;
}

// ---- the call ----------------------------------------------------------------------------------

// A number argument (Scalar, int, float, bool, or a wrapped number where a Tensor belongs).
struct Number {
  ScalarType type = ScalarType::Int64;  // Int64 for ints, Float64 for floats, Bool for bools
  double f = 0;
  int64_t i = 0;
  bool is_floating() const { return type == ScalarType::Float64; }
  bool is_bool() const { return type == ScalarType::Bool; }
};

class Call {
 public:
  explicit Call(crucible_call* c) : c_(c) {}
  crucible_call* raw() const { return c_; }
  const char* op() const { return c_->op; }
  int num_args() const { return c_->num_args; }
  int num_outputs() const { return c_->num_outputs; }

  const crucible_value& arg(int i) const { return c_->args[i]; }
  crucible_value_kind kind(int i) const { return static_cast<crucible_value_kind>(arg(i).kind); }
  bool is_none(int i) const { return kind(i) == CRUCIBLE_NONE; }
  bool is_tensor(int i) const { return kind(i) == CRUCIBLE_TENSOR; }
  bool is_number(int i) const {
    return kind(i) == CRUCIBLE_INT || kind(i) == CRUCIBLE_FLOAT || kind(i) == CRUCIBLE_BOOL;
  }

  Tensor tensor(int i) const { return is_tensor(i) ? Tensor(arg(i).v.tensor) : Tensor(); }
  int64_t int_arg(int i) const { return arg(i).v.i; }
  double float_arg(int i) const {
    return kind(i) == CRUCIBLE_FLOAT  ? arg(i).v.f
           : kind(i) == CRUCIBLE_BOOL ? arg(i).v.b
                                      : static_cast<double>(arg(i).v.i);
  }
  bool bool_arg(int i) const { return arg(i).v.b != 0; }
  const char* string_arg(int i) const { return arg(i).v.s; }
  std::vector<int64_t> int_list(int i) const {
    const auto& l = arg(i).v.ints;
    return {l.items, l.items + l.size};
  }
  std::vector<Tensor> tensor_list(int i) const {
    std::vector<Tensor> out;
    const auto& l = arg(i).v.tensors;
    for (int64_t j = 0; j < l.size; ++j) out.emplace_back(l.items[j]);
    return out;
  }
  ScalarType dtype_arg(int i) const { return scalar_type(arg(i).v.dtype); }
  Number number(int i) const {
    Number n;
    switch (kind(i)) {
      case CRUCIBLE_FLOAT:
        n.type = ScalarType::Float64;
        n.f = arg(i).v.f;
        n.i = static_cast<int64_t>(n.f);
        break;
      case CRUCIBLE_BOOL:
        n.type = ScalarType::Bool;
        n.i = arg(i).v.b != 0;
        n.f = static_cast<double>(n.i);
        break;
      default:
        n.type = ScalarType::Int64;
        n.i = arg(i).v.i;
        n.f = static_cast<double>(n.i);
        break;
    }
    return n;
  }

  Tensor output(int k) const { return Tensor(c_->outputs[k].v.tensor); }
  crucible_value& output_value(int k) const { return c_->outputs[k]; }
  // Allocates data-dependent output k (its data is NULL) with a contiguous layout.
  int32_t alloc_output(int k, const std::vector<int64_t>& shape, ScalarType dtype) const {
    return c_->alloc_output(c_, c_->outputs[k].v.tensor, static_cast<int32_t>(shape.size()),
                            shape.data(), dl_dtype(dtype));
  }
  // Makes view output k a view of input tensor `base`.
  int32_t make_view(int k, const Tensor& base, const std::vector<int64_t>& shape,
                    const std::vector<int64_t>& strides, int64_t offset) const {
    return c_->make_view(c_, c_->outputs[k].v.tensor, base.dl(), static_cast<int32_t>(shape.size()),
                         shape.data(), strides.data(), offset);
  }

  int num_threads() const { return c_->num_threads; }
  uint64_t seed() const { return c_->seed; }
  void* stream() const { return c_->stream; }

  // Writes the message and returns the status, for `return k.error("...")`.
  int32_t fail(int32_t status, const std::string& message) const {
    if (c_->error && c_->error_size > 0)
      std::snprintf(c_->error, c_->error_size, "%s", message.c_str());
    return status;
  }
  int32_t error(const std::string& message) const { return fail(CRUCIBLE_ERROR, message); }
  int32_t unsupported(const std::string& message) const {
    return fail(CRUCIBLE_UNSUPPORTED, message);
  }

 private:
  crucible_call* c_;
};

// ATen's result_type over the tensor and number arguments `args` (argument indices): tensors
// with dims take precedence over 0-d tensors, which take precedence over numbers, unless a
// lower class has a higher category (bool < integral < floating).
inline ScalarType result_type(const Call& k, std::initializer_list<int> args) {
  ScalarType dim_t = ScalarType::Undefined, zero_t = ScalarType::Undefined,
             num_t = ScalarType::Undefined;
  auto add = [](ScalarType acc, ScalarType t) {
    return acc == ScalarType::Undefined ? t : promote_types(acc, t);
  };
  for (int i : args) {
    if (k.is_tensor(i)) {
      Tensor t = k.tensor(i);
      if (t.dim() > 0)
        dim_t = add(dim_t, t.dtype());
      else
        zero_t = add(zero_t, t.dtype());
    } else if (k.is_number(i)) {
      Number n = k.number(i);
      // A Python float counts as the default dtype (f32), an int as i64.
      num_t = add(num_t, n.is_floating() ? ScalarType::Float32 : n.type);
    }
  }
  auto combine = [](ScalarType higher, ScalarType lower) {
    if (higher == ScalarType::Undefined) return lower;
    if (lower == ScalarType::Undefined) return higher;
    if (is_complex(higher)) return higher;
    if (is_complex(lower)) return is_floating(higher) ? to_complex(higher) : lower;
    if (is_floating(higher)) return higher;
    if (higher == ScalarType::Bool || is_floating(lower)) return promote_types(higher, lower);
    return higher;
  };
  return combine(dim_t, combine(zero_t, num_t));
}

// ---- registration ------------------------------------------------------------------------------

namespace detail {

#if defined(__GNUC__)
#define CRUCIBLE_KERNEL_HIDDEN __attribute__((visibility("hidden")))
#define CRUCIBLE_KERNEL_EXPORT __attribute__((visibility("default")))
#define CRUCIBLE_KERNEL_WEAK __attribute__((weak))
#else
#define CRUCIBLE_KERNEL_HIDDEN
#define CRUCIBLE_KERNEL_EXPORT
#define CRUCIBLE_KERNEL_WEAK
#endif

// The kernels of this library (hidden: each shared library has its own).
struct Registry {
  std::vector<crucible_kernel_entry> entries;
  const char* name = "kernels";
  const char* version = nullptr;
  DLDevice device{kDLCPU, 0};
  crucible_plugin plugin{};
};
CRUCIBLE_KERNEL_HIDDEN inline Registry& registry() {
  static Registry r;
  return r;
}

template <int32_t (*F)(Call&)>
int32_t trampoline(crucible_call* c) {
  Call k(c);
  try {
    return F(k);
  } catch (const std::exception& e) {
    return k.fail(CRUCIBLE_INTERNAL, std::string("the kernel threw: ") + e.what());
  } catch (...) {
    return k.fail(CRUCIBLE_INTERNAL, "the kernel threw a non-standard exception");
  }
}

struct Registrar {
  Registrar(const char* op, crucible_kernel_fn fn, crucible_supports_fn supports = nullptr) {
    registry().entries.push_back({op, fn, supports});
  }
};
struct NameSetter {
  NameSetter(const char* name, const char* version, DLDevice device) {
    registry().name = name;
    registry().version = version;
    registry().device = device;
  }
};

}  // namespace detail
}  // namespace crucible::kernel

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#define CRUCIBLE_KERNEL_CONCAT_(a, b) a##b
#define CRUCIBLE_KERNEL_CONCAT(a, b) CRUCIBLE_KERNEL_CONCAT_(a, b)

// Registers `fn` (int32_t fn(crucible::kernel::Call&)) as the kernel of `op`
// ("aten.relu.default").
#define CRUCIBLE_KERNEL(op, fn)                                                                    \
  static ::crucible::kernel::detail::Registrar CRUCIBLE_KERNEL_CONCAT(crucible_kernel_, __LINE__)( \
      op, &::crucible::kernel::detail::trampoline<fn>);

// The same, with a supports hook (int32_t supports(crucible::kernel::Call&): CRUCIBLE_OK, or
// k.unsupported("why")).
#define CRUCIBLE_KERNEL_SUPPORTS(op, fn, supports)                                                 \
  static ::crucible::kernel::detail::Registrar CRUCIBLE_KERNEL_CONCAT(crucible_kernel_, __LINE__)( \
      op, &::crucible::kernel::detail::trampoline<fn>,                                             \
      &::crucible::kernel::detail::trampoline<supports>);

// Names the library (once per library; default "kernels", CPU).
#define CRUCIBLE_PLUGIN_NAME(name, version)                             \
  static ::crucible::kernel::detail::NameSetter CRUCIBLE_KERNEL_CONCAT( \
      crucible_plugin_, __LINE__)(name, version, DLDevice{kDLCPU, 0});

#ifndef CRUCIBLE_NO_PLUGIN_ENTRY
extern "C" CRUCIBLE_KERNEL_EXPORT const crucible_plugin* crucible_plugin_v1(void);
// The library's entry point: every kernel registered with CRUCIBLE_KERNEL. Weak, so that each
// kernel file may define it and several files still link into one library.
extern "C" CRUCIBLE_KERNEL_WEAK CRUCIBLE_KERNEL_EXPORT const crucible_plugin* crucible_plugin_v1(
    void) {
  auto& r = ::crucible::kernel::detail::registry();
  r.plugin.abi_version = CRUCIBLE_KERNEL_ABI_VERSION;
  r.plugin.struct_size = sizeof(crucible_plugin);
  r.plugin.name = r.name;
  r.plugin.version = r.version;
  r.plugin.device = r.device;
  r.plugin.kernels = r.entries.data();
  r.plugin.num_kernels = static_cast<int64_t>(r.entries.size());
  return &r.plugin;
}
#endif

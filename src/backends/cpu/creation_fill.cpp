// The cpu backend's fill.Scalar / fill.Tensor (empty_like(self).fill_(value)), copy (the
// functional copy_: a preserve-format clone of self with src broadcast into it) and arange.
//
// Destination-passing: the meta functions (the catalog's creation_fill.cpp, with the shared rules
// of crucible/ops/rules/creation.h and copy.h) checked the call and laid out the output (self's
// preserve-format strides; arange's length and dtype). The fill value goes through c10's checked
// conversion into self's dtype; fill.Tensor takes the item() of a 0-d tensor. arange: without a
// dtype, all-integral bounds give i64, anything else f32; step 0, a sign mismatch and non-finite
// bounds raise; integral dtypes count in int64 (the scalars truncated first; i64's length from the
// truncated integers) and wrap, floating ones compute start + i * step in double and round once;
// bool is refused.
#include <vector>

#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "backends/cpu/shape_kernels.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/core/half.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/copy.h"
#include "crucible/ops/rules/creation.h"

namespace crucible::cpu {

namespace {

void fill_scalar(const OpDef&, const Args& a, const Values& out) {
  const Tensor& o = out[0].tensor();
  fill_output(o, pattern_of_scalar(a.scalar("value"), o.dtype()));
}

void fill_tensor(const OpDef&, const Args& a, const Values& out) {
  const Tensor& o = out[0].tensor();
  fill_output(o, pattern_of_scalar(creation::fill_value(a.value("value")), o.dtype()));
}

void copy(const OpDef&, const Args& a, const Values& out) {
  copy_into(a.tensor("src"), out[0].tensor());
}

// ---- arange -----------------------------------------------------------------------------------

// out[i] = convert(value(i)) for every i, typed by out's dtype, produced in parallel chunks.
template <typename T, typename V, typename C>
void write_typed(const Tensor& out, V value, C convert) {
  const auto is = static_cast<int64_t>(sizeof(T));
  produce_bytes(static_cast<char*>(out.data_ptr()), out.numel() * is,
                [&](int64_t lo, int64_t hi, char* dst) {
                  T* d = reinterpret_cast<T*>(dst);
                  for (int64_t i = lo / is; i < hi / is; ++i) *d++ = convert(value(i));
                });
}

// start + i * step in double, rounded once to out's floating dtype.
void write_floating(const Tensor& out, double s, double st) {
  auto v = [s, st](int64_t i) { return s + st * static_cast<double>(i); };
  switch (out.dtype()) {
    case DType::Float32:
      return write_typed<float>(out, v, [](double x) { return static_cast<float>(x); });
    case DType::Float64:
      return write_typed<double>(out, v, [](double x) { return x; });
    case DType::Float16:
      return write_typed<uint16_t>(out, v, [](double x) { return half_from_double(x); });
    case DType::BFloat16:
      return write_typed<uint16_t>(out, v, [](double x) { return bf16_from_double(x); });
    default:
      internal_error("arange: not a floating dtype");
  }
}

// start + i * step in wrapping int64 arithmetic (as ATen's kernel), wrapped to out's width.
void write_integral(const Tensor& out, int64_t s, int64_t st) {
  auto v = [s, st](int64_t i) {
    return static_cast<int64_t>(static_cast<uint64_t>(s) +
                                static_cast<uint64_t>(st) * static_cast<uint64_t>(i));
  };
  switch (out.dtype()) {
    case DType::UInt8:
      return write_typed<uint8_t>(out, v, [](int64_t x) { return static_cast<uint8_t>(x); });
    case DType::Int8:
      return write_typed<int8_t>(out, v, [](int64_t x) { return static_cast<int8_t>(x); });
    case DType::Int16:
      return write_typed<int16_t>(out, v, [](int64_t x) { return static_cast<int16_t>(x); });
    case DType::Int32:
      return write_typed<int32_t>(out, v, [](int64_t x) { return static_cast<int32_t>(x); });
    case DType::Int64:
      return write_typed<int64_t>(out, v, [](int64_t x) { return x; });
    default:
      internal_error("arange: not an integral dtype");
  }
}

// start + i * step into out (the meta function gave its length and dtype); the bounds are the
// call's, absent ones 0 and 1.
void arange(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& out = outputs[0].tensor();
  if (out.numel() == 0) return;
  const Scalar start = a.has("start") ? a.scalar("start") : Scalar(int64_t{0});
  const Scalar step = a.has("step") ? a.scalar("step") : Scalar(int64_t{1});
  if (is_floating(out.dtype()))
    write_floating(out, creation::arange_double(start), creation::arange_double(step));
  else
    write_integral(out, creation::arange_int(start), creation::arange_int(step));
}

}  // namespace

void register_creation_fill_kernels(KernelTable& t) {
  const std::vector<DType> all = shape_dtypes();
  t.add("aten.fill.Scalar", {.supports = &shape_supports, .dtypes = all, .run_into = &fill_scalar});
  t.add("aten.fill.Tensor", {.supports = &shape_supports, .dtypes = all, .run_into = &fill_tensor});
  t.add("aten.copy.default", {.supports = &shape_supports, .dtypes = all, .run_into = &copy});
  for (const char* n : {"aten.arange.default", "aten.arange.start", "aten.arange.start_step"})
    t.add(n, {.supports = &shape_factory_supports, .dtypes = all, .run_into = &arange});
}

}  // namespace crucible::cpu

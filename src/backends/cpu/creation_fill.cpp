// The cpu backend's fill.Scalar / fill.Tensor (empty_like(self).fill_(value)), copy (the
// functional copy_: a preserve-format clone of self with src broadcast into it) and arange.
//
// ATen's rules (as the catalog's creation_fill.cpp states them): the fill value goes through
// c10's checked conversion into self's dtype; fill.Tensor takes the item() of a 0-d tensor.
// arange: without a dtype, all-integral bounds give i64, anything else f32; step 0, a sign
// mismatch and non-finite bounds raise; integral dtypes count in int64 (the scalars truncated
// first; i64's length from the truncated integers) and wrap, floating ones compute
// start + i * step in double and round once; bool is refused.
#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "backends/cpu/shape_kernels.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/core/half.h"
#include "crucible/ops/args.h"
#include "ops/creation_internal.h"

namespace crucible::cpu {

namespace {

Tensor like_of(const Tensor& self) {
  return Tensor::uninitialized_strided(
      self.shape(), creation::like_strides(self, MemoryFormat::Preserve), self.dtype());
}

// Fills a fresh dense tensor with `s` converted (checked) to its dtype.
void fill_fresh(const Tensor& out, const Scalar& s) {
  Tensor one = Tensor::uninitialized({}, out.dtype());
  creation::fill_with(one, s);  // raises "value cannot be converted ... without overflow"
  if (out.numel() == 0) return;
  const Pattern p = pattern_of(one.data_ptr(), static_cast<int64_t>(one.itemsize()));
  fill_bytes(static_cast<char*>(out.data_ptr()), out.numel() * p.isize, p);
}

Values fill_scalar(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor out = like_of(a.tensor("self"));
  fill_fresh(out, a.scalar("value"));
  return {Value(out)};
}

Values fill_tensor(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  Scalar s;
  if (a.value("value").is_scalar()) {
    s = a.scalar("value");
  } else {
    const Tensor& v = a.tensor("value");
    CRUCIBLE_CHECK(v.dim() == 0,
                   "fill_ only supports 0-dimension value tensor but got tensor with " +
                       std::to_string(v.dim()) + " dimensions.");
    s = creation::item_of(v);
  }
  const Tensor out = like_of(a.tensor("self"));
  fill_fresh(out, s);
  return {Value(out)};
}

Values copy(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const Tensor& src = a.tensor("src");
  const Shape shape = broadcast_shapes(self.shape(), src.shape());
  CRUCIBLE_CHECK(shape == self.shape(), "output with shape " + shape_str(self.shape()) +
                                            " doesn't match the broadcast shape " +
                                            shape_str(shape));
  const Tensor out = like_of(self);
  copy_into(src, out);
  return {Value(out)};
}

// ---- arange -----------------------------------------------------------------------------------

bool integral_scalar(const Scalar& s) { return s.is_integral() || s.is_bool(); }

double as_double(const Scalar& s) {
  return s.is_bool() ? (s.to_bool() ? 1.0 : 0.0)
                     : (s.is_integral() ? static_cast<double>(s.to_int()) : s.to_double());
}

int64_t as_int(const Scalar& s) {
  if (!s.is_floating()) return s.is_bool() ? int64_t{s.to_bool()} : s.to_int();
  const double v = s.to_double();
  CRUCIBLE_CHECK(std::isfinite(v) && std::fabs(v) < 9.2233720368547758e18,
                 "value cannot be converted to type int64_t without overflow");
  return static_cast<int64_t>(v);
}

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

Tensor arange_of(const Scalar& start, const Scalar& end, const Scalar& step, const Value& dt_v) {
  const bool all_integral = integral_scalar(start) && integral_scalar(end) && integral_scalar(step);
  const DType dtype =
      dt_v.is_none() ? (all_integral ? DType::Int64 : DType::Float32) : dt_v.to_dtype();
  if (dtype == DType::Bool) not_implemented_for("arange_cpu", DType::Bool);
  if (is_floating(dtype)) {
    const double s = as_double(start), e = as_double(end), st = as_double(step);
    const double size_d = std::ceil((e - s) / st);
    CRUCIBLE_CHECK(st > 0 || st < 0, "step must be nonzero");
    CRUCIBLE_CHECK(std::isfinite(s) && std::isfinite(e),
                   "unsupported range: " + std::to_string(s) + " -> " + std::to_string(e));
    CRUCIBLE_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
                   "upper bound and larger bound inconsistent with step sign");
    CRUCIBLE_CHECK(size_d >= 0 && size_d <= 9.2233720368547758e18,
                   "invalid size, possible overflow?");
    const auto n = static_cast<int64_t>(size_d);
    if (n > (int64_t{1} << 40)) unsupported("arange: more than 2^40 elements");
    Tensor out = Tensor::uninitialized({n}, dtype);
    write_floating(out, s, st);
    return out;
  }
  const int64_t s = as_int(start), e = as_int(end), st = as_int(step);
  CRUCIBLE_CHECK(st != 0, "step must be nonzero");
  CRUCIBLE_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
                 "upper bound and larger bound inconsistent with step sign");
  int64_t n = 0;
  if (dtype == DType::Int64) {
    const int64_t sign = st > 0 ? 1 : -1;
    n = (e - s + st - sign) / st;
  } else {
    n = static_cast<int64_t>(std::ceil((as_double(end) - as_double(start)) / as_double(step)));
  }
  CRUCIBLE_CHECK(n >= 0, "invalid size, possible overflow?");
  if (n > (int64_t{1} << 40)) unsupported("arange: more than 2^40 elements");
  Tensor out = Tensor::uninitialized({n}, dtype);
  write_integral(out, s, st);
  return out;
}

Values arange(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  creation::check_layout(a, a.index("layout"));
  return {
      Value(arange_of(Scalar(int64_t{0}), a.scalar("end"), Scalar(int64_t{1}), a.value("dtype")))};
}

Values arange_start(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  creation::check_layout(a, a.index("layout"));
  return {
      Value(arange_of(a.scalar("start"), a.scalar("end"), Scalar(int64_t{1}), a.value("dtype")))};
}

Values arange_start_step(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  creation::check_layout(a, a.index("layout"));
  return {Value(arange_of(a.scalar("start"), a.scalar("end"), a.scalar("step"), a.value("dtype")))};
}

}  // namespace

void register_creation_fill_kernels(KernelTable& t) {
  const std::vector<DType> all = shape_dtypes();
  t.add("aten.fill.Scalar", {&fill_scalar, &shape_supports, all});
  t.add("aten.fill.Tensor", {&fill_tensor, &shape_supports, all});
  t.add("aten.copy.default", {&copy, &shape_supports, all});
  t.add("aten.arange.default", {&arange, &shape_factory_supports, all});
  t.add("aten.arange.start", {&arange_start, &shape_factory_supports, all});
  t.add("aten.arange.start_step", {&arange_start_step, &shape_factory_supports, all});
}

}  // namespace crucible::cpu

// The cpu backend's fill.Scalar / fill.Tensor (empty_like(self).fill_(value)), copy (the
// functional copy_: a preserve-format clone of self with src broadcast into it) and arange.
//
// ATen's rules (as the catalog's creation_fill.cpp states them; the argument checks and arange's
// length are the shared ones of crucible/ops/rules/creation.h and copy.h): the fill value goes
// through c10's checked conversion into self's dtype; fill.Tensor takes the item() of a 0-d
// tensor. arange: without a dtype, all-integral bounds give i64, anything else f32; step 0, a sign
// mismatch and non-finite bounds raise; integral dtypes count in int64 (the scalars truncated
// first; i64's length from the truncated integers) and wrap, floating ones compute
// start + i * step in double and round once; bool is refused.
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
  const Scalar s = creation::fill_value(a.value("value"));
  const Tensor out = like_of(a.tensor("self"));
  fill_fresh(out, s);
  return {Value(out)};
}

Values copy(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const Tensor& src = a.tensor("src");
  copy_ops::check_broadcasts_to(self, src);
  const Tensor out = like_of(self);
  copy_into(src, out);
  return {Value(out)};
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

Tensor arange_of(const Scalar& start, const Scalar& end, const Scalar& step, const Value& dt_v) {
  const auto [dtype, n] = creation::arange_spec(start, end, step, dt_v);
  Tensor out = Tensor::uninitialized({n}, dtype);
  if (is_floating(dtype))
    write_floating(out, creation::arange_double(start), creation::arange_double(step));
  else
    write_integral(out, creation::arange_int(start), creation::arange_int(step));
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

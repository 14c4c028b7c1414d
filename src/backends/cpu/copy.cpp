// The cpu backend's copies and dtype conversions (clone, copy_, _to_copy, lift_fresh_copy) and
// fill_, through the elementwise engine (identity / fill loops, converting per block); copies
// from or to a complex dtype through copy_complex.
#include "crucible/ops/rules/copy.h"
#include "backends/cpu/copy_complex.h"
#include "backends/cpu/pointwise_engine.h"
#include "backends/cpu/pointwise_ops.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/creation.h"

namespace crucible::cpu {

namespace {

void copy_into(const Tensor& src, const Tensor& dst) {
  if (is_complex(src.dtype()) || is_complex(dst.dtype())) return copy_complex(src, dst);
  const Tensor ins[] = {src};
  pw_run(PwOp::Identity, ins, dst, compute_for(src.dtype()), PwParams{});
}

// A copy of `self` as `dtype` with the strides ATen gives memory format `mf`.
Tensor copy_as(const Tensor& self, DType dtype, MemoryFormat mf) {
  Tensor out = Tensor::uninitialized_strided(self.shape(), creation::like_strides(self, mf), dtype);
  copy_into(self, out);
  return out;
}

Values clone(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  return {Value(
      copy_as(self, self.dtype(),
              // lift_fresh_copy has no memory_format argument.
              a.has("memory_format")
                  ? creation::memory_format_arg(a, a.index("memory_format"), MemoryFormat::Preserve)
                  : MemoryFormat::Preserve))};
}

// _to_copy(self, *, dtype, layout, device, pin_memory, non_blocking, memory_format)
Values to_copy(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const DType dt = copy_ops::to_copy_dtype(a);
  return {Value(copy_as(
      self, dt, creation::memory_format_arg(a, a.index("memory_format"), MemoryFormat::Preserve)))};
}

Values copy_(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  Tensor src = a.tensor("src");
  copy_ops::check_copy_inplace(self, src);
  if (src.overlaps(self) && !(src.data_ptr() == self.data_ptr() && src.strides() == self.strides()))
    src = src.clone();  // read everything before writing
  copy_into(src, self);
  return {Value(self)};
}

// fill_.Scalar / fill_.Tensor: the value checked as c10's Scalar::to<T> does, stored once in
// self's dtype and broadcast through any strides.
Values fill_(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const Scalar s = creation::fill_value(a.value("value"));
  Tensor one = Tensor::empty({}, self.dtype());
  creation::fill_with(one, s);  // raises "value cannot be converted ... without overflow"
  const Tensor ins[] = {one};
  pw_run(PwOp::Identity, ins, self, compute_for(self.dtype()), PwParams{});
  return {Value(self)};
}

bool is_fp8(DType t) { return t == DType::Float8E4M3FN || t == DType::Float8E5M2; }

// Copies and conversions of every dtype but fp8 (complex ones through copy_complex).
bool copy_supports(const OpDef& op, const Values& args, std::string* why) {
  const Args a(args, op.schema);
  for (const Value& v : args)
    if (v.is_tensor() && is_fp8(v.tensor().dtype())) {
      if (why) *why = "backend 'cpu' copies dtypes other than fp8 only";
      return false;
    }
  // _to_copy's target dtype.
  const Value* dtype = a.has("dtype") ? &a.value("dtype") : nullptr;
  if (dtype && dtype->kind() == ValueKind::DType && is_fp8(dtype->to_dtype())) {
    if (why)
      *why = "backend 'cpu' does not convert to " + std::string(dtype_code(dtype->to_dtype()));
    return false;
  }
  return true;
}

// fill_: real dtypes other than fp8.
bool fill_supports(const OpDef& op, const Values& a, std::string* why) {
  for (const Value& v : a)
    if (v.is_tensor() && is_complex(v.tensor().dtype())) {
      if (why) *why = "backend 'cpu' fills real dtypes only";
      return false;
    }
  return copy_supports(op, a, why);
}

}  // namespace

void register_copy_kernels(KernelTable& t) {
  const auto all = pw_all_dtypes();
  auto with_complex = all;
  with_complex.insert(with_complex.end(), {DType::Complex32, DType::Complex64, DType::Complex128});
  t.add("aten.clone.default", {&clone, &copy_supports, with_complex});
  t.add("aten.lift_fresh_copy.default", {&clone, &copy_supports, with_complex});
  t.add("aten._to_copy.default", {&to_copy, &copy_supports, with_complex});
  t.add("aten.copy_.default", {&copy_, &copy_supports, with_complex});
  t.add("aten.fill_.Scalar", {&fill_, &fill_supports, all});
  t.add("aten.fill_.Tensor", {&fill_, &fill_supports, all});
}

}  // namespace crucible::cpu

// The cpu backend's copies and dtype conversions (clone, copy_, _to_copy, lift_fresh_copy) and
// fill_, through the elementwise engine (identity / fill loops, converting per block); copies
// from or to a complex dtype through copy_complex. Destination-passing: the meta functions
// checked the call and laid out the result (the memory format's strides, _to_copy's dtype; for
// copy_ and fill_, self).
#include "crucible/ops/rules/copy.h"
#include "backends/cpu/copy_complex.h"
#include "backends/cpu/pointwise_engine.h"
#include "backends/cpu/pointwise_ops.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/creation.h"

namespace crucible::cpu {

namespace {

// dst = src (broadcast): a same-dtype copy from a non-contiguous source into a contiguous dst
// through the byte movers (shape_copy.h: runs gathered, transposes in tiles), everything else
// through the elementwise engine (a contiguous copy is one identity loop per chunk; the byte
// movers' streaming stores lost a 200 MB copy_ a quarter of its speed).
void copy_values(const Tensor& src, const Tensor& dst) {
  if (is_complex(src.dtype()) || is_complex(dst.dtype())) return copy_complex(src, dst);
  if (src.dtype() == dst.dtype() && dst.is_contiguous() && !src.is_contiguous())
    return copy_into(src, dst);
  const Tensor ins[] = {src};
  pw_run(PwOp::Identity, ins, dst, compute_for(src.dtype()), PwParams{});
}

// clone, lift_fresh_copy, _to_copy: self into the fresh output (its dtype and memory format).
void copy_out(const OpDef&, const Args& a, const Values& out) {
  copy_values(a.tensor("self"), out[0].tensor());
}

void copy_(const OpDef&, const Args& a, const Values& out) {
  const Tensor& self = out[0].tensor();
  Tensor src = a.tensor("src");
  if (src.overlaps(self) && !(src.data_ptr() == self.data_ptr() && src.strides() == self.strides()))
    src = src.clone();  // read everything before writing
  copy_values(src, self);
}

// fill_.Scalar / fill_.Tensor: the value checked as c10's Scalar::to<T> does (a Tensor value's
// item() only now), stored once in self's dtype and broadcast through any strides.
void fill_(const OpDef&, const Args& a, const Values& out) {
  const Tensor& self = out[0].tensor();
  Tensor one = Tensor::empty({}, self.dtype());
  creation::fill_with(one, creation::fill_value(a.value("value")));
  const Tensor ins[] = {one};
  pw_run(PwOp::Identity, ins, self, compute_for(self.dtype()), PwParams{});
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
  auto add = [&](const char* name, KernelIntoFn fn, SupportsFn supports,
                 const std::vector<DType>& dtypes) {
    t.add(name, {.supports = supports, .dtypes = dtypes, .run_into = fn});
  };
  add("aten.clone.default", &copy_out, &copy_supports, with_complex);
  add("aten.lift_fresh_copy.default", &copy_out, &copy_supports, with_complex);
  add("aten._to_copy.default", &copy_out, &copy_supports, with_complex);
  add("aten.copy_.default", &copy_, &copy_supports, with_complex);
  add("aten.fill_.Scalar", &fill_, &fill_supports, all);
  add("aten.fill_.Tensor", &fill_, &fill_supports, all);
}

}  // namespace crucible::cpu

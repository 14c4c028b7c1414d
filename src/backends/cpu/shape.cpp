// The `cpu` backend's shape kernels: views and their copies, joins, pads, the backward of views
// and the factories, registered from their files (shape_kernels.h).
#include "backends/cpu/shape_kernels.h"

namespace crucible::cpu {

bool shape_dtypes_supported(const Values& args, std::string* why) {
  auto ok = [](const Tensor& t) {
    return !t.defined() || (!is_complex(t.dtype()) && t.dtype() != DType::Float8E4M3FN &&
                            t.dtype() != DType::Float8E5M2);
  };
  for (const Value& v : args) {
    bool fine = true;
    if (v.is_tensor()) fine = ok(v.tensor());
    if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList)
      for (const Tensor& t : v.tensors()) fine = fine && ok(t);
    if (!fine) {
      if (why) *why = "backend 'cpu' moves real dtypes other than fp8 only";
      return false;
    }
  }
  return true;
}

std::vector<DType> shape_dtypes() {
  return {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
          DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

bool shape_supports(const OpDef&, const Values& args, std::string* why) {
  return shape_dtypes_supported(args, why);
}

bool shape_factory_supports(const OpDef& op, const Values& args, std::string* why) {
  for (const Value& v : args)
    if (v.kind() == ValueKind::DType) {
      const DType t = v.to_dtype();
      if (is_complex(t) || t == DType::Float8E4M3FN || t == DType::Float8E5M2) {
        if (why) *why = "backend 'cpu' does not create " + std::string(dtype_code(t)) + " tensors";
        return false;
      }
    }
  return shape_supports(op, args, why);
}

void register_shape_kernels(KernelTable& t) {
  register_view_kernels(t);
  register_view_backward_kernels(t);
  register_cat_kernels(t);
  register_tile_kernels(t);
  register_pad_kernels(t);
  register_pad_mirror_kernels(t);
  register_creation_kernels(t);
  register_creation_fill_kernels(t);
  register_shape_meta_kernels(t);
}

}  // namespace crucible::cpu

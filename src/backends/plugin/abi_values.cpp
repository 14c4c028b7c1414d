// crucible Values as the C ABI's crucible_value / DLTensor.
#include "backends/plugin/abi_values.h"

#include <cstring>

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible {

DLDataType to_dl_dtype(DType t) {
  auto dt = [](int code, int bits) {
    return DLDataType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  };
  switch (t) {
    case DType::Bool:
      return dt(CRUCIBLE_DL_BOOL, 8);
    case DType::UInt8:
      return dt(kDLUInt, 8);
    case DType::Int8:
      return dt(kDLInt, 8);
    case DType::Int16:
      return dt(kDLInt, 16);
    case DType::Int32:
      return dt(kDLInt, 32);
    case DType::Int64:
      return dt(kDLInt, 64);
    case DType::Float16:
      return dt(kDLFloat, 16);
    case DType::BFloat16:
      return dt(kDLBfloat, 16);
    case DType::Float32:
      return dt(kDLFloat, 32);
    case DType::Float64:
      return dt(kDLFloat, 64);
    case DType::Float8E4M3FN:
      return dt(CRUCIBLE_DL_FLOAT8_E4M3FN, 8);
    case DType::Float8E5M2:
      return dt(CRUCIBLE_DL_FLOAT8_E5M2, 8);
    case DType::Complex32:
      return dt(kDLComplex, 32);
    case DType::Complex64:
      return dt(kDLComplex, 64);
    case DType::Complex128:
      return dt(kDLComplex, 128);
  }
  internal_error("to_dl_dtype: unknown dtype");
}

std::optional<DType> from_dl_dtype(DLDataType t) {
  for (DType d : all_dtypes()) {
    DLDataType x = to_dl_dtype(d);
    if (x.code == t.code && x.bits == t.bits && x.lanes == t.lanes) return d;
  }
  return std::nullopt;
}

DLTensor* AbiValues::tensor(const Tensor& t) {
  if (!t.device().is_cpu()) unsupported("the kernel ABI backend passes CPU tensors only");
  if (t.dim() > CRUCIBLE_MAX_NDIM)
    unsupported(fmt::format("a {}-d tensor: the kernel ABI passes at most {} dims", t.dim(),
                            CRUCIBLE_MAX_NDIM));
  Slot& s = slots_.emplace_back();
  by_dl_[&s.dl] = &s;
  rebind(&s.dl, t);
  return &s.dl;
}

DLTensor* AbiValues::empty_slot(DType dtype) {
  Slot& s = slots_.emplace_back();
  by_dl_[&s.dl] = &s;
  s.dl.device = {kDLCPU, 0};
  s.dl.dtype = to_dl_dtype(dtype);
  s.dl.shape = s.shape;
  s.dl.strides = s.strides;
  return &s.dl;
}

void AbiValues::rebind(DLTensor* slot, const Tensor& t) {
  Slot* s = by_dl_.at(slot);
  s->tensor = t;
  s->dl.data = t.defined() ? t.data_ptr() : nullptr;
  s->dl.device = {kDLCPU, 0};
  s->dl.ndim = static_cast<int>(t.dim());
  s->dl.dtype = to_dl_dtype(t.dtype());
  for (int64_t d = 0; d < t.dim(); ++d) {
    s->shape[d] = t.shape()[d];
    s->strides[d] = t.strides()[d];
  }
  s->dl.shape = s->shape;
  s->dl.strides = s->strides;
  s->dl.byte_offset = 0;
}

const Tensor* AbiValues::source(const DLTensor* t) const {
  auto it = by_dl_.find(t);
  return it == by_dl_.end() ? nullptr : &it->second->tensor;
}

crucible_value AbiValues::value(const Value& v) {
  crucible_value c{};
  switch (v.kind()) {
    case ValueKind::None:
      c.kind = CRUCIBLE_NONE;
      break;
    case ValueKind::Tensor:
      c.kind = v.tensor().defined() ? CRUCIBLE_TENSOR : CRUCIBLE_NONE;
      if (v.tensor().defined()) c.v.tensor = tensor(v.tensor());
      break;
    case ValueKind::TensorList:
    case ValueKind::OptTensorList: {
      c.kind = v.kind() == ValueKind::TensorList ? CRUCIBLE_TENSOR_LIST : CRUCIBLE_OPT_TENSOR_LIST;
      auto& l = lists_.emplace_back();
      for (const Tensor& t : v.tensors()) l.push_back(t.defined() ? tensor(t) : nullptr);
      c.v.tensors.items = l.data();
      c.v.tensors.size = static_cast<int64_t>(l.size());
      break;
    }
    case ValueKind::Int:
      c.kind = CRUCIBLE_INT;
      c.v.i = v.to_int();
      break;
    case ValueKind::Float:
      c.kind = CRUCIBLE_FLOAT;
      c.v.f = v.to_double();
      break;
    case ValueKind::Bool:
      c.kind = CRUCIBLE_BOOL;
      c.v.b = v.to_bool() ? 1 : 0;
      break;
    case ValueKind::String:
      c.kind = CRUCIBLE_STRING;
      c.v.s = strings_.emplace_back(v.str_value()).c_str();
      break;
    case ValueKind::IntList: {
      c.kind = CRUCIBLE_INT_LIST;
      auto& ints = ints_.emplace_back(v.to_int_list());
      c.v.ints.items = ints.data();
      c.v.ints.size = static_cast<int64_t>(ints.size());
      break;
    }
    case ValueKind::FloatList:
      c.kind = CRUCIBLE_FLOAT_LIST;
      c.v.floats.items = v.float_list().data();
      c.v.floats.size = static_cast<int64_t>(v.float_list().size());
      break;
    case ValueKind::BoolList: {
      c.kind = CRUCIBLE_BOOL_LIST;
      auto& b = bools_.emplace_back();
      for (bool x : v.bool_list()) b.push_back(x ? 1 : 0);
      c.v.bools.items = b.data();
      c.v.bools.size = static_cast<int64_t>(b.size());
      break;
    }
    case ValueKind::DType:
      c.kind = CRUCIBLE_DTYPE;
      c.v.dtype = to_dl_dtype(v.to_dtype());
      break;
    case ValueKind::Device: {
      c.kind = CRUCIBLE_DEVICE;
      Device d = v.to_device();
      c.v.device = {d.is_cpu() ? kDLCPU : kDLCUDA, d.index};
      break;
    }
    case ValueKind::Layout:
      c.kind = CRUCIBLE_LAYOUT;
      c.v.layout = v.to_layout() == Layout::Strided ? CRUCIBLE_STRIDED : CRUCIBLE_SPARSE_COO;
      break;
    case ValueKind::MemoryFormat:
      c.kind = CRUCIBLE_MEMORY_FORMAT;
      c.v.memory_format = static_cast<int32_t>(v.to_memory_format());
      break;
  }
  return c;
}

std::vector<crucible_value> AbiValues::values(const Values& vs) {
  std::vector<crucible_value> out;
  out.reserve(vs.size());
  for (const Value& v : vs) out.push_back(value(v));
  return out;
}

}  // namespace crucible

// crucible Values <-> c10 IValues, guided by the c10 type of each argument in libtorch's own
// schema (so the conversion follows the libtorch crucible runs against, not the catalog's text).
#include <ATen/core/jit_type.h>
#include <ATen/ops/scalar_tensor.h>

#include "backends/aten/aten_convert.h"
#include "crucible/core/error.h"

namespace crucible::aten {

namespace {

[[noreturn]] void mismatch(const std::string& name, const c10::TypePtr& type, const Value& v) {
  unsupported("argument '" + name + "': libtorch " TORCH_VERSION " expects " + type->str() +
              " but the case gives " + value_kind_name(v.kind()) +
              " (the catalog's schema and this libtorch's differ)");
}

int64_t scalar_type_code(DType t, const std::string& name) {
  auto st = to_scalar_type(t);
  if (!st)
    unsupported("argument '" + name + "': libtorch " TORCH_VERSION " has no dtype " +
                std::string(dtype_code(t)));
  return static_cast<int64_t>(*st);
}

int64_t layout_code(Layout l) {
  return static_cast<int64_t>(l == Layout::Strided ? c10::Layout::Strided : c10::Layout::Sparse);
}

int64_t memory_format_code(MemoryFormat m) {
  switch (m) {
    case MemoryFormat::Contiguous:
      return static_cast<int64_t>(c10::MemoryFormat::Contiguous);
    case MemoryFormat::Preserve:
      return static_cast<int64_t>(c10::MemoryFormat::Preserve);
    case MemoryFormat::ChannelsLast:
      return static_cast<int64_t>(c10::MemoryFormat::ChannelsLast);
    case MemoryFormat::ChannelsLast3d:
      return static_cast<int64_t>(c10::MemoryFormat::ChannelsLast3d);
  }
  return 0;
}

// An integer argument: ints, bools, and the enums ATen passes as ints (dtype, layout, memory
// format). A float with an integral value is accepted where libtorch has an int and the catalog a
// Scalar (std.correction is `int?` in libtorch 1.13, `Scalar?` later).
int64_t to_int(const Value& v, const c10::TypePtr& type, const std::string& name) {
  switch (v.kind()) {
    case ValueKind::Int:
    case ValueKind::Bool:
      return v.to_int();
    case ValueKind::DType:
      return scalar_type_code(v.to_dtype(), name);
    case ValueKind::Layout:
      return layout_code(v.to_layout());
    case ValueKind::MemoryFormat:
      return memory_format_code(v.to_memory_format());
    case ValueKind::Float: {
      double d = v.to_double();
      if (d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
      unsupported("argument '" + name + "': libtorch " TORCH_VERSION " takes an integer, not " +
                  v.debug_str());
    }
    default:
      mismatch(name, type, v);
  }
}

c10::IValue scalar_ivalue(const Value& v) {
  if (v.kind() == ValueKind::Bool) return c10::IValue(v.to_bool());
  if (v.kind() == ValueKind::Int) return c10::IValue(v.to_int());
  return c10::IValue(v.to_double());
}

// A Python number where libtorch has a Tensor: a 0-d "wrapped number" tensor, as PyTorch's
// argument parser makes (it promotes like a Python scalar, not like a tensor).
at::Tensor wrapped_number(const Value& v) {
  at::Tensor t;
  if (v.kind() == ValueKind::Bool)
    t = at::scalar_tensor(v.to_bool(), at::TensorOptions(c10::ScalarType::Bool));
  else if (v.kind() == ValueKind::Int)
    t = at::scalar_tensor(v.to_int(), at::TensorOptions(c10::ScalarType::Long));
  else
    t = at::scalar_tensor(v.to_double(), at::TensorOptions(c10::ScalarType::Double));
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

c10::IValue list_ivalue(const Value& v, const c10::TypePtr& type, const std::string& name,
                        CallContext& ctx) {
  const c10::TypePtr elem = type->expectRef<c10::ListType>().getElementType();
  switch (elem->kind()) {
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType: {
      if (v.kind() != ValueKind::IntList && v.kind() != ValueKind::Int) mismatch(name, type, v);
      c10::List<int64_t> out;
      for (int64_t x : v.to_int_list()) out.push_back(x);
      return out;
    }
    case c10::TypeKind::FloatType: {
      c10::List<double> out;
      if (v.kind() == ValueKind::FloatList) {
        for (double x : v.float_list()) out.push_back(x);
      } else if (v.kind() == ValueKind::IntList) {
        for (int64_t x : v.to_int_list()) out.push_back(static_cast<double>(x));
      } else {
        mismatch(name, type, v);
      }
      return out;
    }
    case c10::TypeKind::BoolType: {
      if (v.kind() != ValueKind::BoolList) mismatch(name, type, v);
      c10::List<bool> out;
      for (bool x : v.bool_list()) out.push_back(x);
      return out;
    }
    case c10::TypeKind::TensorType: {
      if (v.kind() != ValueKind::TensorList && v.kind() != ValueKind::OptTensorList)
        mismatch(name, type, v);
      c10::List<at::Tensor> out;
      for (const Tensor& t : v.tensors()) {
        if (!t.defined()) unsupported("argument '" + name + "': a None in a Tensor[] list");
        out.push_back(ctx.to_aten(t));
      }
      return out;
    }
    case c10::TypeKind::OptionalType: {
      if (elem->expectRef<c10::OptionalType>().getElementType()->kind() !=
          c10::TypeKind::TensorType)
        break;
      if (v.kind() != ValueKind::TensorList && v.kind() != ValueKind::OptTensorList)
        mismatch(name, type, v);
      c10::List<c10::optional<at::Tensor>> out;
      for (const Tensor& t : v.tensors())
        out.push_back(t.defined() ? c10::optional<at::Tensor>(ctx.to_aten(t)) : c10::nullopt);
      return out;
    }
    default:
      break;
  }
  unsupported("argument '" + name + "': the aten backend cannot pass a " + type->str());
}

}  // namespace

c10::IValue to_ivalue(const Value& v, const c10::TypePtr& type, const std::string& name,
                      CallContext& ctx) {
  if (type->kind() == c10::TypeKind::DeviceObjType ||
      (type->kind() == c10::TypeKind::OptionalType &&
       type->expectRef<c10::OptionalType>().getElementType()->kind() ==
           c10::TypeKind::DeviceObjType)) {
    // Calls run where the backend runs: a traced call's device ('cuda', 'cpu') is replaced.
    if (v.is_none() && ctx.device().is_cpu()) return c10::IValue();
    return c10::IValue(ctx.device());
  }
  if (type->kind() == c10::TypeKind::OptionalType) {
    if (v.is_none()) return c10::IValue();
    return to_ivalue(v, type->expectRef<c10::OptionalType>().getElementType(), name, ctx);
  }
  switch (type->kind()) {
    case c10::TypeKind::TensorType:
      if (v.is_tensor()) return ctx.to_aten(v.tensor());
      if (v.is_scalar()) return wrapped_number(v);
      mismatch(name, type, v);
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
    case c10::TypeKind::ScalarTypeType:
    case c10::TypeKind::LayoutType:
    case c10::TypeKind::MemoryFormatType:
      return c10::IValue(to_int(v, type, name));
    case c10::TypeKind::FloatType:
      if (!v.is_scalar()) mismatch(name, type, v);
      return c10::IValue(v.to_double());
    case c10::TypeKind::BoolType:
      if (v.kind() != ValueKind::Bool && v.kind() != ValueKind::Int) mismatch(name, type, v);
      return c10::IValue(v.to_bool());
    case c10::TypeKind::NumberType:
      if (!v.is_scalar()) mismatch(name, type, v);
      return scalar_ivalue(v);
    case c10::TypeKind::StringType:
      if (v.kind() != ValueKind::String) mismatch(name, type, v);
      return c10::IValue(v.str_value());
    case c10::TypeKind::ListType:
      return list_ivalue(v, type, name, ctx);
    case c10::TypeKind::GeneratorType:
      if (v.is_none()) return c10::IValue();
      mismatch(name, type, v);
    default:
      break;
  }
  unsupported("argument '" + name + "': the aten backend cannot pass a " + type->str());
}

Value from_ivalue(const c10::IValue& iv, CallContext& ctx) {
  if (iv.isNone()) return Value();
  if (iv.isTensor()) {
    const at::Tensor& t = iv.toTensor();
    if (!t.defined()) return Value();
    return Value(ctx.from_aten(t));
  }
  if (iv.isInt()) return Value(iv.toInt());
  if (iv.isSymInt()) return Value(iv.toSymInt().expect_int());
  if (iv.isDouble()) return Value(iv.toDouble());
  if (iv.isBool()) return Value(iv.toBool());
  if (iv.isString()) return Value(iv.toStringRef());
  if (iv.isTensorList()) {
    std::vector<Tensor> ts;
    for (const at::Tensor& t : iv.toTensorVector()) ts.push_back(ctx.from_aten(t));
    return Value::tensor_list(std::move(ts));
  }
  if (iv.isIntList()) return Value(iv.toIntVector());
  if (iv.isDoubleList()) return Value(iv.toDoubleVector());
  if (iv.isList()) {
    std::vector<Tensor> ts;
    for (const c10::IValue& e : iv.toListRef()) {
      if (e.isNone()) {
        ts.emplace_back();
      } else if (e.isTensor()) {
        ts.push_back(ctx.from_aten(e.toTensor()));
      } else {
        unsupported("ATen returned a list of " + e.tagKind() + ", which crucible does not have");
      }
    }
    return Value::tensor_list(std::move(ts), true);
  }
  unsupported("ATen returned a " + iv.tagKind() + ", which crucible does not have");
}

}  // namespace crucible::aten

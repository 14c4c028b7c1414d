// Scalar (a number of any kind) and Value (every kind of operator argument or result).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "crucible/core/device.h"
#include "crucible/core/dtype.h"
#include "crucible/core/tensor.h"

namespace crucible {

// An ATen Scalar: bool, integer or floating. Its kind takes part in type promotion.
class Scalar {
 public:
  Scalar() : v_(int64_t{0}) {}
  Scalar(bool b) : v_(b) {}
  Scalar(int v) : v_(int64_t{v}) {}
  Scalar(int64_t v) : v_(v) {}
  Scalar(double v) : v_(v) {}

  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_integral() const { return std::holds_alternative<int64_t>(v_); }
  bool is_floating() const { return std::holds_alternative<double>(v_); }
  double to_double() const;
  int64_t to_int() const;
  bool to_bool() const;
  // The dtype ATen gives a tensor made from this scalar: bool, i64 or the default f32... note
  // that for promotion purposes a Python float is "floating" of category only.
  DTypeCategory category() const;
  std::string str() const;

 private:
  std::variant<bool, int64_t, double> v_;
};

enum class ValueKind : uint8_t {
  None,
  Tensor,
  TensorList,     // Tensor[]  (every element defined)
  OptTensorList,  // Tensor?[] (elements may be undefined)
  Int,
  Float,
  Bool,
  String,
  IntList,
  FloatList,
  BoolList,
  DType,
  Device,
  Layout,
  MemoryFormat,
};

const char* value_kind_name(ValueKind k);

class Value {
 public:
  Value() = default;  // None
  Value(Tensor t) : kind_(ValueKind::Tensor), v_(std::move(t)) {}
  static Value tensor_list(std::vector<Tensor> ts, bool optional_elements = false);
  Value(int64_t i) : kind_(ValueKind::Int), v_(i) {}
  Value(int i) : kind_(ValueKind::Int), v_(int64_t{i}) {}
  Value(double d) : kind_(ValueKind::Float), v_(d) {}
  Value(bool b) : kind_(ValueKind::Bool), v_(b) {}
  Value(std::string s) : kind_(ValueKind::String), v_(std::move(s)) {}
  Value(const char* s) : Value(std::string(s)) {}
  Value(std::vector<int64_t> l) : kind_(ValueKind::IntList), v_(std::move(l)) {}
  Value(std::vector<double> l) : kind_(ValueKind::FloatList), v_(std::move(l)) {}
  Value(std::vector<bool> l) : kind_(ValueKind::BoolList), v_(std::move(l)) {}
  Value(DType t) : kind_(ValueKind::DType), v_(t) {}
  Value(Device d) : kind_(ValueKind::Device), v_(d) {}
  Value(Layout l) : kind_(ValueKind::Layout), v_(l) {}
  Value(MemoryFormat m) : kind_(ValueKind::MemoryFormat), v_(m) {}
  Value(const Scalar& s);

  ValueKind kind() const { return kind_; }
  bool is_none() const { return kind_ == ValueKind::None; }
  bool is_tensor() const { return kind_ == ValueKind::Tensor; }
  bool is_scalar() const {
    return kind_ == ValueKind::Int || kind_ == ValueKind::Float || kind_ == ValueKind::Bool;
  }

  // Typed access; a wrong kind throws an op error naming the expected and actual kinds.
  const Tensor& tensor() const;
  const std::vector<Tensor>& tensors() const;  // TensorList or OptTensorList
  int64_t to_int() const;
  double to_double() const;  // Int, Float or Bool
  bool to_bool() const;
  Scalar to_scalar() const;
  const std::string& str_value() const;
  std::vector<int64_t> to_int_list() const;  // IntList, or a single Int broadcast by the caller
  const std::vector<double>& float_list() const;
  const std::vector<bool>& bool_list() const;
  DType to_dtype() const;
  Device to_device() const;
  Layout to_layout() const;
  MemoryFormat to_memory_format() const;

  std::optional<Tensor> opt_tensor() const;
  std::optional<int64_t> opt_int() const;
  std::optional<double> opt_double() const;
  std::optional<DType> opt_dtype() const;

  std::string debug_str() const;

 private:
  ValueKind kind_ = ValueKind::None;
  std::variant<std::monostate, Tensor, std::vector<Tensor>, int64_t, double, bool, std::string,
               std::vector<int64_t>, std::vector<double>, std::vector<bool>, DType, Device, Layout,
               MemoryFormat>
      v_;
};

using Values = std::vector<Value>;

// Deep copy: every tensor in the value gets its own storage (same shape, strides and offset
// layout, so a non-contiguous input stays non-contiguous). Aliasing between arguments is kept.
Values deep_copy(const Values& vs);

}  // namespace crucible

// Scalar and Value: typed access with errors that name the kinds, printing, deep copies.
#include "crucible/core/value.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <map>

#include "crucible/core/error.h"
#include "crucible/core/map_tensors.h"

namespace crucible {

namespace {

// Python's repr of a float: shortest round-trip digits, scientific notation outside
// 1e-4 <= |x| < 1e16, and ".0" on integral values ("1.0", "1e-05", "inf", "nan").
std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  // sci = [-]d[.ddd]e(+|-)XX
  const size_t epos = sci.find('e');
  const int exp10 = std::stoi(sci.substr(epos + 1));
  std::string mant = sci.substr(0, epos);
  const bool negative = mant[0] == '-';
  if (negative) mant.erase(0, 1);
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits += c;
  }
  std::string out = negative ? "-" : "";
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 < 0) {
      out += "0." + std::string(static_cast<size_t>(-exp10 - 1), '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exp10 + 1) {
      out += digits + std::string(static_cast<size_t>(exp10 + 1) - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(exp10) + 1) + "." +
             digits.substr(static_cast<size_t>(exp10) + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
  return out + ebuf;
}

[[noreturn]] void wrong_kind(const char* expected, ValueKind actual) {
  op_error(std::string("expected a value of type ") + expected + " but got " +
           value_kind_name(actual));
}

}  // namespace

// ---- Scalar ----------------------------------------------------------------------------------

double Scalar::to_double() const {
  if (const auto* b = std::get_if<bool>(&v_)) return *b ? 1.0 : 0.0;
  if (const auto* i = std::get_if<int64_t>(&v_)) return static_cast<double>(*i);
  return std::get<double>(v_);
}

int64_t Scalar::to_int() const {
  if (const auto* b = std::get_if<bool>(&v_)) return *b ? 1 : 0;
  if (const auto* i = std::get_if<int64_t>(&v_)) return *i;
  const double d = std::get<double>(v_);
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
    op_error("value cannot be converted to type int64_t without overflow");
  }
  return static_cast<int64_t>(d);
}

bool Scalar::to_bool() const {
  if (const auto* b = std::get_if<bool>(&v_)) return *b;
  if (const auto* i = std::get_if<int64_t>(&v_)) return *i != 0;
  return std::get<double>(v_) != 0.0;
}

DTypeCategory Scalar::category() const {
  if (is_bool()) return DTypeCategory::Bool;
  return is_integral() ? DTypeCategory::Integral : DTypeCategory::Floating;
}

std::string Scalar::str() const {
  if (const auto* b = std::get_if<bool>(&v_)) return *b ? "True" : "False";
  if (const auto* i = std::get_if<int64_t>(&v_)) return std::to_string(*i);
  return python_float_repr(std::get<double>(v_));
}

// ---- Value -----------------------------------------------------------------------------------

const char* value_kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::None:
      return "None";
    case ValueKind::Tensor:
      return "Tensor";
    case ValueKind::TensorList:
      return "Tensor[]";
    case ValueKind::OptTensorList:
      return "Tensor?[]";
    case ValueKind::Int:
      return "int";
    case ValueKind::Float:
      return "float";
    case ValueKind::Bool:
      return "bool";
    case ValueKind::String:
      return "str";
    case ValueKind::IntList:
      return "int[]";
    case ValueKind::FloatList:
      return "float[]";
    case ValueKind::BoolList:
      return "bool[]";
    case ValueKind::DType:
      return "ScalarType";
    case ValueKind::Device:
      return "Device";
    case ValueKind::Layout:
      return "Layout";
    case ValueKind::MemoryFormat:
      return "MemoryFormat";
  }
  return "unknown";
}

Value Value::tensor_list(std::vector<Tensor> ts, bool optional_elements) {
  if (!optional_elements) {
    for (size_t i = 0; i < ts.size(); ++i) {
      if (!ts[i].defined()) {
        op_error("element " + std::to_string(i) + " of a Tensor[] list is None");
      }
    }
  }
  Value v;
  v.kind_ = optional_elements ? ValueKind::OptTensorList : ValueKind::TensorList;
  v.v_ = std::move(ts);
  return v;
}

Value::Value(const Scalar& s) {
  if (s.is_bool()) {
    kind_ = ValueKind::Bool;
    v_ = s.to_bool();
  } else if (s.is_integral()) {
    kind_ = ValueKind::Int;
    v_ = s.to_int();
  } else {
    kind_ = ValueKind::Float;
    v_ = s.to_double();
  }
}

const Tensor& Value::tensor() const {
  if (kind_ != ValueKind::Tensor) wrong_kind("Tensor", kind_);
  return std::get<Tensor>(v_);
}

const std::vector<Tensor>& Value::tensors() const {
  if (kind_ != ValueKind::TensorList && kind_ != ValueKind::OptTensorList) {
    wrong_kind("Tensor[]", kind_);
  }
  return std::get<std::vector<Tensor>>(v_);
}

int64_t Value::to_int() const {
  if (kind_ == ValueKind::Int) return std::get<int64_t>(v_);
  if (kind_ == ValueKind::Bool) return std::get<bool>(v_) ? 1 : 0;
  wrong_kind("int", kind_);
}

double Value::to_double() const {
  switch (kind_) {
    case ValueKind::Int:
      return static_cast<double>(std::get<int64_t>(v_));
    case ValueKind::Float:
      return std::get<double>(v_);
    case ValueKind::Bool:
      return std::get<bool>(v_) ? 1.0 : 0.0;
    default:
      wrong_kind("float", kind_);
  }
}

bool Value::to_bool() const {
  if (kind_ == ValueKind::Bool) return std::get<bool>(v_);
  if (kind_ == ValueKind::Int) return std::get<int64_t>(v_) != 0;
  wrong_kind("bool", kind_);
}

Scalar Value::to_scalar() const {
  switch (kind_) {
    case ValueKind::Int:
      return Scalar(std::get<int64_t>(v_));
    case ValueKind::Float:
      return Scalar(std::get<double>(v_));
    case ValueKind::Bool:
      return Scalar(std::get<bool>(v_));
    default:
      wrong_kind("Scalar", kind_);
  }
}

const std::string& Value::str_value() const {
  if (kind_ != ValueKind::String) wrong_kind("str", kind_);
  return std::get<std::string>(v_);
}

std::vector<int64_t> Value::to_int_list() const {
  if (kind_ == ValueKind::IntList) return std::get<std::vector<int64_t>>(v_);
  if (kind_ == ValueKind::Int) return {std::get<int64_t>(v_)};
  wrong_kind("int[]", kind_);
}

const std::vector<double>& Value::float_list() const {
  if (kind_ != ValueKind::FloatList) wrong_kind("float[]", kind_);
  return std::get<std::vector<double>>(v_);
}

const std::vector<bool>& Value::bool_list() const {
  if (kind_ != ValueKind::BoolList) wrong_kind("bool[]", kind_);
  return std::get<std::vector<bool>>(v_);
}

DType Value::to_dtype() const {
  if (kind_ != ValueKind::DType) wrong_kind("ScalarType", kind_);
  return std::get<DType>(v_);
}

Device Value::to_device() const {
  if (kind_ == ValueKind::Device) return std::get<Device>(v_);
  if (kind_ == ValueKind::String) return parse_device(std::get<std::string>(v_));
  wrong_kind("Device", kind_);
}

Layout Value::to_layout() const {
  if (kind_ != ValueKind::Layout) wrong_kind("Layout", kind_);
  return std::get<Layout>(v_);
}

MemoryFormat Value::to_memory_format() const {
  if (kind_ != ValueKind::MemoryFormat) wrong_kind("MemoryFormat", kind_);
  return std::get<MemoryFormat>(v_);
}

std::optional<Tensor> Value::opt_tensor() const {
  if (kind_ == ValueKind::None) return std::nullopt;
  const Tensor& t = tensor();
  if (!t.defined()) return std::nullopt;
  return t;
}

std::optional<int64_t> Value::opt_int() const {
  if (kind_ == ValueKind::None) return std::nullopt;
  return to_int();
}

std::optional<double> Value::opt_double() const {
  if (kind_ == ValueKind::None) return std::nullopt;
  return to_double();
}

std::optional<DType> Value::opt_dtype() const {
  if (kind_ == ValueKind::None) return std::nullopt;
  return to_dtype();
}

std::string Value::debug_str() const {
  auto join = [](const auto& items, auto&& fmt) {
    std::string s = "[";
    bool first = true;
    for (const auto& x : items) {
      if (!first) s += ", ";
      first = false;
      s += fmt(x);
    }
    return s + "]";
  };
  switch (kind_) {
    case ValueKind::None:
      return "None";
    case ValueKind::Tensor:
      return std::get<Tensor>(v_).str();
    case ValueKind::TensorList:
    case ValueKind::OptTensorList:
      return join(std::get<std::vector<Tensor>>(v_), [](const Tensor& t) { return t.str(); });
    case ValueKind::Int:
      return std::to_string(std::get<int64_t>(v_));
    case ValueKind::Float:
      return python_float_repr(std::get<double>(v_));
    case ValueKind::Bool:
      return std::get<bool>(v_) ? "True" : "False";
    case ValueKind::String:
      return "'" + std::get<std::string>(v_) + "'";
    case ValueKind::IntList:
      return join(std::get<std::vector<int64_t>>(v_), [](int64_t i) { return std::to_string(i); });
    case ValueKind::FloatList:
      return join(std::get<std::vector<double>>(v_), python_float_repr);
    case ValueKind::BoolList:
      return join(std::get<std::vector<bool>>(v_),
                  [](bool b) { return std::string(b ? "True" : "False"); });
    case ValueKind::DType:
      return std::string(dtype_code(std::get<DType>(v_)));
    case ValueKind::Device:
      return "'" + std::get<Device>(v_).str() + "'";
    case ValueKind::Layout:
      return std::get<Layout>(v_) == Layout::Strided ? "torch.strided" : "torch.sparse_coo";
    case ValueKind::MemoryFormat:
      switch (std::get<MemoryFormat>(v_)) {
        case MemoryFormat::Contiguous:
          return "torch.contiguous_format";
        case MemoryFormat::Preserve:
          return "torch.preserve_format";
        case MemoryFormat::ChannelsLast:
          return "torch.channels_last";
        case MemoryFormat::ChannelsLast3d:
          return "torch.channels_last_3d";
      }
  }
  return "?";
}

// ---- deep copy -------------------------------------------------------------------------------

namespace {

// Every storage reached by the values gets one fresh copy, large enough for all the views of
// it (offsets and strides are kept, so aliasing and layout survive).
class DeepCopier {
 public:
  explicit DeepCopier(const Values& vs) {
    for (const Value& v : vs) visit(v, [this](const Tensor& t) { note(t); });
  }

  Tensor copy(const Tensor& t) {
    if (!t.defined()) return t;
    auto& fresh = fresh_[t.storage().get()];
    if (!fresh) {
      const Storage& old = *t.storage();
      if (!old.device().is_cpu()) unsupported("deep_copy of a non-CPU tensor");
      const size_t n = std::min(needed_[&old], old.nbytes());
      fresh = Storage::allocate_cpu(n);
      if (n > 0) std::memcpy(fresh->data(), old.data(), n);
    }
    return Tensor::from_storage(fresh, t.offset(), t.shape(), t.strides(), t.dtype());
  }

  template <typename F>
  static void visit(const Value& v, F&& f) {
    if (v.kind() == ValueKind::Tensor) {
      f(v.tensor());
    } else if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList) {
      for (const Tensor& t : v.tensors()) f(t);
    }
  }

 private:
  void note(const Tensor& t) {
    if (!t.defined()) return;
    auto [lo, hi] = t.storage_extent();
    (void)lo;
    const size_t end = static_cast<size_t>(hi) * t.itemsize();
    size_t& need = needed_[t.storage().get()];
    need = std::max(need, end);
  }

  std::map<const Storage*, size_t> needed_;
  std::map<const Storage*, std::shared_ptr<Storage>> fresh_;
};

}  // namespace

Values map_tensors(const Values& vs, const std::function<Tensor(const Tensor&)>& f) {
  Values out;
  out.reserve(vs.size());
  for (const Value& v : vs) {
    if (v.kind() == ValueKind::Tensor) {
      out.emplace_back(v.tensor().defined() ? f(v.tensor()) : v.tensor());
    } else if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList) {
      std::vector<Tensor> ts;
      for (const Tensor& t : v.tensors()) ts.push_back(t.defined() ? f(t) : t);
      out.push_back(Value::tensor_list(std::move(ts), v.kind() == ValueKind::OptTensorList));
    } else {
      out.push_back(v);
    }
  }
  return out;
}

Values deep_copy(const Values& vs) {
  DeepCopier copier(vs);
  return map_tensors(vs, [&](const Tensor& t) { return copier.copy(t); });
}

}  // namespace crucible

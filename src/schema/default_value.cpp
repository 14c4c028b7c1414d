// Defaults in schemas: "1", "1.", "9.9999999999999995e-07", "-inf", "True", "None", "\"mean\"",
// "[0, 0]", "contiguous_format", "4" (a ScalarType written as c10's enum number), ...
#include "schema/default_value.h"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "crucible/core/error.h"

namespace crucible::schema_detail {
namespace {

// A default as written, before it is given the argument's type.
struct Literal {
  enum class Kind : uint8_t { None, Bool, Int, Float, String, Name, List };
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string s;  // String contents or Name
  std::vector<Literal> items;
};

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : t_(text) {}

  // The whole text as one literal, or nullopt when it is not one.
  std::optional<Literal> parse_all() {
    std::optional<Literal> lit = parse();
    skip_ws();
    if (!lit || p_ != t_.size()) return std::nullopt;
    return lit;
  }

 private:
  void skip_ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n')) ++p_;
  }

  std::optional<Literal> parse() {
    skip_ws();
    if (p_ >= t_.size()) return std::nullopt;
    char c = t_[p_];
    if (c == '[') return parse_list();
    if (c == '"' || c == '\'') return parse_string();
    if (is_digit(c) || c == '-' || c == '+' || c == '.') return parse_number();
    if (is_ident_char(c)) return parse_name();
    return std::nullopt;
  }

  std::optional<Literal> parse_list() {
    ++p_;  // '['
    Literal lit;
    lit.kind = Literal::Kind::List;
    skip_ws();
    if (p_ < t_.size() && t_[p_] == ']') {
      ++p_;
      return lit;
    }
    while (true) {
      std::optional<Literal> item = parse();
      if (!item) return std::nullopt;
      lit.items.push_back(std::move(*item));
      skip_ws();
      if (p_ >= t_.size()) return std::nullopt;
      if (t_[p_] == ']') {
        ++p_;
        return lit;
      }
      if (t_[p_] != ',') return std::nullopt;
      ++p_;
    }
  }

  std::optional<Literal> parse_string() {
    char quote = t_[p_++];
    Literal lit;
    lit.kind = Literal::Kind::String;
    while (p_ < t_.size() && t_[p_] != quote) {
      char c = t_[p_++];
      if (c == '\\' && p_ < t_.size()) {
        char e = t_[p_++];
        switch (e) {
          case 'n':
            c = '\n';
            break;
          case 't':
            c = '\t';
            break;
          default:
            c = e;
            break;  // \\ \" \'
        }
      }
      lit.s.push_back(c);
    }
    if (p_ >= t_.size()) return std::nullopt;
    ++p_;  // closing quote
    return lit;
  }

  std::optional<Literal> parse_number() {
    size_t start = p_;
    bool negative = false;
    if (t_[p_] == '-' || t_[p_] == '+') negative = t_[p_++] == '-';
    Literal lit;
    // inf / nan, as Python prints them.
    std::string_view rest = t_.substr(p_);
    for (std::string_view word : {"inf", "nan"}) {
      if (rest.substr(0, word.size()) == word &&
          (rest.size() == word.size() || !is_ident_char(rest[word.size()]))) {
        p_ += word.size();
        lit.kind = Literal::Kind::Float;
        double v = word == "inf" ? std::numeric_limits<double>::infinity()
                                 : std::numeric_limits<double>::quiet_NaN();
        lit.d = negative ? -v : v;
        return lit;
      }
    }
    size_t digits_start = p_;
    bool is_float = false;
    while (p_ < t_.size() && is_digit(t_[p_])) ++p_;
    if (p_ < t_.size() && t_[p_] == '.') {
      is_float = true;
      ++p_;
      while (p_ < t_.size() && is_digit(t_[p_])) ++p_;
    }
    if (p_ == digits_start || (p_ == digits_start + 1 && is_float)) return std::nullopt;
    if (p_ < t_.size() && (t_[p_] == 'e' || t_[p_] == 'E')) {
      is_float = true;
      ++p_;
      if (p_ < t_.size() && (t_[p_] == '-' || t_[p_] == '+')) ++p_;
      size_t exp_start = p_;
      while (p_ < t_.size() && is_digit(t_[p_])) ++p_;
      if (p_ == exp_start) return std::nullopt;
    }
    // A complex literal (1j) or anything glued to the number is not a literal we read.
    if (p_ < t_.size() && is_ident_char(t_[p_])) return std::nullopt;
    std::string_view num = t_.substr(start, p_ - start);
    if (num[0] == '+') num.remove_prefix(1);
    const char* first = num.data();
    const char* last = num.data() + num.size();
    if (!is_float) {
      lit.kind = Literal::Kind::Int;
      auto [ptr, ec] = std::from_chars(first, last, lit.i);
      if (ec == std::errc() && ptr == last) return lit;
      // Too large for int64: read it as a float below.
    }
    lit.kind = Literal::Kind::Float;
    auto [ptr, ec] = std::from_chars(first, last, lit.d);
    if (ec != std::errc() || ptr != last) return std::nullopt;
    return lit;
  }

  std::optional<Literal> parse_name() {
    size_t start = p_;
    while (p_ < t_.size() && (is_ident_char(t_[p_]) || t_[p_] == '.')) ++p_;
    std::string_view name = t_.substr(start, p_ - start);
    Literal lit;
    if (name == "None") {
      lit.kind = Literal::Kind::None;
    } else if (name == "True" || name == "False") {
      lit.kind = Literal::Kind::Bool;
      lit.b = name == "True";
    } else {
      lit.kind = Literal::Kind::Name;
      lit.s = std::string(name);
    }
    return lit;
  }

  std::string_view t_;
  size_t p_ = 0;
};

using Kind = Literal::Kind;

// at::Reduction, which some schemas spell by name ("int reduction=Mean").
std::optional<int64_t> reduction_from_name(std::string_view name) {
  if (name == "Mean") return 1;
  if (name == "Sum") return 2;
  return std::nullopt;
}

std::optional<Value> scalar_value(const Literal& lit, BaseType base) {
  switch (base) {
    case BaseType::Int:
    case BaseType::SymInt:
      if (lit.kind == Kind::Int) return Value(lit.i);
      if (lit.kind == Kind::Name) {
        if (auto r = reduction_from_name(lit.s)) return Value(*r);
      }
      return std::nullopt;
    case BaseType::Float:
      if (lit.kind == Kind::Int) return Value(static_cast<double>(lit.i));
      if (lit.kind == Kind::Float) return Value(lit.d);
      return std::nullopt;
    case BaseType::Bool:
      if (lit.kind == Kind::Bool) return Value(lit.b);
      return std::nullopt;
    case BaseType::Scalar:
    case BaseType::Number:
    case BaseType::Complex:
    case BaseType::Any:
    case BaseType::TypeVar:
      if (lit.kind == Kind::Int) return Value(lit.i);
      if (lit.kind == Kind::Float) return Value(lit.d);
      if (lit.kind == Kind::Bool && base != BaseType::Complex) return Value(lit.b);
      if (lit.kind == Kind::String && (base == BaseType::Any || base == BaseType::TypeVar)) {
        return Value(lit.s);
      }
      return std::nullopt;
    case BaseType::Str:
    case BaseType::Dimname:
      if (lit.kind == Kind::String) return Value(lit.s);
      return std::nullopt;
    case BaseType::ScalarType: {
      std::optional<DType> t;
      if (lit.kind == Kind::Int) t = dtype_from_aten_index(lit.i);
      if (lit.kind == Kind::Name) t = dtype_from_name(lit.s);
      if (t) return Value(*t);
      return std::nullopt;
    }
    case BaseType::Layout: {
      std::optional<Layout> l;
      if (lit.kind == Kind::Int) l = layout_from_index(lit.i);
      if (lit.kind == Kind::Name) l = layout_from_name(lit.s);
      if (l) return Value(*l);
      return std::nullopt;
    }
    case BaseType::MemoryFormat: {
      std::optional<MemoryFormat> m;
      if (lit.kind == Kind::Int) m = memory_format_from_index(lit.i);
      if (lit.kind == Kind::Name) m = memory_format_from_name(lit.s);
      if (m) return Value(*m);
      return std::nullopt;
    }
    case BaseType::Device:
      if (lit.kind == Kind::String || lit.kind == Kind::Name) {
        try {
          return Value(parse_device(lit.s));
        } catch (const Error&) {
          return std::nullopt;
        }
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::optional<Value> list_value(const Literal& lit, const SchemaType& type) {
  std::vector<Literal> single;
  const std::vector<Literal>* items = &lit.items;
  if (lit.kind != Kind::List) {
    // "int[2] stride=1" means [1, 1], as ATen repeats a single int for a fixed-size list.
    if (!type.fixed_size) return std::nullopt;
    single.assign(static_cast<size_t>(*type.fixed_size), lit);
    items = &single;
  }
  switch (type.base) {
    case BaseType::Int:
    case BaseType::SymInt: {
      std::vector<int64_t> out;
      for (const Literal& item : *items) {
        if (item.kind != Kind::Int) return std::nullopt;
        out.push_back(item.i);
      }
      return Value(std::move(out));
    }
    case BaseType::Float: {
      std::vector<double> out;
      for (const Literal& item : *items) {
        if (item.kind == Kind::Int) {
          out.push_back(static_cast<double>(item.i));
        } else if (item.kind == Kind::Float) {
          out.push_back(item.d);
        } else {
          return std::nullopt;
        }
      }
      return Value(std::move(out));
    }
    case BaseType::Bool: {
      std::vector<bool> out;
      for (const Literal& item : *items) {
        if (item.kind != Kind::Bool) return std::nullopt;
        out.push_back(item.b);
      }
      return Value(std::move(out));
    }
    case BaseType::Tensor:
      if (!items->empty()) return std::nullopt;
      return Value::tensor_list({}, type.element_optional);
    default:
      return std::nullopt;
  }
}

}  // namespace

Value default_value_for(std::string_view text, const SchemaType& type) {
  std::optional<Literal> lit = LiteralParser(text).parse_all();
  std::optional<Value> v;
  if (lit) {
    if (lit->kind == Kind::None) return Value();
    v = type.is_list ? list_value(*lit, type) : scalar_value(*lit, type.base);
  }
  if (!v) return Value(std::string(text));
  return std::move(*v);
}

std::optional<DType> dtype_from_aten_index(int64_t index) {
  switch (index) {
    case 0:
      return DType::UInt8;
    case 1:
      return DType::Int8;
    case 2:
      return DType::Int16;
    case 3:
      return DType::Int32;
    case 4:
      return DType::Int64;
    case 5:
      return DType::Float16;
    case 6:
      return DType::Float32;
    case 7:
      return DType::Float64;
    case 11:
      return DType::Bool;
    case 15:
      return DType::BFloat16;
    case 23:
      return DType::Float8E5M2;
    case 24:
      return DType::Float8E4M3FN;
    default:
      return std::nullopt;  // complex, quantized, bits and unsigned types
  }
}

std::optional<DType> dtype_from_name(std::string_view name) {
  if (name.starts_with("torch.")) name.remove_prefix(6);
  static constexpr std::array<std::pair<std::string_view, DType>, 18> kNames = {{
      {"bool", DType::Bool},
      {"uint8", DType::UInt8},
      {"int8", DType::Int8},
      {"int16", DType::Int16},
      {"short", DType::Int16},
      {"int32", DType::Int32},
      {"int", DType::Int32},
      {"int64", DType::Int64},
      {"long", DType::Int64},
      {"float16", DType::Float16},
      {"half", DType::Float16},
      {"bfloat16", DType::BFloat16},
      {"float32", DType::Float32},
      {"float", DType::Float32},
      {"float64", DType::Float64},
      {"double", DType::Float64},
      {"float8_e4m3fn", DType::Float8E4M3FN},
      {"float8_e5m2", DType::Float8E5M2},
  }};
  for (const auto& [n, t] : kNames) {
    if (n == name) return t;
  }
  return parse_dtype(name);
}

std::optional<Layout> layout_from_name(std::string_view name) {
  if (name.starts_with("torch.")) name.remove_prefix(6);
  if (name == "strided") return Layout::Strided;
  if (name == "sparse_coo") return Layout::SparseCoo;
  return std::nullopt;
}

std::optional<Layout> layout_from_index(int64_t index) {
  if (index == 0) return Layout::Strided;
  if (index == 1) return Layout::SparseCoo;
  return std::nullopt;
}

std::optional<MemoryFormat> memory_format_from_name(std::string_view name) {
  if (name.starts_with("torch.")) name.remove_prefix(6);
  if (name == "contiguous_format") return MemoryFormat::Contiguous;
  if (name == "preserve_format") return MemoryFormat::Preserve;
  if (name == "channels_last") return MemoryFormat::ChannelsLast;
  if (name == "channels_last_3d") return MemoryFormat::ChannelsLast3d;
  return std::nullopt;
}

std::optional<MemoryFormat> memory_format_from_index(int64_t index) {
  switch (index) {
    case 0:
      return MemoryFormat::Contiguous;
    case 1:
      return MemoryFormat::Preserve;
    case 2:
      return MemoryFormat::ChannelsLast;
    case 3:
      return MemoryFormat::ChannelsLast3d;
    default:
      return std::nullopt;
  }
}

}  // namespace crucible::schema_detail

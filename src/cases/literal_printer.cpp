// The case grammar's printer (the canonical spacing of ATen's traces: ", " between items,
// ": " in dicts) and the Literal constructors and equality. Printing what the parser read gives
// back the same text: floats, dtype names and quotes keep the spelling they were written with.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "crucible/cases/literal.h"

namespace crucible::cases {

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  // Shortest digits that read back to v, in scientific form: "1.5e-07", "1e+16", "0e+00".
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  std::string out;
  if (sci.front() == '-') {
    out += '-';
    sci.remove_prefix(1);
  }
  const size_t e_at = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_at)) {
    if (c != '.') digits += c;
  }
  int exp = 0;
  const std::string_view exp_text = sci.substr(e_at + 1);
  std::from_chars(exp_text.data() + (exp_text.front() == '+' ? 1 : 0),
                  exp_text.data() + exp_text.size(), exp);
  // Python's repr: exponent form when the decimal exponent is < -4 or >= 16.
  if (exp < -4 || exp >= 16) {
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += exp < 0 ? "e-" : "e+";
    const int mag = exp < 0 ? -exp : exp;
    if (mag < 10) out += '0';
    out += std::to_string(mag);
    return out;
  }
  if (exp < 0) {
    out += "0.";
    out.append(static_cast<size_t>(-exp - 1), '0');
    out += digits;
    return out;
  }
  const auto int_len = static_cast<size_t>(exp) + 1;
  if (digits.size() <= int_len) {
    out += digits;
    out.append(int_len - digits.size(), '0');
    out += ".0";
  } else {
    out += digits.substr(0, int_len);
    out += '.';
    out += digits.substr(int_len);
  }
  return out;
}

Literal Literal::boolean(bool v) {
  Literal l;
  l.kind = LitKind::Bool;
  l.b = v;
  return l;
}

Literal Literal::integer(int64_t v) {
  Literal l;
  l.kind = LitKind::Int;
  l.i = v;
  return l;
}

Literal Literal::floating(double v) {
  Literal l;
  l.kind = LitKind::Float;
  l.f = v;
  l.text = python_float_repr(v);
  return l;
}

Literal Literal::string(std::string s) {
  Literal l;
  l.kind = LitKind::String;
  l.text = std::move(s);
  return l;
}

Literal Literal::dtype_lit(DType t) {
  Literal l;
  l.kind = LitKind::DType;
  l.dtype = t;
  l.text = std::string(dtype_code(t));
  return l;
}

Literal Literal::symbol(std::string name) {
  Literal l;
  l.kind = LitKind::Symbol;
  l.text = std::move(name);
  return l;
}

Literal Literal::tensor_lit(TensorLit t) {
  Literal l;
  l.kind = LitKind::Tensor;
  l.tensor = std::move(t);
  return l;
}

Literal Literal::list(std::vector<Literal> items) {
  Literal l;
  l.kind = LitKind::List;
  l.items = std::move(items);
  return l;
}

Literal Literal::tuple(std::vector<Literal> items) {
  Literal l;
  l.kind = LitKind::Tuple;
  l.items = std::move(items);
  return l;
}

Literal Literal::dict(std::vector<std::pair<Literal, Literal>> entries) {
  Literal l;
  l.kind = LitKind::Dict;
  l.entries = std::move(entries);
  return l;
}

bool operator==(const Literal& a, const Literal& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case LitKind::None:
      return true;
    case LitKind::Bool:
      return a.b == b.b;
    case LitKind::Int:
      return a.i == b.i;
    case LitKind::Float:
      return a.text == b.text && (a.f == b.f ? std::signbit(a.f) == std::signbit(b.f)
                                             : std::isnan(a.f) && std::isnan(b.f));
    case LitKind::String:
      return a.text == b.text && a.quote == b.quote;
    case LitKind::DType:
      return a.dtype == b.dtype && a.text == b.text;
    case LitKind::Symbol:
      return a.text == b.text;
    case LitKind::Tensor:
      return a.tensor == b.tensor;
    case LitKind::List:
    case LitKind::Tuple:
      return a.items == b.items;
    case LitKind::Dict:
      return a.entries == b.entries;
  }
  return false;
}

namespace {

// Python's quoting of a string's characters inside `quote`.
void append_quoted(std::string& out, const std::string& s, char quote) {
  out += quote;
  for (char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c == quote) {
          out += '\\';
          out += c;
        } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof(hex), "\\x%02x", static_cast<unsigned char>(c));
          out += hex;
        } else {
          out += c;
        }
    }
  }
  out += quote;
}

void append_ints(std::string& out, const Shape& v, char open, char close) {
  out += open;
  for (size_t k = 0; k < v.size(); ++k) {
    if (k > 0) out += ", ";
    out += std::to_string(v[k]);
  }
  if (open == '(' && v.size() == 1) out += ',';
  out += close;
}

void append_tensor(std::string& out, const TensorLit& t) {
  out += "T(";
  append_ints(out, t.shape, '[', ']');
  out += ", ";
  out += t.dtype_text.empty() ? std::string(dtype_code(t.dtype)) : t.dtype_text;
  if (t.stride_written) {
    out += t.stride_positional ? ", " : ", stride=";
    if (t.stride_form == TensorLit::StrideForm::None || !t.strides) {
      out += "None";
    } else if (t.stride_form == TensorLit::StrideForm::List) {
      append_ints(out, *t.strides, '[', ']');
    } else {
      append_ints(out, *t.strides, '(', ')');
    }
  }
  // A positional device must follow a positional stride or the dtype; after stride= it must be
  // a keyword to be valid Python.
  if (t.device) {
    const bool keyword = t.device_keyword || (t.stride_written && !t.stride_positional);
    out += keyword ? ", device=" : ", ";
    append_quoted(out, *t.device, '\'');
  }
  if (t.fill) {
    out += ", fill=";
    append_quoted(out, *t.fill, '\'');
  }
  out += ')';
}

void append_literal(std::string& out, const Literal& lit) {
  switch (lit.kind) {
    case LitKind::None:
      out += "None";
      return;
    case LitKind::Bool:
      out += lit.b ? "True" : "False";
      return;
    case LitKind::Int:
      out += std::to_string(lit.i);
      return;
    case LitKind::Float:
      out += lit.text.empty() ? python_float_repr(lit.f) : lit.text;
      return;
    case LitKind::String:
      append_quoted(out, lit.text, lit.quote == '"' ? '"' : '\'');
      return;
    case LitKind::DType:
      out += lit.text.empty() ? std::string(dtype_code(lit.dtype)) : lit.text;
      return;
    case LitKind::Symbol:
      out += lit.text;
      return;
    case LitKind::Tensor:
      append_tensor(out, lit.tensor);
      return;
    case LitKind::List:
    case LitKind::Tuple: {
      const bool tuple = lit.kind == LitKind::Tuple;
      out += tuple ? '(' : '[';
      for (size_t k = 0; k < lit.items.size(); ++k) {
        if (k > 0) out += ", ";
        append_literal(out, lit.items[k]);
      }
      if (tuple && lit.items.size() == 1) out += ',';
      out += tuple ? ')' : ']';
      return;
    }
    case LitKind::Dict: {
      out += '{';
      for (size_t k = 0; k < lit.entries.size(); ++k) {
        if (k > 0) out += ", ";
        append_literal(out, lit.entries[k].first);
        out += ": ";
        append_literal(out, lit.entries[k].second);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

std::string print_literal(const Literal& lit) {
  std::string out;
  append_literal(out, lit);
  return out;
}

std::string print_call(const CallSpec& call) {
  std::string out = "((";
  for (size_t k = 0; k < call.args.size(); ++k) {
    if (k > 0) out += ", ";
    append_literal(out, call.args[k]);
  }
  if (call.args.size() == 1) out += ',';
  out += "), {";
  for (size_t k = 0; k < call.kwargs.size(); ++k) {
    if (k > 0) out += ", ";
    append_quoted(out, call.kwargs[k].first, '\'');
    out += ": ";
    append_literal(out, call.kwargs[k].second);
  }
  out += "})";
  return out;
}

}  // namespace crucible::cases

// The case grammar's recursive-descent parser. It never evaluates anything: it builds Literal
// trees and keeps each spelling a printer needs to give back the same text. Errors are Input
// errors "<file>:<line>:<col>: expected X, got Y"; positions are computed only when failing.
#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cases/literal_parser.h"
#include "crucible/cases/references.h"

namespace crucible::cases {

namespace {

constexpr std::string_view kComplexCodes[] = {"c32", "c64", "c128"};

}  // namespace

namespace detail {

// The complex codes c32 c64 c128 are DTypes too (the last three of all_dtypes()).
std::string valid_dtype_codes() {
  std::string out;
  for (DType t : all_dtypes()) {
    if (!out.empty()) out += ' ';
    out += dtype_code(t);
  }
  return out;
}

std::optional<DType> dtype_from_code(std::string_view s) {
  for (DType t : all_dtypes()) {
    if (dtype_code(t) == s) return t;
  }
  return std::nullopt;
}

CallSpec Parser::call() {
  CallSpec out;
  skip_ws();
  expect('(', "'(' to start the call ((args...), {kwargs...})");
  skip_ws();
  const size_t args_at = pos_;
  expect('(', "'(' to start the positional arguments");
  bool trailing_comma = false;
  out.args = items(')', "positional arguments", args_at, &trailing_comma, 0);
  if (out.args.size() == 1 && !trailing_comma) {
    fail(pos_ - 1, "',' after the only positional argument (a one-element tuple needs one)");
  }
  skip_ws();
  expect(',', "',' after the positional arguments");
  skip_ws();
  const size_t kwargs_at = pos_;
  if (peek() != '{') fail(pos_, "'{' to start the keyword arguments");
  Literal kw = dict(0);
  for (size_t k = 0; k < kw.entries.size(); ++k) {
    const std::string& name = kw.entries[k].first.text;
    for (const auto& [seen, unused] : out.kwargs) {
      if (seen == name) fail_msg(kwargs_at, "duplicate keyword argument '" + name + "'");
    }
    out.kwargs.emplace_back(name, std::move(kw.entries[k].second));
  }
  skip_ws();
  expect(')', "')' to close the call after the keyword arguments");
  expect_end("end of input after the call");
  return out;
}

Literal Parser::whole_literal() {
  skip_ws();
  Literal v = value(0);
  expect_end("end of input after the value");
  return v;
}

Literal Parser::prefix_value(size_t* end) {
  skip_ws();
  Literal v = value(0);
  *end = pos_;
  return v;
}

CallSpec Parser::argument_list(size_t* end) {
  CallSpec out;
  skip_ws();
  const size_t open_at = pos_;
  expect('(', "'(' to start the arguments");
  while (true) {
    skip_ws();
    if (peek() == ')' && !at_end()) {
      ++pos_;
      break;
    }
    // A keyword argument is `name=value`; a word not followed by '=' is a positional value.
    size_t k = pos_;
    while (k < s_.size() && is_ident_char(s_[k])) ++k;
    size_t eq = k;
    while (eq < s_.size() && (s_[eq] == ' ' || s_[eq] == '\t')) ++eq;
    const bool keyword = k > pos_ && is_ident_start(s_[pos_]) && eq < s_.size() && s_[eq] == '=' &&
                         (eq + 1 >= s_.size() || s_[eq + 1] != '=');
    if (keyword) {
      const size_t name_at = pos_;
      std::string name(s_.substr(pos_, k - pos_));
      for (const auto& [seen, unused] : out.kwargs) {
        if (seen == name) fail_msg(name_at, "duplicate keyword argument '" + name + "'");
      }
      pos_ = eq + 1;
      out.kwargs.emplace_back(std::move(name), value(1));
    } else {
      if (!out.kwargs.empty()) {
        fail_msg(pos_, "expected a keyword argument (name=value) after the keyword argument '" +
                           out.kwargs.back().first + "', got a positional one");
      }
      out.args.push_back(value(1));
    }
    skip_ws();
    if (peek() == ',' && !at_end()) {
      ++pos_;
      continue;
    }
    if (peek() == ')' && !at_end()) {
      ++pos_;
      break;
    }
    fail(pos_, "',' or ')' in the arguments opened at " + line_col(open_at));
  }
  *end = pos_;
  return out;
}

Literal Parser::reference() {
  const size_t at = pos_++;  // '%'
  const size_t name_at = pos_;
  while (!at_end() && (is_ident_char(peek()) || peek() == '.')) ++pos_;
  if (pos_ == name_at) fail(pos_, "a value name ([A-Za-z0-9_.]+) after '%'");
  return Literal::symbol(std::string(s_.substr(at, pos_ - at)));
}

void Parser::skip_ws() {
  while (pos_ < s_.size()) {
    const char c = s_[pos_];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    ++pos_;
  }
}

void Parser::expect(char c, std::string_view what) {
  if (peek() != c || at_end()) fail(pos_, what);
  ++pos_;
}

void Parser::expect_end(std::string_view what) {
  skip_ws();
  if (!at_end()) fail(pos_, what);
}

// "file:line:col" of byte `at`.
std::string Parser::where(size_t at) const {
  int line = origin_.line;
  size_t line_start = 0;
  for (size_t k = 0; k < at && k < s_.size(); ++k) {
    if (s_[k] == '\n') {
      ++line;
      line_start = k + 1;
    }
  }
  const int col = static_cast<int>(at - line_start) + (line_start == 0 ? origin_.column : 1);
  return origin_.file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

// What stands at `at`, for "got ...": a whole word or number, one character, or the end.
std::string Parser::describe(size_t at) const {
  if (at >= s_.size()) return "end of input";
  const char c = s_[at];
  if (c == '\n' || c == '\r') return "end of line";
  if (is_ident_char(c)) {
    size_t end = at;
    while (end < s_.size() && (is_ident_char(s_[end]) || s_[end] == '.') && end - at < 40) ++end;
    return "'" + std::string(s_.substr(at, end - at)) + "'";
  }
  const auto u = static_cast<unsigned char>(c);
  if (u < 0x20 || u >= 0x7f) {
    static constexpr char kHex[] = "0123456789abcdef";
    return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 15];
  }
  return "'" + std::string(1, c) + "'";
}

std::string Parser::line_col(size_t at) const {
  // where() without the file, for "the list started at 1:5".
  const std::string w = where(at);
  return w.substr(origin_.file.size() + 1);
}

// Items of a list, tuple or argument tuple up to `close` (the opener is consumed), trailing
// comma allowed.
std::vector<Literal> Parser::items(char close, std::string_view what, size_t open_at,
                                   bool* trailing_comma, int depth) {
  std::vector<Literal> out;
  *trailing_comma = false;
  skip_ws();
  if (peek() == close) {
    ++pos_;
    return out;
  }
  const bool arguments = what == "positional arguments";
  out.reserve(4);
  while (true) {
    out.push_back(value(depth + 1));
    skip_ws();
    if (peek() == close && !at_end()) {
      ++pos_;
      return out;
    }
    if (peek() != ',' || at_end()) {
      const std::string where_opened = " opened at " + line_col(open_at);
      fail(pos_, arguments ? "',' or ')' after " + kind_name(out.back()) + " argument " +
                                 std::to_string(out.size()) + " of the call" + where_opened
                           : std::string("',' or '") + close + "' in the " + std::string(what) +
                                 where_opened);
    }
    ++pos_;
    skip_ws();
    if (peek() == close && !at_end()) {
      ++pos_;
      *trailing_comma = true;
      return out;
    }
  }
}

std::string Parser::kind_name(const Literal& l) {
  switch (l.kind) {
    case LitKind::None:
      return "None";
    case LitKind::Bool:
      return "bool";
    case LitKind::Int:
      return "int";
    case LitKind::Float:
      return "float";
    case LitKind::String:
      return "string";
    case LitKind::DType:
      return "dtype";
    case LitKind::Symbol:
      return "symbol";
    case LitKind::Tensor:
      return "tensor";
    case LitKind::List:
      return "list";
    case LitKind::Tuple:
      return "tuple";
    case LitKind::Dict:
      return "dict";
  }
  return "value";
}

Literal Parser::value(int depth) {
  if (depth > kMaxDepth) {
    fail_msg(pos_, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  skip_ws();
  const size_t start = pos_;
  const char c = peek();
  if (at_end()) fail(pos_, "a value");
  if (c == '[') {
    ++pos_;
    bool trailing = false;
    return Literal::list(items(']', "list", start, &trailing, depth));
  }
  if (c == '(') {
    ++pos_;
    bool trailing = false;
    std::vector<Literal> v = items(')', "tuple", start, &trailing, depth);
    // "(x)" is x, as in Python; "(x,)" is a one-element tuple.
    if (v.size() == 1 && !trailing) return std::move(v[0]);
    return Literal::tuple(std::move(v));
  }
  if (c == '{') return dict(depth);
  if (c == '%' && refs_) return reference();
  if (c == '\'' || c == '"') return string_lit();
  if (c == '-' || is_digit(c) || c == '.') return number();
  if (is_ident_start(c)) return word();
  fail(pos_, "a value (number, string, True/False/None, T(...), list, tuple, dict or dtype)");
}

Literal Parser::dict(int depth) {
  const size_t open_at = pos_;
  ++pos_;  // '{'
  std::vector<std::pair<Literal, Literal>> entries;
  skip_ws();
  if (peek() == '}') {
    ++pos_;
    return Literal::dict(std::move(entries));
  }
  while (true) {
    skip_ws();
    if (peek() != '\'' && peek() != '"') fail(pos_, "a string key in the dict");
    Literal key = string_lit();
    skip_ws();
    expect(':', "':' after the dict key");
    Literal v = value(depth + 1);
    entries.emplace_back(std::move(key), std::move(v));
    skip_ws();
    if (peek() == '}') {
      ++pos_;
      break;
    }
    if (peek() != ',' || at_end()) {
      fail(pos_, "',' or '}' in the dict opened at " + line_col(open_at));
    }
    ++pos_;
    skip_ws();
    if (peek() == '}') {
      ++pos_;
      break;
    }
  }
  return Literal::dict(std::move(entries));
}

Literal Parser::string_lit() {
  const size_t open_at = pos_;
  const char quote = s_[pos_++];
  std::string out;
  while (true) {
    if (at_end() || s_[pos_] == '\n') {
      fail(pos_, std::string("closing ") + quote + " of the string opened at " + line_col(open_at));
    }
    const char c = s_[pos_];
    if (c == quote) {
      ++pos_;
      break;
    }
    if (c != '\\') {
      out += c;
      ++pos_;
      continue;
    }
    const size_t esc_at = pos_++;
    if (at_end()) fail(pos_, "an escaped character after '\\'");
    const char e = s_[pos_++];
    switch (e) {
      case '\\':
        out += '\\';
        break;
      case '\'':
        out += '\'';
        break;
      case '"':
        out += '"';
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case '0':
        out += '\0';
        break;
      case 'x': {
        unsigned v = 0;
        for (int k = 0; k < 2; ++k) {
          const char h = peek();
          if (!std::isxdigit(static_cast<unsigned char>(h)) || at_end()) {
            fail(pos_, "two hex digits after \\x");
          }
          v = v * 16 + static_cast<unsigned>(is_digit(h) ? h - '0' : (std::tolower(h) - 'a' + 10));
          ++pos_;
        }
        out += static_cast<char>(v);
        break;
      }
      default:
        fail(esc_at, "an escape (\\\\ \\' \\\" \\n \\t \\r \\0 \\xHH)");
    }
  }
  Literal lit = Literal::string(std::move(out));
  lit.quote = quote;
  return lit;
}

// [-] digits [. digits] [e [+-] digits], or [-] inf / nan. Integers keep int64; floats keep
// their spelling.
Literal Parser::number() {
  const size_t start = pos_;
  bool negative = false;
  if (peek() == '-') {
    negative = true;
    ++pos_;
    skip_ws();  // "- 5" is -5, as in Python
  }
  const size_t digits_at = pos_;
  if (is_ident_start(peek())) {
    const size_t w = pos_;
    while (is_ident_char(peek()) && !at_end()) ++pos_;
    const std::string_view name = s_.substr(w, pos_ - w);
    if (name == "inf" || name == "nan") {
      Literal lit;
      lit.kind = LitKind::Float;
      lit.f = name == "inf" ? std::numeric_limits<double>::infinity()
                            : std::numeric_limits<double>::quiet_NaN();
      if (negative) lit.f = -lit.f;
      lit.text = (negative ? "-" : "") + std::string(name);
      return lit;
    }
    fail(w, "a number after '-'");
  }
  size_t int_digits = 0;
  while (is_digit(peek()) && !at_end()) {
    ++pos_;
    ++int_digits;
  }
  bool is_float = false;
  size_t frac_digits = 0;
  if (peek() == '.' && !at_end()) {
    is_float = true;
    ++pos_;
    while (is_digit(peek()) && !at_end()) {
      ++pos_;
      ++frac_digits;
    }
  }
  if (int_digits == 0 && frac_digits == 0) fail(digits_at, "a number");
  if ((peek() == 'e' || peek() == 'E') && !at_end()) {
    is_float = true;
    ++pos_;
    if (peek() == '+' || peek() == '-') ++pos_;
    if (!is_digit(peek()) || at_end()) fail(pos_, "digits in the exponent");
    while (is_digit(peek()) && !at_end()) ++pos_;
  }
  const std::string_view digits = s_.substr(digits_at, pos_ - digits_at);
  if (!is_float) {
    if (int_digits > 1 && digits[0] == '0') {
      fail_msg(digits_at,
               "expected an integer without leading zeros, got '" + std::string(digits) + "'");
    }
    uint64_t mag = 0;
    const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), mag);
    const uint64_t limit =
        static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + (negative ? 1u : 0u);
    if (ec != std::errc() || p != digits.data() + digits.size() || mag > limit) {
      fail_msg(start, "integer literal " + std::string(negative ? "-" : "") + std::string(digits) +
                          " is out of range for int64 [" +
                          std::to_string(std::numeric_limits<int64_t>::min()) + ", " +
                          std::to_string(std::numeric_limits<int64_t>::max()) + "]");
    }
    const int64_t v = negative ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
    return Literal::integer(v);
  }
  double v = 0;
  const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec == std::errc::result_out_of_range) {
    // Underflow reads as 0.0 (as Python does); overflow is an error rather than inf.
    const size_t epos = digits.find_first_of("eE");
    const bool underflow =
        epos != std::string_view::npos && epos + 1 < digits.size() && digits[epos + 1] == '-';
    if (!underflow) {
      fail_msg(start, "float literal " + std::string(s_.substr(start, pos_ - start)) +
                          " is out of range for a double");
    }
    v = 0.0;
  } else if (ec != std::errc() || p != digits.data() + digits.size()) {
    fail(digits_at, "a number");
  }
  Literal lit;
  lit.kind = LitKind::Float;
  lit.f = negative ? -v : v;
  lit.text = (negative ? "-" : "") + std::string(digits);
  return lit;
}

// A dotted name: torch.float16, aten.add (the dots must join identifier parts).
std::string_view Parser::dotted_name() {
  const size_t w = pos_;
  while (true) {
    while (is_ident_char(peek()) && !at_end()) ++pos_;
    if (peek() == '.' && pos_ + 1 < s_.size() && is_ident_start(s_[pos_ + 1])) {
      ++pos_;
      continue;
    }
    break;
  }
  return s_.substr(w, pos_ - w);
}

Literal Parser::word() {
  const size_t w = pos_;
  const std::string_view name = dotted_name();
  if (name == "True") return Literal::boolean(true);
  if (name == "False") return Literal::boolean(false);
  if (name == "None") return Literal::none();
  if (name == "inf" || name == "nan") {
    pos_ = w;
    return number();
  }
  if (name == "T") {
    skip_ws();
    if (peek() == '(') return Literal::tensor_lit(tensor(w));
    fail(pos_, "'(' after T");
  }
  if (name.starts_with("torch.")) {
    if (const auto t = parse_dtype(name)) {
      Literal lit = Literal::dtype_lit(*t);
      lit.text = std::string(name);
      return lit;
    }
    return Literal::symbol(std::string(name));
  }
  if (const auto t = dtype_from_code(name)) return Literal::dtype_lit(*t);
  fail(w,
       "a value (number, string, True/False/None, inf/nan, T(...), torch.<name> or a dtype "
       "code: " +
           valid_dtype_codes() + ")");
}

}  // namespace detail

bool is_complex_dtype_name(std::string_view s) {
  for (std::string_view c : kComplexCodes) {
    if (s == c) return true;
  }
  return s == "torch.complex32" || s == "torch.complex64" || s == "torch.complex128" ||
         s == "torch.chalf" || s == "torch.cfloat" || s == "torch.cdouble";
}

CallSpec parse_call(std::string_view text, const SourceOrigin& origin) {
  return detail::Parser(text, origin).call();
}

CallSpec parse_call(std::string_view text, const std::string& where) {
  return parse_call(text, SourceOrigin{where, 1, 1});
}

bool is_value_ref(const Literal& lit) {
  return lit.kind == LitKind::Symbol && lit.text.starts_with('%');
}

Literal parse_literal_prefix(std::string_view text, const SourceOrigin& origin, bool refs,
                             size_t* end) {
  return detail::Parser(text, origin, refs).prefix_value(end);
}

CallSpec parse_argument_list(std::string_view text, const SourceOrigin& origin, size_t* end) {
  return detail::Parser(text, origin, true).argument_list(end);
}

Literal parse_literal(std::string_view text, const std::string& where) {
  const SourceOrigin origin{where, 1, 1};
  return detail::Parser(text, origin).whole_literal();
}

}  // namespace crucible::cases

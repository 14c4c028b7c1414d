// The case grammar's parser, private to src/cases: literal_parser.cpp parses calls and values,
// tensor_literal_parser.cpp the arguments of T(...). Errors are Input errors
// "<file>:<line>:<col>: expected X, got Y"; positions are computed only when failing.
#pragma once

#include <cctype>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "crucible/cases/literal.h"
#include "crucible/core/error.h"

namespace crucible::cases::detail {

inline constexpr int kMaxDepth = 256;

inline bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
inline bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "b8 u8 ... f8e5m2 c32 c64 c128": every code a tensor's dtype may be written with.
std::string valid_dtype_codes();
// The DType of a short code ("f16"), or nullopt.
std::optional<DType> dtype_from_code(std::string_view s);

// A recursive-descent parser over one text; `origin` says where the text begins.
class Parser {
 public:
  // refs: value references `%name` are values too (graph files; never traces).
  Parser(std::string_view text, const SourceOrigin& origin, bool refs = false)
      : s_(text), origin_(origin), refs_(refs) {}

  CallSpec call();

  Literal whole_literal();

  // The value at the start of the text; *end = the byte after it.
  Literal prefix_value(size_t* end);

  // "(v, ..., name=v, ...)" at the start of the text; *end = the byte after ')'.
  CallSpec argument_list(size_t* end);

 private:
  std::string_view s_;
  const SourceOrigin& origin_;
  bool refs_ = false;
  size_t pos_ = 0;

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= s_.size(); }

  void skip_ws();

  void expect(char c, std::string_view what);

  void expect_end(std::string_view what);

  // "file:line:col" of byte `at`.
  std::string where(size_t at) const;

  // What stands at `at`, for "got ...": a whole word or number, one character, or the end.
  std::string describe(size_t at) const;

  [[noreturn]] void fail(size_t at, std::string_view expected) const {
    input_error(where(at), "expected " + std::string(expected) + ", got " + describe(at));
  }
  [[noreturn]] void fail_msg(size_t at, const std::string& message) const {
    input_error(where(at), message);
  }

  std::string line_col(size_t at) const;

  // Items of a list, tuple or argument tuple up to `close` (the opener is consumed), trailing
  // comma allowed.
  std::vector<Literal> items(char close, std::string_view what, size_t open_at,
                             bool* trailing_comma, int depth);

  static std::string kind_name(const Literal& l);

  Literal value(int depth);

  Literal dict(int depth);

  Literal string_lit();

  // [-] digits [. digits] [e [+-] digits], or [-] inf / nan. Integers keep int64; floats keep
  // their spelling.
  Literal number();

  // A dotted name: torch.float16, aten.add (the dots must join identifier parts).
  std::string_view dotted_name();

  Literal word();

  // `%name` (refs_ only): a Symbol literal whose text is "%name".
  Literal reference();

  // T([shape], dtype[, stride][, device][, stride=...][, device=...][, fill=...]); `w` is 'T'.
  TensorLit tensor(size_t w);

  void stride_value(TensorLit& t);

  // "[2, 3]" or "(1, 2,)" of non-negative integers into `out` (the opener is at pos_). Returns
  // whether a trailing comma was written.
  bool int_sequence(char close, std::string_view what, Shape* out);

  std::string device_value(size_t at);
};

}  // namespace crucible::cases::detail

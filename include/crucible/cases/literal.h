// The case grammar: the Python-literal subset used by ATen operator traces (and BackendBench)
// to write an operator call, e.g.
//   ((T([96, 3, 224, 224], f16), T([32, 3, 3, 3], f16), None, [2, 2], 1), {'dtype': f16})
// It is parsed by a real parser with line:column errors, never evaluated, and printed back to
// the same text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "crucible/core/dtype.h"
#include "crucible/core/tensor.h"

namespace crucible::cases {

// A tensor argument: T([shape], dtype[, stride=(...)][, 'device'][, fill='kind']).
// `fill` is crucible's extension naming how values are drawn ("special" = dedicated special
// values); traces never write it.
//
// Also accepted (BackendBench's _deserialize_tensor(size, dtype, stride=None, device='cuda')):
// the stride as the third positional argument and `device='cuda'` as a keyword; the flags below
// remember the form so that printing gives back the same text. Keywords may come in any order
// after the positional arguments; they print as stride, device, fill.
//
// dtype: the short code (f16) or a torch name (torch.float16; kept in dtype_text). The complex
// codes (c32, c64, c128, torch.complex64, torch.cfloat, ...) are DTypes like the others.
struct TensorLit {
  Shape shape;
  DType dtype = DType::Float32;
  std::optional<Shape> strides;  // absent: contiguous
  enum class StrideForm : uint8_t { Tuple, List, None } stride_form = StrideForm::Tuple;
  bool stride_written = false;  // stride=... appeared (possibly as None)
  std::optional<std::string> device;
  std::optional<std::string> fill;
  std::string dtype_text;          // the dtype as written when it is not dtype_code(dtype)
  bool dtype_known = true;         // always true now (kept for compatibility: complex dtypes,
                                   // once unknown, are DTypes)
  bool stride_positional = false;  // written T(shape, dtype, (strides)) rather than stride=
  bool device_keyword = false;     // written device='cuda' rather than positionally

  friend bool operator==(const TensorLit&, const TensorLit&) = default;
};

enum class LitKind : uint8_t {
  None,
  Bool,
  Int,
  Float,
  String,
  DType,   // a dtype code (f16, c64) or torch.float16 / torch.complex64 name
  Symbol,  // torch.strided, torch.sparse_coo, torch.contiguous_format, ...
  Tensor,
  List,
  Tuple,
  Dict,
};

struct Literal {
  LitKind kind = LitKind::None;
  bool b = false;
  int64_t i = 0;
  double f = 0.0;
  std::string text;   // String: the value; Symbol: the name; DType: the spelling used;
                      // Float: the spelling used (so "1e-05" prints back as written)
  char quote = '\'';  // String: the quote character used
  DType dtype = DType::Float32;
  TensorLit tensor;
  std::vector<Literal> items;                        // List, Tuple
  std::vector<std::pair<Literal, Literal>> entries;  // Dict

  static Literal none() { return {}; }
  static Literal boolean(bool v);
  static Literal integer(int64_t v);
  static Literal floating(double v);  // spelled as Python's repr would
  static Literal string(std::string s);
  static Literal dtype_lit(DType t);
  static Literal symbol(std::string name);
  static Literal tensor_lit(TensorLit t);
  static Literal list(std::vector<Literal> items);
  static Literal tuple(std::vector<Literal> items);
  static Literal dict(std::vector<std::pair<Literal, Literal>> entries);
};

// Structural equality: same kind, same value and same spelling (Float compares `text` and the
// value, NaN equal to NaN; String compares the value and quote). Fields a kind does not use
// are ignored.
bool operator==(const Literal& a, const Literal& b);

// One call: positional arguments and keyword arguments.
struct CallSpec {
  std::vector<Literal> args;
  std::vector<std::pair<std::string, Literal>> kwargs;

  friend bool operator==(const CallSpec&, const CallSpec&) = default;
};

// Where a text being parsed begins, for error messages: the text's first character is at
// file:line:column (1-based); later lines of the text count on from `line`.
struct SourceOrigin {
  std::string file = "<case>";
  int line = 1;
  int column = 1;
};

// Parses "(POSITIONAL, KEYWORDS)". `where` names the text in error messages ("<case>", a file
// name); lines and columns are 1-based within `text`. Errors are Input errors:
// "<where>:<line>:<col>: expected ... , got ...".
CallSpec parse_call(std::string_view text, const std::string& where = "<case>");
CallSpec parse_call(std::string_view text, const SourceOrigin& origin);
Literal parse_literal(std::string_view text, const std::string& where = "<literal>");

// True for the complex dtype spellings: c32 c64 c128, torch.complex32/64/128 and
// torch.chalf/cfloat/cdouble (all of them parse to DTypes).
bool is_complex_dtype_name(std::string_view s);

// Prints a call in the same form it is parsed from: "((args...), {kwargs...})".
std::string print_call(const CallSpec& call);
std::string print_literal(const Literal& lit);

// Python's repr of a float ("1e-05", "-65504.0", "inf", "nan", "0.1").
std::string python_float_repr(double v);

}  // namespace crucible::cases

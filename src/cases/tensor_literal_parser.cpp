// The case grammar's tensor arguments: T([shape], dtype[, stride][, device][, fill=...]) in
// the forms of ATen's traces and of BackendBench's _deserialize_tensor.
#include <string>
#include <string_view>
#include <utility>

#include "cases/literal_parser.h"
#include "crucible/core/tensor.h"
#include "crucible/kernel.h"

namespace crucible::cases::detail {

namespace {

// What no tensor can be: more than CRUCIBLE_MAX_NDIM dimensions, more elements or bytes than
// int64 counts, strides that reach past any possible storage.
std::string limit_problem(const TensorLit& t) {
  if (t.shape.size() > CRUCIBLE_MAX_NDIM)
    return "tensor has " + std::to_string(t.shape.size()) + " dimensions; at most " +
           std::to_string(CRUCIBLE_MAX_NDIM) + " are supported (CRUCIBLE_MAX_NDIM)";
  int64_t numel = 1;
  bool empty = false;
  for (int64_t s : t.shape) empty = empty || s == 0;
  const int64_t item = static_cast<int64_t>(itemsize(t.dtype));
  if (!empty) {
    for (int64_t s : t.shape)
      if (__builtin_mul_overflow(numel, s, &numel))
        return "tensor of shape " + shape_str(t.shape) +
               " has more elements than a 64-bit count holds";
    int64_t bytes = 0;
    if (__builtin_mul_overflow(numel, item, &bytes))
      return "tensor of shape " + shape_str(t.shape) + " has more bytes than a 64-bit count holds";
  }
  if (!t.strides || empty) return "";
  // The storage the strides need: 1 + sum (size - 1) * stride elements.
  int64_t extent = 1;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    int64_t span = 0;
    if (__builtin_mul_overflow(t.shape[d] - 1, (*t.strides)[d], &span) ||
        __builtin_add_overflow(extent, span, &extent) ||
        __builtin_mul_overflow(extent, item, &span))
      return "the strides " + shape_str(*t.strides) + " of tensor " + shape_str(t.shape) +
             " reach past any possible storage (more than 2^63 bytes)";
  }
  return "";
}

}  // namespace

// T([shape], dtype[, stride][, device][, stride=...][, device=...][, fill=...]); `w` is 'T'.
TensorLit Parser::tensor(size_t w) {
  TensorLit t;
  ++pos_;  // '('
  skip_ws();
  if (peek() != '[') fail(pos_, "'[' to start the tensor shape");
  int_sequence(']', "size", &t.shape);
  skip_ws();
  expect(',', "',' after the tensor shape");
  skip_ws();
  const size_t dtype_at = pos_;
  if (!is_ident_start(peek())) fail(pos_, "a dtype code (" + valid_dtype_codes() + ")");
  const std::string_view dname = dotted_name();
  if (const auto code = dtype_from_code(dname)) {
    t.dtype = *code;
  } else if (dname.starts_with("torch.") && parse_dtype(dname)) {
    t.dtype = *parse_dtype(dname);
    t.dtype_text = std::string(dname);
  } else {
    fail_msg(dtype_at, "expected a dtype code, got unknown dtype '" + std::string(dname) +
                           "' (valid codes: " + valid_dtype_codes() +
                           ", or torch.float16-style names)");
  }

  int positional = 2;
  bool keyword_seen = false;
  bool device_seen = false;
  while (true) {
    skip_ws();
    if (peek() == ')' && !at_end()) {
      ++pos_;
      break;
    }
    if (peek() != ',' || at_end()) {
      fail(pos_, "',' or ')' in T(...) opened at " + line_col(w));
    }
    ++pos_;
    skip_ws();
    if (peek() == ')' && !at_end()) {
      ++pos_;
      break;
    }
    const size_t arg_at = pos_;
    std::string_view key;
    if (is_ident_start(peek())) {
      const size_t save = pos_;
      const std::string_view k = dotted_name();
      skip_ws();
      if (peek() == '=' && !at_end()) {
        key = k;
        ++pos_;
        skip_ws();
      } else {
        pos_ = save;
      }
    }
    const size_t value_at = pos_;
    if (key.empty()) {
      if (keyword_seen) fail(arg_at, "stride=, device= or fill= after a keyword argument");
      if (positional == 2 && peek() != '\'' && peek() != '"') {
        stride_value(t);
        t.stride_positional = true;
      } else if (positional <= 3 && !device_seen) {
        t.device = device_value(value_at);
        device_seen = true;
      } else {
        fail(arg_at, "stride=, device= or fill= (T takes shape, dtype, stride, device)");
      }
      ++positional;
      continue;
    }
    keyword_seen = true;
    if (key == "stride") {
      if (t.stride_written) fail_msg(arg_at, "duplicate tensor argument 'stride'");
      stride_value(t);
    } else if (key == "device") {
      if (device_seen) fail_msg(arg_at, "duplicate tensor argument 'device'");
      t.device = device_value(value_at);
      t.device_keyword = true;
      device_seen = true;
    } else if (key == "fill") {
      if (t.fill) fail_msg(arg_at, "duplicate tensor argument 'fill'");
      if (peek() != '\'' && peek() != '"') fail(pos_, "a string after fill=");
      t.fill = string_lit().text;
    } else {
      fail(arg_at, "stride=, device= or fill= in T(...)");
    }
  }
  if (t.strides && t.strides->size() != t.shape.size()) {
    fail_msg(w, "tensor has " + std::to_string(t.shape.size()) + " dimensions but " +
                    std::to_string(t.strides->size()) + " strides");
  }
  if (const std::string why = limit_problem(t); !why.empty()) fail_msg(w, why);
  return t;
}

void Parser::stride_value(TensorLit& t) {
  t.stride_written = true;
  const char c = peek();
  if (c == '(' || c == '[') {
    t.stride_form = c == '(' ? TensorLit::StrideForm::Tuple : TensorLit::StrideForm::List;
    Shape strides;
    const size_t open_at = pos_;
    const bool trailing = int_sequence(c == '(' ? ')' : ']', "stride", &strides);
    if (c == '(' && strides.size() == 1 && !trailing) {
      fail_msg(open_at,
               "expected ',' after the only stride (a one-element tuple needs one), "
               "got '" +
                   std::string(s_.substr(open_at, pos_ - open_at)) + "'");
    }
    t.strides = std::move(strides);
    return;
  }
  const size_t at = pos_;
  if (is_ident_start(c) && dotted_name() == "None") {
    t.stride_form = TensorLit::StrideForm::None;
    return;
  }
  fail(at, "the stride as a tuple, list or None");
}

// "[2, 3]" or "(1, 2,)" of non-negative integers into `out` (the opener is at pos_). Returns
// whether a trailing comma was written.
bool Parser::int_sequence(char close, std::string_view what, Shape* out) {
  const size_t open_at = pos_++;
  skip_ws();
  if (peek() == close) {
    ++pos_;
    return false;
  }
  while (true) {
    skip_ws();
    const size_t at = pos_;
    if (peek() != '-' && !is_digit(peek())) fail(at, "an integer " + std::string(what));
    const Literal v = number();
    if (v.kind != LitKind::Int || v.i < 0) {
      fail_msg(at, "expected a non-negative integer " + std::string(what) + ", got " +
                       std::string(s_.substr(at, pos_ - at)));
    }
    out->push_back(v.i);
    skip_ws();
    if (peek() == close && !at_end()) {
      ++pos_;
      return false;
    }
    if (peek() != ',' || at_end()) {
      fail(pos_, std::string("',' or '") + close + "' in the " + std::string(what) +
                     "s opened at " + line_col(open_at));
    }
    ++pos_;
    skip_ws();
    if (peek() == close && !at_end()) {
      ++pos_;
      return true;
    }
  }
}

std::string Parser::device_value(size_t at) {
  if (peek() != '\'' && peek() != '"') fail(at, "a device string ('cuda', 'cpu')");
  return string_lit().text;
}

}  // namespace crucible::cases::detail

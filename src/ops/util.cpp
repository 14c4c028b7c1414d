// ATen's type promotion (c10 ResultTypeState), cast rules and the strided, broadcasting
// elementwise loops the reference kernels are built from.
#include "ops/util.h"

#include <algorithm>

#include "crucible/core/error.h"

namespace crucible::opsutil {

namespace {

// c10's ResultTypeState: the running promoted dtype of dimensioned tensors, 0-d tensors and
// wrapped numbers (Python scalars). nullopt is c10's Undefined.
struct ResultTypeState {
  std::optional<DType> dim_result;
  std::optional<DType> zero_result;
  std::optional<DType> wrapped_result;
};

DType promote_or_throw(DType a, DType b) {
  if (auto r = promote_types(a, b)) return *r;
  op_error("Promotion for Float8 Types is not supported, attempted to promote " +
           std::string(dtype_scalar_type_name(a)) + " and " +
           std::string(dtype_scalar_type_name(b)));
}

std::optional<DType> promote_skip_undefined(std::optional<DType> a, std::optional<DType> b) {
  if (!a) return b;
  if (!b) return a;
  return promote_or_throw(*a, *b);
}

void update(ResultTypeState& s, const Tensor& t) {
  if (!t.defined()) return;
  if (t.dim() == 0) {
    s.zero_result = promote_skip_undefined(s.zero_result, t.dtype());
  } else {
    s.dim_result = promote_skip_undefined(s.dim_result, t.dtype());
  }
}

// A Python scalar takes part as its category's default dtype: bool, i64, or the default
// floating dtype f32.
void update(ResultTypeState& s, const Scalar& v) {
  const DType t = v.is_bool() ? DType::Bool : v.is_integral() ? DType::Int64 : DType::Float32;
  s.wrapped_result = promote_skip_undefined(s.wrapped_result, t);
}

// c10's combine_categories: a lower-priority operand only matters when it is of a higher
// category (or when the higher-priority one is bool).
// Complex is the highest category: a complex lower-priority operand makes a floating
// higher-priority one complex of the same precision (f64 tensor + c64 0-d tensor -> c128,
// f16 tensor + c64 0-d -> c32, bf16 -> c64) and takes precedence over an integral or bool one.
std::optional<DType> combine_categories(std::optional<DType> higher, std::optional<DType> lower) {
  if (higher && is_complex(*higher)) return higher;
  if (lower && is_complex(*lower)) {
    if (higher && is_floating(*higher)) {
      if (auto c = to_complex(*higher)) return c;
      return promote_or_throw(*higher, *lower);  // fp8: raises as promotion does
    }
    return lower;
  }
  if (higher && is_floating(*higher)) return higher;
  if ((higher && *higher == DType::Bool) || (lower && is_floating(*lower))) {
    return promote_skip_undefined(higher, lower);
  }
  if (higher) return higher;
  return lower;
}

DType finish(const ResultTypeState& s) {
  auto r = combine_categories(s.dim_result, combine_categories(s.zero_result, s.wrapped_result));
  if (!r) op_error("result_type: no tensor or scalar operands");
  return *r;
}

// Per-operand strides over `shape` (0 where the operand is broadcast).
std::vector<Shape> broadcast_strides(const Shape& shape, std::span<const Tensor> operands) {
  std::vector<Shape> out;
  out.reserve(operands.size());
  const size_t nd = shape.size();
  for (const Tensor& t : operands) {
    if (static_cast<size_t>(t.dim()) > nd) {
      op_error("operand of shape " + shape_str(t.shape()) + " cannot be broadcast to " +
               shape_str(shape));
    }
    Shape st(nd, 0);
    const size_t lead = nd - static_cast<size_t>(t.dim());
    for (size_t i = 0; i < static_cast<size_t>(t.dim()); ++i) {
      const int64_t size = t.shape()[i];
      if (size == shape[lead + i]) {
        st[lead + i] = t.strides()[i];
      } else if (size != 1) {
        op_error("operand of shape " + shape_str(t.shape()) + " cannot be broadcast to " +
                 shape_str(shape));
      }
    }
    out.push_back(std::move(st));
  }
  return out;
}

char* element(const Tensor& t, int64_t offset) {
  return static_cast<char*>(t.storage()->data()) + offset * static_cast<int64_t>(t.itemsize());
}

void check_out_shape(const Tensor& out, const Shape& expected) {
  if (out.shape() != expected) {
    op_error("output of shape " + shape_str(out.shape()) + " does not match the broadcast shape " +
             shape_str(expected));
  }
}

}  // namespace

DType result_type(std::span<const Value> operands) {
  ResultTypeState s;
  for (const Value& v : operands) {
    switch (v.kind()) {
      case ValueKind::Tensor:
        update(s, v.tensor());
        break;
      case ValueKind::TensorList:
      case ValueKind::OptTensorList:
        for (const Tensor& t : v.tensors()) update(s, t);
        break;
      case ValueKind::Int:
      case ValueKind::Float:
      case ValueKind::Bool:
        update(s, v.to_scalar());
        break;
      default:
        break;
    }
  }
  return finish(s);
}

DType result_type(const Tensor& a, const Tensor& b) {
  ResultTypeState s;
  update(s, a);
  update(s, b);
  return finish(s);
}

DType result_type(const Tensor& a, const Scalar& b) {
  ResultTypeState s;
  update(s, a);
  update(s, b);
  return finish(s);
}

// Complex inputs keep their dtype too (a complex "float op" stays complex).
DType to_float_dtype(DType t) { return is_floating(t) || is_complex(t) ? t : DType::Float32; }

void for_each_offset(const Shape& shape, std::span<const Tensor> operands,
                     const std::function<void(std::span<const int64_t> offsets)>& fn) {
  const std::vector<Shape> strides = broadcast_strides(shape, operands);
  const int64_t n = numel_of(shape);
  if (n == 0) return;
  std::vector<int64_t> offsets(operands.size());
  for (size_t k = 0; k < operands.size(); ++k) offsets[k] = operands[k].offset();
  Shape index(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(offsets);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) {
        for (size_t k = 0; k < offsets.size(); ++k) offsets[k] += strides[k][d];
        break;
      }
      index[d] = 0;
      for (size_t k = 0; k < offsets.size(); ++k) offsets[k] -= strides[k][d] * (shape[d] - 1);
    }
  }
}

void map_unary(const Tensor& in, const Tensor& out, const std::function<double(double)>& f) {
  check_out_shape(out, broadcast_shapes(in.shape(), out.shape()));
  const Tensor ops[] = {out, in};
  for_each_offset(out.shape(), ops, [&](std::span<const int64_t> o) {
    store_from_double(element(out, o[0]), out.dtype(),
                      f(load_as_double(element(in, o[1]), in.dtype())));
  });
}

void map_binary(const Tensor& a, const Tensor& b, const Tensor& out,
                const std::function<double(double, double)>& f) {
  check_out_shape(out, broadcast_shapes(a.shape(), b.shape()));
  const Tensor ops[] = {out, a, b};
  for_each_offset(out.shape(), ops, [&](std::span<const int64_t> o) {
    store_from_double(element(out, o[0]), out.dtype(),
                      f(load_as_double(element(a, o[1]), a.dtype()),
                        load_as_double(element(b, o[2]), b.dtype())));
  });
}

void map_unary_int(const Tensor& in, const Tensor& out, const std::function<int64_t(int64_t)>& f) {
  check_out_shape(out, broadcast_shapes(in.shape(), out.shape()));
  const Tensor ops[] = {out, in};
  for_each_offset(out.shape(), ops, [&](std::span<const int64_t> o) {
    store_from_int(element(out, o[0]), out.dtype(), f(load_as_int(element(in, o[1]), in.dtype())));
  });
}

void map_binary_int(const Tensor& a, const Tensor& b, const Tensor& out,
                    const std::function<int64_t(int64_t, int64_t)>& f) {
  check_out_shape(out, broadcast_shapes(a.shape(), b.shape()));
  const Tensor ops[] = {out, a, b};
  for_each_offset(out.shape(), ops, [&](std::span<const int64_t> o) {
    store_from_int(
        element(out, o[0]), out.dtype(),
        f(load_as_int(element(a, o[1]), a.dtype()), load_as_int(element(b, o[2]), b.dtype())));
  });
}

std::vector<int64_t> normalise_dims(std::span<const int64_t> dims, int64_t ndim) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(ndim, 1)), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, ndim);
    if (seen[w])
      op_error("dim " + std::to_string(w) + " appears multiple times in the list of dims");
    seen[w] = true;
  }
  for (size_t d = 0; d < seen.size(); ++d) {
    if (seen[d]) out.push_back(static_cast<int64_t>(d));
  }
  return out;
}

Shape reduced_shape(const Shape& shape, std::span<const int64_t> dims, bool keepdim) {
  const auto nd = static_cast<int64_t>(shape.size());
  const std::vector<int64_t> norm = normalise_dims(dims, nd);
  Shape out;
  for (int64_t d = 0; d < nd; ++d) {
    const bool reduced = std::find(norm.begin(), norm.end(), d) != norm.end();
    if (!reduced) {
      out.push_back(shape[d]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

}  // namespace crucible::opsutil

// The shared sample builders of the op catalog: tensor literals and the standard case sets of
// elementwise ops (dtypes x shapes x layouts x special values).
#include "ops/samples.h"

#include <algorithm>
#include <utility>

namespace crucible::samples {

using cases::TensorLit;

Literal T(const Shape& shape, DType dtype) {
  TensorLit t;
  t.shape = shape;
  t.dtype = dtype;
  return Literal::tensor_lit(std::move(t));
}

Literal T(const Shape& shape, DType dtype, const Shape& strides) {
  TensorLit t;
  t.shape = shape;
  t.dtype = dtype;
  t.strides = strides;
  t.stride_form = TensorLit::StrideForm::Tuple;
  t.stride_written = true;
  return Literal::tensor_lit(std::move(t));
}

Literal T_fill(const Shape& shape, DType dtype, const std::string& fill) {
  TensorLit t;
  t.shape = shape;
  t.dtype = dtype;
  t.fill = fill;
  return Literal::tensor_lit(std::move(t));
}

Literal T_transposed(int64_t rows, int64_t cols, DType dtype) {
  return T({rows, cols}, dtype, {1, rows});
}

Literal I(int64_t v) { return Literal::integer(v); }
Literal F(double v) { return Literal::floating(v); }
Literal B(bool v) { return Literal::boolean(v); }
Literal S(const std::string& v) { return Literal::string(v); }
Literal L(const std::vector<int64_t>& v) {
  std::vector<Literal> items;
  items.reserve(v.size());
  for (int64_t x : v) items.push_back(Literal::integer(x));
  return Literal::list(std::move(items));
}
Literal None() { return Literal::none(); }
Literal DT(DType t) { return Literal::dtype_lit(t); }

Sample make(std::string label, std::vector<Literal> args,
            std::vector<std::pair<std::string, Literal>> kwargs) {
  Sample s;
  s.call.args = std::move(args);
  s.call.kwargs = std::move(kwargs);
  s.label = std::move(label);
  return s;
}

std::vector<DType> floating_dtypes() {
  return {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

std::vector<DType> all_numeric_dtypes() {
  return {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
          DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

std::vector<DType> integral_dtypes(bool include_bool) {
  std::vector<DType> out;
  if (include_bool) out.push_back(DType::Bool);
  for (DType t : {DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64})
    out.push_back(t);
  return out;
}

namespace {

bool contains(const std::vector<DType>& ts, DType t) {
  return std::find(ts.begin(), ts.end(), t) != ts.end();
}

// The dtypes that get every layout; the others get a compact set (ordinary, 0-d, transposed,
// special values). f32 is the common case, f16 catches kernels that compute in half, i64 the
// integer paths.
bool full_layouts(DType t) {
  return t == DType::Float32 || t == DType::Float16 || t == DType::Int64;
}

std::string dt(DType t) { return std::string(dtype_code(t)); }

// A strided tensor literal carrying a fill.
Literal with_fill(Literal lit, const std::string& fill) {
  lit.tensor.fill = fill;
  return lit;
}

// Last-dim sizes around every vector width (1, 4, 8, 16 lanes and the tails around them): all
// of them for f32, the odd tails for f16 and i64 (the other full-layout dtypes).
const std::vector<int64_t>& widths_for(DType t) {
  static const std::vector<int64_t> all = {1, 3, 7, 8, 15, 16, 17, 31, 33, 63, 65};
  static const std::vector<int64_t> tails = {3, 7, 15, 17, 33, 65};
  return t == DType::Float32 ? all : tails;
}

// The dtype that gets the large case: f32, else the first floating one, else the first.
DType large_dtype(const std::vector<DType>& dtypes) {
  if (contains(dtypes, DType::Float32)) return DType::Float32;
  for (DType t : dtypes)
    if (is_floating(t)) return t;
  return dtypes.front();
}

}  // namespace

const Shape& large_shape() {
  static const Shape s = {160, 257};  // 41120 elements, an odd row length
  return s;
}

std::vector<Sample> unary_samples(const std::vector<DType>& dtypes,
                                  const std::vector<Literal>& extra_args,
                                  const std::vector<std::pair<std::string, Literal>>& kwargs) {
  std::vector<Sample> out;
  auto add = [&](std::string label, Literal x) {
    std::vector<Literal> args{std::move(x)};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    out.push_back(make(std::move(label), std::move(args), kwargs));
  };
  for (DType t : dtypes) {
    const std::string d = " " + dt(t);
    add("ordinary" + d, T({7, 13}, t));
    add("0-d" + d, T({}, t));
    add("transposed" + d, T_transposed(9, 12, t));
    if (is_floating(t)) add("special values" + d, T_fill({96}, t, "special"));
    if (!full_layouts(t)) continue;
    add("1-d with a vector tail" + d, T({1031}, t));
    add("3-d" + d, T({3, 5, 4}, t));
    add("empty" + d, T({0}, t));
    add("empty 2-d" + d, T({3, 0, 2}, t));
    add("one element" + d, T({1, 1}, t));
    // Every other column of a [6, 10] matrix.
    add("sliced with a step" + d, T({6, 5}, t, {10, 2}));
    // A row expanded to 5 rows (stride 0), and a middle dim expanded.
    add("expanded (stride 0)" + d, T({5, 8}, t, {0, 1}));
    add("expanded middle dim" + d, T({3, 4, 5}, t, {5, 0, 1}));
    // [3, 5, 4] permuted by (2, 0, 1).
    add("permuted 3-d" + d, T({4, 3, 5}, t, {1, 20, 4}));
    if (is_floating(t)) {
      add("special values, transposed" + d, with_fill(T_transposed(8, 9, t), "special"));
      add("special values, 0-d" + d, T_fill({}, t, "special"));
    }
    for (int64_t w : widths_for(t)) add("width " + std::to_string(w) + d, T({2, w}, t));
  }
  // Every integral dtype's extremes (min, max, min + 1, ...): neg and abs of the minimum wrap.
  for (DType t : dtypes)
    if (is_integral(t, false))
      add("extremes of the integer range " + dt(t), T_fill({48}, t, "special"));
  if (!dtypes.empty()) {
    const DType t = large_dtype(dtypes);
    add("large " + dt(t), T(large_shape(), t));
  }
  return out;
}

std::vector<Sample> binary_samples(const std::vector<DType>& dtypes,
                                   const std::vector<std::pair<std::string, Literal>>& kwargs) {
  std::vector<Sample> out;
  auto add = [&](std::string label, Literal a, Literal b) {
    out.push_back(make(std::move(label), {std::move(a), std::move(b)}, kwargs));
  };
  for (DType t : dtypes) {
    const std::string d = " " + dt(t);
    add("same shape" + d, T({7, 13}, t), T({7, 13}, t));
    add("0-d with 0-d" + d, T({}, t), T({}, t));
    add("broadcast other" + d, T({4, 5}, t), T({5}, t));
    add("broadcast self" + d, T({5}, t), T({4, 5}, t));
    add("transposed" + d, T_transposed(9, 12, t), T({9, 12}, t));
    if (is_floating(t)) {
      add("special values" + d, T_fill({96}, t, "special"), T_fill({96}, t, "special"));
      add("special values with ordinary" + d, T({8, 12}, t), T_fill({8, 12}, t, "special"));
    }
    if (!full_layouts(t)) continue;
    add("vector tail" + d, T({1031}, t), T({1031}, t));
    add("broadcast both ways" + d, T({4, 1, 5}, t), T({3, 1}, t));
    add("dimensioned with 0-d" + d, T({2, 3, 4}, t), T({}, t));
    add("0-d with dimensioned" + d, T({}, t), T({6, 7}, t));
    add("both transposed" + d, T_transposed(9, 12, t), T_transposed(9, 12, t));
    add("sliced with a step" + d, T({6, 5}, t, {10, 2}), T({6, 5}, t, {1, 12}));
    add("expanded (stride 0)" + d, T({5, 8}, t, {0, 1}), T({5, 8}, t));
    add("expanded both" + d, T({3, 4, 5}, t, {5, 0, 1}), T({3, 4, 5}, t, {0, 5, 1}));
    add("empty" + d, T({0, 3}, t), T({3}, t));
    add("empty with 0-d" + d, T({0}, t), T({}, t));
    add("empty broadcast" + d, T({2, 0}, t), T({2, 1}, t));
    add("error: shapes that do not broadcast" + d, T({3}, t), T({4}, t));
    for (int64_t w : widths_for(t))
      add("width " + std::to_string(w) + d, T({2, w}, t), T({2, w}, t));
  }
  // Integer overflow: the dtype's extremes against each other and against small values (sums,
  // differences and products wrap in two's complement as in ATen; a saturating kernel fails).
  for (DType t : dtypes) {
    if (!is_integral(t, false)) continue;
    const std::string d = " " + dt(t);
    add("integer overflow wraps" + d, T_fill({48}, t, "special"), T_fill({48}, t, "special"));
    add("integer overflow wraps, with ordinary" + d, T_fill({48}, t, "special"), T({48}, t));
    add("integer overflow wraps, ordinary with extremes" + d, T({48}, t),
        T_fill({48}, t, "special"));
  }
  if (!dtypes.empty()) {
    const DType t = large_dtype(dtypes);
    add("large " + dt(t), T(large_shape(), t), T(large_shape(), t));
  }
  // Type promotion: mixed dtypes, each pair only when both are in the op's set.
  const std::pair<DType, DType> pairs[] = {
      {DType::Int32, DType::Float16},    {DType::UInt8, DType::Int8},
      {DType::Bool, DType::Int64},       {DType::Int64, DType::Float32},
      {DType::Float16, DType::BFloat16}, {DType::Float32, DType::Float64},
      {DType::Bool, DType::Float32},     {DType::Int16, DType::Int32},
  };
  for (auto [a, b] : pairs) {
    if (!contains(dtypes, a) || !contains(dtypes, b)) continue;
    add("promotion " + dt(a) + " with " + dt(b), T({6, 7}, a), T({6, 7}, b));
    add("promotion " + dt(b) + " with " + dt(a) + ", broadcast", T({6, 7}, b), T({7}, a));
  }
  // Promotion through 0-d tensors: a 0-d tensor of a higher dtype in the same category does
  // not raise the result dtype, one of a higher category does.
  const std::pair<DType, DType> zero_d[] = {
      {DType::Float32, DType::Float64},  // f32 tensor with 0-d f64 -> f32
      {DType::Float16, DType::Float32},  // f16 tensor with 0-d f32 -> f16
      {DType::Int64, DType::Float64},    // i64 tensor with 0-d f64 -> f64 (higher category)
      {DType::UInt8, DType::Int64},      // u8 tensor with 0-d i64 -> u8
      {DType::Bool, DType::Int32},       // bool tensor with 0-d i32 -> i32
  };
  for (auto [a, b] : zero_d) {
    if (!contains(dtypes, a) || !contains(dtypes, b)) continue;
    add("promotion through 0-d: " + dt(a) + " with 0-d " + dt(b), T({5, 6}, a), T({}, b));
    add("promotion through 0-d: 0-d " + dt(b) + " with " + dt(a), T({}, b), T({5, 6}, a));
  }
  return out;
}

std::vector<Sample> elementwise_perf_samples(int arity, const std::vector<DType>& dtypes) {
  std::vector<Sample> out;
  const std::vector<Shape> shapes = {{int64_t{1} << 22}, {4096, 4096}, {64, 512, 512}};
  for (DType t : dtypes) {
    const std::string d = " " + dt(t);
    for (const Shape& s : shapes) {
      std::vector<Literal> args;
      for (int k = 0; k < arity; ++k) args.push_back(T(s, t));
      out.push_back(make("bandwidth " + shape_str(s) + d, std::move(args)));
    }
    if (arity == 2) {
      // A row vector broadcast over a large matrix (a bias add).
      out.push_back(make("bandwidth, broadcast row" + d, {T({4096, 4096}, t), T({4096}, t)}));
    } else if (arity == 1) {
      out.push_back(make("bandwidth, transposed" + d, {T_transposed(4096, 4096, t)}));
    }
  }
  return out;
}

}  // namespace crucible::samples

// ATen's type promotion (c10 ResultTypeState), cast rules and the strided, broadcasting
// elementwise loops the reference kernels are built from.
#include "ops/util.h"

#include <algorithm>

#include "crucible/core/element_runs.h"
#include "crucible/core/error.h"
#include "ops/ref_parallel.h"

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

namespace {

// `shape` and per-operand strides with size-1 dims dropped and the dims every operand walks
// contiguously merged (stride[d] == stride[d + 1] * size[d + 1] for all), innermost last; at
// least one dim.
struct Walk {
  Shape sizes;
  std::vector<Shape> strides;
};

Walk merged_walk(const Shape& shape, const std::vector<Shape>& strides) {
  Walk w;
  w.strides.resize(strides.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !w.sizes.empty();
    for (size_t k = 0; merge && k < strides.size(); ++k)
      merge = w.strides[k].back() == strides[k][d] * shape[d];
    if (merge) {
      w.sizes.back() *= shape[d];
      for (size_t k = 0; k < strides.size(); ++k) w.strides[k].back() = strides[k][d];
    } else {
      w.sizes.push_back(shape[d]);
      for (size_t k = 0; k < strides.size(); ++k) w.strides[k].push_back(strides[k][d]);
    }
  }
  if (w.sizes.empty()) {
    w.sizes.push_back(1);
    for (Shape& st : w.strides) st.push_back(0);
  }
  return w;
}

template <typename T>
T* scratch(size_t slot, int64_t n) {
  thread_local std::vector<std::vector<T>> bufs;
  if (bufs.size() <= slot) bufs.resize(slot + 1);
  if (static_cast<int64_t>(bufs[slot].size()) < n) bufs[slot].resize(static_cast<size_t>(n));
  return bufs[slot].data();
}

}  // namespace

double* scratch_doubles(size_t slot, int64_t n) { return scratch<double>(slot, n); }
int64_t* scratch_ints(size_t slot, int64_t n) { return scratch<int64_t>(slot, n); }

void for_each_run(const Shape& shape, std::span<const Tensor> operands, bool parallel,
                  const RunFn& fn) {
  std::vector<int64_t> offsets;
  for (const Tensor& t : operands) offsets.push_back(t.offset());
  for_each_run(shape, broadcast_strides(shape, operands), offsets, parallel, fn);
}

void for_each_run(const Shape& shape, const std::vector<Shape>& strides,
                  std::span<const int64_t> offsets, bool parallel, const RunFn& fn) {
  const int64_t n = numel_of(shape);
  if (n == 0) return;
  const Walk w = merged_walk(shape, strides);
  const size_t nk = strides.size(), nd = w.sizes.size();
  const int64_t inner = w.sizes.back();
  const int64_t per_row = (inner + kRunLength - 1) / kRunLength;
  const int64_t pieces = (n / inner) * per_row;
  const int64_t tasks = parallel ? refpar::task_count(static_cast<double>(n), 1 << 16, pieces) : 1;
  std::vector<int64_t> inner_strides(nk);
  for (size_t k = 0; k < nk; ++k) inner_strides[k] = w.strides[k][nd - 1];
  auto task = [&](int64_t t) {
    const int64_t p0 = pieces * t / tasks, p1 = pieces * (t + 1) / tasks;
    if (p0 >= p1) return;
    // The outer index of the first piece, as a multi-index over the outer dims, and the
    // operands' offsets there.
    int64_t row = p0 / per_row, j = p0 % per_row;
    Shape index(nd, 0);
    std::vector<int64_t> base(nk), offs(nk);
    for (size_t k = 0; k < nk; ++k) base[k] = offsets[k];
    for (size_t d = nd - 1, r = static_cast<size_t>(row); d-- > 0;) {
      index[d] = static_cast<int64_t>(r) % w.sizes[d];
      r /= static_cast<size_t>(w.sizes[d]);
      for (size_t k = 0; k < nk; ++k) base[k] += index[d] * w.strides[k][d];
    }
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t start = j * kRunLength;
      for (size_t k = 0; k < nk; ++k) offs[k] = base[k] + start * inner_strides[k];
      fn(row * inner + start, offs.data(), std::min(kRunLength, inner - start),
         inner_strides.data());
      if (++j < per_row) continue;
      j = 0;
      ++row;
      for (size_t d = nd - 1; d-- > 0;) {  // the next outer index
        if (++index[d] < w.sizes[d]) {
          for (size_t k = 0; k < nk; ++k) base[k] += w.strides[k][d];
          break;
        }
        index[d] = 0;
        for (size_t k = 0; k < nk; ++k) base[k] -= w.strides[k][d] * (w.sizes[d] - 1);
      }
    }
  };
  if (tasks <= 1)
    task(0);
  else
    refpar::for_each_task(tasks, task);
}

Doubles::Doubles(size_t n)
    : block_(Storage::allocate_cpu(n * sizeof(double), Storage::Init::Uninitialized)),
      p_(static_cast<double*>(block_->data())),
      n_(n) {}

Doubles::Doubles(size_t n, double value) : Doubles(n) { std::fill(begin(), end(), value); }

Doubles read_doubles(const Tensor& t) {
  Doubles v(static_cast<size_t>(t.numel()));
  const Tensor ops[] = {t};
  for_each_run(t.shape(), ops, true,
               [&](int64_t first, const int64_t* o, int64_t n, const int64_t* st) {
                 load_run_as_double(element_at(t, o[0]), st[0], n, t.dtype(), v.data() + first);
               });
  return v;
}

void write_doubles(const Tensor& t, const double* v) {
  const Tensor ops[] = {t};
  for_each_run(t.shape(), ops, true,
               [&](int64_t first, const int64_t* o, int64_t n, const int64_t* st) {
                 store_run_from_double(element_at(t, o[0]), st[0], n, t.dtype(), v + first);
               });
}

void load_row(const Tensor& t, int64_t first, int64_t dim, int64_t n, double* v) {
  if (n <= 0) return;
  load_run_as_double(element_at(t, t.storage_index(first)), t.dim() == 0 ? 0 : t.stride(dim), n,
                     t.dtype(), v);
}

void store_row(const Tensor& t, int64_t first, int64_t dim, int64_t n, const double* v) {
  if (n <= 0) return;
  store_run_from_double(element_at(t, t.storage_index(first)), t.dim() == 0 ? 0 : t.stride(dim), n,
                        t.dtype(), v);
}

namespace {

void no_prepare(const void*, int64_t) {}

}  // namespace

void map_unary(const Tensor& in, const Tensor& out, const std::function<double(double)>& f) {
  check_out_shape(out, broadcast_shapes(in.shape(), out.shape()));
  const Tensor ins[] = {in};
  map_values<double>(ins, out, no_prepare, [&](const double* v) { return f(v[0]); });
}

void map_binary(const Tensor& a, const Tensor& b, const Tensor& out,
                const std::function<double(double, double)>& f) {
  check_out_shape(out, broadcast_shapes(a.shape(), b.shape()));
  const Tensor ins[] = {a, b};
  map_values<double>(ins, out, no_prepare, [&](const double* v) { return f(v[0], v[1]); });
}

void map_unary_int(const Tensor& in, const Tensor& out, const std::function<int64_t(int64_t)>& f) {
  check_out_shape(out, broadcast_shapes(in.shape(), out.shape()));
  const Tensor ins[] = {in};
  map_values<int64_t>(ins, out, no_prepare, [&](const int64_t* v) { return f(v[0]); });
}

void map_binary_int(const Tensor& a, const Tensor& b, const Tensor& out,
                    const std::function<int64_t(int64_t, int64_t)>& f) {
  check_out_shape(out, broadcast_shapes(a.shape(), b.shape()));
  const Tensor ins[] = {a, b};
  map_values<int64_t>(ins, out, no_prepare, [&](const int64_t* v) { return f(v[0], v[1]); });
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

// Op family: meta. The symbolic-shape queries sym_size.int, sym_stride.int, sym_numel and
// sym_storage_offset (they return ints), and _sparse_coo_tensor_with_dims_and_tensors.
//
// sym_size/sym_stride wrap the dim as TensorImpl::sym_size does (maybe_wrap_dim without scalar
// wrapping): a 0-d tensor has no dim 0 ("Dimension specified as 0 but tensor has no
// dimensions"), others raise "Dimension out of range (expected to be in range of [-2, 1], but got
// 2)". (1.13's torch.ops.aten.sym_size.int returns garbage for bad dims; 2.x and Tensor.size(d)
// raise, which is what is followed.)
//
// _sparse_coo_tensor_with_dims_and_tensors: ATen builds a sparse COO tensor that aliases
// `indices` and `values`. crucible has no sparse layout, so the reference returns the DENSE
// EQUIVALENT: a new strided tensor of shape `size` and the values' dtype, equal to what
// `.to_dense()` of ATen's result holds: for each k, out[indices[:, k]] += values[k] (duplicate
// indices are summed, as an uncoalesced COO tensor means; computed in double, or exactly in
// int64, and rounded once; bool sums are logical or). A backend is judged on that dense tensor.
// Rejecting the op outright would make every case an "expected error" for every backend, which
// says nothing; the dense equivalent is the tensor's meaning and what a backend computing
// embedding-bag gradients (the DLRM traces) must get right. ATen's argument checks are kept
// (sparse_dim + dense_dim == len(size), indices int64 and [sparse_dim, nnz], values
// [nnz] + size[sparse_dim:], dtype of values == dtype (None: f32)), and so is its dispatch:
// layout must be torch.sparse_coo (ATen has no kernel for a strided layout and raises).
// ATen does not check the indices against `size` (this constructor is the unchecked one); the
// dense equivalent of an index out of range does not exist, so the reference raises there, and
// no sample has one (the indices role draws them in [0, 16), and every sample's sparse sizes are
// at least 16). The tolerance grows with the square root of the largest number of duplicates.
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "ops/creation_internal.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"

namespace crucible {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

// maybe_wrap_dim(dim, ndim, wrap_scalar=false).
int64_t wrap_dim_strict(int64_t dim, int64_t ndim) {
  CRUCIBLE_CHECK(ndim > 0,
                 fmt::format("Dimension specified as {} but tensor has no dimensions", dim));
  CRUCIBLE_CHECK(dim >= -ndim && dim < ndim,
                 fmt::format("Dimension out of range (expected to be in range of [{}, {}], but got "
                             "{})",
                             -ndim, ndim - 1, dim));
  return dim < 0 ? dim + ndim : dim;
}

Values sym_size_ref(const Args& a) {
  const Tensor& t = a.tensor("self");
  return {Value(t.size(wrap_dim_strict(a.integer("dim"), t.dim())))};
}
Values sym_stride_ref(const Args& a) {
  const Tensor& t = a.tensor("self");
  return {Value(t.stride(wrap_dim_strict(a.integer("dim"), t.dim())))};
}
Values sym_numel_ref(const Args& a) { return {Value(a.tensor("self").numel())}; }
Values sym_storage_offset_ref(const Args& a) { return {Value(a.tensor("self").offset())}; }

// Tensors with interesting sizes and strides for the shape queries.
std::vector<std::pair<std::string, Literal>> meta_inputs() {
  return {{"contiguous 2-d", T({7, 13}, DType::Float32)},
          {"0-d", T({}, DType::Float16)},
          {"empty", T({3, 0, 2}, DType::Int64)},
          {"transposed", T_transposed(9, 12, DType::BFloat16)},
          {"sliced with a step", T({6, 5}, DType::Float32, {10, 2})},
          {"expanded (stride 0)", T({5, 8}, DType::Int32, {0, 1})},
          {"permuted 3-d", T({4, 3, 5}, DType::UInt8, {1, 20, 4})},
          {"channels-last 4-d", T({2, 3, 4, 5}, DType::Float16, {60, 1, 15, 3})},
          {"1-d bool", T({11}, DType::Bool)}};
}

// sym_size / sym_stride: every dim of every input, negative dims, and out-of-range dims.
std::vector<Sample> dim_query_samples(const SampleContext& ctx) {
  if (ctx.performance) return {make("[4096, 4096]", {T({4096, 4096}, DType::Float32), I(1)})};
  std::vector<Sample> out;
  for (auto& [label, lit] : meta_inputs()) {
    const auto nd = static_cast<int64_t>(lit.tensor.shape.size());
    for (int64_t d = 0; d < nd; ++d) {
      out.push_back(make(label + ", dim " + std::to_string(d), {lit, I(d)}));
      out.push_back(make(label + ", dim " + std::to_string(d - nd), {lit, I(d - nd)}));
    }
    out.push_back(
        make("error: " + label + ", dim " + std::to_string(nd) + " out of range", {lit, I(nd)}));
    out.push_back(make("error: " + label + ", dim " + std::to_string(-nd - 1) + " out of range",
                       {lit, I(-nd - 1)}));
  }
  return out;
}

std::vector<Sample> whole_query_samples(const SampleContext& ctx) {
  if (ctx.performance) return {make("[4096, 4096]", {T({4096, 4096}, DType::Float32)})};
  std::vector<Sample> out;
  for (auto& [label, lit] : meta_inputs()) out.push_back(make(label, {lit}));
  return out;
}

// ---- _sparse_coo_tensor_with_dims_and_tensors ------------------------------------------------

constexpr int64_t kIndexBound = 16;  // indices are drawn in [0, 16)

// The linear position of each nonzero's sparse index in the sparse dims of `size`; -1 for an
// index out of range.
std::vector<int64_t> sparse_positions(const Tensor& indices, const Shape& size,
                                      int64_t sparse_dim) {
  const int64_t nnz = indices.dim() == 2 ? indices.size(1) : 0;
  std::vector<int64_t> pos(static_cast<size_t>(nnz), 0);
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t p = 0;
    for (int64_t d = 0; d < sparse_dim; ++d) {
      const int64_t i = indices.get_int(d * nnz + k);
      if (i < 0 || i >= size[static_cast<size_t>(d)]) {
        p = -1;
        break;
      }
      p = p * size[static_cast<size_t>(d)] + i;
    }
    pos[static_cast<size_t>(k)] = p;
  }
  return pos;
}

// ATen's argument checks of the constructor; the dense equivalent's shape and dtype.
struct SparseSpec {
  Shape size;
  DType dtype;
};

SparseSpec check_sparse_coo(const Args& a) {
  const int64_t sparse_dim = a.integer("sparse_dim");
  const int64_t dense_dim = a.integer("dense_dim");
  const Shape size = a.ints("size");
  const Tensor& indices = a.tensor("indices");
  const Tensor& values = a.tensor("values");
  const bool sparse = a.given("layout") && a.value("layout").to_layout() == Layout::SparseCoo;
  CRUCIBLE_CHECK(sparse,
                 "Could not run 'aten::_sparse_coo_tensor_with_dims_and_tensors' with arguments "
                 "from the 'CPU' backend (a strided layout: the op builds sparse tensors only)");
  creation::check_sizes(size);
  CRUCIBLE_CHECK(sparse_dim >= 0 && dense_dim >= 0 &&
                     sparse_dim + dense_dim == static_cast<int64_t>(size.size()),
                 fmt::format("number of dimensions must be sparse_dim ({}) + dense_dim ({}), but "
                             "got {}",
                             sparse_dim, dense_dim, size.size()));
  const DType dtype = creation::dtype_arg(a, 5, DType::Float32);
  CRUCIBLE_CHECK(
      values.dtype() == dtype,
      fmt::format("dtype of values ({}) must match dtype of sparse tensor ({})",
                  dtype_scalar_type_name(values.dtype()), dtype_scalar_type_name(dtype)));
  CRUCIBLE_CHECK(indices.dtype() == DType::Int64, "indices must be an int64 tensor");
  CRUCIBLE_CHECK(indices.dim() == 2,
                 "indices must be sparse_dim x nnz, but got: " + shape_str(indices.shape()));
  CRUCIBLE_CHECK(indices.size(0) == sparse_dim,
                 fmt::format("indices has incorrect first dimension, expected {}, got {}",
                             sparse_dim, indices.size(0)));
  CRUCIBLE_CHECK(values.dim() == dense_dim + 1,
                 fmt::format("values has incorrect number of dimensions, expected {}, got {}",
                             dense_dim + 1, values.dim()));
  Shape expected{values.size(0)};
  expected.insert(expected.end(), size.begin() + sparse_dim, size.end());
  CRUCIBLE_CHECK(values.shape() == expected,
                 fmt::format("values has incorrect size, expected {}, got {}", shape_str(expected),
                             shape_str(values.shape())));
  const int64_t nnz = values.size(0);
  CRUCIBLE_CHECK(indices.size(1) == nnz,
                 fmt::format("indices and values must have same nnz, but got nnz from indices: "
                             "{}, nnz from values: {}",
                             indices.size(1), nnz));
  return {size, dtype};
}

Values sparse_coo_ref(const Args& a) {
  const SparseSpec spec = check_sparse_coo(a);
  const int64_t sparse_dim = a.integer("sparse_dim");
  const Shape& size = spec.size;
  const DType dtype = spec.dtype;
  const Tensor& indices = a.tensor("indices");
  const Tensor& values = a.tensor("values");
  const int64_t nnz = values.size(0);
  const std::vector<int64_t> pos = sparse_positions(indices, size, sparse_dim);
  for (int64_t k = 0; k < nnz; ++k)
    CRUCIBLE_CHECK(pos[static_cast<size_t>(k)] >= 0,
                   fmt::format("index {} of nonzero {} is out of bounds for size {}: the sparse "
                               "tensor has no dense equivalent",
                               shape_str([&] {
                                 Shape idx;
                                 for (int64_t d = 0; d < sparse_dim; ++d)
                                   idx.push_back(indices.get_int(d * nnz + k));
                                 return idx;
                               }()),
                               k, shape_str(size)));
  // Accumulate: out has shape [prod(sparse sizes), dense numel] as a flat buffer.
  int64_t dense_numel = 1;
  for (size_t d = static_cast<size_t>(sparse_dim); d < size.size(); ++d) dense_numel *= size[d];
  Tensor out = Tensor::zeros(size, dtype);
  const int64_t total = out.numel();
  if (is_floating(dtype)) {
    std::vector<double> acc(static_cast<size_t>(total), 0.0);
    for (int64_t k = 0; k < nnz; ++k)
      for (int64_t j = 0; j < dense_numel; ++j)
        acc[static_cast<size_t>(pos[static_cast<size_t>(k)] * dense_numel + j)] +=
            values.get(k * dense_numel + j);
    for (int64_t i = 0; i < total; ++i) out.set(i, acc[static_cast<size_t>(i)]);
  } else {
    std::vector<uint64_t> acc(static_cast<size_t>(total), 0);  // wrapping sums
    for (int64_t k = 0; k < nnz; ++k)
      for (int64_t j = 0; j < dense_numel; ++j) {
        const int64_t v = values.get_int(k * dense_numel + j);
        uint64_t& slot = acc[static_cast<size_t>(pos[static_cast<size_t>(k)] * dense_numel + j)];
        if (dtype == DType::Bool)
          slot = slot || v != 0;
        else
          slot += static_cast<uint64_t>(v);
      }
    for (int64_t i = 0; i < total; ++i)
      out.set_int(i, static_cast<int64_t>(acc[static_cast<size_t>(i)]));
  }
  return {Value(out)};
}

// sqrt of the largest number of values summed into one element.
double sparse_tol_scale(const Args& a) {
  const int64_t sparse_dim = a.integer("sparse_dim");
  const Tensor& indices = a.tensor("indices");
  const Shape size = a.ints("size");
  if (indices.dim() != 2 || indices.size(0) != sparse_dim ||
      static_cast<int64_t>(size.size()) < sparse_dim)
    return 1.0;
  std::unordered_map<int64_t, int64_t> count;
  int64_t most = 1;
  for (int64_t p : sparse_positions(indices, size, sparse_dim)) most = std::max(most, ++count[p]);
  return std::sqrt(static_cast<double>(most));
}

Cost sparse_cost(const Args& a, const Values& out) {
  const Tensor& values = a.tensor("values");
  return {static_cast<double>(values.numel()), creation::real_bytes(a.tensor("indices")) +
                                                   creation::real_bytes(values) +
                                                   creation::tensor_bytes(out.at(0).tensor())};
}

using Kwargs = std::vector<std::pair<std::string, Literal>>;

Kwargs sparse_kwargs(DType t) {
  return {{"dtype", DT(t)}, {"layout", Literal::symbol("torch.sparse_coo")}};
}

std::vector<Sample> sparse_samples(const SampleContext& ctx) {
  const DType f32 = DType::Float32, i64 = DType::Int64;
  std::vector<Sample> out;
  auto add = [&](std::string label, int64_t sd, int64_t dd, const Shape& size, Literal idx,
                 Literal vals, Kwargs kw) {
    out.push_back(make(std::move(label), {I(sd), I(dd), L(size), std::move(idx), std::move(vals)},
                       std::move(kw)));
  };
  if (ctx.performance) {
    for (DType t : {DType::Float16, DType::Float32}) {
      Kwargs kw = sparse_kwargs(t);
      kw.push_back({"device", S("cuda")});
      kw.push_back({"pin_memory", None()});
      add("DLRM embedding gradient " + dtype_code_str(t), 1, 1, {965, 192}, T({1, 54765}, i64),
          T({54765, 192}, t), kw);
    }
    return out;
  }
  add("sparse 1, dense 1", 1, 1, {16, 3}, T({1, 20}, i64), T({20, 3}, f32), sparse_kwargs(f32));
  for (DType t : all_numeric_dtypes())
    add("dtype " + dtype_code_str(t), 1, 1, {16, 4}, T({1, 24}, i64), T({24, 4}, t),
        sparse_kwargs(t));
  add("sparse 2, dense 0", 2, 0, {16, 20}, T({2, 30}, i64), T({30}, f32), sparse_kwargs(f32));
  add("sparse 2, dense 1", 2, 1, {16, 16, 2}, T({2, 40}, i64), T({40, 2}, f32), sparse_kwargs(f32));
  add("sparse 1, dense 2", 1, 2, {16, 2, 3}, T({1, 10}, i64), T({10, 2, 3}, f32),
      sparse_kwargs(f32));
  add("sparse 0, dense 2", 0, 2, {4, 3}, T({0, 1}, i64), T({1, 4, 3}, f32), sparse_kwargs(f32));
  add("no nonzeros", 1, 1, {16, 3}, T({1, 0}, i64), T({0, 3}, f32), sparse_kwargs(f32));
  add("many duplicates f16", 1, 1, {16, 2}, T({1, 500}, i64), T({500, 2}, DType::Float16),
      sparse_kwargs(DType::Float16));
  add("many duplicates i32", 1, 1, {16, 2}, T({1, 500}, i64), T({500, 2}, DType::Int32),
      sparse_kwargs(DType::Int32));
  add("transposed values", 1, 1, {16, 3}, T({1, 20}, i64), T({20, 3}, f32, {1, 20}),
      sparse_kwargs(f32));
  add("sliced indices", 2, 0, {16, 16}, T({2, 12}, i64, {30, 2}), T({12}, f32), sparse_kwargs(f32));
  add("special values", 1, 1, {16, 4}, T({1, 32}, i64), T_fill({32, 4}, f32, "special"),
      sparse_kwargs(f32));
  {
    Kwargs kw = sparse_kwargs(DType::Float16);
    kw.push_back({"device", S("cuda")});
    kw.push_back({"pin_memory", None()});
    add("as traced (device 'cuda'), small", 1, 1, {40, 8}, T({1, 300}, i64),
        T({300, 8}, DType::Float16), kw);
  }
  add("dtype None means f32", 1, 1, {16, 3}, T({1, 8}, i64), T({8, 3}, f32),
      {{"layout", Literal::symbol("torch.sparse_coo")}});
  {
    Kwargs kw = sparse_kwargs(f32);
    kw.push_back({"is_coalesced", B(false)});
    add("is_coalesced given", 1, 1, {16, 3}, T({1, 8}, i64), T({8, 3}, f32), kw);
  }
  add("error: strided layout (ATen has no dense kernel)", 1, 1, {16, 3}, T({1, 8}, i64),
      T({8, 3}, f32), {{"dtype", DT(f32)}, {"layout", Literal::symbol("torch.strided")}});
  add("error: no layout", 1, 1, {16, 3}, T({1, 8}, i64), T({8, 3}, f32), {{"dtype", DT(f32)}});
  add("error: dtype differs from the values'", 1, 1, {16, 3}, T({1, 8}, i64), T({8, 3}, f32),
      sparse_kwargs(DType::Float16));
  add("error: dtype None with f16 values", 1, 1, {16, 3}, T({1, 8}, i64), T({8, 3}, DType::Float16),
      {{"layout", Literal::symbol("torch.sparse_coo")}});
  add("error: sparse_dim + dense_dim != len(size)", 1, 0, {16, 3}, T({1, 8}, i64), T({8, 3}, f32),
      sparse_kwargs(f32));
  add("error: indices first dim", 2, 0, {16, 16}, T({1, 8}, i64), T({8}, f32), sparse_kwargs(f32));
  add("error: indices 1-d", 1, 1, {16, 3}, T({8}, i64), T({8, 3}, f32), sparse_kwargs(f32));
  add("error: indices i32", 1, 1, {16, 3}, T({1, 8}, DType::Int32), T({8, 3}, f32),
      sparse_kwargs(f32));
  add("error: values dense size", 1, 1, {16, 3}, T({1, 8}, i64), T({8, 2}, f32),
      sparse_kwargs(f32));
  add("error: values dims", 1, 1, {16, 3}, T({1, 8}, i64), T({8}, f32), sparse_kwargs(f32));
  add("error: nnz differs", 1, 1, {16, 3}, T({1, 7}, i64), T({8, 3}, f32), sparse_kwargs(f32));
  return out;
}

OpDef meta_op(std::string_view schema, RefFn ref, SampleFn samples) {
  OpDef op = OpDef::from_schema(schema, "meta");
  op.dtypes = all_numeric_dtypes();
  // The queries read only sizes and strides: they are their own meta functions.
  op.meta = ref;
  op.ref = std::move(ref);
  op.samples = std::move(samples);
  op.cost = [](const Args&, const Values&) { return Cost{0, 0}; };
  return op;
}

}  // namespace

void register_meta_ops(OpRegistry& r) {
  r.add(meta_op("aten::sym_size.int(Tensor self, int dim) -> SymInt", sym_size_ref,
                dim_query_samples));
  r.add(meta_op("aten::sym_numel(Tensor self) -> SymInt", sym_numel_ref, whole_query_samples));
  r.add(meta_op("aten::sym_stride.int(Tensor self, int dim) -> SymInt", sym_stride_ref,
                dim_query_samples));
  r.add(meta_op("aten::sym_storage_offset(Tensor self) -> SymInt", sym_storage_offset_ref,
                whole_query_samples));

  OpDef sp = OpDef::from_schema(
      "aten::_sparse_coo_tensor_with_dims_and_tensors(int sparse_dim, int dense_dim, SymInt[] "
      "size, Tensor indices, Tensor values, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=False, bool? is_coalesced=None) -> Tensor",
      "meta");
  sp.dtypes = all_numeric_dtypes();
  sp.meta = [](const Args& a) {
    const SparseSpec spec = check_sparse_coo(a);
    return Values{meta::fresh(spec.size, spec.dtype)};
  };
  sp.ref = sparse_coo_ref;
  sp.value_checks = true;  // an index out of range has no dense equivalent
  sp.samples = sparse_samples;
  sp.cost = sparse_cost;
  ArgRole idx;
  idx.kind = ArgRole::Kind::IndexInto;
  idx.bound = kIndexBound;
  sp.roles["indices"] = idx;
  sp.compare.tol_scale = [schema = sp.schema](const Values& a) {
    return sparse_tol_scale(Args(a, schema));
  };
  r.add(std::move(sp));
}

}  // namespace crucible

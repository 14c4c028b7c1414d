// Embedding lookup: aten.embedding.default.
//
// Reference semantics (PyTorch 2.x, CPU; Embedding.cpp, index_select):
//  - weight must be 2-D ('weight' must be 2-D); indices must be i64 or i32, of any shape
//    (0-d included); out[idx..., :] = weight[indices[idx...], :], shape indices.shape + [D],
//    dtype of weight (any dtype index_select supports: bool, integers, floats).
//  - every index must satisfy 0 <= i < weight.size(0) -- negative indices are not wrapped --
//    else "index out of range in self".
//  - padding_idx, scale_grad_by_freq and sparse only matter for the backward: the forward
//    ignores them.
//
// Samples: indices are drawn in range through roles["indices"] (index_into weight dim 0); the
// case with fill='oob' on the indices relies on the materialiser writing at least one index
// >= weight.size(0), so the reference (and ATen) must raise.
#include <cstdint>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/rules/embedding.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"

namespace crucible {

namespace embedding {

Shape embedding_shape(const Args& args) {
  const Tensor& weight = args.tensor("weight");
  const Tensor& indices = args.tensor("indices");
  CRUCIBLE_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  check_index_dtype(indices, "indices", 1, "embedding");
  Shape out_shape = indices.shape();
  out_shape.push_back(weight.size(1));
  return out_shape;
}

}  // namespace embedding

namespace {

using namespace samples;

// embedding into its output (meta: embedding_shape; contiguous): each gathered row copied as
// bytes (the same dtype: exact, NaN payloads kept). An index out of range raises (a check on the
// values).
void embedding_impl(const Args& args, const Values& outs) {
  const Tensor& weight = args.tensor("weight");
  const Tensor& indices = args.tensor("indices");
  const Tensor& out = outs.at(0).tensor();
  const int64_t rows = weight.size(0), width = weight.size(1);
  for (int64_t i = 0; i < indices.numel(); ++i) {
    const int64_t row = indices.get_int(i);
    if (row < 0 || row >= rows) op_error("index out of range in self");
    out.as_strided({width}, {1}, out.offset() + i * width)
        .copy_from(weight.as_strided({width}, {weight.stride(1)},
                                     weight.offset() + row * weight.stride(0)));
  }
}

// A gather: no arithmetic. Bytes: the gathered rows read and written, the indices read.
Cost embedding_cost(const Args& a, const Values& out) {
  Cost c;
  if (a.size() < 2 || !a.value("indices").is_tensor() || out.empty() || !out[0].is_tensor())
    return c;
  const Tensor& o = out[0].tensor();
  const Tensor& indices = a.tensor("indices");
  c.bytes = 2.0 * static_cast<double>(o.numel() * o.itemsize()) +
            static_cast<double>(indices.numel() * indices.itemsize());
  return c;
}

std::vector<Sample> embedding_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32, i64 = DType::Int64, i32 = DType::Int32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(make("BERT words [30522, 768] x [64, 128] " + dtype_code_str(t),
                         {T({30522, 768}, t), T({64, 128}, i64)}));
      out.push_back(make("BART words [50265, 1024] x [4, 1024], padding_idx " + dtype_code_str(t),
                         {T({50265, 1024}, t), T({4, 1024}, i64), I(1)}));
      out.push_back(make("positions [512, 768] x [64, 128] expanded " + dtype_code_str(t),
                         {T({512, 768}, t), T({64, 128}, i64, {0, 1})}));
    }
    return out;
  }
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("1-d indices " + dtype_code_str(t), {T({10, 4}, t), T({5}, i64)}));
  }
  for (DType t : {f32, DType::Float16, DType::BFloat16}) {
    out.push_back(make("2-d i32 indices " + dtype_code_str(t), {T({12, 7}, t), T({3, 7}, i32)}));
  }
  out.push_back(make("3-d indices", {T({9, 3}, f32), T({2, 3, 4}, i64)}));
  out.push_back(make("0-d index", {T({10, 4}, f32), T({}, i64)}));
  out.push_back(make("0-d i32 index", {T({10, 4}, DType::Float64), T({}, i32)}));
  out.push_back(make("one row table", {T({1, 16}, f32), T({6}, i64)}));
  out.push_back(make("wide rows", {T({20, 257}, f32), T({11}, i64)}));
  out.push_back(make("empty indices", {T({10, 4}, f32), T({0}, i64)}));
  out.push_back(make("empty 2-d indices", {T({10, 4}, f32), T({2, 0}, i32)}));
  out.push_back(make("zero-width rows", {T({10, 0}, f32), T({3}, i64)}));
  out.push_back(make("empty table, empty indices", {T({0, 4}, f32), T({0}, i64)}));
  out.push_back(make("padding_idx positional", {T({10, 4}, f32), T({8}, i64), I(0)}));
  out.push_back(make("padding_idx negative", {T({10, 4}, f32), T({8}, i64), I(-1)}));
  out.push_back(
      make("all flags keyword", {T({10, 4}, f32), T({2, 4}, i64)},
           {{"padding_idx", I(2)}, {"scale_grad_by_freq", B(true)}, {"sparse", B(true)}}));
  out.push_back(
      make("all flags positional", {T({10, 4}, f32), T({8}, i64), I(3), B(false), B(true)}));
  out.push_back(make("transposed weight", {T_transposed(10, 4, f32), T({6}, i64)}));
  out.push_back(make("sliced weight rows", {T({10, 4}, f32, {8, 1}), T({6}, i64)}));
  out.push_back(make("expanded indices (stride 0)", {T({10, 4}, f32), T({3, 5}, i64, {0, 1})}));
  out.push_back(make("sliced indices", {T({10, 4}, f32), T({5}, i32, {2})}));
  out.push_back(make("special values in weight", {T_fill({10, 4}, f32, "special"), T({12}, i64)}));
  out.push_back(make("special values in weight f16",
                     {T_fill({10, 4}, DType::Float16, "special"), T({12}, i64)}));
  out.push_back(
      make("special values in weight i64", {T_fill({10, 4}, i64, "special"), T({12}, i64)}));
  out.push_back(make("error: index out of range", {T({10, 4}, f32), T_fill({6}, i64, "oob")}));
  out.push_back(
      make("error: index out of range, 2-d i32", {T({10, 4}, f32), T_fill({2, 3}, i32, "oob")}));
  out.push_back(make("error: 1-d weight", {T({10}, f32), T({3}, i64)}));
  out.push_back(make("error: 3-d weight", {T({10, 2, 2}, f32), T({3}, i64)}));
  out.push_back(make("error: float indices", {T({10, 4}, f32), T({3}, f32)}));
  out.push_back(make("error: i16 indices", {T({10, 4}, f32), T({3}, DType::Int16)}));
  return out;
}

}  // namespace

void register_embedding_ops(OpRegistry& r) {
  OpDef op = OpDef::from_schema(
      "aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool "
      "scale_grad_by_freq=False, bool sparse=False) -> Tensor",
      "embedding");
  op.dtypes = all_numeric_dtypes();
  op.meta = [](const Args& args) {
    return Values{meta::fresh(embedding::embedding_shape(args), args.tensor("weight").dtype())};
  };
  op.ref = structured_ref(op.meta, embedding_impl);
  op.value_checks = true;  // "index out of range in self"
  op.samples = embedding_samples;
  op.roles["indices"] = ArgRole::index_into("weight", 0);
  op.cost = embedding_cost;
  r.add(std::move(op));
}

}  // namespace crucible

// Views: aten.view.default and aten.permute.default. Both return a tensor sharing the input's
// storage (compare.output_is_view), so a candidate that copies fails even with equal values.
//
// Reference semantics (PyTorch 2.x; TensorShape.cpp, InferSize.h):
//  - view: one -1 may be inferred; sizes must multiply to the input's numel ("shape '[5, 5]' is
//    invalid for input of size 24"); a -1 beside a 0 is ambiguous; the new shape must be
//    expressible with the input's strides (computeStride), else "view size is not compatible
//    with input tensor's size and stride ...". Any dtype.
//  - permute: dims must be a permutation of the input's dims (wrapped, no repeats, as many as
//    the input has). Output strides are the input's strides permuted.
// Tensor::view and Tensor::permute implement exactly these checks and messages.
#include <cstdint>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "ops/families.h"
#include "ops/samples.h"

namespace crucible {
namespace {

using namespace samples;

Values view_ref(const Args& args) { return {args.tensor("self").view(args.ints("size"))}; }

Values permute_ref(const Args& args) { return {args.tensor("self").permute(args.ints("dims"))}; }

// A view moves no data: the cost is zero (timings report latency only).
Cost view_cost(const Values&, const Values&) { return {}; }

ComparePolicy view_compare() {
  ComparePolicy c;
  c.output_is_view = true;
  return c;
}

std::vector<Sample> view_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    // Views cost no data movement: these time the call overhead on model-like shapes.
    for (DType t : {DType::Float32, DType::Float16}) {
      out.push_back(make("split heads [64, 128, 768] " + dtype_code_str(t),
                         {T({64, 128, 768}, t), L({64, 128, 12, 64})}));
      out.push_back(make("flatten tokens [64, 128, 768] " + dtype_code_str(t),
                         {T({64, 128, 768}, t), L({-1, 768})}));
    }
    return out;
  }
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("flatten " + dtype_code_str(t), {T({4, 6}, t), L({24})}));
    out.push_back(make("split with -1 " + dtype_code_str(t), {T({24}, t), L({2, -1, 4})}));
  }
  out.push_back(make("merge leading dims", {T({2, 3, 4}, f32), L({6, 4})}));
  out.push_back(make("split and merge", {T({2, 3, 4}, f32), L({3, 8})}));
  out.push_back(make("inferred leading dim", {T({2, 3, 4}, f32), L({-1, 4})}));
  out.push_back(make("add unit dims", {T({3, 4}, f32), L({1, 3, 1, 4, 1})}));
  out.push_back(make("0-d to [1]", {T({}, f32), L({1})}));
  out.push_back(make("0-d to []", {T({}, DType::Int64), L({})}));
  out.push_back(make("0-d to [-1]", {T({}, f32), L({-1})}));
  out.push_back(make("[1] to 0-d", {T({1}, f32), L({})}));
  out.push_back(make("[1, 1] to 0-d", {T({1, 1}, DType::Float16), L({})}));
  out.push_back(make("empty reshaped", {T({0, 4}, f32), L({4, 0})}));
  out.push_back(make("empty to -1", {T({0, 4}, f32), L({-1})}));
  out.push_back(make("empty split", {T({0}, f32), L({0, 5, 2})}));
  out.push_back(make("empty, -1 inferred as 0", {T({3, 0}, f32), L({-1, 5})}));
  // Non-contiguous inputs whose new shape is expressible with their strides.
  out.push_back(make("rows with a gap, split last dim", {T({4, 6}, f32, {12, 1}), L({4, 2, 3})}));
  out.push_back(make("transposed, unit dim added", {T_transposed(4, 6, f32), L({4, 6, 1})}));
  out.push_back(make("transposed, split a dim", {T_transposed(4, 6, f32), L({2, 2, 6})}));
  out.push_back(
      make("expanded (stride 0), split last dim", {T({4, 6}, f32, {0, 1}), L({4, 3, 2})}));
  out.push_back(make("expanded, merge expanded dims", {T({4, 5, 6}, f32, {0, 0, 1}), L({20, 6})}));
  out.push_back(
      make("permuted 3-d, merge contiguous pair", {T({4, 3, 5}, f32, {1, 20, 4}), L({4, 15})}));
  out.push_back(make("size given as keyword", {T({4, 6}, f32)}, {{"size", L({6, 4})}}));
  out.push_back(make("error: transposed flattened", {T_transposed(4, 6, f32), L({24})}));
  out.push_back(make("error: expanded flattened", {T({4, 6}, f32, {0, 1}), L({24})}));
  out.push_back(make("error: numel differs", {T({4, 6}, f32), L({5, 5})}));
  out.push_back(make("error: two -1", {T({4, 6}, f32), L({-1, -1})}));
  out.push_back(make("error: negative size", {T({4, 6}, f32), L({-2, 12})}));
  out.push_back(make("error: -1 not divisible", {T({4, 6}, f32), L({5, -1})}));
  out.push_back(make("error: -1 ambiguous with 0", {T({0, 4}, f32), L({-1, 0})}));
  return out;
}

std::vector<Sample> permute_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16}) {
      out.push_back(make("heads to front [64, 128, 12, 64] " + dtype_code_str(t),
                         {T({64, 128, 12, 64}, t), L({0, 2, 1, 3})}));
      out.push_back(make("NCHW to NHWC [64, 256, 56, 56] " + dtype_code_str(t),
                         {T({64, 256, 56, 56}, t), L({0, 2, 3, 1})}));
    }
    return out;
  }
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("rotate 3-d " + dtype_code_str(t), {T({2, 3, 4}, t), L({2, 0, 1})}));
  }
  out.push_back(make("transpose 2-d", {T({3, 5}, f32), L({1, 0})}));
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
    out.push_back(
        make("special values " + dtype_code_str(t), {T_fill({4, 6}, t, "special"), L({1, 0})}));
  out.push_back(make("identity", {T({3, 5}, f32), L({0, 1})}));
  out.push_back(make("negative dims", {T({2, 3, 4}, f32), L({-1, 0, -2})}));
  out.push_back(make("4-d heads", {T({2, 5, 3, 4}, f32), L({0, 2, 1, 3})}));
  out.push_back(make("0-d", {T({}, f32), L({})}));
  out.push_back(make("1-d", {T({7}, DType::Int32), L({0})}));
  out.push_back(make("1-d, dim -1", {T({7}, f32), L({-1})}));
  out.push_back(make("empty", {T({0, 3}, f32), L({1, 0})}));
  out.push_back(make("empty 3-d", {T({2, 0, 3}, DType::Float16), L({2, 1, 0})}));
  out.push_back(make("transposed input", {T_transposed(4, 6, f32), L({1, 0})}));
  out.push_back(make("expanded input (stride 0)", {T({4, 5, 6}, f32, {0, 6, 1}), L({2, 0, 1})}));
  out.push_back(make("sliced input", {T({3, 5}, f32, {10, 2}), L({1, 0})}));
  out.push_back(make("dims given as keyword", {T({2, 3, 4}, f32)}, {{"dims", L({1, 2, 0})}}));
  out.push_back(make("error: too few dims", {T({2, 3, 4}, f32), L({1, 0})}));
  out.push_back(make("error: too many dims", {T({2, 3}, f32), L({0, 1, 2})}));
  out.push_back(make("error: repeated dim", {T({2, 3, 4}, f32), L({0, 1, 1})}));
  out.push_back(make("error: repeated after wrapping", {T({2, 3, 4}, f32), L({0, 2, -1})}));
  out.push_back(make("error: dim out of range", {T({2, 3, 4}, f32), L({0, 1, 3})}));
  out.push_back(make("error: 0-d given a dim", {T({}, f32), L({0})}));
  return out;
}

}  // namespace

void register_view_ops(OpRegistry& r) {
  {
    OpDef op = OpDef::from_schema("aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)", "view");
    op.dtypes = all_numeric_dtypes();
    op.meta = view_ref;  // the view itself: computing it moves no data
    op.ref = view_ref;
    op.samples = view_samples;
    op.cost = view_cost;
    op.compare = view_compare();
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema("aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)", "view");
    op.dtypes = all_numeric_dtypes();
    op.meta = permute_ref;  // the view itself: computing it moves no data
    op.ref = permute_ref;
    op.samples = permute_samples;
    op.cost = view_cost;
    op.compare = view_compare();
    r.add(std::move(op));
  }
}

}  // namespace crucible

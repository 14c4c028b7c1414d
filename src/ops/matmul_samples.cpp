// Samples of the matrix products (mm, addmm, bmm, baddbmm): odd sizes (blocking and tails),
// empty and size-1 dims, transposed and expanded operands, broadcast bias, beta/alpha, special
// values, every dtype, and the shape and dtype errors ATen raises; large square products for
// timing.
#include <string>
#include <vector>

#include "ops/matmul_internal.h"
#include "ops/samples.h"

namespace crucible::matmul {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

}  // namespace

std::vector<DType> matmul_dtypes() {
  return {DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,  DType::Int64,
          DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

namespace {

// [M, K] x [K, N] sizes: odd sizes catch wrong blocking and tails.
struct Mnk {
  int64_t m, n, k;
};
const std::vector<Mnk> kSizes = {{7, 33, 16}, {33, 1, 7}, {1, 16, 33}, {16, 7, 1}, {1, 1, 1}};

}  // namespace

std::vector<Sample> mm_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(
          make("square 1024 " + dtype_code_str(t), {T({1024, 1024}, t), T({1024, 1024}, t)}));
      out.push_back(make("linear [2048, 768] x [768, 3072]^T " + dtype_code_str(t),
                         {T({2048, 768}, t), T_transposed(768, 3072, t)}));
      out.push_back(make("weight grad [768, 2048] x [2048, 768] " + dtype_code_str(t),
                         {T_transposed(768, 2048, t), T({2048, 768}, t)}));
    }
    return out;
  }
  for (DType t : matmul_dtypes()) {
    out.push_back(make("7x16 @ 16x33 " + dtype_code_str(t), {T({7, 16}, t), T({16, 33}, t)}));
  }
  for (const Mnk& s : kSizes) {
    out.push_back(
        make("sizes " + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n),
             {T({s.m, s.k}, f32), T({s.k, s.n}, f32)}));
  }
  for (DType t : {f32, DType::Float16, DType::BFloat16, DType::Int64}) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("self transposed" + d, {T_transposed(33, 16, t), T({16, 7}, t)}));
    out.push_back(make("mat2 transposed" + d, {T({33, 16}, t), T_transposed(16, 7, t)}));
    out.push_back(make("both transposed" + d, {T_transposed(7, 33, t), T_transposed(33, 16, t)}));
  }
  out.push_back(make("self expanded rows (stride 0)", {T({5, 16}, f32, {0, 1}), T({16, 7}, f32)}));
  out.push_back(make("mat2 sliced columns", {T({7, 16}, f32), T({16, 9}, f32, {20, 2})}));
  out.push_back(make("larger 64x96x80", {T({64, 96}, f32), T({96, 80}, f32)}));
  out.push_back(make("empty rows", {T({0, 5}, f32), T({5, 3}, f32)}));
  out.push_back(make("empty inner dim gives zeros", {T({4, 0}, f32), T({0, 3}, f32)}));
  out.push_back(make("empty columns", {T({3, 5}, f32), T({5, 0}, f32)}));
  out.push_back(make("empty inner dim, bool (no dispatch)",
                     {T({4, 0}, DType::Bool), T({0, 3}, DType::Bool)}));
  for (DType t : {f32, DType::Float16, DType::BFloat16, DType::Float64}) {
    out.push_back(make("special values" + std::string(" ") + dtype_code_str(t),
                       {T_fill({9, 16}, t, "special"), T({16, 7}, t)}));
  }
  out.push_back(make("special values in both",
                     {T_fill({9, 16}, f32, "special"), T_fill({16, 7}, f32, "special")}));
  out.push_back(make("special values i32 (wraps)",
                     {T_fill({9, 16}, DType::Int32, "special"), T({16, 7}, DType::Int32)}));
  out.push_back(make("error: inner sizes differ", {T({3, 4}, f32), T({5, 6}, f32)}));
  out.push_back(make("error: self 1-d", {T({4}, f32), T({4, 6}, f32)}));
  out.push_back(make("error: mat2 3-d", {T({3, 4}, f32), T({2, 4, 6}, f32)}));
  out.push_back(make("error: dtypes differ", {T({3, 4}, f32), T({4, 6}, DType::Float64)}));
  out.push_back(make("error: bool", {T({3, 4}, DType::Bool), T({4, 6}, DType::Bool)}));
  return out;
}

std::vector<Sample> addmm_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(make("linear 768->3072 on [2048, 768] " + dtype_code_str(t),
                         {T({3072}, t), T({2048, 768}, t), T_transposed(768, 3072, t)}));
      out.push_back(make("linear 3072->768 on [2048, 3072] " + dtype_code_str(t),
                         {T({768}, t), T({2048, 3072}, t), T_transposed(3072, 768, t)}));
      out.push_back(make("square 1024 " + dtype_code_str(t),
                         {T({1024, 1024}, t), T({1024, 1024}, t), T({1024, 1024}, t)}));
    }
    return out;
  }
  // Linear layers: bias [N], input [M, K], weight^T (a transposed [N, K]).
  for (DType t : matmul_dtypes()) {
    out.push_back(make("linear bias " + dtype_code_str(t),
                       {T({33}, t), T({7, 16}, t), T_transposed(16, 33, t)}));
  }
  for (const Mnk& s : kSizes) {
    out.push_back(make(
        "full self " + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n),
        {T({s.m, s.n}, f32), T({s.m, s.k}, f32), T({s.k, s.n}, f32)}));
  }
  for (DType t : {f32, DType::Float16, DType::BFloat16, DType::Int64}) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("self [1, N]" + d, {T({1, 7}, t), T({5, 16}, t), T({16, 7}, t)}));
    out.push_back(make("self [M, 1]" + d, {T({5, 1}, t), T({5, 16}, t), T({16, 7}, t)}));
    out.push_back(make("self 0-d" + d, {T({}, t), T({5, 16}, t), T({16, 7}, t)}));
    out.push_back(make("mat1 transposed" + d, {T({7}, t), T_transposed(5, 16, t), T({16, 7}, t)}));
  }
  out.push_back(make("beta and alpha floats", {T({5, 7}, f32), T({5, 16}, f32), T({16, 7}, f32)},
                     {{"beta", F(0.5)}, {"alpha", F(2.0)}}));
  out.push_back(make("beta and alpha ints", {T({5, 7}, f32), T({5, 16}, f32), T({16, 7}, f32)},
                     {{"beta", I(2)}, {"alpha", I(-3)}}));
  out.push_back(make("beta and alpha ints, i64",
                     {T({7}, DType::Int64), T({5, 16}, DType::Int64), T({16, 7}, DType::Int64)},
                     {{"beta", I(2)}, {"alpha", I(3)}}));
  out.push_back(
      make("alpha only, f16",
           {T({7}, DType::Float16), T({5, 16}, DType::Float16), T({16, 7}, DType::Float16)},
           {{"alpha", F(0.25)}}));
  out.push_back(make("beta=0 ignores NaN in self",
                     {T_fill({5, 7}, f32, "special"), T({5, 16}, f32), T({16, 7}, f32)},
                     {{"beta", I(0)}}));
  out.push_back(make("beta=0.0 ignores NaN in self, bias",
                     {T_fill({7}, DType::Float16, "special"), T({5, 16}, DType::Float16),
                      T({16, 7}, DType::Float16)},
                     {{"beta", F(0.0)}}));
  out.push_back(make("special values in self",
                     {T_fill({5, 7}, f32, "special"), T({5, 16}, f32), T({16, 7}, f32)}));
  out.push_back(make("special values in mat1",
                     {T({7}, f32), T_fill({5, 16}, f32, "special"), T({16, 7}, f32)}));
  out.push_back(make("special values bf16",
                     {T({7}, DType::BFloat16), T_fill({5, 16}, DType::BFloat16, "special"),
                      T({16, 7}, DType::BFloat16)}));
  out.push_back(make("empty inner dim gives beta*self",
                     {T({4, 3}, f32), T({4, 0}, f32), T({0, 3}, f32)}, {{"beta", F(2.0)}}));
  out.push_back(make("empty rows", {T({3}, f32), T({0, 5}, f32), T({5, 3}, f32)}));
  out.push_back(
      make("error: self does not broadcast", {T({5}, f32), T({4, 6}, f32), T({6, 3}, f32)}));
  out.push_back(make("error: self 3-d", {T({1, 4, 3}, f32), T({4, 6}, f32), T({6, 3}, f32)}));
  out.push_back(make("error: inner sizes differ", {T({3}, f32), T({4, 6}, f32), T({5, 3}, f32)}));
  out.push_back(make("error: mat1 1-d", {T({3}, f32), T({6}, f32), T({6, 3}, f32)}));
  out.push_back(
      make("error: self dtype differs", {T({3}, DType::Float64), T({4, 6}, f32), T({6, 3}, f32)}));
  out.push_back(
      make("error: mat1 dtype differs", {T({3}, f32), T({4, 6}, DType::Float16), T({6, 3}, f32)}));
  out.push_back(
      make("error: bool", {T({3}, DType::Bool), T({4, 6}, DType::Bool), T({6, 3}, DType::Bool)}));
  return out;
}

std::vector<Sample> bmm_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(make("attention scores [96, 128, 64] x [96, 64, 128] " + dtype_code_str(t),
                         {T({96, 128, 64}, t), T({96, 64, 128}, t)}));
      out.push_back(make("attention values [128, 512, 512] x [128, 512, 64] " + dtype_code_str(t),
                         {T({128, 512, 512}, t), T({128, 512, 64}, t)}));
      out.push_back(make("keys transposed [32, 1024, 64] x [32, 64, 1024] " + dtype_code_str(t),
                         {T({32, 1024, 64}, t), T({32, 64, 1024}, t, {65536, 1, 64})}));
    }
    return out;
  }
  for (DType t : matmul_dtypes()) {
    out.push_back(make("[3, 7, 16] x [3, 16, 33] " + dtype_code_str(t),
                       {T({3, 7, 16}, t), T({3, 16, 33}, t)}));
  }
  for (const Mnk& s : kSizes) {
    out.push_back(make(
        "sizes 2x" + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n),
        {T({2, s.m, s.k}, f32), T({2, s.k, s.n}, f32)}));
  }
  for (DType t : {f32, DType::Float16, DType::BFloat16, DType::Int32}) {
    const std::string d = " " + dtype_code_str(t);
    // Each batch item transposed: [B, M, K] with strides (M*K, 1, M).
    out.push_back(
        make("batch1 items transposed" + d, {T({4, 9, 16}, t, {144, 1, 9}), T({4, 16, 7}, t)}));
    out.push_back(
        make("batch2 items transposed" + d, {T({4, 9, 16}, t), T({4, 16, 7}, t, {112, 1, 16})}));
  }
  out.push_back(
      make("batch dim not outermost", {T({3, 5, 8}, f32, {8, 24, 1}), T({3, 8, 4}, f32)}));
  out.push_back(
      make("batch broadcast (stride 0)", {T({4, 5, 8}, f32, {0, 8, 1}), T({4, 8, 6}, f32)}));
  out.push_back(make("one batch", {T({1, 33, 16}, f32), T({1, 16, 7}, f32)}));
  out.push_back(make("empty batch", {T({0, 3, 4}, f32), T({0, 4, 5}, f32)}));
  out.push_back(make("empty inner dim gives zeros", {T({2, 3, 0}, f32), T({2, 0, 5}, f32)}));
  out.push_back(make("empty rows", {T({2, 0, 4}, f32), T({2, 4, 5}, f32)}));
  for (DType t : {f32, DType::Float16, DType::BFloat16}) {
    out.push_back(make("special values " + dtype_code_str(t),
                       {T_fill({2, 9, 16}, t, "special"), T({2, 16, 7}, t)}));
  }
  out.push_back(make("error: batch sizes differ", {T({2, 3, 4}, f32), T({3, 4, 5}, f32)}));
  out.push_back(make("error: inner sizes differ", {T({2, 3, 4}, f32), T({2, 5, 5}, f32)}));
  out.push_back(make("error: batch1 2-d", {T({3, 4}, f32), T({2, 4, 5}, f32)}));
  out.push_back(make("error: batch2 4-d", {T({2, 3, 4}, f32), T({1, 2, 4, 5}, f32)}));
  out.push_back(make("error: dtypes differ", {T({2, 3, 4}, f32), T({2, 4, 5}, DType::Float64)}));
  out.push_back(make("error: bool", {T({2, 3, 4}, DType::Bool), T({2, 4, 5}, DType::Bool)}));
  return out;
}

std::vector<Sample> baddbmm_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(make("attention with bias [96, 128, 64] x [96, 64, 128] " + dtype_code_str(t),
                         {T({96, 128, 128}, t), T({96, 128, 64}, t), T({96, 64, 128}, t)},
                         {{"beta", F(1.0)}, {"alpha", F(0.125)}}));
      out.push_back(
          make("mask broadcast [1, 512, 512], [64, 512, 64] x [64, 64, 512] " + dtype_code_str(t),
               {T({1, 512, 512}, t), T({64, 512, 64}, t), T({64, 64, 512}, t)}));
    }
    return out;
  }
  for (DType t : matmul_dtypes()) {
    out.push_back(make("full self [3, 7, 33] " + dtype_code_str(t),
                       {T({3, 7, 33}, t), T({3, 7, 16}, t), T({3, 16, 33}, t)}));
  }
  for (const Mnk& s : kSizes) {
    out.push_back(make(
        "sizes 2x" + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n),
        {T({2, s.m, s.n}, f32), T({2, s.m, s.k}, f32), T({2, s.k, s.n}, f32)}));
  }
  for (DType t : {f32, DType::Float16, DType::BFloat16, DType::Int64}) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("self [N] (bias)" + d, {T({7}, t), T({3, 5, 16}, t), T({3, 16, 7}, t)}));
    out.push_back(
        make("self [1, M, N]" + d, {T({1, 5, 7}, t), T({3, 5, 16}, t), T({3, 16, 7}, t)}));
    out.push_back(make("self 0-d" + d, {T({}, t), T({3, 5, 16}, t), T({3, 16, 7}, t)}));
    out.push_back(make("batch1 items transposed" + d,
                       {T({4, 9, 7}, t), T({4, 9, 16}, t, {144, 1, 9}), T({4, 16, 7}, t)}));
  }
  out.push_back(
      make("self [B, 1, N]", {T({3, 1, 7}, f32), T({3, 5, 16}, f32), T({3, 16, 7}, f32)}));
  out.push_back(make("self expanded (stride 0)",
                     {T({3, 5, 7}, f32, {0, 7, 1}), T({3, 5, 16}, f32), T({3, 16, 7}, f32)}));
  out.push_back(make("beta and alpha floats",
                     {T({3, 5, 7}, f32), T({3, 5, 16}, f32), T({3, 16, 7}, f32)},
                     {{"beta", F(0.5)}, {"alpha", F(0.125)}}));
  out.push_back(
      make("beta and alpha ints, i32",
           {T({2, 5, 7}, DType::Int32), T({2, 5, 16}, DType::Int32), T({2, 16, 7}, DType::Int32)},
           {{"beta", I(2)}, {"alpha", I(-3)}}));
  out.push_back(make("beta=0 ignores NaN in self",
                     {T_fill({3, 5, 7}, f32, "special"), T({3, 5, 16}, f32), T({3, 16, 7}, f32)},
                     {{"beta", I(0)}}));
  out.push_back(make("beta=0.0 ignores NaN in self, f16",
                     {T_fill({2, 5, 7}, DType::Float16, "special"), T({2, 5, 16}, DType::Float16),
                      T({2, 16, 7}, DType::Float16)},
                     {{"beta", F(0.0)}}));
  out.push_back(make("special values in self",
                     {T_fill({3, 5, 7}, f32, "special"), T({3, 5, 16}, f32), T({3, 16, 7}, f32)}));
  for (DType t : {f32, DType::BFloat16, DType::Float64}) {
    out.push_back(make("special values in batch1 " + dtype_code_str(t),
                       {T({2, 9, 7}, t), T_fill({2, 9, 16}, t, "special"), T({2, 16, 7}, t)}));
  }
  out.push_back(make("empty inner dim gives beta*self",
                     {T({2, 4, 3}, f32), T({2, 4, 0}, f32), T({2, 0, 3}, f32)},
                     {{"beta", F(2.0)}}));
  out.push_back(make("empty batch", {T({3}, f32), T({0, 4, 5}, f32), T({0, 5, 3}, f32)}));
  out.push_back(make("error: self does not broadcast",
                     {T({2, 4}, f32), T({2, 3, 5}, f32), T({2, 5, 6}, f32)}));
  out.push_back(
      make("error: self 4-d", {T({1, 2, 3, 6}, f32), T({2, 3, 5}, f32), T({2, 5, 6}, f32)}));
  out.push_back(
      make("error: batch sizes differ", {T({3, 6}, f32), T({2, 3, 5}, f32), T({3, 5, 6}, f32)}));
  out.push_back(
      make("error: inner sizes differ", {T({3, 6}, f32), T({2, 3, 5}, f32), T({2, 4, 6}, f32)}));
  out.push_back(make("error: batch1 2-d", {T({3, 6}, f32), T({3, 5}, f32), T({2, 5, 6}, f32)}));
  out.push_back(make("error: self dtype differs",
                     {T({3, 6}, DType::Float64), T({2, 3, 5}, f32), T({2, 5, 6}, f32)}));
  out.push_back(make("error: batch2 dtype differs",
                     {T({3, 6}, f32), T({2, 3, 5}, f32), T({2, 5, 6}, DType::Float16)}));
  out.push_back(make("error: bool", {T({3, 6}, DType::Bool), T({2, 3, 5}, DType::Bool),
                                     T({2, 5, 6}, DType::Bool)}));
  return out;
}

}  // namespace crucible::matmul

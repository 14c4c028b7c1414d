// Samples of the quantized matrix products: decode (M = 1) and odd sizes, every activation
// dtype, the layouts ATen refuses, and ATen's argument errors; LLM-sized layers for timing.
#include <string>
#include <vector>

#include "ops/quantized_internal.h"
#include "ops/samples.h"

namespace crucible::quantized {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

std::string mnk(int64_t m, int64_t n, int64_t k) {
  return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
}

const DType f32 = DType::Float32, bf16 = DType::BFloat16, f16 = DType::Float16, i8 = DType::Int8,
            u8 = DType::UInt8, i32 = DType::Int32;

}  // namespace

std::vector<Sample> weight_int8pack_mm_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, bf16})
      for (int64_t m : {1, 16, 512})
        out.push_back(make("linear 4096->4096, M=" + std::to_string(m) + " " + dtype_code_str(t),
                           {T({m, 4096}, t), T({4096, 4096}, i8), T({4096}, t)}));
    return out;
  }
  for (DType t : {f32, bf16, f16})
    for (auto [m, n, k] : {std::tuple{1, 16, 32}, {7, 33, 40}, {17, 64, 96}})
      out.push_back(
          make(mnk(m, n, k) + " " + dtype_code_str(t), {T({m, k}, t), T({n, k}, i8), T({n}, t)}));
  out.push_back(make("empty rows", {T({0, 16}, f32), T({8, 16}, i8), T({8}, f32)}));
  out.push_back(make("special values in A, f16 (f32 partial sums cannot overflow)",
                     {T_fill({5, 16}, f16, "special"), T({8, 16}, i8), T({8}, f16)}));
  out.push_back(
      make("int8 extremes in B", {T({5, 16}, f32), T_fill({8, 16}, i8, "special"), T({8}, f32)}));
  out.push_back(make("error: A f64", {T({3, 4}, DType::Float64), T({5, 4}, i8), T({5}, f32)}));
  out.push_back(
      make("error: A not contiguous", {T({3, 4}, f32, {1, 3}), T({5, 4}, i8), T({5}, f32)}));
  out.push_back(make("error: B int32", {T({3, 4}, f32), T({5, 4}, i32), T({5}, f32)}));
  out.push_back(make("error: B.size(1) != K", {T({3, 4}, f32), T({5, 6}, i8), T({5}, f32)}));
  out.push_back(
      make("error: scales of the wrong size", {T({3, 4}, f32), T({5, 4}, i8), T({4}, f32)}));
  out.push_back(make("error: scales dtype differs", {T({3, 4}, bf16), T({5, 4}, i8), T({5}, f32)}));
  return out;
}

std::vector<Sample> int_mm_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (int64_t m : {16, 512})
      out.push_back(make("linear 4096->4096, M=" + std::to_string(m),
                         {T({m, 4096}, i8), T_transposed(4096, 4096, i8)}));
    return out;
  }
  for (auto [m, n, k] : {std::tuple{1, 1, 1}, {7, 33, 16}, {33, 7, 65}, {17, 64, 128}, {4, 5, 3}})
    out.push_back(make(mnk(m, n, k), {T({m, k}, i8), T({k, n}, i8)}));
  out.push_back(
      make("mat2 transposed (a linear weight)", {T({9, 40}, i8), T_transposed(40, 24, i8)}));
  out.push_back(make("self transposed", {T_transposed(9, 40, i8), T({40, 24}, i8)}));
  out.push_back(
      make("int8 extremes", {T_fill({9, 64}, i8, "special"), T_fill({64, 17}, i8, "special")}));
  out.push_back(make("empty inner dim gives zeros", {T({4, 0}, i8), T({0, 3}, i8)}));
  out.push_back(make("empty rows", {T({0, 4}, i8), T({4, 3}, i8)}));
  out.push_back(make("error: self 1-d", {T({4}, i8), T({4, 3}, i8)}));
  out.push_back(make("error: inner sizes differ", {T({3, 4}, i8), T({5, 3}, i8)}));
  out.push_back(make("error: self int16", {T({3, 4}, DType::Int16), T({4, 3}, i8)}));
  out.push_back(make("error: mat2 uint8", {T({3, 4}, i8), T({4, 3}, u8)}));
  return out;
}

std::vector<Sample> convert_int4pack_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    out.push_back(make("weight [4096, 4096]", {T({4096, 4096}, i32), I(2)}));
    return out;
  }
  for (int64_t n : {16, 32, 48, 64, 80, 128, 176})
    out.push_back(make("N=" + std::to_string(n) + " K=32", {T({n, 32}, i32), I(2)}));
  out.push_back(make("K=2", {T({64, 2}, i32), I(8)}));
  out.push_back(make("not contiguous", {T({64, 32}, i32, {1, 64}), I(4)}));
  out.push_back(make("error: 1-d", {T({64}, i32), I(2)}));
  out.push_back(make("error: uint8 weight", {T({64, 32}, u8), I(2)}));
  out.push_back(make("error: N not a multiple of 16", {T({24, 32}, i32), I(2)}));
  return out;
}

std::vector<Sample> weight_int4pack_mm_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, bf16})
      for (int64_t m : {1, 16, 512})
        out.push_back(
            make("linear 4096->4096 g128, M=" + std::to_string(m) + " " + dtype_code_str(t),
                 {T({m, 4096}, t), T({4096, 2048}, u8), I(128), T({32, 4096, 2}, t)}));
    return out;
  }
  for (DType t : {f32, bf16, f16})
    for (auto [m, n, g] : {std::tuple{1, 64, 32}, {5, 80, 64}, {6, 16, 32}})
      out.push_back(make("M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=128 g" +
                             std::to_string(g) + " " + dtype_code_str(t),
                         {T({m, 128}, t), T({n, 64}, u8), I(g), T({128 / g, n, 2}, t)}));
  out.push_back(
      make("K shorter than a group", {T({3, 16}, f32), T({64, 8}, u8), I(32), T({1, 64, 2}, f32)}));
  out.push_back(
      make("special values in A, f16 (f32 partial sums cannot overflow)",
           {T_fill({4, 64}, f16, "special"), T({32, 32}, u8), I(32), T({2, 32, 2}, f16)}));
  out.push_back(make("error: A f64", {T({3, 64}, DType::Float64), T({16, 32}, u8), I(32),
                                      T({2, 16, 2}, DType::Float64)}));
  out.push_back(
      make("error: B int8", {T({3, 64}, f32), T({16, 32}, i8), I(32), T({2, 16, 2}, f32)}));
  out.push_back(make("error: B.size(1) != K/2",
                     {T({3, 64}, f32), T({16, 16}, u8), I(32), T({2, 16, 2}, f32)}));
  out.push_back(
      make("error: group size 16", {T({3, 64}, f32), T({16, 32}, u8), I(16), T({4, 16, 2}, f32)}));
  out.push_back(make("error: qScaleAndZeros of the wrong shape",
                     {T({3, 64}, f32), T({16, 32}, u8), I(32), T({2, 8, 2}, f32)}));
  out.push_back(make("error: too few groups",
                     {T({3, 128}, f32), T({16, 64}, u8), I(32), T({2, 16, 2}, f32)}));
  return out;
}

std::vector<Sample> scaled_mm_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType e4 = DType::Float8E4M3FN, e5 = DType::Float8E5M2;
  if (ctx.performance) {
    for (int64_t m : {16, 512})
      out.push_back(
          make("linear 4096->4096 row-wise, M=" + std::to_string(m),
               {T({m, 4096}, e4), T_transposed(4096, 4096, e4), T({m, 1}, f32), T({1, 4096}, f32)},
               {{"out_dtype", DT(bf16)}}));
    return out;
  }
  for (DType t : {e4, e5}) {
    out.push_back(make("tensor-wise " + dtype_code_str(t),
                       {T({7, 32}, t), T_transposed(32, 16, t), T({}, f32), T({}, f32)},
                       {{"out_dtype", DT(f32)}}));
    out.push_back(make("row-wise " + dtype_code_str(t),
                       {T({7, 32}, t), T_transposed(32, 16, t), T({7, 1}, f32), T({1, 16}, f32)},
                       {{"out_dtype", DT(bf16)}}));
  }
  out.push_back(
      make("e4m3 x e5m2, bias, f16 out",
           {T({5, 48}, e4), T_transposed(48, 24, e5), T({}, f32), T({}, f32), T({24}, f16)},
           {{"out_dtype", DT(f16)}}));
  out.push_back(
      make("default out dtype is fp8", {T({4, 16}, e4), T({16, 8}, e4), T({1}, f32), T({1}, f32)}));
  out.push_back(make("decode M=1",
                     {T({1, 64}, e4), T_transposed(64, 32, e4), T({1, 1}, f32), T({1, 32}, f32)},
                     {{"out_dtype", DT(bf16)}}));
  out.push_back(
      make("error: bf16 operands", {T({4, 16}, bf16), T({16, 8}, bf16), T({}, f32), T({}, f32)}));
  out.push_back(
      make("error: inner sizes differ", {T({4, 16}, e4), T({8, 8}, e4), T({}, f32), T({}, f32)}));
  out.push_back(
      make("error: bf16 scales", {T({4, 16}, e4), T({16, 8}, e4), T({}, bf16), T({}, bf16)}));
  out.push_back(
      make("error: mixed scaling", {T({4, 16}, e4), T({16, 8}, e4), T({4, 1}, f32), T({}, f32)}));
  out.push_back(make("error: bias of the wrong size",
                     {T({4, 16}, e4), T({16, 8}, e4), T({}, f32), T({}, f32), T({7}, f32)},
                     {{"out_dtype", DT(f32)}}));
  out.push_back(make("error: int32 out dtype",
                     {T({4, 16}, e4), T({16, 8}, e4), T({}, f32), T({}, f32)},
                     {{"out_dtype", DT(i32)}}));
  return out;
}

}  // namespace crucible::quantized

// Samples of the fft family's transforms: every normalization, onesided both ways, 1-d to 3-d
// signals over one and several dims, odd and even lengths, non-contiguous inputs, empty
// batches, special values, and the error cases (dtype, dims, normalization).
#include <string>
#include <vector>

#include "ops/fft_internal.h"
#include "ops/samples.h"

namespace crucible {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

}  // namespace

std::vector<Sample> fft_r2c_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float64}) {
      out.push_back(make("rows [128, 2048] " + dtype_code_str(t),
                         {T({128, 2048}, t), L({1}), I(0), B(true)}));
      out.push_back(make("2-d [16, 128, 128] " + dtype_code_str(t),
                         {T({16, 128, 128}, t), L({1, 2}), I(2), B(true)}));
    }
    return out;
  }
  for (DType t : {DType::Float32, DType::Float64}) {
    const std::string d = " " + dtype_code_str(t);
    for (int64_t norm : {0, 1, 2}) {
      const std::string nd = " norm " + std::to_string(norm) + d;
      out.push_back(make("1-d even onesided" + nd, {T({8}, t), L({0}), I(norm), B(true)}));
      out.push_back(make("1-d odd full" + nd, {T({7}, t), L({0}), I(norm), B(false)}));
    }
    out.push_back(make("rows, odd, onesided" + d, {T({3, 9}, t), L({1}), I(0), B(true)}));
    out.push_back(
        make("2-d over both dims, onesided" + d, {T({4, 6}, t), L({0, 1}), I(2), B(true)}));
    out.push_back(make("2-d over both dims, full" + d, {T({5, 4}, t), L({0, 1}), I(1), B(false)}));
    out.push_back(
        make("special values" + d, {T_fill({3, 8}, t, "special"), L({1}), I(0), B(true)}));
  }
  const DType f32 = DType::Float32;
  out.push_back(make("3-d over dims 1, 2", {T({2, 3, 5}, f32), L({1, 2}), I(0), B(true)}));
  out.push_back(make("3-d over dims 0, 2", {T({3, 2, 4}, f32), L({0, 2}), I(2), B(true)}));
  out.push_back(
      make("3-d over dims 2, 0 (order given)", {T({3, 2, 4}, f32), L({2, 0}), I(0), B(true)}));
  out.push_back(make("non-last dim onesided", {T({6, 3}, f32), L({0}), I(0), B(true)}));
  out.push_back(make("length 1", {T({4, 1}, f32), L({1}), I(0), B(true)}));
  out.push_back(make("length 2", {T({3, 2}, f32), L({1}), I(1), B(false)}));
  out.push_back(make("transposed", {T_transposed(6, 5, f32), L({1}), I(0), B(true)}));
  out.push_back(make("sliced with a step", {T({4, 6}, f32, {12, 2}), L({1}), I(2), B(false)}));
  out.push_back(make("expanded (stride 0)", {T({4, 6}, f32, {0, 1}), L({0, 1}), I(0), B(true)}));
  out.push_back(make("empty batch", {T({0, 6}, f32), L({1}), I(0), B(true)}));
  out.push_back(make("long row (n = 100)", {T({2, 100}, DType::Float64), L({1}), I(1), B(true)}));
  out.push_back(make("error: f16 (CPU FFT is float/double only)",
                     {T({8}, DType::Float16), L({0}), I(0), B(true)}));
  out.back().cpu_only_error = true;  // cuFFT transforms f16 (power-of-two sizes)
  out.push_back(make("error: bf16", {T({8}, DType::BFloat16), L({0}), I(0), B(true)}));
  out.push_back(make("error: integral input", {T({8}, DType::Int64), L({0}), I(0), B(true)}));
  out.push_back(make("error: complex input", {T({8}, DType::Complex64), L({0}), I(0), B(true)}));
  out.push_back(make("error: dim out of range", {T({3, 4}, f32), L({2}), I(0), B(true)}));
  out.push_back(make("error: negative dim", {T({3, 4}, f32), L({-1}), I(0), B(true)}));
  out.push_back(make("error: repeated dim", {T({3, 4}, f32), L({1, 1}), I(0), B(true)}));
  out.push_back(make("error: no dims", {T({3, 4}, f32), L({}), I(0), B(true)}));
  out.push_back(make("error: normalization 3", {T({3, 4}, f32), L({1}), I(3), B(true)}));
  out.push_back(make("error: 0-d", {T({}, f32), L({0}), I(0), B(true)}));
  return out;
}

std::vector<Sample> fft_c2c_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType c64 = DType::Complex64, c128 = DType::Complex128;
  if (ctx.performance) {
    for (DType t : {c64, c128}) {
      out.push_back(make("rows [128, 1024] " + dtype_code_str(t),
                         {T({128, 1024}, t), L({1}), I(0), B(true)}));
      out.push_back(make("2-d [8, 128, 192] (FNet-like) " + dtype_code_str(t),
                         {T({8, 128, 192}, t), L({1, 2}), I(0), B(true)}));
    }
    return out;
  }
  for (DType t : {c64, c128}) {
    const std::string d = " " + dtype_code_str(t);
    for (int64_t norm : {0, 1, 2}) {
      const std::string nd = " norm " + std::to_string(norm) + d;
      out.push_back(make("1-d forward" + nd, {T({8}, t), L({0}), I(norm), B(true)}));
      out.push_back(make("1-d backward" + nd, {T({7}, t), L({0}), I(norm), B(false)}));
    }
    out.push_back(make("2-d over both dims forward" + d, {T({4, 6}, t), L({0, 1}), I(0), B(true)}));
    out.push_back(
        make("3-d over dims 1, 2 backward" + d, {T({2, 5, 6}, t), L({1, 2}), I(2), B(false)}));
    out.push_back(
        make("special values" + d, {T_fill({3, 8}, t, "special"), L({1}), I(0), B(true)}));
  }
  out.push_back(make("FNet-like [1, 16, 24] over dims 1, 2",
                     {T({1, 16, 24}, c64), L({1, 2}), I(0), B(true)}));
  out.push_back(make("non-last dim", {T({6, 3}, c64), L({0}), I(1), B(false)}));
  out.push_back(make("transposed", {T_transposed(6, 5, c64), L({1}), I(0), B(true)}));
  out.push_back(make("sliced with a step", {T({4, 6}, c64, {12, 2}), L({1}), I(2), B(false)}));
  out.push_back(make("expanded (stride 0)", {T({4, 6}, c128, {0, 1}), L({0, 1}), I(0), B(true)}));
  out.push_back(make("no dims (a copy)", {T({3, 4}, c64), L({}), I(0), B(true)}));
  out.push_back(make("no dims, 0-d", {T({}, c64), L({}), I(2), B(true)}));
  out.push_back(make("empty batch", {T({0, 6}, c64), L({1}), I(0), B(true)}));
  out.push_back(make("length 1", {T({4, 1}, c64), L({1}), I(1), B(true)}));
  out.push_back(make("error: c32 (CPU FFT is float/double only)",
                     {T({8}, DType::Complex32), L({0}), I(0), B(true)}));
  out.back().cpu_only_error = true;  // cuFFT transforms c32 (power-of-two sizes)
  out.push_back(make("error: real input", {T({8}, DType::Float32), L({0}), I(0), B(true)}));
  out.push_back(make("error: dim out of range", {T({3, 4}, c64), L({2}), I(0), B(true)}));
  out.push_back(make("error: negative dim", {T({3, 4}, c64), L({-2}), I(0), B(true)}));
  out.push_back(make("error: repeated dim", {T({3, 4}, c64), L({0, 0}), I(0), B(true)}));
  out.push_back(make("error: normalization -1", {T({3, 4}, c64), L({1}), I(-1), B(true)}));
  return out;
}

// Single-dim transforms only among the value cases: for a multi-dim c2r of an input that is
// not Hermitian-symmetric, MKL's result differs from numpy's/pocketfft's (ATen's own note).
std::vector<Sample> fft_c2r_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType c64 = DType::Complex64, c128 = DType::Complex128;
  if (ctx.performance) {
    for (DType t : {c64, c128})
      out.push_back(make("rows [128, 1025] -> 2048 " + dtype_code_str(t),
                         {T({128, 1025}, t), L({1}), I(2), I(2048)}));
    return out;
  }
  for (DType t : {c64, c128}) {
    const std::string d = " " + dtype_code_str(t);
    for (int64_t norm : {0, 1, 2}) {
      const std::string nd = " norm " + std::to_string(norm) + d;
      out.push_back(make("even length 8" + nd, {T({5}, t), L({0}), I(norm), I(8)}));
      out.push_back(make("odd length 7" + nd, {T({4}, t), L({0}), I(norm), I(7)}));
    }
    out.push_back(make("rows" + d, {T({3, 5}, t), L({1}), I(2), I(8)}));
    out.push_back(make("special values" + d, {T_fill({3, 5}, t, "special"), L({1}), I(0), I(8)}));
  }
  out.push_back(make("non-last dim", {T({4, 3}, c64), L({0}), I(0), I(6)}));
  out.push_back(
      make("more input than needed (extra entries ignored)", {T({2, 6}, c64), L({1}), I(0), I(4)}));
  out.push_back(make("length 1", {T({3, 1}, c64), L({1}), I(0), I(1)}));
  out.push_back(make("length 2 (Nyquist only)", {T({3, 2}, c64), L({1}), I(0), I(2)}));
  out.push_back(make("transposed", {T_transposed(5, 4, c64), L({1}), I(0), I(6)}));
  out.push_back(make("sliced with a step", {T({4, 10}, c64, {20, 2}), L({1}), I(1), I(8)}));
  out.push_back(make("expanded (stride 0)", {T({4, 5}, c128, {0, 1}), L({1}), I(0), I(9)}));
  out.push_back(make("empty batch", {T({0, 5}, c64), L({1}), I(0), I(8)}));
  out.push_back(make("error: c32", {T({5}, DType::Complex32), L({0}), I(0), I(8)}));
  out.back().cpu_only_error = true;  // cuFFT transforms c32 (power-of-two sizes)
  out.push_back(make("error: real input", {T({5}, DType::Float32), L({0}), I(0), I(8)}));
  out.push_back(make("error: dim out of range", {T({3, 5}, c64), L({2}), I(0), I(8)}));
  out.push_back(make("error: no dims", {T({3, 5}, c64), L({}), I(0), I(8)}));
  out.push_back(make("error: normalization 5", {T({3, 5}, c64), L({1}), I(5), I(8)}));
  return out;
}

}  // namespace crucible

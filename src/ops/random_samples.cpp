// Samples of the random family: sizes large enough for the distribution checks, small, empty
// and 0-d ones for the shapes, every dtype (with the ones that raise), p at 0, 1 and between,
// out-of-range probabilities, eval-mode dropout.
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ops/creation_internal.h"
#include "ops/random_internal.h"
#include "ops/samples.h"

namespace crucible::random_samples {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

using Kwargs = std::vector<std::pair<std::string, Literal>>;

Kwargs traced_kwargs(DType t) {
  return {{"dtype", DT(t)},
          {"layout", Literal::symbol("torch.strided")},
          {"device", S("cuda")},
          {"pin_memory", B(false)}};
}

}  // namespace

// rand and randn: moderately large sizes for the moment checks, small and empty ones for the
// shapes, every floating dtype, and the dtypes that raise.
std::vector<Sample> sized_random_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      out.push_back(
          make("[4096, 4096] " + dtype_code_str(t), {L({4096, 4096})}, {{"dtype", DT(t)}}));
    return out;
  }
  out.push_back(make("4096 values, default dtype", {L({4096})}));
  out.push_back(make("[64, 64]", {L({64, 64})}));
  out.push_back(make("[16, 16, 16]", {L({16, 16, 16})}));
  for (DType t : floating_dtypes())
    out.push_back(make("[64, 64] " + dtype_code_str(t), {L({64, 64})}, {{"dtype", DT(t)}}));
  out.push_back(make("0-d", {L({})}));
  out.push_back(make("small [5]", {L({5})}));
  out.push_back(make("empty [0]", {L({0})}));
  out.push_back(make("empty [3, 0]", {L({3, 0})}, {{"dtype", DT(DType::Float16)}}));
  out.push_back(make("as traced (device 'cuda')", {L({32, 128})}, traced_kwargs(DType::Float16)));
  for (DType t : {DType::Int64, DType::Int32, DType::Bool, DType::UInt8})
    out.push_back(make("error: dtype " + dtype_code_str(t), {L({8})}, {{"dtype", DT(t)}}));
  out.push_back(make("error: negative size", {L({2, -3})}));
  return out;
}

std::vector<Sample> randperm_samples(const SampleContext& ctx) {
  if (ctx.performance) return {make("n = 2^22", {I(int64_t{1} << 22)})};
  std::vector<Sample> out;
  for (int64_t n : {0, 1, 2, 5, 16, 100, 4096})
    out.push_back(make("n = " + std::to_string(n), {I(n)}));
  const std::pair<DType, int64_t> dtypes[] = {
      {DType::UInt8, 256},    {DType::Int8, 128},     {DType::Int16, 1000},
      {DType::Int32, 1000},   {DType::Int64, 1000},   {DType::Float16, 2049},
      {DType::BFloat16, 200}, {DType::Float32, 1000}, {DType::Float64, 1000}};
  for (auto [t, n] : dtypes)
    out.push_back(make("dtype " + dtype_code_str(t) + ", n = " + std::to_string(n), {I(n)},
                       {{"dtype", DT(t)}}));
  out.push_back(make("as traced (device 'cuda')", {I(64)}, traced_kwargs(DType::Int64)));
  out.push_back(make("error: n = -1", {I(-1)}));
  out.push_back(make("error: u8, n = 257", {I(257)}, {{"dtype", DT(DType::UInt8)}}));
  out.push_back(make("error: i8, n = 129", {I(129)}, {{"dtype", DT(DType::Int8)}}));
  out.push_back(make("error: f16, n = 2050", {I(2050)}, {{"dtype", DT(DType::Float16)}}));
  out.push_back(make("error: bool", {I(2)}, {{"dtype", DT(DType::Bool)}}));
  return out;
}

std::vector<Sample> native_dropout_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      out.push_back(make("[4096, 4096] " + dtype_code_str(t) + ", p = 0.1",
                         {T({4096, 4096}, t), F(0.1), B(true)}));
    return out;
  }
  const Literal x = T({64, 64}, DType::Float32);
  for (double p : {0.5, 0.1, 0.9})
    out.push_back(make("train, p = " + cases::python_float_repr(p), {x, F(p), B(true)}));
  out.push_back(make("train, p = 0 keeps everything", {x, F(0.0), B(true)}));
  out.push_back(make("train, p = 1 drops everything", {x, F(1.0), B(true)}));
  out.push_back(make("train None means training", {x, F(0.3), None()}));
  out.push_back(make("eval mode", {x, F(0.5), B(false)}));
  out.push_back(make("eval mode ignores p outside [0, 1]", {x, F(1.5), B(false)}));
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float64})
    out.push_back(make("train " + dtype_code_str(t), {T({64, 64}, t), F(0.2), B(true)}));
  out.push_back(make("transposed", {T_transposed(64, 48, DType::Float32), F(0.4), B(true)}));
  out.push_back(
      make("sliced with a step", {T({64, 40}, DType::Float16, {80, 2}), F(0.4), B(true)}));
  out.push_back(
      make("expanded (stride 0)", {T({64, 64}, DType::Float32, {0, 1}), F(0.4), B(true)}));
  out.push_back(make("0-d", {T({}, DType::Float32), F(0.5), B(true)}));
  out.push_back(make("small", {T({5}, DType::Float32), F(0.5), B(true)}));
  out.push_back(make("empty", {T({0, 3}, DType::Float32), F(0.5), B(true)}));
  out.push_back(
      make("special values", {T_fill({4096}, DType::Float32, "special"), F(0.5), B(true)}));
  out.push_back(
      make("special values, p = 1", {T_fill({96}, DType::Float16, "special"), F(1.0), B(true)}));
  out.push_back(make("eval mode i64", {T({8, 8}, DType::Int64), F(0.5), B(false)}));
  out.push_back(make("eval mode bool", {T({8, 8}, DType::Bool), F(0.5), B(false)}));
  out.push_back(make("error: train i64", {T({8, 8}, DType::Int64), F(0.5), B(true)}));
  out.push_back(make("error: train bool", {T({8, 8}, DType::Bool), F(0.5), B(true)}));
  out.push_back(make("error: p = 1.5", {x, F(1.5), B(true)}));
  out.push_back(make("error: p = -0.5", {x, F(-0.5), B(true)}));
  return out;
}

std::vector<Sample> bernoulli_p_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16})
      out.push_back(make("[4096, 4096] " + dtype_code_str(t), {T({4096, 4096}, t), F(0.5)}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(make("[64, 64] " + dtype_code_str(t) + ", p = 0.3", {T({64, 64}, t), F(0.3)}));
  out.push_back(make("p = 0", {T({64, 64}, DType::Float32), F(0.0)}));
  out.push_back(make("p = 1", {T({64, 64}, DType::Float32), F(1.0)}));
  out.push_back(make("p = 0.99", {T({4096}, DType::Float64), F(0.99)}));
  out.push_back(make("transposed", {T_transposed(64, 48, DType::Float32), F(0.5)}));
  out.push_back(make("expanded (stride 0)", {T({64, 64}, DType::Float32, {0, 1}), F(0.5)}));
  out.push_back(make("0-d", {T({}, DType::Float32), F(0.5)}));
  out.push_back(make("empty", {T({0, 4}, DType::Float32), F(0.5)}));
  out.push_back(make("error: p = 1.3", {T({8}, DType::Float32), F(1.3)}));
  out.push_back(make("error: p = -0.1", {T({8}, DType::Float32), F(-0.1)}));
  return out;
}

Literal probabilities(const Shape& shape, DType t) { return T_fill(shape, t, "uniform"); }

std::vector<Sample> bernoulli_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16})
      out.push_back(make("[4096, 4096] " + dtype_code_str(t), {probabilities({4096, 4096}, t)}));
    return out;
  }
  for (DType t : floating_dtypes())
    out.push_back(make("[64, 64] " + dtype_code_str(t), {probabilities({64, 64}, t)}));
  out.push_back(make("4096 values", {probabilities({4096}, DType::Float32)}));
  Literal tr = T_transposed(64, 48, DType::Float32);
  tr.tensor.fill = "uniform";
  out.push_back(make("transposed", {tr}));
  Literal ex = T({64, 64}, DType::Float32, {0, 1});
  ex.tensor.fill = "uniform";
  out.push_back(make("expanded (stride 0)", {ex}));
  out.push_back(make("0-d", {probabilities({}, DType::Float32)}));
  out.push_back(make("empty", {probabilities({0, 4}, DType::Float32)}));
  out.push_back(make("error: probabilities outside [0, 1] (inf, negative)",
                     {T_fill({16}, DType::Float32, "special")}));
  out.push_back(make("error: i64 probabilities", {T({8}, DType::Int64)}));
  out.push_back(make("error: bool probabilities", {T({8}, DType::Bool)}));
  return out;
}

}  // namespace crucible::random_samples

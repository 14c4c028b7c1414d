// Samples of the shape family's views (shape.cpp). Each generator covers every dtype on an
// ordinary case, 0-d and empty inputs, non-contiguous inputs (transposed, sliced with a step,
// expanded with stride 0, a storage offset), negative dims, keyword/default arguments and the
// error conditions ("error: ..."). Performance cases time the call on model-like shapes (the
// views move no data; the _copy variants, which share these samples, do).
#include <string>
#include <vector>

#include "ops/samples.h"
#include "ops/shape_internal.h"

namespace crucible::shape_ops {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)

constexpr DType f32 = DType::Float32;
constexpr DType f16 = DType::Float16;
constexpr DType i64 = DType::Int64;

// The same case over every dtype: `make_args(t)` gives the arguments.
template <typename Fn>
void every_dtype(std::vector<Sample>& out, const std::string& label, Fn make_args) {
  for (DType t : all_numeric_dtypes())
    out.push_back(make(label + " " + dtype_code_str(t), make_args(t)));
}

// Large inputs for the _copy variants (and the call overhead of views).
std::vector<Sample> perf(std::vector<Literal> (*args)(DType t), const std::string& label) {
  std::vector<Sample> out;
  for (DType t : {f32, f16}) out.push_back(make(label + " " + dtype_code_str(t), args(t)));
  return out;
}

// [2, 3, 4] stored as a slice (stride 2) of a larger row-major tensor: [2, 3, 8] every other.
Literal sliced_234(DType t) { return T({2, 3, 4}, t, {24, 8, 2}); }

}  // namespace

std::vector<Sample> alias_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf([](DType t) { return std::vector<Literal>{T({4096, 1024}, t)}; }, "[4096, 1024]");
  std::vector<Sample> out;
  every_dtype(out, "2-d", [](DType t) { return std::vector<Literal>{T({3, 4}, t)}; });
  out.push_back(make("0-d", {T({}, f32)}));
  out.push_back(make("empty", {T({0, 3}, f32)}));
  out.push_back(make("transposed", {T_transposed(4, 5, f32)}));
  out.push_back(make("sliced", {sliced_234(f16)}));
  out.push_back(make("expanded (stride 0)", {T({4, 5}, f32, {0, 1})}));
  out.push_back(make("special values", {T_fill({24}, f32, "special")}));
  return out;
}

std::vector<Sample> unsafe_view_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({64, 128, 768}, t), L({-1, 768})};
        },
        "[64, 128, 768] -> [-1, 768]");
  std::vector<Sample> out;
  every_dtype(out, "flatten", [](DType t) { return std::vector<Literal>{T({4, 6}, t), L({24})}; });
  out.push_back(make("split with -1", {T({24}, f32), L({2, -1, 4})}));
  out.push_back(make("0-d to [1]", {T({}, f32), L({1})}));
  out.push_back(make("[1] to 0-d", {T({1}, i64), L({})}));
  out.push_back(make("empty", {T({0, 4}, f32), L({4, 0})}));
  out.push_back(make("transposed, unit dim added", {T_transposed(4, 6, f32), L({4, 6, 1})}));
  out.push_back(make("expanded, split last dim", {T({4, 6}, f32, {0, 1}), L({4, 3, 2})}));
  out.push_back(make("error: transposed flattened", {T_transposed(4, 6, f32), L({24})}));
  out.push_back(make("error: numel differs", {T({4, 6}, f32), L({5, 5})}));
  return out;
}

std::vector<Sample> as_strided_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({4096, 1024}, t), L({1024, 4096}), L({1, 1024}), I(0)};
        },
        "transpose [4096, 1024]");
  std::vector<Sample> out;
  every_dtype(out, "transpose by strides", [](DType t) {
    return std::vector<Literal>{T({3, 4}, t), L({4, 3}), L({1, 4})};
  });
  out.push_back(make("offset given", {T({3, 4}, f32), L({2, 2}), L({4, 1}), I(5)}));
  out.push_back(
      make("offset keyword", {T({3, 4}, f32), L({3}), L({5})}, {{"storage_offset", I(1)}}));
  out.push_back(make("offset None", {T({3, 4}, f32), L({2, 3}), L({1, 2}), None()}));
  out.push_back(make("overlapping windows", {T({10}, f32), L({4, 3}), L({2, 1})}));
  out.push_back(make("stride 0 (broadcast)", {T({5}, f32), L({3, 5}), L({0, 1})}));
  out.push_back(make("to 0-d", {T({6}, f32), L({}), L({}), I(3)}));
  out.push_back(make("from 0-d", {T({}, f32), L({1, 1}), L({0, 0})}));
  out.push_back(make("empty result", {T({6}, f32), L({0, 4}), L({4, 1})}));
  out.push_back(make("empty input, empty result", {T({0}, f32), L({0}), L({1})}));
  out.push_back(make("non-contiguous input", {T_transposed(4, 6, f16), L({6, 4}), L({4, 1})}));
  out.push_back(
      make("sliced input (offset absolute)", {sliced_234(f32), L({3, 2}), L({2, 8}), I(2)}));
  out.push_back(make("error: out of storage", {T({3, 4}, f32), L({4, 4}), L({4, 1})}));
  out.push_back(make("error: offset out of storage", {T({3, 4}, f32), L({2, 2}), L({4, 1}), I(8)}));
  out.push_back(make("error: negative stride", {T({3, 4}, f32), L({3}), L({-1}), I(2)}));
  out.push_back(make("error: stride count differs", {T({3, 4}, f32), L({3, 4}), L({1})}));
  out.push_back(make("error: negative offset", {T({3, 4}, f32), L({2}), L({1}), I(-1)}));
  return out;
}

std::vector<Sample> expand_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({1, 1024}, t), L({4096, 1024})};
        },
        "row to [4096, 1024]");
  std::vector<Sample> out;
  every_dtype(out, "expand unit dim", [](DType t) {
    return std::vector<Literal>{T({3, 1}, t), L({3, 4})};
  });
  out.push_back(make("new leading dims", {T({3}, f32), L({2, 4, 3})}));
  out.push_back(make("-1 keeps a size", {T({3, 1}, f32), L({2, -1, 5})}));
  out.push_back(make("0-d to [2, 3]", {T({}, f32), L({2, 3})}));
  out.push_back(make("0-d to 0-d", {T({}, i64), L({})}));
  out.push_back(make("same shape", {T({2, 3}, f32), L({2, 3})}));
  out.push_back(make("to empty", {T({1, 3}, f32), L({0, 3})}));
  out.push_back(make("empty input", {T({0, 1}, f32), L({0, 4})}));
  out.push_back(make("transposed input", {T({1, 4}, f32, {1, 1}), L({3, 4})}));
  out.push_back(make("expanded input", {T({3, 1, 4}, f32, {0, 4, 1}), L({3, 2, 4})}));
  out.push_back(make("sliced input", {T({2, 1, 4}, f32, {8, 8, 2}), L({5, 2, 3, 4})}));
  out.push_back(make("implicit keyword", {T({3, 1}, f32), L({3, 2})}, {{"implicit", B(true)}}));
  out.push_back(make("error: size not 1", {T({3, 2}, f32), L({3, 4})}));
  out.push_back(make("error: fewer sizes", {T({3, 1}, f32), L({4})}));
  out.push_back(make("error: -1 in a new leading dim", {T({3}, f32), L({-1, 3})}));
  out.push_back(make("error: negative size", {T({3, 1}, f32), L({3, -2})}));
  return out;
}

std::vector<Sample> squeeze_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({4096, 1, 1024}, t)};
        },
        "[4096, 1, 1024]");
  std::vector<Sample> out;
  every_dtype(out, "unit dims", [](DType t) { return std::vector<Literal>{T({1, 3, 1, 4}, t)}; });
  out.push_back(make("no unit dims", {T({2, 3}, f32)}));
  out.push_back(make("all unit dims", {T({1, 1}, f32)}));
  out.push_back(make("0-d", {T({}, f32)}));
  out.push_back(make("empty with unit dim", {T({1, 0, 1}, f32)}));
  out.push_back(make("non-contiguous", {T({3, 1, 4}, f32, {1, 99, 3})}));
  out.push_back(make("expanded", {T({1, 5, 1, 2}, f16, {7, 0, 3, 1})}));
  out.push_back(make("sliced", {T({2, 1, 3}, f32, {12, 6, 2})}));
  return out;
}

std::vector<Sample> squeeze_dim_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({4096, 1, 1024}, t), I(1)};
        },
        "[4096, 1, 1024] dim 1");
  std::vector<Sample> out;
  every_dtype(out, "unit dim", [](DType t) { return std::vector<Literal>{T({3, 1, 4}, t), I(1)}; });
  out.push_back(make("dim not of size 1", {T({3, 1, 4}, f32), I(0)}));
  out.push_back(make("negative dim", {T({3, 4, 1}, f32), I(-1)}));
  out.push_back(make("0-d dim 0", {T({}, f32), I(0)}));
  out.push_back(make("0-d dim -1", {T({}, f32), I(-1)}));
  out.push_back(make("empty", {T({0, 1}, f32), I(1)}));
  out.push_back(make("non-contiguous", {T({4, 1, 3}, f32, {1, 50, 4}), I(1)}));
  out.push_back(make("expanded", {T({5, 1}, f32, {0, 1}), I(-1)}));
  out.push_back(make("error: dim out of range", {T({3, 1}, f32), I(2)}));
  out.push_back(make("error: 0-d dim 1", {T({}, f32), I(1)}));
  return out;
}

std::vector<Sample> squeeze_dims_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({1, 4096, 1, 1024}, t), L({0, 2})};
        },
        "[1, 4096, 1, 1024] dims [0, 2]");
  std::vector<Sample> out;
  every_dtype(out, "two unit dims", [](DType t) {
    return std::vector<Literal>{T({1, 3, 1, 4}, t), L({0, 2})};
  });
  out.push_back(make("mixed sizes", {T({1, 3, 1}, f32), L({0, 1})}));
  out.push_back(make("negative dims", {T({1, 3, 1}, f32), L({-1, -3})}));
  out.push_back(make("no dims", {T({1, 3}, f32), L({})}));
  out.push_back(make("0-d", {T({}, f32), L({0})}));
  out.push_back(make("empty", {T({1, 0}, f32), L({0, 1})}));
  out.push_back(make("non-contiguous", {T({1, 4, 1}, f32, {1, 2, 9}), L({2})}));
  out.push_back(make("error: repeated dim", {T({1, 3, 1}, f32), L({0, 0})}));
  out.push_back(make("error: repeated after wrapping", {T({1, 3, 1}, f32), L({2, -1})}));
  out.push_back(make("error: dim out of range", {T({1, 3}, f32), L({2})}));
  return out;
}

std::vector<Sample> unsqueeze_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({4096, 1024}, t), I(1)};
        },
        "[4096, 1024] dim 1");
  std::vector<Sample> out;
  every_dtype(out, "middle", [](DType t) { return std::vector<Literal>{T({3, 4}, t), I(1)}; });
  out.push_back(make("front", {T({3, 4}, f32), I(0)}));
  out.push_back(make("end", {T({3, 4}, f32), I(2)}));
  out.push_back(make("negative end", {T({3, 4}, f32), I(-1)}));
  out.push_back(make("negative front", {T({3, 4}, f32), I(-3)}));
  out.push_back(make("0-d", {T({}, f32), I(0)}));
  out.push_back(make("0-d dim -1", {T({}, i64), I(-1)}));
  out.push_back(make("empty", {T({0, 2}, f32), I(1)}));
  out.push_back(make("transposed", {T_transposed(3, 5, f32), I(1)}));
  out.push_back(make("sliced", {sliced_234(f32), I(2)}));
  out.push_back(make("expanded", {T({4, 3}, f16, {0, 1}), I(0)}));
  out.push_back(make("error: dim out of range", {T({3, 4}, f32), I(3)}));
  out.push_back(make("error: negative dim out of range", {T({3, 4}, f32), I(-4)}));
  return out;
}

std::vector<Sample> diagonal_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({64, 512, 512}, t), I(0), I(1), I(2)};
        },
        "batched [64, 512, 512]");
  std::vector<Sample> out;
  every_dtype(out, "square", [](DType t) { return std::vector<Literal>{T({4, 4}, t)}; });
  out.push_back(make("wide, offset 1", {T({3, 5}, f32), I(1)}));
  out.push_back(make("tall, offset -2", {T({5, 3}, f32), I(-2)}));
  out.push_back(make("offset past the end", {T({3, 4}, f32), I(4)}));
  out.push_back(make("offset past the end, negative", {T({3, 4}, f32), I(-5)}));
  out.push_back(make("3-d dims 0, 2", {T({3, 2, 4}, f32), I(0), I(0), I(2)}));
  out.push_back(make("3-d negative dims, reversed", {T({3, 2, 4}, f32), I(1), I(-1), I(0)}));
  out.push_back(
      make("keywords", {T({2, 3, 3}, f32)}, {{"dim1", I(1)}, {"dim2", I(2)}, {"offset", I(-1)}}));
  out.push_back(make("empty", {T({0, 3}, f32)}));
  out.push_back(make("transposed", {T_transposed(4, 6, f16), I(1)}));
  out.push_back(make("sliced", {sliced_234(f32), I(1), I(1), I(2)}));
  out.push_back(make("expanded", {T({4, 4}, f32, {0, 1}), I(-1)}));
  out.push_back(make("error: identical dims", {T({3, 3}, f32), I(0), I(1), I(-1)}));
  out.push_back(make("error: 1-d", {T({3}, f32)}));
  out.push_back(make("error: dim out of range", {T({3, 3}, f32), I(0), I(0), I(2)}));
  return out;
}

std::vector<Sample> select_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({64, 128, 768}, t), I(1), I(0)};
        },
        "CLS token [64, 128, 768]");
  std::vector<Sample> out;
  every_dtype(out, "row", [](DType t) { return std::vector<Literal>{T({3, 4}, t), I(0), I(2)}; });
  out.push_back(make("column", {T({3, 4}, f32), I(1), I(3)}));
  out.push_back(make("negative index", {T({3, 4}, f32), I(0), I(-1)}));
  out.push_back(make("negative dim", {T({2, 3, 4}, f32), I(-2), I(1)}));
  out.push_back(make("1-d to 0-d", {T({5}, i64), I(0), I(4)}));
  out.push_back(make("empty other dim", {T({3, 0}, f32), I(0), I(1)}));
  out.push_back(make("transposed", {T_transposed(4, 6, f32), I(1), I(2)}));
  out.push_back(make("sliced", {sliced_234(f16), I(2), I(3)}));
  out.push_back(make("expanded", {T({4, 3}, f32, {0, 1}), I(0), I(3)}));
  out.push_back(make("error: index out of range", {T({3, 4}, f32), I(0), I(3)}));
  out.push_back(make("error: negative index out of range", {T({3, 4}, f32), I(1), I(-5)}));
  out.push_back(make("error: 0-d", {T({}, f32), I(0), I(0)}));
  out.push_back(make("error: dim out of range", {T({3, 4}, f32), I(2), I(0)}));
  out.push_back(make("error: empty dim", {T({0, 4}, f32), I(0), I(0)}));
  return out;
}

std::vector<Sample> slice_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({64, 128, 768}, t), I(2), I(0), I(384), I(1)};
        },
        "half the features [64, 128, 768]");
  std::vector<Sample> out;
  every_dtype(out, "range", [](DType t) {
    return std::vector<Literal>{T({6, 4}, t), I(0), I(1), I(5)};
  });
  out.push_back(make("defaults (whole tensor)", {T({6, 4}, f32)}));
  out.push_back(make("start and end None", {T({6, 4}, f32), I(1), None(), None(), I(2)}));
  out.push_back(make("step 3", {T({10}, f32), I(0), I(1), I(10), I(3)}));
  out.push_back(make("negative start and end", {T({8}, f32), I(0), I(-5), I(-1)}));
  out.push_back(make("end beyond size (clamped)", {T({6, 4}, f32), I(1), I(2), I(100)}));
  out.push_back(make("INT64_MAX end", {T({6, 4}, f32), I(0), I(3), I(INT64_MAX)}));
  out.push_back(make("start below -size (clamped)", {T({6}, f32), I(0), I(-100), I(3)}));
  out.push_back(make("start after end (empty)", {T({6}, f32), I(0), I(4), I(2)}));
  out.push_back(make("start beyond size (empty)", {T({6}, f32), I(0), I(9), I(12)}));
  out.push_back(make("negative dim, keywords", {T({3, 8}, f32)},
                     {{"dim", I(-1)}, {"start", I(2)}, {"step", I(2)}}));
  out.push_back(make("empty input", {T({0, 3}, f32), I(0), I(0), I(2)}));
  out.push_back(make("transposed", {T_transposed(4, 6, f32), I(1), I(1), I(5), I(2)}));
  out.push_back(make("sliced", {sliced_234(f16), I(2), I(1), I(4), I(2)}));
  out.push_back(make("expanded", {T({4, 3}, f32, {0, 1}), I(0), I(1), I(3)}));
  out.push_back(make("error: step 0", {T({6}, f32), I(0), I(0), I(6), I(0)}));
  out.push_back(make("error: negative step", {T({6}, f32), I(0), I(5), I(0), I(-1)}));
  out.push_back(make("error: dim out of range", {T({6}, f32), I(1)}));
  out.push_back(make("error: 0-d", {T({}, f32)}));
  return out;
}

std::vector<Sample> split_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({64, 128, 2304}, t), I(768), I(-1)};
        },
        "qkv split [64, 128, 2304]");
  std::vector<Sample> out;
  every_dtype(out, "even", [](DType t) { return std::vector<Literal>{T({6, 4}, t), I(2)}; });
  out.push_back(make("uneven (last chunk shorter)", {T({7, 3}, f32), I(3)}));
  out.push_back(make("chunk larger than dim", {T({3, 2}, f32), I(5)}));
  out.push_back(make("dim 1", {T({2, 7}, f32), I(2), I(1)}));
  out.push_back(make("negative dim keyword", {T({2, 3, 5}, f32), I(2)}, {{"dim", I(-1)}}));
  out.push_back(make("empty dim, split size 0", {T({0, 3}, f32), I(0)}));
  out.push_back(make("empty dim, split size 2", {T({0, 3}, f32), I(2)}));
  out.push_back(make("transposed", {T_transposed(4, 6, f32), I(4), I(1)}));
  out.push_back(make("expanded", {T({5, 3}, f16, {0, 1}), I(2)}));
  out.push_back(make("error: split size 0 on non-empty dim", {T({3}, f32), I(0)}));
  out.push_back(make("error: negative split size", {T({3}, f32), I(-1)}));
  out.push_back(make("error: 0-d", {T({}, f32), I(1)}));
  out.push_back(make("error: dim out of range", {T({3}, f32), I(1), I(1)}));
  return out;
}

std::vector<Sample> split_with_sizes_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({64, 128, 2304}, t), L({768, 768, 768}), I(-1)};
        },
        "qkv split [64, 128, 2304]");
  std::vector<Sample> out;
  every_dtype(out, "three parts", [](DType t) {
    return std::vector<Literal>{T({6, 2}, t), L({1, 2, 3})};
  });
  out.push_back(make("zero-size part", {T({5, 2}, f32), L({2, 0, 3})}));
  out.push_back(make("one part", {T({5, 2}, f32), L({5})}));
  out.push_back(make("dim -1", {T({2, 7}, f32), L({3, 4}), I(-1)}));
  out.push_back(make("keyword dim", {T({2, 7}, f32), L({4, 3})}, {{"dim", I(1)}}));
  out.push_back(make("empty dim", {T({0, 3}, f32), L({0, 0})}));
  out.push_back(make("transposed", {T_transposed(4, 6, f32), L({1, 5}), I(1)}));
  out.push_back(make("sliced", {sliced_234(f16), L({3, 1}), I(2)}));
  out.push_back(make("error: sizes sum too small", {T({5}, f32), L({2, 2})}));
  out.push_back(make("error: sizes sum too large", {T({5}, f32), L({3, 3})}));
  out.push_back(make("error: negative size", {T({5}, f32), L({6, -1})}));
  out.push_back(make("error: 0-d", {T({}, f32), L({1})}));
  return out;
}

std::vector<Sample> unbind_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({3, 64, 12, 128, 64}, t)};
        },
        "qkv unbind [3, 64, 12, 128, 64]");
  std::vector<Sample> out;
  every_dtype(out, "rows", [](DType t) { return std::vector<Literal>{T({3, 4}, t)}; });
  out.push_back(make("dim 1", {T({3, 4}, f32), I(1)}));
  out.push_back(make("negative dim keyword", {T({2, 3, 4}, f32)}, {{"dim", I(-1)}}));
  out.push_back(make("1-d to 0-d", {T({4}, i64)}));
  out.push_back(make("empty dim (no outputs)", {T({0, 3}, f32)}));
  out.push_back(make("empty other dim", {T({2, 0}, f32)}));
  out.push_back(make("transposed", {T_transposed(3, 5, f32), I(1)}));
  out.push_back(make("expanded", {T({3, 4}, f16, {0, 1})}));
  out.push_back(make("error: 0-d", {T({}, f32)}));
  out.push_back(make("error: dim out of range", {T({3, 4}, f32), I(2)}));
  return out;
}

std::vector<Sample> transpose_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({64, 128, 12, 64}, t), I(1), I(2)};
        },
        "heads [64, 128, 12, 64]");
  std::vector<Sample> out;
  every_dtype(out, "2-d", [](DType t) { return std::vector<Literal>{T({3, 4}, t), I(0), I(1)}; });
  out.push_back(make("3-d outer", {T({2, 3, 4}, f32), I(0), I(2)}));
  out.push_back(make("negative dims", {T({2, 3, 4}, f32), I(-1), I(-2)}));
  out.push_back(make("same dim", {T({2, 3}, f32), I(1), I(-1)}));
  out.push_back(make("0-d", {T({}, f32), I(0), I(-1)}));
  out.push_back(make("empty", {T({0, 3}, f32), I(0), I(1)}));
  out.push_back(make("transposed input", {T_transposed(4, 6, f32), I(0), I(1)}));
  out.push_back(make("sliced", {sliced_234(f16), I(2), I(0)}));
  out.push_back(make("expanded", {T({4, 3}, f32, {0, 1}), I(0), I(1)}));
  out.push_back(make("error: dim out of range", {T({2, 3}, f32), I(0), I(2)}));
  return out;
}

std::vector<Sample> t_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf([](DType t) { return std::vector<Literal>{T({4096, 1024}, t)}; }, "[4096, 1024]");
  std::vector<Sample> out;
  every_dtype(out, "2-d", [](DType t) { return std::vector<Literal>{T({3, 4}, t)}; });
  out.push_back(make("1-d", {T({5}, f32)}));
  out.push_back(make("0-d", {T({}, f32)}));
  out.push_back(make("empty", {T({0, 3}, f32)}));
  out.push_back(make("transposed", {T_transposed(4, 6, f32)}));
  out.push_back(make("sliced", {T({3, 4}, f16, {8, 2})}));
  out.push_back(make("expanded", {T({4, 3}, f32, {0, 1})}));
  out.push_back(make("error: 3-d", {T({2, 3, 4}, f32)}));
  return out;
}

std::vector<Sample> view_copy_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({64, 128, 768}, t), L({-1, 768})};
        },
        "[64, 128, 768] -> [-1, 768]");
  std::vector<Sample> out;
  every_dtype(out, "flatten", [](DType t) { return std::vector<Literal>{T({4, 6}, t), L({24})}; });
  out.push_back(make("-1 inferred", {T({2, 3, 4}, f32), L({-1, 4})}));
  out.push_back(make("0-d to [1]", {T({}, f32), L({1})}));
  out.push_back(make("empty", {T({0, 4}, f32), L({4, 0})}));
  out.push_back(make("transposed, unit dim added", {T_transposed(4, 6, f32), L({4, 6, 1})}));
  out.push_back(make("expanded, split last dim", {T({4, 6}, f32, {0, 1}), L({4, 3, 2})}));
  out.push_back(make("error: transposed flattened", {T_transposed(4, 6, f32), L({24})}));
  out.push_back(make("error: numel differs", {T({4, 6}, f32), L({5, 5})}));
  return out;
}

std::vector<Sample> permute_copy_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return perf(
        [](DType t) {
          return std::vector<Literal>{T({64, 128, 12, 64}, t), L({0, 2, 1, 3})};
        },
        "heads [64, 128, 12, 64]");
  std::vector<Sample> out;
  every_dtype(out, "rotate 3-d", [](DType t) {
    return std::vector<Literal>{T({2, 3, 4}, t), L({2, 0, 1})};
  });
  out.push_back(make("negative dims", {T({2, 3, 4}, f32), L({-1, 0, -2})}));
  out.push_back(make("0-d", {T({}, f32), L({})}));
  out.push_back(make("empty", {T({0, 3}, f32), L({1, 0})}));
  out.push_back(make("transposed input", {T_transposed(4, 6, f32), L({1, 0})}));
  out.push_back(make("expanded input", {T({4, 5, 6}, f32, {0, 6, 1}), L({2, 0, 1})}));
  out.push_back(make("error: repeated dim", {T({2, 3, 4}, f32), L({0, 1, 1})}));
  out.push_back(make("error: too few dims", {T({2, 3, 4}, f32), L({1, 0})}));
  return out;
}

}  // namespace crucible::shape_ops

// Op family: creation (factories). empty, empty_strided, new_empty, new_empty_strided,
// new_full, new_ones, new_zeros, full, full_like, zeros, ones, zeros_like, ones_like,
// empty_like and scalar_tensor here; fill, arange, copy and lift_fresh_copy in creation_fill.cpp;
// the shared argument rules (dtype, layout, strides, checked conversion) in creation_util.cpp.
//
// ATen's rules followed:
// - dtype None: the default dtype f32 for size-only factories, the input's dtype for new_* and
//   *_like; full (and full.default) infers it from the fill value (bool -> bool, int -> i64,
//   float -> f32; PyTorch 2.x, where 1.13's torch.ops binding still gives i64 for a bool);
//   scalar_tensor does not infer (f32).
// - Values are converted with c10's checked conversion (full([2], 300, dtype=i8) raises).
// - new_* results are contiguous; *_like results follow memory_format (default preserve: the
//   input's strides when it is non-overlapping and dense, else its stride order).
// - device: traces write device='cuda'. The reference runs on the CPU and treats the device as
//   informational: it returns the tensor (values, dtype, shape, strides) ATen makes on that
//   device. pin_memory has no effect on results. layout=torch.sparse_coo is unsupported
//   (crucible has no sparse tensors) and such a case is not judged.
// - empty* values are uninitialised: those ops compare shape, dtype and strides only.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "ops/creation_internal.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"

namespace crucible {

namespace creation {

SizedFactory sized_factory(const Args& a, bool uninitialised) {
  Shape size = a.ints("size");
  check_layout(a, a.index("layout"));
  check_sizes(size);
  const DType dtype = dtype_arg(a, a.index("dtype"), DType::Float32);
  // zeros and ones have no memory_format argument.
  const MemoryFormat mf = a.has("memory_format") ? memory_format_arg(a, a.index("memory_format"),
                                                                     MemoryFormat::Contiguous)
                                                 : MemoryFormat::Contiguous;
  Shape strides = uninitialised ? format_strides(size, mf) : contiguous_strides_aten(size);
  return {std::move(size), std::move(strides), dtype};
}

bool check_strided(const Shape& size, const Shape& stride) {
  CRUCIBLE_CHECK(
      size.size() == stride.size(),
      fmt::format("dimensionality of sizes ({}) must match dimensionality of strides ({})",
                  size.size(), stride.size()));
  const bool empty = std::count(size.begin(), size.end(), 0) > 0;
  for (int64_t s : stride)
    CRUCIBLE_CHECK(empty || s >= 0,
                   fmt::format("Storage size calculation overflowed with sizes={} and strides={}",
                               shape_str(size), shape_str(stride)));
  return empty;
}

}  // namespace creation

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

// What a factory fills its result with.
enum class Content { Uninitialised, Zeros, Ones, Value };

// A factory's result, checked and described before anything is allocated: the reference makes
// it (make), the meta function describes it (describe).
struct Made {
  Shape size;
  Shape strides;
  DType dtype = DType::Float32;
  Content content = Content::Uninitialised;
  Scalar value;
  bool plain = false;  // a plain Tensor::empty (empty_strided of an empty size)
};

Made made(Shape size, Shape strides, DType dtype, Content content, Scalar value = Scalar()) {
  return {std::move(size), std::move(strides), dtype, content, value, false};
}

Tensor make_filled(const Shape& size, const Shape& strides, DType dtype, Content content,
                   const Scalar& value = Scalar()) {
  Tensor out = Tensor::empty_strided(size, strides, dtype);  // zero-filled storage
  if (content == Content::Ones) creation::fill_with(out, Scalar(int64_t{1}));
  if (content == Content::Value) creation::fill_with(out, value);
  return out;
}

Values make_result(const Made& m) {
  if (m.plain) return {Value(Tensor::empty(m.size, m.dtype))};
  return {Value(make_filled(m.size, m.strides, m.dtype, m.content, m.value))};
}

Values describe(const Made& m) {
  // The fill value's checked conversion, as fill_with does it.
  if (m.content == Content::Value) creation::check_convertible(m.value, m.dtype);
  if (m.plain) return {meta::fresh(m.size, m.dtype)};
  return {meta::fresh_strided(m.size, m.strides, m.dtype)};
}

using MadeFn = std::function<Made(const Args&)>;

RefFn ref_of(MadeFn f) {
  return [f = std::move(f)](const Args& a) { return make_result(f(a)); };
}
MetaFn meta_of(MadeFn f) {
  return [f = std::move(f)](const Args& a) { return describe(f(a)); };
}

// The dtype full() infers from its fill value when none is given (PyTorch 2.x).
DType inferred_full_dtype(const Scalar& v) {
  if (v.is_bool()) return DType::Bool;
  if (v.is_integral()) return DType::Int64;
  return DType::Float32;
}

// size-only factories: empty.memory_format, zeros, ones (size, *, dtype, layout, ...).
MadeFn sized_made(Content content) {
  return [content](const Args& a) {
    creation::SizedFactory f = creation::sized_factory(a, content == Content::Uninitialised);
    return made(std::move(f.size), std::move(f.strides), f.dtype, content);
  };
}

Made empty_strided_made(const Args& a) {
  const Shape size = a.ints("size");
  const Shape stride = a.ints("stride");
  creation::check_layout(a, a.index("layout"));
  creation::check_sizes(size);
  const bool empty = creation::check_strided(size, stride);
  const DType dtype = creation::dtype_arg(a, a.index("dtype"), DType::Float32);
  Made m = made(size, stride, dtype, Content::Uninitialised);
  m.plain = empty;
  return m;
}

Made full_made(const Args& a) {
  const Shape size = a.ints("size");
  const Scalar v = a.scalar("fill_value");
  creation::check_layout(a, a.index("layout"));
  creation::check_sizes(size);
  const DType dtype = creation::dtype_arg(a, a.index("dtype"), inferred_full_dtype(v));
  return made(size, creation::contiguous_strides_aten(size), dtype, Content::Value, v);
}

// new_empty, new_zeros, new_ones (self, size, *, dtype, layout, ...): contiguous, self's dtype.
MadeFn new_made(Content content) {
  return [content](const Args& a) {
    const Tensor& self = a.tensor("self");
    const Shape size = a.ints("size");
    creation::check_layout(a, a.index("layout"));
    creation::check_sizes(size);
    const DType dtype = creation::dtype_arg(a, a.index("dtype"), self.dtype());
    return made(size, creation::contiguous_strides_aten(size), dtype, content);
  };
}

Made new_full_made(const Args& a) {
  const Tensor& self = a.tensor("self");
  const Shape size = a.ints("size");
  creation::check_layout(a, a.index("layout"));
  creation::check_sizes(size);
  const DType dtype = creation::dtype_arg(a, a.index("dtype"), self.dtype());
  return made(size, creation::contiguous_strides_aten(size), dtype, Content::Value,
              a.scalar("fill_value"));
}

Made new_empty_strided_made(const Args& a) {
  const Tensor& self = a.tensor("self");
  // empty_strided's arguments (size, stride, dtype, layout), read by empty_strided_made.
  Values args{a.value("size"), a.value("stride"),
              Value(creation::dtype_arg(a, a.index("dtype"), self.dtype()))};
  args.push_back(a.value("layout"));
  static const Schema empty_strided = parse_schema(
      "aten::empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? "
      "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor");
  return empty_strided_made(Args(args, empty_strided));
}

// empty_like, zeros_like, ones_like (self, *, dtype, layout, device, pin_memory, memory_format).
MadeFn like_made(Content content) {
  return [content](const Args& a) {
    const Tensor& self = a.tensor("self");
    creation::check_layout(a, a.index("layout"));
    const DType dtype = creation::dtype_arg(a, a.index("dtype"), self.dtype());
    const MemoryFormat mf =
        creation::memory_format_arg(a, a.index("memory_format"), MemoryFormat::Preserve);
    return made(self.shape(), creation::like_strides(self, mf), dtype, content);
  };
}

Made full_like_made(const Args& a) {
  const Tensor& self = a.tensor("self");
  creation::check_layout(a, a.index("layout"));
  const DType dtype = creation::dtype_arg(a, a.index("dtype"), self.dtype());
  const MemoryFormat mf =
      creation::memory_format_arg(a, a.index("memory_format"), MemoryFormat::Preserve);
  return made(self.shape(), creation::like_strides(self, mf), dtype, Content::Value,
              a.scalar("fill_value"));
}

Made scalar_tensor_made(const Args& a) {
  creation::check_layout(a, a.index("layout"));
  const DType dtype = creation::dtype_arg(a, a.index("dtype"), DType::Float32);
  return made({}, {}, dtype, Content::Value, a.scalar("s"));
}

// Cost: the bytes written (none for uninitialised results).
CostFn write_cost(bool writes) {
  return [writes](const Values&, const Values& out) {
    return Cost{0, writes ? creation::tensor_bytes(out.at(0).tensor()) : 0.0};
  };
}

Literal sym(const char* s) { return Literal::symbol(s); }

// Keyword sets as traces write them, and the factory defaults.
using Kwargs = std::vector<std::pair<std::string, Literal>>;
Kwargs traced_kwargs(DType t) {
  return {{"dtype", DT(t)},
          {"layout", sym("torch.strided")},
          {"device", S("cuda")},
          {"pin_memory", B(false)}};
}

const std::vector<Shape>& factory_sizes() {
  static const std::vector<Shape> sizes = {{}, {0}, {7}, {3, 4}, {2, 0, 3}, {2, 3, 4, 5}, {1, 1}};
  return sizes;
}

// Samples of a size-only factory (size first, then `extra` positional args).
std::vector<Sample> sized_samples(const SampleContext& ctx, const std::vector<Literal>& extra,
                                  bool memory_format) {
  auto args = [&](const Shape& size) {
    std::vector<Literal> v{L(size)};
    v.insert(v.end(), extra.begin(), extra.end());
    return v;
  };
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      out.push_back(make("bandwidth [4096, 4096] " + dtype_code_str(t), args({4096, 4096}),
                         {{"dtype", DT(t)}}));
    return out;
  }
  for (const Shape& s : factory_sizes()) out.push_back(make("size " + shape_str(s), args(s)));
  for (DType t : all_numeric_dtypes())
    out.push_back(make("dtype " + dtype_code_str(t), args({5, 6}), {{"dtype", DT(t)}}));
  out.push_back(make("as traced (device 'cuda', layout, pin_memory)", args({4, 8}),
                     traced_kwargs(DType::Float16)));
  out.push_back(make("size 0-d, dtype i64", args({}), {{"dtype", DT(DType::Int64)}}));
  out.push_back(make("empty, dtype bf16", args({0, 4}), {{"dtype", DT(DType::BFloat16)}}));
  out.push_back(make("error: negative size", args({2, -1})));
  if (memory_format) {
    out.push_back(
        make("channels_last", args({2, 3, 4, 5}), {{"memory_format", sym("torch.channels_last")}}));
    out.push_back(make("channels_last with a size-0 dim", args({2, 0, 4, 5}),
                       {{"memory_format", sym("torch.channels_last")}}));
    out.push_back(make("channels_last_3d", args({2, 3, 2, 4, 5}),
                       {{"memory_format", sym("torch.channels_last_3d")}}));
    out.push_back(make("contiguous_format", args({3, 4}),
                       {{"memory_format", sym("torch.contiguous_format")}}));
    out.push_back(make("error: preserve_format", args({3, 4}),
                       {{"memory_format", sym("torch.preserve_format")}}));
    out.push_back(make("error: channels_last on 3-d", args({3, 4, 5}),
                       {{"memory_format", sym("torch.channels_last")}}));
  }
  return out;
}

// Fill values with their ATen outcome per dtype: ordinary, negative, float into int, bool.
std::vector<Sample> value_samples(const std::function<std::vector<Literal>(Literal)>& args,
                                  bool dtype_from_input) {
  std::vector<Sample> out;
  auto add = [&](std::string label, Literal v, Kwargs kw = {}) {
    out.push_back(make(std::move(label), args(std::move(v)), std::move(kw)));
  };
  for (DType t : all_numeric_dtypes()) {
    add("value 3, dtype " + dtype_code_str(t), I(3), {{"dtype", DT(t)}});
    add("value -2.75, dtype " + dtype_code_str(t) + (t == DType::UInt8 ? " (error)" : ""), F(-2.75),
        {{"dtype", DT(t)}});
  }
  // Relabel the one that must raise.
  for (Sample& s : out)
    if (s.label.ends_with("(error)")) s.label = "error: " + s.label.substr(0, s.label.size() - 8);
  add("value True, dtype f32", B(true), {{"dtype", DT(DType::Float32)}});
  add("value inf, dtype f16", F(std::numeric_limits<double>::infinity()),
      {{"dtype", DT(DType::Float16)}});
  add("value nan, dtype bf16", F(std::numeric_limits<double>::quiet_NaN()),
      {{"dtype", DT(DType::BFloat16)}});
  add("value -0.0, dtype f32", F(-0.0), {{"dtype", DT(DType::Float32)}});
  add("value -1 wraps into u8", I(-1), {{"dtype", DT(DType::UInt8)}});
  add("value 65504 into f16 (largest finite)", F(65504.0), {{"dtype", DT(DType::Float16)}});
  add("value 1e10 into i64", F(1e10), {{"dtype", DT(DType::Int64)}});
  add("value 7.9 truncates into i32", F(7.9), {{"dtype", DT(DType::Int32)}});
  add("value 2.5 into bool", F(2.5), {{"dtype", DT(DType::Bool)}});
  add("error: value 300 into i8", I(300), {{"dtype", DT(DType::Int8)}});
  add("error: value -256 into u8", I(-256), {{"dtype", DT(DType::UInt8)}});
  add("error: value 1e6 into f16", F(1e6), {{"dtype", DT(DType::Float16)}});
  add("error: value nan into i32", F(std::numeric_limits<double>::quiet_NaN()),
      {{"dtype", DT(DType::Int32)}});
  add("error: value inf into i64", F(std::numeric_limits<double>::infinity()),
      {{"dtype", DT(DType::Int64)}});
  add("error: value 1e39 into f32", F(1e39), {{"dtype", DT(DType::Float32)}});
  if (dtype_from_input) {
    add("no dtype: int value", I(4));
    add("no dtype: float value", F(0.5));
  } else {
    add("no dtype: int value gives i64", I(4));
    add("no dtype: float value gives f32", F(0.5));
    add("no dtype: bool value gives bool", B(true));
  }
  return out;
}

std::vector<Sample> full_samples(const SampleContext& ctx) {
  if (ctx.performance) return sized_samples(ctx, {F(1.5)}, false);
  std::vector<Sample> out;
  for (const Shape& s : factory_sizes())
    out.push_back(make("size " + shape_str(s), {L(s), F(-1.25)}));
  auto more = value_samples([](Literal v) { return std::vector<Literal>{L({3, 5}), v}; }, false);
  out.insert(out.end(), more.begin(), more.end());
  out.push_back(make("as traced", {L({4, 8}), F(0.0)}, traced_kwargs(DType::Float16)));
  out.push_back(make("error: negative size", {L({-3}), I(1)}));
  return out;
}

std::vector<Sample> scalar_tensor_samples(const SampleContext& ctx) {
  if (ctx.performance) return {make("0-d f32", {F(1.5)})};
  std::vector<Sample> out = value_samples([](Literal v) { return std::vector<Literal>{v}; }, false);
  // scalar_tensor does not infer its dtype from the value: f32 unless given.
  for (Sample& s : out)
    if (s.label.starts_with("no dtype"))
      s.label = s.label.substr(0, s.label.find(" gives")) + " gives f32";
  out.push_back(make("as traced", {F(-65504.0)}, traced_kwargs(DType::Float16)));
  return out;
}

// Inputs of new_* and *_like: the layouts and dtypes they are created from.
std::vector<std::pair<std::string, Literal>> like_inputs() {
  std::vector<std::pair<std::string, Literal>> v = {
      {"contiguous f32", T({7, 13}, DType::Float32)},
      {"0-d f16", T({}, DType::Float16)},
      {"empty i64", T({3, 0, 2}, DType::Int64)},
      {"transposed bf16", T_transposed(9, 12, DType::BFloat16)},
      {"sliced with a step f32", T({6, 5}, DType::Float32, {10, 2})},
      {"sliced and transposed f64", T({5, 6}, DType::Float64, {2, 10})},
      {"expanded (stride 0) i32", T({5, 8}, DType::Int32, {0, 1})},
      {"permuted 3-d u8", T({4, 3, 5}, DType::UInt8, {1, 20, 4})},
      {"channels-last 4-d f16", T({2, 3, 4, 5}, DType::Float16, {60, 1, 15, 3})},
      {"bool", T({4, 4}, DType::Bool)},
      {"i8", T({6}, DType::Int8)},
      {"i16 transposed", T_transposed(3, 4, DType::Int16)},
  };
  return v;
}

std::vector<Sample> like_samples(const SampleContext& ctx, const std::vector<Literal>& extra) {
  auto args = [&](Literal x) {
    std::vector<Literal> v{std::move(x)};
    v.insert(v.end(), extra.begin(), extra.end());
    return v;
  };
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      out.push_back(make("bandwidth [4096, 4096] " + dtype_code_str(t), args(T({4096, 4096}, t))));
    return out;
  }
  for (auto& [label, lit] : like_inputs()) {
    out.push_back(make(label, args(lit)));
    out.push_back(make(label + ", contiguous_format", args(lit),
                       {{"memory_format", sym("torch.contiguous_format")}}));
  }
  out.push_back(make("dtype given (f32 -> i64), transposed",
                     args(T_transposed(4, 6, DType::Float32)), {{"dtype", DT(DType::Int64)}}));
  out.push_back(make("dtype given (i32 -> bf16)", args(T({3, 5}, DType::Int32)),
                     {{"dtype", DT(DType::BFloat16)}}));
  out.push_back(make("preserve_format given", args(T_transposed(4, 6, DType::Float32)),
                     {{"memory_format", sym("torch.preserve_format")}}));
  out.push_back(make("channels_last", args(T({2, 3, 4, 5}, DType::Float32)),
                     {{"memory_format", sym("torch.channels_last")}}));
  out.push_back(make("channels_last_3d", args(T({2, 3, 2, 4, 5}, DType::Float16)),
                     {{"memory_format", sym("torch.channels_last_3d")}}));
  out.push_back(make("as traced (device 'cuda')", args(T({4, 8}, DType::Float16)),
                     traced_kwargs(DType::Float16)));
  out.push_back(make("error: channels_last on 3-d", args(T({3, 4, 5}, DType::Float32)),
                     {{"memory_format", sym("torch.channels_last")}}));
  return out;
}

std::vector<Sample> full_like_samples(const SampleContext& ctx) {
  std::vector<Sample> out = like_samples(ctx, {F(-2.5)});
  if (ctx.performance) return out;
  // The value is checked against the result dtype (the input's unless given).
  for (Sample& s : out)
    if (s.label.starts_with("permuted 3-d u8")) s.label = "error: -2.5 into " + s.label;
  out.push_back(make("int value into f16", {T({3, 4}, DType::Float16), I(7)}));
  out.push_back(make("7.9 truncates into i32", {T({3, 4}, DType::Int32), F(7.9)}));
  out.push_back(make("3 into u8", {T({3, 5}, DType::UInt8), I(3)}));
  out.push_back(make("7.9 into i32 input with dtype f16", {T({3, 4}, DType::Int32), F(7.9)},
                     {{"dtype", DT(DType::Float16)}}));
  out.push_back(make("True into f32", {T({3, 4}, DType::Float32), B(true)}));
  out.push_back(make("nan into bf16",
                     {T({3, 4}, DType::BFloat16), F(std::numeric_limits<double>::quiet_NaN())}));
  out.push_back(make("error: 1e6 into f16", {T({3, 4}, DType::Float16), F(1e6)}));
  out.push_back(make("error: 300 into i8", {T({3, 4}, DType::Int8), I(300)}));
  return out;
}

// new_* (self, size, [extra...]).
std::vector<Sample> new_samples(const SampleContext& ctx, const std::vector<Literal>& extra,
                                const std::vector<Literal>& extra_after_size = {}) {
  auto args = [&](Literal self, const Shape& size) {
    std::vector<Literal> v{std::move(self), L(size)};
    v.insert(v.end(), extra_after_size.begin(), extra_after_size.end());
    v.insert(v.end(), extra.begin(), extra.end());
    return v;
  };
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      out.push_back(
          make("bandwidth [4096, 4096] " + dtype_code_str(t), args(T({4}, t), {4096, 4096})));
    return out;
  }
  const Shape sizes[] = {{5, 6}, {}, {0, 3}, {2, 3, 4}, {11}};
  size_t k = 0;
  for (auto& [label, lit] : like_inputs()) {
    const Shape& size = sizes[k++ % std::size(sizes)];
    out.push_back(make("from " + label + ", size " + shape_str(size), args(lit, size)));
  }
  for (DType t : {DType::Float16, DType::Int8, DType::Bool, DType::Float64})
    out.push_back(make("dtype given " + dtype_code_str(t), args(T({3}, DType::Float32), {4, 5}),
                       {{"dtype", DT(t)}}));
  out.push_back(make("as traced (device 'cuda')", args(T({2, 128}, DType::Int64), {2, 128}),
                     traced_kwargs(DType::Int64)));
  out.push_back(make("error: negative size", args(T({3}, DType::Float32), {2, -2})));
  return out;
}

std::vector<Sample> new_full_samples(const SampleContext& ctx) {
  std::vector<Sample> out = new_samples(ctx, {}, {F(3.5)});
  if (ctx.performance) return out;
  out.push_back(make("-1 wraps into u8", {T({3}, DType::UInt8), L({2, 2}), I(-1)}));
  out.push_back(make("bool value into i32", {T({3}, DType::Int32), L({2, 2}), B(true)}));
  out.push_back(make("error: -0.5 into u8", {T({3}, DType::UInt8), L({2, 2}), F(-0.5)}));
  out.push_back(make("error: 1e6 into f16", {T({3}, DType::Float16), L({2, 2}), F(1e6)}));
  out.push_back(make("error: 200 into i8 (dtype given)",
                     {T({3}, DType::Float32), L({2, 2}), I(200)}, {{"dtype", DT(DType::Int8)}}));
  return out;
}

std::vector<Sample> empty_strided_samples(const SampleContext& ctx, bool with_self) {
  auto args = [&](const Shape& size, const Shape& stride) {
    std::vector<Literal> v;
    if (with_self) v.push_back(T({3}, DType::Float16));
    v.push_back(L(size));
    v.push_back(L(stride));
    return v;
  };
  std::vector<Sample> out;
  if (ctx.performance) {
    out.push_back(make("[4096, 4096]", args({4096, 4096}, {4096, 1})));
    return out;
  }
  out.push_back(make("contiguous", args({3, 4}, {4, 1})));
  out.push_back(make("transposed", args({3, 4}, {1, 3})));
  out.push_back(make("padded rows", args({3, 4}, {8, 1})));
  out.push_back(make("stride 0", args({2, 3}, {0, 0})));
  out.push_back(make("0-d", args({}, {})));
  out.push_back(make("empty", args({2, 0, 3}, {0, 3, 1})));
  out.push_back(make("channels-last", args({2, 3, 4, 5}, {60, 1, 15, 3})));
  out.push_back(make("as traced", args({144, 64, 64}, {4096, 64, 1})));
  for (DType t : all_numeric_dtypes())
    out.push_back(make("dtype " + dtype_code_str(t), args({2, 5}, {1, 2}), {{"dtype", DT(t)}}));
  out.push_back(make(
      "with device 'cuda' and layout", args({300, 128}, {128, 1}),
      {{"dtype", DT(DType::Float16)}, {"layout", sym("torch.strided")}, {"device", S("cuda")}}));
  out.push_back(make("error: strides of another rank", args({2, 3}, {1})));
  out.push_back(make("error: negative size", args({2, -3}, {1, 1})));
  out.push_back(make("error: negative stride", args({2, 3}, {-1, 2})));
  return out;
}

OpDef creation_op(std::string_view schema, const MadeFn& made_fn, SampleFn samples,
                  bool writes = true) {
  OpDef op = OpDef::from_schema(schema, "creation");
  op.dtypes = all_numeric_dtypes();
  op.meta = meta_of(made_fn);
  op.ref = ref_of(made_fn);
  op.samples = std::move(samples);
  op.cost = write_cost(writes);
  if (!writes) {  // uninitialised values: shape, dtype and strides only; nothing need be written
    op.compare.kind = ComparePolicy::Kind::ShapeOnly;
    op.compare.values_unspecified = true;
  }
  return op;
}

constexpr const char* kFactoryKw =
    "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None";

std::string schema_of(const std::string& head, bool memory_format = false) {
  return head + kFactoryKw + (memory_format ? ", MemoryFormat? memory_format=None" : "") +
         ") -> Tensor";
}

}  // namespace

void register_creation_ops(OpRegistry& r) {
  r.add(creation_op(
      schema_of("aten::empty.memory_format(SymInt[] size, ", true),
      sized_made(Content::Uninitialised),
      [](const SampleContext& c) { return sized_samples(c, {}, true); }, false));
  r.add(creation_op(
      schema_of("aten::empty_strided(SymInt[] size, SymInt[] stride, "), empty_strided_made,
      [](const SampleContext& c) { return empty_strided_samples(c, false); }, false));
  r.add(creation_op(
      schema_of("aten::new_empty(Tensor self, SymInt[] size, "), new_made(Content::Uninitialised),
      [](const SampleContext& c) { return new_samples(c, {}); }, false));
  r.add(creation_op(
      schema_of("aten::new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, "),
      new_empty_strided_made, [](const SampleContext& c) { return empty_strided_samples(c, true); },
      false));
  r.add(creation_op(schema_of("aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, "),
                    new_full_made, new_full_samples));
  r.add(creation_op(schema_of("aten::new_ones(Tensor self, SymInt[] size, "),
                    new_made(Content::Ones),
                    [](const SampleContext& c) { return new_samples(c, {}); }));
  r.add(creation_op(schema_of("aten::new_zeros(Tensor self, SymInt[] size, "),
                    new_made(Content::Zeros),
                    [](const SampleContext& c) { return new_samples(c, {}); }));
  r.add(creation_op(schema_of("aten::full(SymInt[] size, Scalar fill_value, "), full_made,
                    full_samples));
  r.add(creation_op(schema_of("aten::full_like(Tensor self, Scalar fill_value, ", true),
                    full_like_made, full_like_samples));
  r.add(creation_op(schema_of("aten::zeros(SymInt[] size, "), sized_made(Content::Zeros),
                    [](const SampleContext& c) { return sized_samples(c, {}, false); }));
  r.add(creation_op(schema_of("aten::ones(SymInt[] size, "), sized_made(Content::Ones),
                    [](const SampleContext& c) { return sized_samples(c, {}, false); }));
  r.add(creation_op(schema_of("aten::zeros_like(Tensor self, ", true), like_made(Content::Zeros),
                    [](const SampleContext& c) { return like_samples(c, {}); }));
  r.add(creation_op(schema_of("aten::ones_like(Tensor self, ", true), like_made(Content::Ones),
                    [](const SampleContext& c) { return like_samples(c, {}); }));
  r.add(creation_op(
      schema_of("aten::empty_like(Tensor self, ", true), like_made(Content::Uninitialised),
      [](const SampleContext& c) { return like_samples(c, {}); }, false));
  r.add(creation_op(schema_of("aten::scalar_tensor(Scalar s, "), scalar_tensor_made,
                    scalar_tensor_samples));
  register_creation_fill_ops(r);
}

}  // namespace crucible

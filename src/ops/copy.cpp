// Copy ops: clone, _to_copy, copy_. The references reproduce ATen's output strides (memory
// format "preserve" keeps the strides of a non-overlapping and dense input and the layout
// permutation of any other) and its element conversions (float -> integral truncates toward
// zero and wraps to the width, as c10's static_cast through int64 does; anything -> bool is
// "!= 0"; floating targets round once).
//
// Device: traces write `device='cuda'` in _to_copy calls. The reference runs on the CPU and
// treats the device argument as informational: the result is a CPU tensor with the values and
// strides ATen would give on that device. pin_memory and non_blocking do not change results.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numeric>
#include <string>

#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/rules/copy.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {

namespace copy_ops {

void check_broadcasts_to(const Tensor& self, const Tensor& src) {
  const Shape shape = broadcast_shapes(self.shape(), src.shape());
  CRUCIBLE_CHECK(shape == self.shape(), "output with shape " + shape_str(self.shape()) +
                                            " doesn't match the broadcast shape " +
                                            shape_str(shape));
}

void check_copy_inplace(const Tensor& self, const Tensor& src) {
  for (int64_t d = 0; d < self.dim(); ++d)
    CRUCIBLE_CHECK(self.stride(d) != 0 || self.size(d) <= 1,
                   "unsupported operation: more than one element of the written-to tensor refers "
                   "to a single memory location. Please clone() the tensor before performing the "
                   "operation.");
  check_broadcasts_to(self, src);
}

DType to_copy_dtype(const Args& a) {
  const Tensor& self = a.tensor("self");
  const DType dtype = a.given("dtype") ? a.dtype("dtype") : self.dtype();
  if (a.given("layout")) {
    const Layout layout = a.value("layout").to_layout();
    CRUCIBLE_CHECK(layout == Layout::Strided,
                   "to(options) doesn't support converting to a different layout, but got "
                   "self.layout being Strided and options.layout set as SparseCoo");
  }
  return dtype;
}

}  // namespace copy_ops

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

double real_bytes(const Tensor& t) {
  int64_t n = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 0) return 0;
    if (t.stride(d) != 0) n *= t.size(d);
  }
  return static_cast<double>(n) * static_cast<double>(t.itemsize());
}

// c10's is_non_overlapping_and_dense: some permutation of the dims makes the strides those of
// a contiguous tensor (dims of size < 2 are ignored).
bool non_overlapping_and_dense(const Shape& sizes, const Shape& strides) {
  const size_t n = sizes.size();
  if (n == 1) return sizes[0] < 2 || strides[0] == 1;
  std::vector<size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](size_t a, size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t require = 1;
  for (size_t i = 0; i < n; ++i) {
    const int64_t size = sizes[perm[i]];
    if (size < 2) return true;
    if (strides[perm[i]] != require) return false;
    require *= size;
  }
  return true;
}

// ATen's infer_dense_strides: dense strides in the input's stride order (stride-0 dims keep
// their place, ties keep the contiguous order), as TensorIterator orders dims.
Shape infer_dense_strides(const Shape& sizes, const Shape& strides) {
  const size_t n = sizes.size();
  std::vector<size_t> perm(n);  // perm[0] is the innermost dim
  for (size_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
  auto should_swap = [&](size_t d0, size_t d1) {
    const int64_t s0 = strides[d0], s1 = strides[d1];
    if (s0 == 0 || s1 == 0) return 0;
    if (s0 < s1) return -1;
    if (s0 > s1) return 1;
    return sizes[d0] > sizes[d1] ? 1 : 0;
  };
  for (size_t i = 1; i < n; ++i) {
    size_t dim1 = i;
    for (size_t j = 1; j <= i; ++j) {
      const size_t dim0 = i - j;
      const int c = should_swap(perm[dim0], perm[dim1]);
      if (c > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (c < 0) {
        break;
      }
    }
  }
  Shape out(n);
  int64_t cur = 1;
  for (size_t i = 0; i < n; ++i) {
    out[perm[i]] = cur;
    if (sizes[perm[i]] > 1) cur *= sizes[perm[i]];
  }
  return out;
}

// ATen's contiguous strides (a size-0 dim counts as 1).
Shape aten_contiguous_strides(const Shape& sizes) {
  Shape s(sizes.size());
  int64_t cur = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    s[i] = cur;
    cur *= std::max<int64_t>(sizes[i], 1);
  }
  return s;
}

// The strides of a copy of `t` made with memory format `mf` (c10 empty_like / _to_copy).
Shape copy_strides(const Tensor& t, MemoryFormat mf) {
  const Shape& sz = t.shape();
  switch (mf) {
    case MemoryFormat::Preserve:
      if (non_overlapping_and_dense(sz, t.strides())) return t.strides();
      return infer_dense_strides(sz, t.strides());
    case MemoryFormat::Contiguous:
      return aten_contiguous_strides(sz);
    case MemoryFormat::ChannelsLast: {
      CRUCIBLE_CHECK(sz.size() == 4, "required rank 4 tensor to use channels_last format");
      Shape s(4);
      s[1] = 1;
      s[3] = sz[1];
      s[2] = s[3] * sz[3];
      s[0] = s[2] * sz[2];
      return s;
    }
    case MemoryFormat::ChannelsLast3d: {
      CRUCIBLE_CHECK(sz.size() == 5, "required rank 5 tensor to use channels_last_3d format");
      Shape s(5);
      s[1] = 1;
      s[4] = sz[1];
      s[3] = s[4] * sz[4];
      s[2] = s[3] * sz[3];
      s[0] = s[2] * sz[2];
      return s;
    }
  }
  internal_error("copy: unknown memory format");
}

MemoryFormat memory_format_arg(const Args& a) {
  return a.given("memory_format") ? a.value("memory_format").to_memory_format()
                                  : MemoryFormat::Preserve;
}

// Truncation toward zero into int64; NaN and out-of-range give INT64_MIN (what x86's cvttsd2si
// gives; C++ leaves it undefined).
int64_t trunc_to_int64(double x) {
  if (!(x > -9.2233720368547758e18 && x < 9.2233720368547758e18)) return INT64_MIN;
  return static_cast<int64_t>(x);
}

// dst[...] = convert(src[...]) with src broadcast to dst's shape.
void convert_copy(const Tensor& dst, const Tensor& src) {
  const DType dt = dst.dtype(), st = src.dtype();
  const bool src_float = is_floating(st);
  const Tensor ops[] = {dst, src};
  opsutil::for_each_offset(dst.shape(), ops, [&](std::span<const int64_t> off) {
    char* d = opsutil::element_at(dst, off[0]);
    const char* s = opsutil::element_at(src, off[1]);
    if (is_complex(st)) {
      // Complex sources keep both parts into complex; into real dtypes the real part converts
      // as a float does (the imaginary part is dropped), into bool either part non-zero.
      const std::complex<double> v = load_as_complex(s, st);
      if (is_complex(dt) || dt == DType::Bool || is_floating(dt)) {
        store_from_complex(d, dt, v);
      } else {
        store_from_int(d, dt, trunc_to_int64(v.real()));
      }
    } else if (is_complex(dt)) {
      // Real sources into complex: (value, 0), integers rounded once.
      if (src_float) {
        store_from_double(d, dt, load_as_double(s, st));
      } else {
        store_from_int(d, dt, load_as_int(s, st));
      }
    } else if (is_floating(dt)) {
      const double v = src_float ? load_as_double(s, st) : static_cast<double>(load_as_int(s, st));
      store_from_double(d, dt, v);
    } else if (dt == DType::Bool) {
      const bool v = src_float ? load_as_double(s, st) != 0.0 : load_as_int(s, st) != 0;
      store_from_int(d, dt, v ? 1 : 0);
    } else {
      const int64_t v = src_float ? trunc_to_int64(load_as_double(s, st)) : load_as_int(s, st);
      store_from_int(d, dt, v);  // wraps to the width (two's complement)
    }
  });
}

// A copy's result: checked, described by its dtype and strides (self's shape).
struct CopySpec {
  DType dtype;
  Shape strides;
};

Values copy_meta(const Tensor& self, const CopySpec& spec) {
  return {meta::fresh_strided(self.shape(), spec.strides, spec.dtype)};
}

CopySpec clone_spec(const Args& a) {
  const Tensor& self = a.tensor("self");
  return {self.dtype(), copy_strides(self, memory_format_arg(a))};
}

// clone and _to_copy into their output (meta: copy_meta, with the strides and dtype of the
// copy).
void copy_into_impl(const Args& a, const Values& out) {
  convert_copy(out.at(0).tensor(), a.tensor("self"));
}

// _to_copy(self, *, dtype, layout, device, pin_memory, non_blocking, memory_format)
CopySpec to_copy_spec(const Args& a) {
  const DType dtype = copy_ops::to_copy_dtype(a);
  return {dtype, copy_strides(a.tensor("self"), memory_format_arg(a))};
}

// copy_ into self (the meta function's output is self itself).
void copy_inplace_impl(const Args& a, const Values& out) {
  const Tensor& src = a.tensor("src");
  // Through a temporary, so a src that overlaps self is read before it is written.
  Tensor tmp = Tensor::empty(src.shape(), src.dtype());
  tmp.copy_from(src);
  convert_copy(out.at(0).tensor(), tmp);
}

CostFn copy_cost() {
  return [](const Args& a, const Values& outputs) {
    const Tensor& out = outputs.at(0).tensor();
    const Tensor& in = a.tensor("self");
    const bool inplace = out.shares_storage(in);  // copy_ (clone and _to_copy write a new tensor)
    const Tensor& src = inplace ? a.tensor("src") : in;
    return Cost{0, real_bytes(src) + static_cast<double>(out.numel() * out.itemsize())};
  };
}

Literal sym(const char* s) { return Literal::symbol(s); }
// A dtype spelled as traces write it in keyword arguments: torch.bool.
Literal torch_dtype(DType t) {
  Literal lit = DT(t);
  lit.text = dtype_torch_name(t);
  return lit;
}

// Layouts shared by the copy ops' samples: contiguous, 0-d, empty, transposed, sliced with a
// step (not dense), expanded (stride 0), permuted 3-d, 4-d channels-last.
std::vector<std::pair<std::string, Literal>> layouts(DType t) {
  return {{"contiguous", T({7, 13}, t)},
          {"0-d", T({}, t)},
          {"empty", T({3, 0, 2}, t)},
          {"transposed", T_transposed(9, 12, t)},
          {"sliced with a step", T({6, 5}, t, {10, 2})},
          {"expanded (stride 0)", T({5, 8}, t, {0, 1})},
          {"permuted 3-d", T({4, 3, 5}, t, {1, 20, 4})},
          {"channels-last 4-d", T({2, 3, 4, 5}, t, {60, 1, 15, 3})}};
}

const std::pair<DType, DType> kConversions[] = {
    {DType::Float32, DType::Float16},  {DType::Float16, DType::Float32},
    {DType::Float32, DType::BFloat16}, {DType::BFloat16, DType::Float32},
    {DType::Float64, DType::Float16},  {DType::BFloat16, DType::Float16},
    {DType::Float32, DType::Int32},    {DType::Float32, DType::Int64},
    {DType::Int64, DType::Float32},    {DType::Int32, DType::UInt8},
    {DType::Int64, DType::Int8},       {DType::Bool, DType::Float32},
    {DType::Float32, DType::Bool},     {DType::UInt8, DType::Float16},
    {DType::Float64, DType::Float32},  {DType::Int16, DType::BFloat16},
};

std::vector<Sample> perf(bool two_args) {
  std::vector<Sample> out;
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
    std::vector<Literal> args{T({4096, 4096}, t)};
    if (two_args) args.push_back(T({4096, 4096}, t));
    out.push_back(make("bandwidth [4096, 4096] " + dtype_code_str(t), args));
    std::vector<Literal> targs{T_transposed(4096, 4096, t)};
    if (two_args) targs.insert(targs.begin(), T({4096, 4096}, t));
    out.push_back(make("bandwidth transposed [4096, 4096] " + dtype_code_str(t), targs));
  }
  return out;
}

std::vector<Sample> clone_samples(const SampleContext& ctx) {
  if (ctx.performance) return perf(false);
  std::vector<Sample> out;
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("contiguous " + dtype_code_str(t), {T({7, 13}, t)}));
    out.push_back(make("transposed " + dtype_code_str(t), {T_transposed(9, 12, t)}));
  }
  for (auto& [label, lit] : layouts(DType::Float32)) {
    out.push_back(make(label, {lit}));
    out.push_back(make(label + ", contiguous_format", {lit},
                       {{"memory_format", sym("torch.contiguous_format")}}));
    out.push_back(make(label + ", preserve_format", {lit},
                       {{"memory_format", sym("torch.preserve_format")}}));
  }
  for (DType t : floating_dtypes())
    out.push_back(make("special values " + dtype_code_str(t), {T_fill({64}, t, "special")}));
  out.push_back(make("channels_last", {T({2, 3, 4, 5}, DType::Float16)},
                     {{"memory_format", sym("torch.channels_last")}}));
  out.push_back(make("channels_last_3d", {T({2, 3, 2, 4, 5}, DType::Float32)},
                     {{"memory_format", sym("torch.channels_last_3d")}}));
  out.push_back(make("error: channels_last on a 3-d tensor", {T({3, 4, 5}, DType::Float32)},
                     {{"memory_format", sym("torch.channels_last")}}));
  return out;
}

std::vector<Sample> to_copy_samples(const SampleContext& ctx) {
  if (ctx.performance) {
    std::vector<Sample> out;
    const std::pair<DType, DType> convs[] = {{DType::Float32, DType::Float16},
                                             {DType::Float16, DType::Float32},
                                             {DType::Float32, DType::BFloat16},
                                             {DType::BFloat16, DType::Float32}};
    for (auto [from, to] : convs)
      out.push_back(
          make("bandwidth [4096, 4096] " + dtype_code_str(from) + " -> " + dtype_code_str(to),
               {T({4096, 4096}, from)}, {{"dtype", DT(to)}}));
    return out;
  }
  std::vector<Sample> out;
  for (auto [from, to] : kConversions) {
    const std::string d = dtype_code_str(from) + " -> " + dtype_code_str(to);
    out.push_back(make(d, {T({7, 13}, from)}, {{"dtype", DT(to)}}));
    out.push_back(make("transposed, " + d, {T_transposed(9, 12, from)}, {{"dtype", DT(to)}}));
  }
  for (auto& [label, lit] : layouts(DType::Float32))
    out.push_back(make(label + " layout, f32 -> f16", {lit}, {{"dtype", DT(DType::Float16)}}));
  for (auto [from, to] :
       {std::pair{DType::Float32, DType::Float16}, std::pair{DType::Float64, DType::Float32},
        std::pair{DType::Float32, DType::BFloat16}, std::pair{DType::Float16, DType::Float64}})
    out.push_back(make("special values, " + dtype_code_str(from) + " -> " + dtype_code_str(to),
                       {T_fill({64}, from, "special")}, {{"dtype", DT(to)}}));
  out.push_back(make("no dtype (a plain copy)", {T({7, 13}, DType::Int32)}));
  out.push_back(make(
      "as traced: expanded, layout and device given",
      {T({4, 1, 8, 8}, DType::Float16, {0, 64, 8, 1})},
      {{"dtype", DT(DType::Float16)}, {"layout", sym("torch.strided")}, {"device", S("cuda")}}));
  out.push_back(make("dtype as torch name", {T({5, 6}, DType::Float32)},
                     {{"dtype", torch_dtype(DType::Bool)}}));
  out.push_back(
      make("contiguous_format, transposed", {T_transposed(9, 12, DType::Float32)},
           {{"dtype", DT(DType::Float64)}, {"memory_format", sym("torch.contiguous_format")}}));
  out.push_back(make("non_blocking", {T({7, 13}, DType::Float32)},
                     {{"dtype", DT(DType::Float16)}, {"non_blocking", B(true)}}));
  out.push_back(make("error: to a sparse layout", {T({4, 5}, DType::Float32)},
                     {{"layout", sym("torch.sparse_coo")}}));
  return out;
}

std::vector<Sample> copy_inplace_samples(const SampleContext& ctx) {
  if (ctx.performance) return perf(true);
  std::vector<Sample> out;
  for (DType t : all_numeric_dtypes())
    out.push_back(make("same dtype " + dtype_code_str(t), {T({7, 13}, t), T({7, 13}, t)}));
  for (auto [to, from] : kConversions)
    out.push_back(make(dtype_code_str(from) + " into " + dtype_code_str(to),
                       {T({6, 7}, to), T({6, 7}, from)}));
  for (auto& [label, lit] : layouts(DType::Float32)) {
    const cases::TensorLit& src = lit.tensor;
    out.push_back(make("src " + label, {T(src.shape, DType::Float32), lit}));
    const bool expanded = src.strides && std::count(src.strides->begin(), src.strides->end(), 0);
    out.push_back(make((expanded ? "error: self " : "self ") + label + ", f16 src",
                       {lit, T(src.shape, DType::Float16)}));
  }
  out.push_back(make("broadcast src row", {T({6, 7}, DType::Float32), T({7}, DType::Float16)}));
  out.push_back(make("broadcast 0-d src", {T({4, 5}, DType::Int32), T({}, DType::Int64)}));
  out.push_back(make("special values f32 into f16",
                     {T({64}, DType::Float16), T_fill({64}, DType::Float32, "special")}));
  out.push_back(make("special values f64 into f32",
                     {T({64}, DType::Float32), T_fill({64}, DType::Float64, "special")}));
  out.push_back(
      make("non_blocking given", {T({6, 7}, DType::Float32), T({6, 7}, DType::BFloat16), B(true)}));
  out.push_back(
      make("error: src does not broadcast", {T({7}, DType::Float32), T({6, 7}, DType::Float32)}));
  return out;
}

OpDef copy_op(std::string_view schema, MetaFn meta, ImplFn impl, SampleFn samples) {
  OpDef op = OpDef::from_schema(schema, "copy");
  op.dtypes = all_numeric_dtypes();
  op.meta = std::move(meta);
  op.ref = structured_ref(op.meta, std::move(impl));
  op.samples = std::move(samples);
  op.cost = copy_cost();
  return op;
}

}  // namespace

void register_copy_ops(OpRegistry& r) {
  r.add(copy_op(
      "aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
      [](const Args& a) { return copy_meta(a.tensor("self"), clone_spec(a)); }, copy_into_impl,
      clone_samples));
  r.add(copy_op(
      "aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
      "device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? "
      "memory_format=None) -> Tensor",
      [](const Args& a) { return copy_meta(a.tensor("self"), to_copy_spec(a)); }, copy_into_impl,
      to_copy_samples));
  r.add(copy_op(
      "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
      [](const Args& a) {
        copy_ops::check_copy_inplace(a.tensor("self"), a.tensor("src"));
        return Values{a.value("self")};
      },
      copy_inplace_impl, copy_inplace_samples));
}

}  // namespace crucible

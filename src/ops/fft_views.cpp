// The complex views: view_as_real (a complex tensor as its interleaved real components, a
// trailing dim of 2 and doubled strides), view_as_complex (the inverse), real and imag (the
// real / imaginary components as a strided real view). All share the input's storage; the
// offsets and strides are counted in elements of the view's dtype.
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "ops/fft_internal.h"
#include "ops/samples.h"

namespace crucible {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

// The component `part` (0 real, 1 imaginary) of complex `t` as a real view of the same shape.
Tensor component_view(const Tensor& t, int64_t part) {
  Shape strides = t.strides();
  for (int64_t& s : strides) s *= 2;
  return Tensor::from_storage(t.storage(), 2 * t.offset() + part, t.shape(), strides,
                              to_real(t.dtype()));
}

Values view_as_real_ref(const Args& args) {
  const Tensor& self = args.tensor("self");
  CRUCIBLE_CHECK(is_complex(self.dtype()), "view_as_real is only supported for complex tensors");
  Shape shape = self.shape();
  Shape strides = self.strides();
  for (int64_t& s : strides) s *= 2;
  shape.push_back(2);
  strides.push_back(1);
  return {Value(Tensor::from_storage(self.storage(), 2 * self.offset(), shape, strides,
                                     to_real(self.dtype())))};
}

Values view_as_complex_ref(const Args& args) {
  const Tensor& self = args.tensor("self");
  const DType t = self.dtype();
  CRUCIBLE_CHECK(t == DType::Float16 || t == DType::Float32 || t == DType::Float64,
                 "view_as_complex is only supported for half, float and double tensors, but got a "
                 "tensor of scalar type: " +
                     std::string(dtype_scalar_type_name(t)));
  CRUCIBLE_CHECK(self.dim() != 0, "Input tensor must have one or more dimensions");
  CRUCIBLE_CHECK(self.size(-1) == 2, "Tensor must have a last dimension of size 2");
  CRUCIBLE_CHECK(self.stride(-1) == 1, "Tensor must have a last dimension with stride 1");
  Shape shape = self.shape();
  Shape strides = self.strides();
  shape.pop_back();
  strides.pop_back();
  for (int64_t& s : strides) {
    CRUCIBLE_CHECK(s % 2 == 0,
                   "Tensor must have a stride divisible by 2 for all but last dimension");
    s /= 2;
  }
  CRUCIBLE_CHECK(self.offset() % 2 == 0, "Tensor must have a storage_offset divisible by 2");
  return {Value(
      Tensor::from_storage(self.storage(), self.offset() / 2, shape, strides, *to_complex(t)))};
}

// real(self): the real components of a complex tensor; a real tensor itself (an alias).
Values real_ref(const Args& args) {
  const Tensor& self = args.tensor("self");
  if (!is_complex(self.dtype())) {
    return {Value(Tensor::from_storage(self.storage(), self.offset(), self.shape(), self.strides(),
                                       self.dtype()))};
  }
  return {Value(component_view(self, 0))};
}

Values imag_ref(const Args& args) {
  const Tensor& self = args.tensor("self");
  CRUCIBLE_CHECK(is_complex(self.dtype()),
                 "imag is not implemented for tensors with non-complex dtypes.");
  return {Value(component_view(self, 1))};
}

Cost view_cost(const Values&, const Values&) { return {}; }

// Layouts shared by the complex views' samples.
void complex_layouts(std::vector<Sample>& out, DType t) {
  const std::string d = " " + dtype_code_str(t);
  out.push_back(make("contiguous" + d, {T({3, 4}, t)}));
  out.push_back(make("0-d" + d, {T({}, t)}));
  out.push_back(make("empty" + d, {T({2, 0, 3}, t)}));
  out.push_back(make("transposed" + d, {T_transposed(4, 5, t)}));
  out.push_back(make("sliced with a step" + d, {T({3, 4}, t, {8, 2})}));
  out.push_back(make("expanded (stride 0)" + d, {T({3, 4}, t, {0, 1})}));
  out.push_back(make("special values" + d, {T_fill({16}, t, "special")}));
}

std::vector<Sample> complex_view_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    out.push_back(make("view [1024, 1024] c64", {T({1024, 1024}, DType::Complex64)}));
    return out;
  }
  for (DType t : {DType::Complex32, DType::Complex64, DType::Complex128}) complex_layouts(out, t);
  return out;
}

std::vector<Sample> view_as_real_samples(const SampleContext& ctx) {
  std::vector<Sample> out = complex_view_samples(ctx);
  if (ctx.performance) return out;
  out.push_back(make("error: real input f32", {T({3, 4}, DType::Float32)}));
  out.push_back(make("error: real input i64", {T({3}, DType::Int64)}));
  return out;
}

std::vector<Sample> real_samples(const SampleContext& ctx) {
  std::vector<Sample> out = complex_view_samples(ctx);
  if (ctx.performance) return out;
  out.push_back(make("real input f32 (returns self)", {T({3, 4}, DType::Float32)}));
  out.push_back(
      make("real input i64, transposed (returns self)", {T_transposed(3, 4, DType::Int64)}));
  return out;
}

std::vector<Sample> imag_samples(const SampleContext& ctx) {
  std::vector<Sample> out = complex_view_samples(ctx);
  if (ctx.performance) return out;
  out.push_back(make("error: real input f32", {T({3, 4}, DType::Float32)}));
  out.push_back(make("error: real input bool", {T({3}, DType::Bool)}));
  return out;
}

std::vector<Sample> view_as_complex_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    out.push_back(make("view [1024, 1024, 2] f32", {T({1024, 1024, 2}, DType::Float32)}));
    return out;
  }
  for (DType t : {DType::Float16, DType::Float32, DType::Float64}) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("contiguous" + d, {T({3, 4, 2}, t)}));
    out.push_back(make("1-d -> 0-d" + d, {T({2}, t)}));
    out.push_back(make("empty" + d, {T({0, 3, 2}, t)}));
    out.push_back(make("sliced rows" + d, {T({3, 2, 2}, t, {8, 2, 1})}));
    out.push_back(make("special values" + d, {T_fill({8, 2}, t, "special")}));
  }
  const DType f32 = DType::Float32;
  out.push_back(make("permuted outer dims", {T({4, 3, 2}, f32, {2, 8, 1})}));
  out.push_back(make("expanded outer dim (stride 0)", {T({5, 3, 2}, f32, {0, 2, 1})}));
  out.push_back(make("error: bf16", {T({3, 2}, DType::BFloat16)}));
  out.push_back(make("error: i32", {T({3, 2}, DType::Int32)}));
  out.push_back(make("error: complex input", {T({3, 2}, DType::Complex64)}));
  out.push_back(make("error: 0-d", {T({}, f32)}));
  out.push_back(make("error: last dim not 2", {T({3, 3}, f32)}));
  out.push_back(make("error: last dim stride not 1", {T_transposed(3, 2, f32)}));
  out.push_back(make("error: odd outer stride", {T({3, 2}, f32, {3, 1})}));
  return out;
}

OpDef view_op(std::string_view schema, RefFn ref, SampleFn samples, std::vector<DType> dtypes) {
  OpDef op = OpDef::from_schema(schema, "fft");
  op.dtypes = std::move(dtypes);
  // A view costs nothing: the meta function is the view code itself.
  op.meta = ref;
  op.ref = std::move(ref);
  op.samples = std::move(samples);
  op.cost = view_cost;
  op.compare.output_is_view = true;
  return op;
}

}  // namespace

void register_complex_view_ops(OpRegistry& r) {
  const std::vector<DType> complex = {DType::Complex32, DType::Complex64, DType::Complex128};
  r.add(view_op("aten::view_as_real(Tensor(a) self) -> Tensor(a)", view_as_real_ref,
                view_as_real_samples, complex));
  r.add(view_op("aten::view_as_complex(Tensor(a) self) -> Tensor(a)", view_as_complex_ref,
                view_as_complex_samples, {DType::Float16, DType::Float32, DType::Float64}));
  std::vector<DType> real_dtypes = complex;
  for (DType t : all_numeric_dtypes()) real_dtypes.push_back(t);
  r.add(view_op("aten::real(Tensor(a) self) -> Tensor(a)", real_ref, real_samples, real_dtypes));
  r.add(view_op("aten::imag(Tensor(a) self) -> Tensor(a)", imag_ref, imag_samples, complex));
}

}  // namespace crucible

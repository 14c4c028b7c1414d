// The cpu backend's factories: empty, empty_strided, new_empty, new_empty_strided, new_zeros,
// new_ones, new_full, zeros, ones, full, zeros_like, ones_like, full_like, empty_like,
// scalar_tensor. The result is allocated without the allocator's zero fill and written once
// in full by fill_bytes (parallel; large results streamed to memory), or left uninitialised
// for the empty* ops. The argument rules (dtype defaults, layouts, ATen's strides for memory
// formats, c10's checked conversion of the fill value) are the catalog's creation helpers,
// shared with copy.cpp.
#include <vector>

#include "backends/cpu/shape_copy.h"
#include "backends/cpu/shape_kernels.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/creation.h"

namespace crucible::cpu {

namespace {

enum class Content { Uninitialised, Zeros, Ones, Value };

// A fresh tensor of `size` / `strides` (dense: its elements are its storage) holding `content`.
Tensor make_filled(const Shape& size, const Shape& strides, DType dtype, Content content,
                   const Scalar& value = Scalar()) {
  Tensor out = Tensor::uninitialized_strided(size, strides, dtype);
  if (content == Content::Uninitialised || out.numel() == 0) return out;
  Pattern p;
  if (content == Content::Zeros) {
    p = pattern_of_int(0, dtype);
  } else {
    Tensor one = Tensor::uninitialized({}, dtype);
    creation::fill_with(one, content == Content::Ones ? Scalar(int64_t{1}) : value);
    p = pattern_of(one.data_ptr(), static_cast<int64_t>(one.itemsize()));
  }
  const int64_t nbytes = out.numel() * p.isize;
  if (static_cast<size_t>(nbytes) == out.storage()->nbytes() && out.offset() == 0)
    fill_bytes(static_cast<char*>(out.data_ptr()), nbytes, p);
  else
    fill_tensor(out, p);
  return out;
}

DType inferred_full_dtype(const Scalar& v) {
  if (v.is_bool()) return DType::Bool;
  if (v.is_integral()) return DType::Int64;
  return DType::Float32;
}

// size-only factories: empty.memory_format, zeros, ones (size, *, dtype, layout, ...).
template <Content C>
Values sized(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const creation::SizedFactory f = creation::sized_factory(a, C == Content::Uninitialised);
  return {Value(make_filled(f.size, f.strides, f.dtype, C))};
}

Values strided_empty(const Args& a, DType dflt) {
  const Shape size = a.ints("size");
  const Shape stride = a.ints("stride");
  creation::check_layout(a, a.index("layout"));
  creation::check_sizes(size);
  const bool empty = creation::check_strided(size, stride);
  const DType dtype = creation::dtype_arg(a, a.index("dtype"), dflt);
  if (empty) return {Value(Tensor::uninitialized(size, dtype))};
  return {Value(Tensor::uninitialized_strided(size, stride, dtype))};
}

Values empty_strided(const OpDef& op, const Values& args) {
  return strided_empty(Args(args, op.schema), DType::Float32);
}

Values new_empty_strided(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  return strided_empty(a, a.tensor("self").dtype());
}

Values full(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Shape size = a.ints("size");
  const Scalar v = a.scalar("fill_value");
  creation::check_layout(a, a.index("layout"));
  creation::check_sizes(size);
  const DType dtype = creation::dtype_arg(a, a.index("dtype"), inferred_full_dtype(v));
  return {
      Value(make_filled(size, creation::contiguous_strides_aten(size), dtype, Content::Value, v))};
}

// new_empty, new_zeros, new_ones (self, size, *, dtype, layout, ...): contiguous, self's dtype.
template <Content C>
Values new_sized(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const Shape size = a.ints("size");
  creation::check_layout(a, a.index("layout"));
  creation::check_sizes(size);
  const DType dtype = creation::dtype_arg(a, a.index("dtype"), self.dtype());
  return {Value(make_filled(size, creation::contiguous_strides_aten(size), dtype, C))};
}

Values new_full(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const Shape size = a.ints("size");
  creation::check_layout(a, a.index("layout"));
  creation::check_sizes(size);
  const DType dtype = creation::dtype_arg(a, a.index("dtype"), self.dtype());
  return {Value(make_filled(size, creation::contiguous_strides_aten(size), dtype, Content::Value,
                            a.scalar("fill_value")))};
}

// empty_like, zeros_like, ones_like (self, *, dtype, layout, device, pin_memory, memory_format).
template <Content C>
Values like(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  creation::check_layout(a, a.index("layout"));
  const DType dtype = creation::dtype_arg(a, a.index("dtype"), self.dtype());
  const MemoryFormat mf =
      creation::memory_format_arg(a, a.index("memory_format"), MemoryFormat::Preserve);
  return {Value(make_filled(self.shape(), creation::like_strides(self, mf), dtype, C))};
}

Values full_like(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  creation::check_layout(a, a.index("layout"));
  const DType dtype = creation::dtype_arg(a, a.index("dtype"), self.dtype());
  const MemoryFormat mf =
      creation::memory_format_arg(a, a.index("memory_format"), MemoryFormat::Preserve);
  return {Value(make_filled(self.shape(), creation::like_strides(self, mf), dtype, Content::Value,
                            a.scalar("fill_value")))};
}

Values scalar_tensor(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  creation::check_layout(a, a.index("layout"));
  const DType dtype = creation::dtype_arg(a, a.index("dtype"), DType::Float32);
  return {Value(make_filled({}, {}, dtype, Content::Value, a.scalar("s")))};
}

}  // namespace

void register_creation_kernels(KernelTable& t) {
  const std::vector<DType> all = shape_dtypes();
  auto add = [&](const char* name, KernelFn fn) {
    t.add(name, {fn, &shape_factory_supports, all});
  };
  add("aten.empty.memory_format", &sized<Content::Uninitialised>);
  add("aten.zeros.default", &sized<Content::Zeros>);
  add("aten.ones.default", &sized<Content::Ones>);
  add("aten.empty_strided.default", &empty_strided);
  add("aten.full.default", &full);
  add("aten.new_empty.default", &new_sized<Content::Uninitialised>);
  add("aten.new_zeros.default", &new_sized<Content::Zeros>);
  add("aten.new_ones.default", &new_sized<Content::Ones>);
  add("aten.new_full.default", &new_full);
  add("aten.new_empty_strided.default", &new_empty_strided);
  add("aten.empty_like.default", &like<Content::Uninitialised>);
  add("aten.zeros_like.default", &like<Content::Zeros>);
  add("aten.ones_like.default", &like<Content::Ones>);
  add("aten.full_like.default", &full_like);
  add("aten.scalar_tensor.default", &scalar_tensor);
}

}  // namespace crucible::cpu

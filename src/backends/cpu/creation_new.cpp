// The cpu backend's factories: empty, empty_strided, new_empty, new_empty_strided, new_zeros,
// new_ones, new_full, zeros, ones, full, zeros_like, ones_like, full_like, empty_like,
// scalar_tensor. Destination-passing: the meta functions (ops/creation.cpp: the dtype defaults,
// layouts, ATen's strides for memory formats, c10's checked conversion of the fill value) checked
// the call and laid out the result, which is allocated without the allocator's zero fill and
// written once in full by fill_output (parallel; large results streamed to memory), or left
// uninitialised for the empty* ops.
#include <vector>

#include "backends/cpu/shape_copy.h"
#include "backends/cpu/shape_kernels.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {

namespace {

enum class Content { Uninitialised, Zeros, Ones, Value };

// Fills the fresh output with `content`; `value` names the fill value's argument.
template <Content C>
void made(const Tensor& out, [[maybe_unused]] const Args& a, [[maybe_unused]] const char* value) {
  if constexpr (C == Content::Zeros) fill_output(out, pattern_of_int(0, out.dtype()));
  if constexpr (C == Content::Ones) fill_output(out, pattern_of_int(1, out.dtype()));
  if constexpr (C == Content::Value)
    fill_output(out, pattern_of_scalar(a.scalar(value), out.dtype()));
}

template <Content C>
void factory(const OpDef&, const Args& a, const Values& out) {
  made<C>(out[0].tensor(), a, "fill_value");
}

void scalar_tensor(const OpDef&, const Args& a, const Values& out) {
  made<Content::Value>(out[0].tensor(), a, "s");
}

}  // namespace

void register_creation_kernels(KernelTable& t) {
  const std::vector<DType> all = shape_dtypes();
  auto add = [&](const char* name, KernelIntoFn fn) {
    t.add(name, {.supports = &shape_factory_supports, .dtypes = all, .run_into = fn});
  };
  constexpr auto empty = &factory<Content::Uninitialised>;
  constexpr auto zeros = &factory<Content::Zeros>;
  constexpr auto ones = &factory<Content::Ones>;
  constexpr auto full = &factory<Content::Value>;
  for (const char* n :
       {"aten.empty.memory_format", "aten.empty_strided.default", "aten.new_empty.default",
        "aten.new_empty_strided.default", "aten.empty_like.default"})
    add(n, empty);
  for (const char* n : {"aten.zeros.default", "aten.new_zeros.default", "aten.zeros_like.default"})
    add(n, zeros);
  for (const char* n : {"aten.ones.default", "aten.new_ones.default", "aten.ones_like.default"})
    add(n, ones);
  for (const char* n : {"aten.full.default", "aten.new_full.default", "aten.full_like.default"})
    add(n, full);
  add("aten.scalar_tensor.default", &scalar_tensor);
}

}  // namespace crucible::cpu

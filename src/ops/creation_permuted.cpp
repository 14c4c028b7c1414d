// aten.empty_permuted.default: an uninitialised tensor of logical sizes `size` whose dims are
// laid out in memory in the order `physical_layout` gives, outermost first ([0, 2, 3, 1] is
// channels-last for NCHW sizes).
//
// Reference semantics (PyTorch 2.x; TensorFactories.cpp empty_permuted_symint): a contiguous
// tensor of the physical sizes size[physical_layout[i]], its strides handed back to the
// logical dims (strides[physical_layout[i]] = physical_strides[i]; ATen's contiguous strides,
// a size-0 dim counting as 1). physical_layout must be a permutation of 0..dim-1 (negative
// dims are refused) of the length of size; sizes must be non-negative. dtype None is f32;
// values are unspecified, so shape, dtype and strides are judged (as empty.memory_format).
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/creation_internal.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"

namespace crucible {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)

// The logical strides of empty_permuted(size, physical_layout), after ATen's checks.
Shape permuted_strides(const Shape& size, const std::vector<int64_t>& layout) {
  const int64_t dim = static_cast<int64_t>(size.size());
  if (static_cast<int64_t>(layout.size()) != dim) {
    op_error(
        "Number of dimensions in size does not match the length of the physical_layout; i.e. "
        "len(size) = " +
        std::to_string(dim) +
        " is not equal to len(physical_layout) = " + std::to_string(layout.size()));
  }
  std::vector<bool> seen(static_cast<size_t>(dim), false);
  Shape phys(static_cast<size_t>(dim));
  for (int64_t i = 0; i < dim; ++i) {
    const int64_t p = layout[static_cast<size_t>(i)];
    if (p < 0 || p >= dim) {
      op_error("Dimension out of range (expected to be between 0 and " + std::to_string(dim - 1) +
               ", but got " + std::to_string(p) + " at index " + std::to_string(i) +
               ").  NB: negative dims not currently supported; file an issue if you want it.");
    }
    if (seen[static_cast<size_t>(p)]) op_error("Duplicate dim not allowed");
    seen[static_cast<size_t>(p)] = true;
    phys[static_cast<size_t>(i)] = size[static_cast<size_t>(p)];
  }
  creation::check_sizes(phys);
  const Shape phys_strides = creation::contiguous_strides_aten(phys);
  Shape strides(static_cast<size_t>(dim));
  for (int64_t i = 0; i < dim; ++i)
    strides[static_cast<size_t>(layout[static_cast<size_t>(i)])] =
        phys_strides[static_cast<size_t>(i)];
  return strides;
}

Values empty_permuted_meta(const Args& a) {
  const Shape size = a.ints("size");
  const Shape strides = permuted_strides(size, a.ints("physical_layout"));
  creation::check_layout(a, a.index("layout"));
  return {
      meta::fresh_strided(size, strides, creation::dtype_arg(a, a.index("dtype"), DType::Float32))};
}

// Nothing to compute: the output is allocated as the meta function lays it out.
void empty_permuted_impl(const Args&, const Values&) {}

std::vector<Sample> empty_permuted_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  auto call = [&](const std::string& label, const Shape& size, const Shape& layout,
                  std::vector<std::pair<std::string, Literal>> kw = {}) {
    out.push_back(make(label, {L(size), L(layout)}, std::move(kw)));
  };
  if (ctx.performance) {
    call("channels-last [32, 256, 56, 56]", {32, 256, 56, 56}, {0, 2, 3, 1});
    return out;
  }
  call("identity layout", {2, 3, 4}, {0, 1, 2});
  call("channels-last", {2, 3, 4, 5}, {0, 2, 3, 1});
  call("reversed", {2, 3, 4}, {2, 1, 0});
  call("[B, H, L, E] laid out [B, L, H, E]", {1, 12, 128, 64}, {0, 2, 1, 3});
  call("size-1 and size-0 dims", {3, 1, 0, 2}, {3, 2, 0, 1});
  call("0-d", {}, {});
  call("1-d", {7}, {0});
  for (DType t : all_numeric_dtypes())
    call("dtype " + dtype_code_str(t), {2, 3}, {1, 0}, {{"dtype", DT(t)}});
  call("with device 'cuda' and pin_memory", {4, 2}, {1, 0},
       {{"dtype", DT(DType::Float16)}, {"device", S("cuda")}, {"pin_memory", B(false)}});
  call("error: layout shorter than size", {2, 3, 4}, {0, 1});
  call("error: duplicate dim", {2, 3}, {1, 1});
  call("error: dim out of range", {2, 3}, {0, 2});
  call("error: negative dim", {2, 3}, {-1, 0});
  call("error: negative size", {2, -3}, {1, 0});
  return out;
}

}  // namespace

void register_creation_permuted_ops(OpRegistry& r) {
  OpDef op = OpDef::from_schema(
      "aten::empty_permuted(SymInt[] size, int[] physical_layout, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
      "creation");
  op.dtypes = all_numeric_dtypes();
  op.meta = empty_permuted_meta;
  op.ref = structured_ref(empty_permuted_meta, empty_permuted_impl);
  op.samples = empty_permuted_samples;
  op.cost = [](const Values&, const Values&) { return Cost{}; };  // nothing is written
  op.compare.kind = ComparePolicy::Kind::ShapeOnly;
  op.compare.values_unspecified = true;
  r.add(std::move(op));
}

}  // namespace crucible

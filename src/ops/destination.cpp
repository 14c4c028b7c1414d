// Destination-passing (include/crucible/ops/destination.h).
#include "crucible/ops/destination.h"

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "crucible/core/map_tensors.h"

namespace crucible {

namespace {

Values allocate(const Values& specs, OutputFill fill) {
  return map_tensors(specs, [fill](const Tensor& t) {
    if (!t.is_meta()) return t;  // an argument: written in place, or a view of one
    return fill == OutputFill::Zeros
               ? Tensor::empty_strided(t.shape(), t.strides(), t.dtype())
               : Tensor::uninitialized_strided(t.shape(), t.strides(), t.dtype());
  });
}

}  // namespace

Values allocate_outputs(const OpDef& op, const Values& specs, OutputFill fill) {
  if (op.data_dependent)
    internal_error(
        fmt::format("{}: a data-dependent op's outputs cannot be allocated from its "
                    "meta function (their sizes are bounds)",
                    op.name));
  return allocate(specs, fill);
}

RefFn structured_ref(MetaFn meta, ImplFn impl, bool data_dependent) {
  if (data_dependent)
    internal_error("structured_ref: a data-dependent op computes its outputs' sizes itself");
  return [meta = std::move(meta), impl = std::move(impl)](const Args& args) {
    Values outputs = allocate(meta(args), OutputFill::Zeros);
    impl(args, outputs);
    return outputs;
  };
}

SeededRefFn structured_seeded_ref(MetaFn meta, SeededImplFn impl) {
  return [meta = std::move(meta), impl = std::move(impl)](const Args& args, uint64_t seed) {
    Values outputs = allocate(meta(args), OutputFill::Zeros);
    impl(args, seed, outputs);
    return outputs;
  };
}

}  // namespace crucible

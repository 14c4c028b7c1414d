// Destination-passing: an op's outputs allocated from its meta function, then computed into.
//
// PyTorch's structured kernels split an op in two: TORCH_META_FUNC checks the arguments and
// says what the outputs are, TORCH_IMPL_FUNC computes into outputs someone else allocated (MLX
// does the same with its ops' shape inference and `eval_cpu`). A catalog reference or a cpu
// kernel written this way (an ImplFn) never checks an argument and never allocates an output:
// the meta function has refused every call ATen refuses before the implementation runs, and
// the outputs it described are allocated here, with its shapes, strides and dtypes. Only checks
// that depend on the values (an index out of range) stay in the implementation.
#pragma once

#include <functional>

#include "crucible/core/value.h"
#include "crucible/ops/args.h"
#include "crucible/ops/op.h"

namespace crucible {

// Computes a call into `outputs`: one per return of the schema, as the meta function described
// them, allocated (fresh outputs) or the arguments themselves (in place, out=, views).
using ImplFn = std::function<void(const Args& args, const Values& outputs)>;

// How a fresh output's memory starts: zero-filled (the reference: a bug that leaves an element
// unwritten gives 0 every time, never yesterday's bits) or as allocated (ATen's at::empty:
// kernels that write every element).
enum class OutputFill : uint8_t { Zeros, Uninitialized };

// The outputs a meta function described, allocated on the host: every meta tensor (lists'
// included) becomes a tensor of the same shape, strides and dtype; tensors that are arguments
// (in place, out=, a view) and every other value are returned as they are. An Internal error
// for a data-dependent op's outputs, whose sizes are only bounds.
Values allocate_outputs(const OpDef& op, const Values& specs, OutputFill fill);

// The reference of an op written destination-passing: runs the op's meta function (ATen's
// argument checks, once), allocates the outputs it describes (zero-filled) and has `impl`
// compute into them. Set as OpDef::ref with the op's own meta function.
RefFn structured_ref(MetaFn meta, ImplFn impl, bool data_dependent = false);

// A random op's reference written destination-passing: as structured_ref, with the seed the
// run draws the op's values from. Set as OpDef::ref_seeded.
using SeededImplFn = std::function<void(const Args& args, uint64_t seed, const Values& outputs)>;
SeededRefFn structured_seeded_ref(MetaFn meta, SeededImplFn impl);

}  // namespace crucible

// A case's inputs saved to a file and read back, so a failure found on real tensors (the
// op-by-op flow's intermediate values) replays exactly: `crucible run --op X --case C --inputs
// F`. The file is safetensors; each tensor argument is stored under its schema name, each
// element of a tensor-list argument under name.0, name.1, ...
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "crucible/cases/literal.h"
#include "crucible/core/value.h"
#include "crucible/ops/op.h"

namespace crucible {

// The tensors of bound arguments `inputs` of `op`, named as above (undefined tensors left out).
std::vector<std::pair<std::string, Tensor>> named_input_tensors(const OpDef& op,
                                                                const Values& inputs);

// The bound arguments of `call` with every tensor read from `file`: the call is materialised
// as usual (non-tensor arguments, seed), then each tensor is replaced by the file's tensor of its
// name, which must have the call's shape and dtype. A missing or mismatching tensor is an Input
// error naming the file and the tensor.
Values inputs_from_file(const OpDef& op, const cases::CallSpec& call, uint64_t seed,
                        const std::string& file);

}  // namespace crucible

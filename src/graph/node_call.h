// A node's call made into bound arguments (private to src/graph): the parser binds it with meta
// tensors to run the op's meta function, the executor with real tensors to run the op. Both go
// through the catalog's materialize_meta, so arguments are converted exactly as a case's are.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "crucible/cases/literal.h"
#include "crucible/cases/references.h"
#include "crucible/core/value.h"
#include "crucible/graph/graph.h"
#include "crucible/ops/op.h"

namespace crucible::graph::detail {

// The value a reference names (a tensor; an undefined one for an output an op left out).
using ValueLookup = std::function<const Tensor&(std::string_view name)>;

// `call` with every reference replaced by its value's spec: T([shape], dtype[, stride=...]),
// or None for an undefined tensor. The result is a case of the trace grammar.
cases::CallSpec call_with_specs(const cases::CallSpec& call,
                                const std::function<TensorSpec(std::string_view name)>& spec_of);

// The bound arguments of `op` for `call` (schema order, defaults filled): every reference is the
// very tensor `value_of` gives (views and aliasing carry from node to node).
Values bind_node(const OpDef& op, const cases::CallSpec& call, const ValueLookup& value_of);

// An op's returns as one tensor per output name: a Tensor return is one, a list return one per
// element. Any other return (a number) is an op error naming the op.
std::vector<Tensor> flatten_returns(const Values& returns, const std::string& op);

// Calls fn(reference name) for each value reference in the call, in order (lists included).
void for_each_reference(const cases::CallSpec& call,
                        const std::function<void(const std::string& name)>& fn);

}  // namespace crucible::graph::detail

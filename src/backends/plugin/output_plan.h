// What crucible passes as a kernel's outputs (destination-passing): per return of the schema, a
// fresh tensor of known shape, a data-dependent one the kernel allocates, a mutated argument, a
// view, or a number. Shapes come from the op's meta function (OpDef::meta), per argument
// signature (shapes, strides, dtypes and non-tensor values), cached.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "crucible/core/value.h"
#include "crucible/ops/op.h"

namespace crucible {

struct TensorSpec {
  Shape shape;
  Shape strides;
  DType dtype = DType::Float32;
};

struct OutputSlot {
  enum class Kind : uint8_t {
    Fresh,          // `Tensor`: allocated by crucible
    View,           // `Tensor(a)`: allocated by crucible; make_view may redirect it
    Mutated,        // `Tensor(a!)`: argument `arg` itself
    DataDependent,  // allocated by the kernel through alloc_output
    Number,         // int, float, bool or Scalar return
    FreshList,      // `Tensor[]` / `Tensor(a)[]`: each item allocated by crucible
  };
  Kind kind = Kind::Fresh;
  TensorSpec spec;                         // Fresh, View
  std::vector<TensorSpec> items;           // FreshList
  size_t arg = 0;                          // Mutated
  ValueKind number_kind = ValueKind::Int;  // Number
};

struct OutputPlan {
  std::vector<OutputSlot> slots;
  // The meta function raised on these arguments (an invalid call): fresh outputs are shaped
  // like the first tensor argument, and the kernel is expected to return CRUCIBLE_ERROR.
  bool meta_raised = false;
};

class OutputPlanner {
 public:
  // The plan for a call of `op` on `args` (bound, schema order), from the op's meta function
  // the first time an argument signature is seen.
  const OutputPlan& plan(const OpDef& op, const Values& args);

 private:
  std::map<std::string, OutputPlan> cache_;
};

// The key of the plan cache: op name, and per argument its dtype, shape and strides (tensors) or
// its value (everything else).
std::string argument_signature(const OpDef& op, const Values& args);

}  // namespace crucible

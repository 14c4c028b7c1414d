// Saved case inputs (see crucible/eval/saved_inputs.h).
#include "crucible/eval/saved_inputs.h"

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "crucible/graph/safetensors.h"
#include "crucible/ops/materialize.h"

namespace crucible {

namespace {

// Calls fn(name, tensor) for every tensor of argument `i` (a tensor, or a list's elements).
template <class Fn>
void for_each_tensor(const OpDef& op, const Values& inputs, Fn&& fn) {
  for (size_t i = 0; i < inputs.size() && i < op.schema.arguments.size(); ++i) {
    const std::string& name = op.schema.arguments[i].name;
    const Value& v = inputs[i];
    if (v.is_tensor()) {
      fn(name, v.tensor());
    } else if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList) {
      const auto& list = v.tensors();
      for (size_t k = 0; k < list.size(); ++k) fn(fmt::format("{}.{}", name, k), list[k]);
    }
  }
}

}  // namespace

std::vector<std::pair<std::string, Tensor>> named_input_tensors(const OpDef& op,
                                                                const Values& inputs) {
  std::vector<std::pair<std::string, Tensor>> out;
  for_each_tensor(op, inputs, [&](const std::string& name, const Tensor& t) {
    if (t.defined()) out.emplace_back(name, t);
  });
  return out;
}

Values inputs_from_file(const OpDef& op, const cases::CallSpec& call, uint64_t seed,
                        const std::string& file) {
  const graph::Safetensors saved = graph::read_safetensors(file);
  Values inputs = materialize(op, call, seed);
  for_each_tensor(op, inputs, [&](const std::string& name, const Tensor& t) {
    if (!t.defined()) return;
    auto it = saved.tensors.find(name);
    if (it == saved.tensors.end())
      input_error(file,
                  fmt::format("holds no tensor '{}' for {}'s argument (--inputs)", name, op.name));
    const Tensor& s = it->second;
    if (s.shape() != t.shape() || s.dtype() != t.dtype())
      input_error(file, fmt::format("tensor '{}' is {} {}, but the case's argument is {} {}", name,
                                    shape_str(s.shape()), dtype_code(s.dtype()),
                                    shape_str(t.shape()), dtype_code(t.dtype())));
    t.copy_from(s);  // into the materialised tensor: its strides (and views) stay the case's
  });
  return inputs;
}

}  // namespace crucible

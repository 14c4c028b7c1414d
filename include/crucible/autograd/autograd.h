// Reverse-mode differentiation over a captured graph. Each op has one derivative rule, written
// with catalog ops as PyTorch's derivatives.yaml writes it (convolution_backward,
// native_layer_norm_backward, _softmax_backward_data, mm for products, ...), so a model's
// backward is more nodes of the same graph and exercises a backend's backward kernels.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "crucible/nn/tracer.h"

namespace crucible::autograd {

// True when `op` (a catalog overload) has a derivative rule; the ops that have one, sorted.
bool has_rule(const std::string& op);
std::vector<std::string> rule_ops();

// Differentiates the nodes recorded so far, from the last back: `seeds` pairs a value with its
// gradient; the result holds the gradient of each value named in `wrt` that the seeds reach.
// Only values that depend on `wrt` are differentiated (a constant mask or token ids get no
// gradient). A node on that path whose op has no rule is a Usage error naming the op.
std::map<std::string, nn::Var> backward(nn::Tracer& t,
                                        const std::vector<std::pair<nn::Var, nn::Var>>& seeds,
                                        const std::vector<std::string>& wrt);

// What a training capture adds: the ops of the forward nodes, and of the backward nodes.
struct TrainingOps {
  std::vector<std::string> forward;   // sorted, distinct
  std::vector<std::string> backward;  // sorted, distinct
};

// Makes the captured forward a training graph, as export_graph.py does: an input `tangent`
// (initialiser `grad`: the random upstream gradient) of y's shape, `loss = sum(y * tangent)`,
// and the gradient of every declared parameter the output depends on (outputs `loss` and
// `grad`); kind becomes "training".
TrainingOps make_training(nn::Tracer& t, const nn::Var& y);

}  // namespace crucible::autograd

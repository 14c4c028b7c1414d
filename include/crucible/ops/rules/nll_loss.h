// The argument checks of the negative log-likelihood losses, shared by the catalog's reference
// (ops/nll_loss.cpp) and the cpu backend's kernels, so both raise exactly the same errors.
#pragma once

#include <cstdint>

#include "crucible/core/tensor.h"

namespace crucible::nll {

// The shape of a (self, target, weight) call: n elements of c classes each; nll_loss2d's
// spatial dims are h x w (1 x 1 for nll_loss). none_shape: the output shape of reduction none.
struct LossShape {
  int64_t n = 0, c = 0, h = 1, w = 1;
  Shape none_shape;
};

// The checks of nll_loss(2d)_forward/backward on self, target and the optional weight
// (undefined when None), in ATen's order.
LossShape check_inputs(const Tensor& self, const Tensor& target, const Tensor& weight, bool two_d);

// The backward's further checks: total_weight holds one element; grad_output has the target's
// shape for a per-element (reduction none) loss, else one element.
void check_backward(const Tensor& grad, const Tensor& self, const Tensor& total_weight,
                    int64_t reduction, const LossShape& g, bool two_d);

// Whether the loss is per element (reduction none with a batch).
inline bool per_element(int64_t reduction, const Tensor& self, bool two_d) {
  return reduction == 0 && (two_d || self.dim() == 2);
}

}  // namespace crucible::nll

# aten._softmax.default in crucible's layout: <op.overload>/<op.overload>.py.
# Schema: _softmax(Tensor self, int dim, bool half_to_float) -> Tensor.
import torch


def _softmax__default_kernel_impl(x, dim, half_to_float):
    if half_to_float:
        x = x.float()
    shifted = x - x.amax(dim=dim, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim=dim, keepdim=True)

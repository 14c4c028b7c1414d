# aten._softmax.default in crucible's layout: <op.overload>/<op.overload>.py.
# Schema: _softmax(Tensor self, int dim, bool half_to_float) -> Tensor.
import torch


def _softmax__default_kernel_impl(x, dim, half_to_float):
    if half_to_float and x.dtype != torch.float16:
        raise RuntimeError("conversion is supported for Half type only")
    rank = max(x.dim(), 1)
    if not -rank <= dim < rank:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-rank, rank - 1, dim))
    out_dtype = torch.float32 if half_to_float else x.dtype
    if x.numel() == 0:
        return torch.empty_like(x, dtype=out_dtype)
    if not x.is_floating_point():
        raise RuntimeError("softmax is not implemented for %s" % x.dtype)
    # Reduced-precision inputs are computed in float32 and rounded once at the end.
    y = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    shifted = y - y.amax(dim=dim, keepdim=True)
    e = shifted.exp()
    return (e / e.sum(dim=dim, keepdim=True)).to(out_dtype)

# aten.add.Tensor in BackendBench's second layout:
# <op>__<overload>/<op>__<overload>_implementation_v1.py defines <op>__<overload>_kernel_impl.
# Schema: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor; alpha is
# kwarg-only, so it comes as a keyword (a Python bool, int or float, as PyTorch would pass it).
import torch


def _as(x, dtype):
    return x.to(dtype) if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=dtype)


def add__Tensor_kernel_impl(self, other, *, alpha=1):
    result_type = torch.result_type(self, other)
    if isinstance(alpha, bool) and result_type != torch.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if alpha == 1 and result_type.is_complex:
        # Part by part: multiplying by alpha = 1 + 0j would turn an infinite part into NaN.
        a, b = torch.broadcast_tensors(_as(self, result_type), _as(other, result_type))
        return torch.view_as_complex((torch.view_as_real(a) + torch.view_as_real(b)).contiguous())
    if result_type in (torch.float16, torch.bfloat16):
        # Computed in float32 and rounded once (PyTorch 1.13 would round a 0-d float32 operand
        # to the result's type first).
        f32 = torch.float32
        return torch.add(_as(self, f32), _as(other, f32), alpha=alpha).to(result_type)
    if alpha == 1:
        return torch.add(self, other)
    return torch.add(self, other, alpha=alpha)

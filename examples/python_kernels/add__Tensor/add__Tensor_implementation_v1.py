# aten.add.Tensor in BackendBench's second layout:
# <op>__<overload>/<op>__<overload>_implementation_v1.py defines <op>__<overload>_kernel_impl.
# Schema: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor; alpha is
# kwarg-only, so it comes as a keyword (a Python bool, int or float, as PyTorch would pass it).
import torch


def add__Tensor_kernel_impl(self, other, *, alpha=1):
    result_type = torch.result_type(self, other)
    if isinstance(alpha, bool) and result_type != torch.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if alpha == 1:
        return torch.add(self, other)
    return torch.add(self, other, alpha=alpha)

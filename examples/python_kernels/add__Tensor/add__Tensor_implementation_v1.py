# aten.add.Tensor in BackendBench's second layout:
# <op>__<overload>/<op>__<overload>_implementation_v1.py defines <op>__<overload>_kernel_impl.
# Schema: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor; alpha is
# kwarg-only, so it comes as a keyword.
import torch


def add__Tensor_kernel_impl(self, other, *, alpha=1):
    if alpha == 1:
        return self + other
    return torch.add(self, other, alpha=alpha)

# aten.relu.default in BackendBench's first layout: <op>/<op>.py defines <op>_kernel_impl.
# Called like the ATen op: relu(Tensor self) -> Tensor.
import torch


def relu_kernel_impl(x: torch.Tensor) -> torch.Tensor:
    if x.dtype == torch.bool:
        raise RuntimeError("Boolean inputs not supported for relu")  # as ATen refuses it
    # NaN < 0 is false: NaN passes through, as in ATen.
    return torch.where(x < 0, torch.zeros_like(x), x)

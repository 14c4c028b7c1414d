#!/usr/bin/env python3
"""Records the ATen operators a PyTorch program dispatches in eager mode as a crucible trace.

The output is the trace grammar crucible reads (`Operator: aten.X.Y` / `cnt: N, ((args), {kwargs})`,
docs: DESIGN's case grammar), one block per distinct call, in the order first seen: what
today's PyTorch really runs for a model (scaled-dot-product attention and its backward
included), not only Core ATen.

    python3 scripts/record_trace.py my_model.py -o my_model.txt [--training] [--device cuda]

`my_model.py` defines make_model() -> (module, example_inputs), as for export_graph.py.
As a library: `with TraceRecorder() as rec: ...; rec.write(path)`.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
from collections import OrderedDict

import torch
from torch.utils._python_dispatch import TorchDispatchMode

DTYPE_CODES = {
    torch.bool: "b8", torch.uint8: "u8", torch.int8: "i8", torch.int16: "i16",
    torch.int32: "i32", torch.int64: "i64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.float32: "f32", torch.float64: "f64", torch.complex32: "c32",
    torch.complex64: "c64", torch.complex128: "c128",
}


def contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(int(s), 1)
    return list(reversed(strides))


def fmt(a) -> str:
    if isinstance(a, torch.Tensor):
        shape = list(a.shape)
        text = f"T([{', '.join(str(s) for s in shape)}], {DTYPE_CODES.get(a.dtype, str(a.dtype))}"
        if a.dim() > 0 and list(a.stride()) != contiguous_strides(shape):
            text += ", stride=(" + ", ".join(str(s) for s in a.stride()) + ("," if a.dim() == 1 else "") + ")"
        return text + ")"
    if a is None:
        return "None"
    if isinstance(a, bool):
        return "True" if a else "False"
    if isinstance(a, int):
        return str(a)
    if isinstance(a, float):
        if math.isnan(a):
            return "nan"
        if math.isinf(a):
            return "inf" if a > 0 else "-inf"
        return repr(a)
    if isinstance(a, torch.dtype):
        return DTYPE_CODES.get(a, str(a))
    if isinstance(a, torch.device):
        return f"'{a.type}'"
    if isinstance(a, (torch.layout, torch.memory_format)):
        return str(a)
    if isinstance(a, str):
        return "'" + a.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(a, tuple):
        return "(" + ", ".join(fmt(x) for x in a) + ("," if len(a) == 1 else "") + ")"
    if isinstance(a, list):
        return "[" + ", ".join(fmt(x) for x in a) + "]"
    return repr(a)


class TraceRecorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls: "OrderedDict[str, OrderedDict[str, int]]" = OrderedDict()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if isinstance(func, torch._ops.OpOverload) and func.namespace == "aten":
            name = f"aten.{func._schema.name.split('::')[-1]}.{func._overloadname or 'default'}"
            pos = "(" + ", ".join(fmt(a) for a in args) + ("," if len(args) == 1 else "") + ")"
            kw = "{" + ", ".join(f"'{k}': {fmt(v)}" for k, v in kwargs.items()) + "}"
            call = f"({pos}, {kw})"
            per_op = self.calls.setdefault(name, OrderedDict())
            per_op[call] = per_op.get(call, 0) + 1
        return func(*args, **kwargs)

    def write(self, path):
        with open(path, "w") as f:
            for name, calls in self.calls.items():
                f.write(f"Operator: {name}\n")
                for call, cnt in calls.items():
                    f.write(f"cnt: {cnt}, {call}\n")


def record(model, inputs, training=False):
    rec = TraceRecorder()
    if training:
        model.train()
        with rec:
            out = model(*inputs)
            if not isinstance(out, torch.Tensor):
                out = out[0] if isinstance(out, (tuple, list)) else out.logits
            out.float().sum().backward()
    else:
        model.eval()
        with torch.no_grad(), rec:
            model(*inputs)
    return rec


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("module_file")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--training", action="store_true")
    p.add_argument("--device", default="cpu")
    p.add_argument("--dtype", default="", help="e.g. float16 or bfloat16: cast the model and float inputs")
    a = p.parse_args()
    spec = importlib.util.spec_from_file_location("crucible_user_model", a.module_file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model, inputs = mod.make_model()
    dt = getattr(torch, a.dtype) if a.dtype else None
    model = model.to(a.device, dtype=dt) if dt else model.to(a.device)
    inputs = tuple(
        (x.to(a.device, dtype=dt) if (dt and x.is_floating_point()) else x.to(a.device)) for x in inputs
    )
    record(model, inputs, a.training).write(a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())

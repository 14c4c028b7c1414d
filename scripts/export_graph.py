#!/usr/bin/env python3
"""Export a PyTorch nn.Module to a crucible graph file (format: docs/graphs.md).

Needs PyTorch >= 2.4 wherever it runs; nothing from crucible. Two graph kinds:

* forward: torch.export.export, decomposed to Core ATen (run_decompositions()).
* training: one joint graph through aot_autograd's joint export: the loss
  (sum(output * tangent), with `tangent` a graph input marked `grad`, i.e. a random upstream
  gradient) and the gradient of every parameter as outputs.

Used as a library:

    from export_graph import export_graph
    export_graph(model, (x,), "model.graph", kind="forward", weights="model.safetensors")

or from the command line with a Python file that defines `make_model()` returning
`(module, example_inputs_tuple)` (and optionally `INPUT_ROLES = {"input_ids": "index(0, 100)"}`):

    python3 scripts/export_graph.py my_model.py -o my_model.graph [--training] [--weights W]
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import math
import operator
import struct
import sys

import torch

FORMAT_VERSION = 1

DTYPE_CODES = {
    torch.bool: "b8",
    torch.uint8: "u8",
    torch.int8: "i8",
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float32: "f32",
    torch.float64: "f64",
    torch.complex32: "c32",
    torch.complex64: "c64",
    torch.complex128: "c128",
}

SAFETENSORS_DTYPES = {
    torch.bool: "BOOL",
    torch.uint8: "U8",
    torch.int8: "I8",
    torch.int16: "I16",
    torch.int32: "I32",
    torch.int64: "I64",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.float32: "F32",
    torch.float64: "F64",
}

# Lifted constants and buffers up to this many elements are written with their exact values.
MAX_DATA_NUMEL = 4096


class ExportError(Exception):
    pass


def tensor_spec(shape, dtype) -> str:
    if dtype not in DTYPE_CODES:
        raise ExportError(f"dtype {dtype} has no crucible code")
    return f"T([{', '.join(str(int(s)) for s in shape)}], {DTYPE_CODES[dtype]})"


def fmt_float(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    r = repr(float(v))
    return r


def fmt_number(v) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    return fmt_float(float(v))


def initialiser(t: torch.Tensor, kind: str) -> str:
    """An initialiser that reproduces `t` exactly where it can, and its distribution otherwise."""
    t = t.detach().cpu()
    n = t.numel()
    if t.dtype == torch.bool:
        if n <= MAX_DATA_NUMEL and kind != "param":
            return "data(" + ", ".join("True" if b else "False" for b in t.flatten().tolist()) + ")"
        return "bool"
    if n == 0:
        return "zeros"
    if bool((t == 0).all()):
        return "zeros"
    if bool((t == 1).all()):
        return "ones"
    flat = t.flatten()
    if not t.is_floating_point() or kind != "param":
        if bool((flat == torch.arange(n, dtype=flat.dtype)).all()) and n > 1:
            return "arange"
        if bool((flat == flat[0]).all()):
            return f"full({fmt_number(flat[0].item())})"
        if n <= MAX_DATA_NUMEL:
            return "data(" + ", ".join(fmt_number(v) for v in flat.tolist()) + ")"
        if not t.is_floating_point():
            return f"index({int(flat.min())}, {int(flat.max()) + 1})"
    if bool((flat == flat[0]).all()):
        return f"full({fmt_number(flat[0].item())})"
    f = flat.double()
    lo, hi = float(f.min()), float(f.max())
    if lo >= 0.0 and kind == "buffer":  # running variances and the like must stay positive
        return f"uniform({lo:.6g}, {max(hi, lo + 1e-6):.6g})"
    return f"normal({float(f.mean()):.6g}, {float(f.std()) if n > 1 else 1.0:.6g})"


def input_role(t: torch.Tensor) -> str:
    if t.dtype == torch.bool:
        return "bool"
    if t.is_floating_point():
        return ""
    lo, hi = int(t.min()), int(t.max())
    return f"index({lo}, {hi + 1})"


def graph_name(name: str) -> str:
    """A graph's name: letters, digits, '_', '.' and '-'."""
    return "".join(c if (c.isalnum() or c in "_.-") else "_" for c in name) or "model"


def safe_name(name: str) -> str:
    out = "".join(c if (c.isalnum() or c in "_.") else "_" for c in name)
    return out or "_"


class Writer:
    def __init__(self):
        self.lines: list[str] = []
        self.names: dict[object, str] = {}  # fx node -> value name (without %)
        self.used: set[str] = set()

    def fresh(self, base: str) -> str:
        base = safe_name(base)
        name, i = base, 1
        while name in self.used:
            name = f"{base}_{i}"
            i += 1
        self.used.add(name)
        return name

    def arg(self, a) -> str:
        if isinstance(a, torch.fx.Node):
            if a not in self.names:
                raise ExportError(f"value {a.name} is used before it is defined")
            return "%" + self.names[a]
        if a is None:
            return "None"
        if isinstance(a, bool):
            return "True" if a else "False"
        if isinstance(a, int):
            return str(a)
        if isinstance(a, float):
            return fmt_float(a)
        if isinstance(a, str):
            return json.dumps(a).replace('"', "'")
        if isinstance(a, torch.dtype):
            return DTYPE_CODES[a]
        if isinstance(a, torch.device):
            return f"'{a.type}'"
        if isinstance(a, torch.layout):
            return str(a)
        if isinstance(a, torch.memory_format):
            return str(a)
        if isinstance(a, (list, tuple)):
            return "[" + ", ".join(self.arg(x) for x in a) + "]"
        raise ExportError(f"argument {a!r} of type {type(a).__name__} has no graph spelling")


def op_name(target) -> str:
    if not isinstance(target, torch._ops.OpOverload):
        raise ExportError(f"node target {target} is not an ATen overload")
    ns = target.namespace
    name = target._schema.name.split("::")[-1]
    overload = target._overloadname or "default"
    return f"{ns}.{name}.{overload}"


def value_spec(node) -> str:
    v = node.meta.get("val")
    if isinstance(v, torch.Tensor):
        return tensor_spec(v.shape, v.dtype)
    if isinstance(v, (list, tuple)) and all(isinstance(x, torch.Tensor) or x is None for x in v):
        return "(" + ", ".join("None" if x is None else tensor_spec(x.shape, x.dtype) for x in v) + ")"
    return ""


def emit_nodes(w: Writer, graph, skip_targets=()):
    """Writes every call_function node; getitem nodes name the outputs of their producer."""
    getitems: dict[object, dict[int, object]] = {}
    for node in graph.nodes:
        if node.op == "call_function" and node.target is operator.getitem:
            getitems.setdefault(node.args[0], {})[node.args[1]] = node
    ops_used = set()
    for node in graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        if node.target in skip_targets:
            continue
        name = op_name(node.target)
        if isinstance(node.target, torch._ops.OpOverload) and not node.target._schema.returns:
            # Runtime assertions (_assert_tensor_metadata, _assert_async, ...) return nothing:
            # in a functional graph nothing downstream depends on them.
            continue
        ops_used.add(name)
        args = [w.arg(a) for a in node.args]
        args += [f"{k}={w.arg(v)}" for k, v in node.kwargs.items()]
        val = node.meta.get("val")
        spec = value_spec(node)
        if isinstance(val, (list, tuple)):
            outs = []
            items = getitems.get(node, {})
            for i in range(len(val)):
                if i in items:
                    nm = w.fresh(items[i].name)
                    w.names[items[i]] = nm
                    outs.append("%" + nm)
                else:
                    outs.append("%_")
            lhs = ", ".join(outs)
        else:
            nm = w.fresh(node.name)
            w.names[node] = nm
            lhs = "%" + nm
        line = f"{lhs} = {name}({', '.join(args)})"
        if spec:
            line += f" -> {spec}"
        w.lines.append(line)
    return ops_used


def header(w: Writer, name: str, kind: str, source: str):
    w.lines += [f"crucible-graph {FORMAT_VERSION}", f"name {graph_name(name)}", f"kind {kind}"]
    if source:
        w.lines.append("source " + json.dumps(source))
    w.lines.append("")


def declare(w: Writer, node, keyword: str, label: str, t: torch.Tensor, init: str):
    nm = w.fresh(label)
    w.names[node] = nm
    line = f"{keyword} %{nm} : {tensor_spec(t.shape, t.dtype)}"
    if init:
        line += " " + init
    w.lines.append(line)
    return nm


def example_of(node):
    v = node.meta.get("val")
    if not isinstance(v, torch.Tensor):
        raise ExportError(f"placeholder {node.name} is not a tensor (symbolic shapes are not supported)")
    return v


def write_program(ep, inputs, input_names, name, kind, source, roles, n_model_inputs):
    """Writes an ExportedProgram (forward, or the joint forward-backward one) as a graph."""
    from torch.export.graph_signature import InputKind, OutputKind

    w = Writer()
    header(w, name, kind, source)
    sig = ep.graph_signature
    state = dict(ep.state_dict)
    state.update(getattr(ep, "constants", {}) or {})
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    ui = 0
    weights = {}
    for node, spec in zip(placeholders, sig.input_specs):
        if spec.kind == InputKind.USER_INPUT:
            t = inputs[ui]
            label = input_names[ui]
            role = "grad" if ui >= n_model_inputs else roles.get(label, input_role(t))
            ui += 1
            declare(w, node, "input", label, t, role)
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            t = state[spec.target]
            kw = {InputKind.PARAMETER: "param", InputKind.BUFFER: "buffer"}.get(spec.kind, "const")
            nm = declare(w, node, kw, strip_wrapper(spec.target), t, initialiser(t, kw))
            weights[nm] = t
        else:
            raise ExportError(f"input {spec.arg.name} of kind {spec.kind} is not supported")
    w.lines.append("")
    ops = emit_nodes(w, ep.graph)
    w.lines.append("")
    out_node = next(n for n in ep.graph.nodes if n.op == "output")
    for arg, spec in zip(out_node.args[0], sig.output_specs):
        if spec.kind == OutputKind.USER_OUTPUT and kind == "forward":
            w.lines.append(f"output {w.arg(arg)}")
        elif spec.kind == OutputKind.LOSS_OUTPUT:
            w.lines.append(f"loss {w.arg(arg)}")
        elif spec.kind == OutputKind.GRADIENT_TO_PARAMETER:
            w.lines.append(f"grad {w.arg(arg)} {safe_name(strip_wrapper(spec.target))}")
    return w, ops, weights


def strip_wrapper(name: str) -> str:
    return name[len("model.") :] if name.startswith("model.") else name


def arg_names_of(model, n):
    try:
        names = list(inspect.signature(model.forward).parameters)[:n]
    except (TypeError, ValueError):
        names = []
    return names + [f"input{i}" for i in range(len(names), n)]


def export_forward(model, inputs, name, source, roles):
    ep = torch.export.export(model, tuple(inputs))
    ep = ep.run_decompositions()
    names = arg_names_of(model, len(inputs))
    return write_program(ep, list(inputs), names, name, "forward", source, roles, len(inputs))


class _Loss(torch.nn.Module):
    """sum(model(*inputs) * tangent): a scalar loss whose gradient into the output is `tangent`."""

    def __init__(self, model, n_inputs):
        super().__init__()
        self.model = model
        self.n = n_inputs

    def forward(self, *args):
        out = self.model(*args[: self.n])
        tangents = args[self.n :]
        outs = _tensors_of(out)
        loss = None
        for o, t in zip(outs, tangents):
            term = (o * t).sum()
            loss = term if loss is None else loss + term
        return loss


def _tensors_of(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict) or hasattr(out, "to_tuple"):
        vals = list(out.values()) if isinstance(out, dict) else list(out.to_tuple())
        return [v for v in vals if isinstance(v, torch.Tensor) and v.is_floating_point()][:1]
    if isinstance(out, (list, tuple)):
        return [v for v in out if isinstance(v, torch.Tensor) and v.is_floating_point()][:1]
    raise ExportError(f"model output of type {type(out).__name__} has no tensor")


def untie_parameters(model):
    """Gives every use of a tied parameter (an LM head sharing the embedding) its own copy.

    The joint export wants one gradient output per parameter name; a tied pair would leave
    one name without a gradient. Untied, each name gets the gradient of its own use.
    """
    seen = set()
    for mod_name, mod in model.named_modules():
        for pname, p in list(mod._parameters.items()):
            if p is None:
                continue
            if id(p) in seen:
                full = f"{mod_name}.{pname}" if mod_name else pname
                print(f"export_graph.py: untied {full} (it shared its tensor with another parameter)",
                      file=sys.stderr)
                mod._parameters[pname] = torch.nn.Parameter(p.detach().clone(), requires_grad=p.requires_grad)
            else:
                seen.add(id(p))


def export_training(model, inputs, name, source, roles):
    from torch.export.experimental import _export_forward_backward

    model.train()
    untie_parameters(model)
    # The probe step below runs in train mode, which moves BatchNorm's running statistics:
    # they are restored afterwards, so the graph declares the model's own buffers.
    saved = {k: v.detach().clone() for k, v in model.named_buffers()}
    outs = _tensors_of(model(*inputs))
    gen = torch.Generator().manual_seed(0)
    tangents = [torch.randn(o.shape, generator=gen, dtype=o.dtype) for o in outs]
    # Parameters the loss does not reach (a pooler the head ignores) get no gradient: they are
    # frozen, so the joint graph has a gradient output for every trainable parameter.
    model.zero_grad(set_to_none=True)
    sum((o * t).sum() for o, t in zip(outs, tangents)).backward()
    for p in model.parameters():
        if p.grad is None:
            p.requires_grad_(False)
    model.zero_grad(set_to_none=True)
    with torch.no_grad():
        for k, v in model.named_buffers():
            v.copy_(saved[k])
    outs = [o.detach() for o in outs]
    wrapped = _Loss(model, len(inputs))
    args = tuple(inputs) + tuple(tangents)
    ep = torch.export.export(wrapped, args)
    joint = _export_forward_backward(ep, joint_loss_index=0)
    names = arg_names_of(model, len(inputs)) + [f"tangent{i}" for i in range(len(tangents))]
    return write_program(joint, list(args), names, name, "training", source, roles, len(inputs))


def write_safetensors(path: str, tensors: dict[str, torch.Tensor]):
    header = {}
    blobs = []
    offset = 0
    for name, t in tensors.items():
        t = t.detach().cpu().contiguous()
        if t.dtype not in SAFETENSORS_DTYPES:
            raise ExportError(f"{name}: dtype {t.dtype} has no safetensors code")
        data = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {
            "dtype": SAFETENSORS_DTYPES[t.dtype],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt", "writer": "crucible export_graph.py"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def export_graph(model, inputs, path, *, kind="forward", name=None, source="", weights=None, roles=None):
    """Writes `model` called on `inputs` as a crucible graph; returns the set of ops it uses."""
    if kind not in ("forward", "training"):
        raise ExportError(f"kind must be 'forward' or 'training', not {kind!r}")
    roles = roles or {}
    name = name or type(model).__name__
    if kind == "forward":
        model.eval()
        w, ops, params = export_forward(model, inputs, name, source, roles)
    else:
        w, ops, params = export_training(model, inputs, name, source, roles)
    with open(path, "w") as f:
        f.write("\n".join(w.lines) + "\n")
    if weights:
        write_safetensors(weights, params)
    return ops


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("module_file", help="a Python file defining make_model() -> (module, example_inputs)")
    p.add_argument("-o", "--output", required=True, help="the graph file to write")
    p.add_argument("--training", action="store_true", help="export the joint training graph")
    p.add_argument("--weights", help="also write the parameters and buffers as safetensors")
    p.add_argument("--name", help="the graph's name (default: the module's class name)")
    a = p.parse_args(argv)
    if torch.__version__ < "2.4":
        print(f"export_graph.py: needs PyTorch >= 2.4, found {torch.__version__}", file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location("crucible_user_model", a.module_file)
    if spec is None or spec.loader is None:
        print(f"export_graph.py: cannot load {a.module_file}", file=sys.stderr)
        return 2
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not hasattr(mod, "make_model"):
        print(f"export_graph.py: {a.module_file} defines no make_model()", file=sys.stderr)
        return 2
    model, inputs = mod.make_model()
    roles = getattr(mod, "INPUT_ROLES", {})
    try:
        ops = export_graph(
            model,
            tuple(inputs),
            a.output,
            kind="training" if a.training else "forward",
            name=a.name,
            source=f"{a.module_file}, torch {torch.__version__}",
            weights=a.weights,
            roles=roles,
        )
    except ExportError as e:
        print(f"export_graph.py: {e}", file=sys.stderr)
        return 2
    print(f"{a.output}: {len(ops)} distinct ops")
    return 0


if __name__ == "__main__":
    sys.exit(main())

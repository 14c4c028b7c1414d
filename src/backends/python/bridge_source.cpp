// The Python half of the bridge between a candidate process and a Python kernel: run once in the
// embedded interpreter as the module `_crucible_bridge`. It turns crucible's DLPack capsules and
// codes into PyTorch values, loads the kernel's file, formats exceptions, and checks what the
// kernel returned against what the op's schema returns before copying it into crucible's outputs.
#include "backends/python/bridge_source.h"

namespace crucible::python {

const char* const kBridgeSource = R"PY(
import importlib.util
import os
import subprocess
import sys
import traceback

# Programs started through subprocess (Triton's assembler and compiler) are forked, not
# vforked nor posix_spawned: those reset every signal handler in the child, the sandbox's SIGSYS
# handler included, which the sandbox refuses.
subprocess._USE_VFORK = False
subprocess._USE_POSIX_SPAWN = False

import torch
from torch.utils import dlpack as _dlpack


class Unsupported(Exception):
    """The call cannot be made in this PyTorch (a dtype it lacks): the case is unsupported."""


class Refused(Exception):
    """The kernel's result breaks the op's contract: the case fails with this message."""


class LoadError(Exception):
    """The kernel's file cannot be used: every case of its op says why."""


_DTYPES = {
    (0, 8): torch.int8, (0, 16): torch.int16, (0, 32): torch.int32, (0, 64): torch.int64,
    (1, 8): torch.uint8, (2, 16): torch.float16, (2, 32): torch.float32,
    (2, 64): torch.float64, (4, 16): torch.bfloat16, (5, 64): torch.complex64,
    (5, 128): torch.complex128, (6, 8): torch.bool,
}
for _code, _bits, _name in ((1, 16, "uint16"), (1, 32, "uint32"), (1, 64, "uint64"),
                            (5, 32, "complex32"), (10, 8, "float8_e4m3fn"),
                            (12, 8, "float8_e5m2")):
    if hasattr(torch, _name):
        _DTYPES[(_code, _bits)] = getattr(torch, _name)
_CODES = {d: k for k, d in _DTYPES.items()}
_ROOT = ""
# The pid of the candidate zygote that imported this module (and torch) for the processes it
# forks; None when this process imported it itself.
WARMED_IN = None


def dtype(code, bits):
    d = _DTYPES.get((code, bits))
    if d is None:
        raise Unsupported("PyTorch %s has no dtype for DLPack code %d with %d bits"
                          % (torch.__version__, code, bits))
    return d


def dl_code(t):
    c = _CODES.get(t.dtype)
    if c is None:
        raise Refused("the kernel returned a tensor of dtype %s, which crucible does not know"
                      % t.dtype)
    return c


def tensor(capsule, code, bits):
    """A tensor over crucible's memory (no copy). Types PyTorch's DLPack does not take (bool,
    float8, wide unsigned integers) come as integers of their width and are viewed as their
    type."""
    want = dtype(code, bits)
    try:
        t = _dlpack.from_dlpack(capsule)
    except Exception as e:
        raise Unsupported("PyTorch %s cannot take a %s tensor through DLPack: %s"
                          % (torch.__version__, want, e))
    return t if t.dtype == want else t.view(want)


def device(kind, index):
    return torch.device("cuda", index) if kind == 2 else torch.device("cpu")


def layout(v):
    return torch.sparse_coo if v == 1 else torch.strided


def memory_format(v):
    return (torch.contiguous_format, torch.preserve_format, torch.channels_last,
            torch.channels_last_3d)[v] if 0 <= v <= 3 else torch.contiguous_format


def set_threads(n):
    if n > 0 and torch.get_num_threads() != n:
        torch.set_num_threads(n)


def _short(path):
    return path[len(_ROOT):] if _ROOT and path.startswith(_ROOT) else path


def describe_exception(e):
    """The exception with its traceback, file names relative to the kernel folder."""
    lines = traceback.format_exception(type(e), e, e.__traceback__)
    return "".join(lines).replace(_ROOT, "") if _ROOT else "".join(lines)


def sync_environ(env):
    """Makes os.environ the process's environment again: the interpreter may have started in the
    candidate zygote, before the candidate process set its own variables (TMPDIR, the JIT
    cache)."""
    for k in [k for k in os.environb if k not in env]:
        del os.environb[k]
    for k, v in env.items():
        if os.environb.get(k) != v:
            os.environb[k] = v
    import tempfile
    tempfile.tempdir = None


def load(path, origin, root, names):
    """Runs the kernel's file as a module and returns (the function, its name)."""
    global _ROOT
    _ROOT = root
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = "crucible_kernel_" + "".join(c if c.isalnum() else "_" for c in origin)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except SyntaxError as e:
        where = "%s:%s" % (origin, e.lineno or 1)
        text = (e.text or "").rstrip("\n")
        raise LoadError("%s: %s: %s%s; fix the file (python3 -m py_compile %s shows it too)"
                        % (where, type(e).__name__, e.msg,
                           (" in «%s»" % text.strip()) if text.strip() else "", origin))
    except BaseException as e:
        tb = traceback.extract_tb(e.__traceback__)
        line = next((f.lineno for f in reversed(tb) if f.filename == path), 1)
        raise LoadError("%s:%s: importing it raised %s: %s\n%s" % (
            origin, line, type(e).__name__, e, describe_exception(e)))
    found = [n for n in names if callable(getattr(module, n, None))]
    if len(found) > 1:
        raise LoadError("%s defines both %s and %s; keep one" % (origin, found[0], found[1]))
    if not found:
        base = names[-1][:-len("_kernel_impl")]
        near = [n for n in dir(module) if not n.startswith("__") and callable(getattr(module, n))
                and (n.endswith("_kernel_impl") or n.startswith(base))]
        hint = (" It defines %s, which is not a name crucible looks for." % ", ".join(near)
                if near else "")
        raise LoadError("%s:1: defines no kernel: define def %s(*args, **kwargs) (or %s, or %s), "
                        "called like the ATen op.%s" % (origin, names[0], names[1], names[2],
                                                          hint))
    return getattr(module, found[0]), found[0]


def _extent(t):
    """[first byte, past the last byte) that a tensor reaches, or None when empty."""
    if t.numel() == 0:
        return None
    lo = hi = 0
    for size, stride in zip(t.shape, t.stride()):
        if stride >= 0:
            hi += (size - 1) * stride
        else:
            lo += (size - 1) * stride
    size = t.element_size()
    return (t.data_ptr() + lo * size, t.data_ptr() + (hi + 1) * size)


def _storage(t):
    """The address of a tensor's storage (0 when it has none)."""
    try:
        return t.untyped_storage().data_ptr()
    except AttributeError:
        return t.storage().data_ptr()


def _overlap(a, b):
    ea, eb = _extent(a), _extent(b)
    return ea is not None and eb is not None and ea[0] < eb[1] and eb[0] < ea[1]


def _what(t):
    return "%s of shape %s" % (t.dtype, tuple(t.shape))


def _fresh(op, i, r, out, inputs):
    if not isinstance(r, torch.Tensor):
        raise Refused("output %d: the kernel returned %s where %s returns a tensor (%s)"
                      % (i, type(r).__name__, op, _what(out)))
    if r.dtype != out.dtype or tuple(r.shape) != tuple(out.shape):
        raise Refused("output %d: the kernel returned a %s where %s returns a %s"
                      % (i, _what(r), op, _what(out)))
    if r.device != out.device:
        r = r.to(out.device)
    for name, t in inputs:
        if _overlap(r, t):
            raise Refused("output %d: the kernel returned a tensor that shares memory with input "
                          "'%s', where %s returns a fresh tensor (return a new tensor: "
                          ".clone() it)" % (i, name, op))
    out.copy_(r)


def finish(op, result, slots, inputs):
    """Checks the kernel's result against the op's returns and writes it into crucible's outputs.

    slots: per return of the schema, ("fresh", out) | ("list", [out, ...]) |
    ("mutated", arg, name) | ("view", out) | ("data_dependent",) | ("number",).
    inputs: (argument name, tensor) of every input tensor, in crucible's order.
    Returns per slot None, ("view", input index, offset, shape, strides),
    ("data_dependent", tensor, code, bits) or ("number", value)."""
    n = len(slots)
    if n == 0:
        return []
    if n == 1:
        results = [result]
    else:
        if not isinstance(result, (tuple, list)) or len(result) != n:
            raise Refused("the kernel returned %s where %s returns a tuple of %d values"
                          % (type(result).__name__, op, n))
        results = list(result)
    actions = []
    for i, (slot, r) in enumerate(zip(slots, results)):
        kind = slot[0]
        if kind == "fresh":
            _fresh(op, i, r, slot[1], inputs)
            actions.append(None)
        elif kind == "list":
            outs = slot[1]
            if not isinstance(r, (tuple, list)) or len(r) != len(outs):
                raise Refused("output %d: the kernel returned %s where %s returns a list of %d "
                              "tensors" % (i, type(r).__name__, op, len(outs)))
            for r_j, out in zip(r, outs):
                _fresh(op, i, r_j, out, inputs)
            actions.append(None)
        elif kind == "mutated":
            arg, name = slot[1], slot[2]
            if not (isinstance(r, torch.Tensor) and r.data_ptr() == arg.data_ptr()
                    and r.shape == arg.shape and r.stride() == arg.stride()
                    and r.dtype == arg.dtype):
                raise Refused("output %d: %s writes into its argument '%s' and returns it; the "
                              "kernel returned %s" % (i, op, name, "another tensor (" + _what(r)
                                                      + ")" if isinstance(r, torch.Tensor)
                                                      else type(r).__name__))
            actions.append(None)
        elif kind == "view":
            out = slot[1]
            base = None
            if isinstance(r, torch.Tensor):
                for k, (name, t) in enumerate(inputs):
                    if t.dtype == r.dtype and (_overlap(r, t) or (_storage(r) != 0 and
                                                                  _storage(r) == _storage(t))):
                        base = k
                        break
            if base is None:
                _fresh(op, i, r, out, [])
                actions.append(None)
            else:
                t = inputs[base][1]
                offset = (r.data_ptr() - t.data_ptr()) // r.element_size()
                actions.append(("view", base, offset, list(r.shape), list(r.stride())))
        elif kind == "data_dependent":
            if not isinstance(r, torch.Tensor):
                raise Refused("output %d: the kernel returned %s where %s returns a tensor"
                              % (i, type(r).__name__, op))
            r = r.detach().cpu().contiguous()
            code, bits = dl_code(r)
            actions.append(("data_dependent", r, code, bits))
        else:
            if isinstance(r, torch.Tensor):
                if r.numel() != 1:
                    raise Refused("output %d: the kernel returned a %s where %s returns a number"
                                  % (i, _what(r), op))
                r = r.item()
            if not isinstance(r, (bool, int, float)):
                raise Refused("output %d: the kernel returned %s where %s returns a number"
                              % (i, type(r).__name__, op))
            actions.append(("number", r))
    return actions


def copy_into(out, r):
    out.copy_(r)
)PY";

}  // namespace crucible::python

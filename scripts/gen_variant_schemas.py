#!/usr/bin/env python3
"""Lists the in-place and out= overloads ATen has for crucible's functional catalog ops.

Writes src/ops/variant_schemas.inc: one entry per ATen overload that crucible derives from a
functional op of its catalog (src/ops/variants.cpp says how). Run after adding a functional op:

    build/crucible ops --json > /tmp/ops.json
    scripts/gen_variant_schemas.py /tmp/ops.json data/spec/all_aten_ops.json > src/ops/variant_schemas.inc

The test VariantDerivation.EveryAtenVariantOfACatalogOpIsDerived fails when the file is stale.
"""
import json
import re
import sys

# Overloads that are not derived, each with its reason (kept in step with kNotDerived in
# src/ops/variants.cpp).
NOT_DERIVED = {
    # In-place view ops restride `self` instead of writing its elements.
    "aten.as_strided_.default", "aten.t_.default", "aten.transpose_.default",
    "aten.squeeze_.default", "aten.squeeze_.dim", "aten.squeeze_.dims", "aten.unsqueeze_.default",
    # Data-dependent output shapes: ATen resizes the out tensor to the result.
    "aten.nonzero.out",
    # ATen's schema does not mark running_mean/running_var as written although the kernel
    # updates them in training (the functional op's schema does).
    "aten.native_batch_norm.out",
    # A sparse result: crucible's tensors are strided.
    "aten._sparse_coo_tensor_with_dims_and_tensors.out",
}


# TensorIterator kernels built as unary ops (TensorIteratorConfig's check_all_same_dtype): every
# operand of one dtype, an out= of another raises (WriteRule::Same). By functional op; checked
# against libtorch by the aten conformance run (an out of a wider dtype).
SAME_DTYPE = {
    "abs", "neg", "ceil", "floor", "trunc", "round", "sign", "sgn", "bitwise_not", "frac",
    "aten.clamp.default", "clamp_min", "clamp_max", "elu", "gelu", "hardsigmoid", "hardswish", "hardtanh",
    "leaky_relu", "mish", "silu", "softplus", "lerp", "aten.pow.Tensor_Scalar",
}


def split_args(schema):
    inner = schema[schema.index("(") + 1: schema.rindex(") ->")]
    args, depth, cur = [], 0, ""
    for ch in inner:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        args.append(cur.strip())
    return args


def plain(arg):
    # Drops alias annotations: "Tensor(a!) self" -> "Tensor self".
    return re.sub(r"\([a-z]+!?\)", "", arg)


OPTIONS = ("dtype", "layout", "device", "pin_memory")


def functional_args(schema, inplace, drop_options=False):
    out, kwarg_only = [], False
    for a in split_args(schema):
        if a == "*":
            kwarg_only = True
            out.append(a)
            continue
        if not inplace and kwarg_only and re.match(r"Tensor\([a-z]+!\)", a):
            continue  # an out= argument
        if drop_options and kwarg_only and a.split("=")[0].split()[-1] in OPTIONS:
            continue  # a factory's TensorOptions
        out.append(plain(a))
    while out and out[-1] == "*":
        out.pop()
    return out


def is_out(schema):
    # Keyword-only arguments written through.
    args = split_args(schema)
    return "*" in args and any(re.match(r"Tensor\([a-z]+!\)", a) for a in args[args.index("*"):])


def main():
    # The catalog's own ops: the derived ones are what this script lists.
    catalog = [o for o in json.load(open(sys.argv[1])) if "derived_from" not in o]
    spec = json.load(open(sys.argv[2]))["ops"]
    names = {o["op"] for o in catalog}
    by_base = {}
    for o in catalog:
        base = o["op"].split(".")[1]
        by_base.setdefault(base, []).append(o)
    tags = {o["op"]: o.get("tags", []) for o in spec}
    rows = []
    for o in spec:
        name, schema = o["op"], o["schema"]
        if name in names or name in NOT_DERIVED:
            continue
        base = name.split(".")[1]
        out = is_out(schema)
        inplace = base.endswith("_") and not out
        fbase = base[:-1] if inplace else base
        if not (inplace or out):
            continue
        want = functional_args(schema, inplace)
        for f in by_base.get(fbase, []):
            if is_out(f["schema"]) or f["op"].split(".")[1].endswith("_"):
                continue  # not functional
            factory = False
            if functional_args(f["schema"], False) != want:
                if inplace or functional_args(f["schema"], False, True) != want:
                    continue
                factory = True
            t = tags.get(f["op"], []) + tags.get(name, [])
            # Overloads ATen generates (autogen) call the functional op and copy_ the result.
            same = fbase in SAME_DTYPE or f["op"] in SAME_DTYPE
            rule = ("Factory" if factory else "Copy" if "generated" in tags.get(name, [])
                    else "Same" if same else "Cast" if "pointwise" in t else "Copy")
            rows.append((name, schema, f["op"], rule))
            break
    print("// Generated by scripts/gen_variant_schemas.py from data/spec/all_aten_ops.json (PyTorch")
    print("// 2.11, BSD-3-Clause): ATen's in-place and out= overloads of the catalog's functional ops,")
    print("// each with its functional op and write rule (include/crucible/ops/variants.h).")
    for name, schema, f, rule in sorted(rows):
        print(f'{{R"({schema})",\n "{f}", WriteRule::{rule}}},')


main()

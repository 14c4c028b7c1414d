#!/usr/bin/env python3
"""BackendBench's opinfo suite, ATen against itself, timed for a side-by-side with crucible.

Runs what `python -m BackendBench.scripts.main --suite opinfo --backend aten` runs (the
`opinfo_cuda_bfloat16` suite, in one process, no workers) and prints the number of tests and the
wall time of building the suite and of evaluating it, so that the figures can be set beside
`crucible run --suite opinfo:bf16 --backend aten:cuda` on the same machine (docs/gpu.md).

Usage: PYTHONPATH=<BackendBench checkout> python3 bench/backendbench_opinfo.py [--device cuda]
       [--dtype bfloat16] [--json FILE]

Only BackendBench's opinfo suite, its evaluator and its aten backend are imported: the package's
`__init__` files also import its LLM clients, FACTO and TorchBench loaders, which need packages
(anthropic, datasets) that the evaluation never calls. PyTorch's OpInfo database imports
`expecttest` for its test-case base class; where that package is missing, a minimal stand-in
(a `TestCase` that is unittest's) is installed, since building samples never uses it. The
script says so on stderr when it does.
"""

import argparse
import importlib
import importlib.util
import json
import pathlib
import sys
import time
import types
import unittest


def _namespace(name, folder):
    mod = types.ModuleType(name)
    mod.__path__ = [str(folder)]
    sys.modules[name] = mod
    return mod


def _load_backendbench():
    spec = importlib.util.find_spec("BackendBench")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("backendbench_opinfo: BackendBench is not importable: put its checkout on PYTHONPATH")
    root = pathlib.Path(list(spec.submodule_search_locations)[0])
    # Packages without their __init__ (see the module's docstring).
    _namespace("BackendBench", root)
    _namespace("BackendBench.suite", root / "suite")
    _namespace("BackendBench.backends", root / "backends")
    try:
        import expecttest  # noqa: F401
    except ImportError:
        stand_in = types.ModuleType("expecttest")

        class TestCase(unittest.TestCase):
            def assertExpectedInline(self, actual, expect, skip=0):
                self.assertEqual(actual, expect)

        stand_in.TestCase = TestCase
        sys.modules["expecttest"] = stand_in
        print("backendbench_opinfo: expecttest missing, using a minimal TestCase stand-in",
              file=sys.stderr)
    opinfo = importlib.import_module("BackendBench.suite.opinfo")
    evaluate = importlib.import_module("BackendBench.eval")
    aten = importlib.import_module("BackendBench.backends.aten")
    return opinfo, evaluate, aten


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--json", help="write the figures to this file as JSON")
    a = p.parse_args()

    import torch

    dtype = getattr(torch, a.dtype, None)
    if not isinstance(dtype, torch.dtype):
        sys.exit(f"backendbench_opinfo: --dtype {a.dtype}: not a torch dtype (e.g. bfloat16)")
    opinfo, evaluate, aten = _load_backendbench()

    t0 = time.perf_counter()
    suite = opinfo.OpInfoTestSuite(f"opinfo_{a.device}_{a.dtype}", a.device, dtype)
    t1 = time.perf_counter()
    backend = aten.AtenBackend()
    ops = tests = correct = 0
    for test in suite:
        if test.op not in backend:
            continue
        _, _, results, _ = evaluate.eval_one_op(
            test.op, backend[test.op], test.correctness_tests, test.performance_tests
        )
        ops += 1
        tests += len(results)
        correct += sum(1 for r in results if r.is_correct)
    if a.device == "cuda":
        torch.cuda.synchronize()
    t2 = time.perf_counter()
    figures = {
        "suite": f"opinfo_{a.device}_{a.dtype}",
        "torch": torch.__version__,
        "ops": ops,
        "tests": tests,
        "correct": correct,
        "build_s": round(t1 - t0, 3),
        "eval_s": round(t2 - t1, 3),
        "tests_per_s": round(tests / (t2 - t1), 1) if t2 > t1 else None,
    }
    print(json.dumps(figures))
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(figures) + "\n")


if __name__ == "__main__":
    main()

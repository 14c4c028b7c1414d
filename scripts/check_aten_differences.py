#!/usr/bin/env python3
"""Lists the non-passing cases of an aten run that docs/aten-differences.md does not explain.

    scripts/check_aten_differences.py RESULTS.jsonl --version 2.11 --device cuda [--doc FILE]

RESULTS.jsonl is a run's results.jsonl (`crucible run --suite opinfo --backend aten[:cuda]
--reference ref`), or any file with one JSON object per case carrying op, case_id, case, label,
status, detail and dtype. The version is libtorch's (`1.13`, `2.11.0+cu130`: major and minor
count), the device `cpu` or `cuda`. The rules are tests/e2e/test_aten_conformance.cpp's: a case
is explained when it passed or was skipped, when it is unsupported because libtorch lacks the
op, the kernel or the dtype, or when a row whose **applies to** cell covers the version and the
device selects it, a row of a derived in-place or out= overload's functional op included
(by the functional case's id, or by the row's other selectors). Exit status 0 when every case
is explained, 1 when some are not, 2 on bad input.
"""

import argparse
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASE_ID = re.compile(r"[0-9a-f]{16}")
SELECTOR = re.compile(r"\*|dtype:[a-z0-9,]+|label:.+|[0-9a-f]{16}")
SCOPE = re.compile(r"(all|\d+\.x|\d+\.\d+\+?)( (cpu|cuda))?")
MASK = (1 << 64) - 1


def fail(message):
    """Bad input: the message (naming the file and line, or the flag) and exit status 2."""
    print(message, file=sys.stderr)
    sys.exit(2)


def split_cells(line):
    cells, cur = [], ""
    for i in range(1, len(line)):  # skip the leading '|'
        if line[i] == "|" and line[i - 1] != "\\":
            cells.append(cur.strip(" "))
            cur = ""
        else:
            cur += line[i]
    return cells


def ticked(cell):
    return re.findall(r"`([^`]+)`", cell)


def read_differences(path):
    """The rows of every table whose first cell is a backticked op name (`aten.`,
    `quantized_decomposed.`, `torchao.`)."""
    rows = []
    if not os.path.isfile(path):
        fail(f"--doc: {path} does not exist")
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.startswith(("| `aten.", "| `quantized_decomposed.", "| `torchao.")):
                continue
            cells = split_cells(line)
            ops = ticked(cells[0]) if cells else []
            row = {
                "op": ops[0] if ops else "",
                "selectors": ticked(cells[1]) if len(cells) > 1 else [],
                "scopes": ticked(cells[2]) if len(cells) > 2 else [],
                "reason": cells[-1] if cells else "",
                "line": n,
            }
            for s in row["selectors"]:
                if not SELECTOR.fullmatch(s):
                    fail(f"{path}:{n}: bad case selector '{s}'")
            if not row["scopes"]:
                fail(f"{path}:{n}: the applies-to cell names no scope")
            for s in row["scopes"]:
                if not SCOPE.fullmatch(s):
                    fail(f"{path}:{n}: bad scope '{s}' (VERSION [cpu|cuda])")
            rows.append(row)
    return rows


def parse_version(text):
    m = re.match(r"(?:libtorch )?(\d+)\.(\d+)", text)
    if not m:
        fail(f"--version: '{text}' is not a libtorch version (MAJOR.MINOR)")
    return int(m.group(1)), int(m.group(2))


def scope_covers(scope, version, device):
    m = SCOPE.fullmatch(scope)
    v, dev = m.group(1), m.group(3)
    if dev and dev != device:
        return False
    if v == "all":
        return True
    if v.endswith(".x"):
        return int(v[:-2]) == version[0]
    plus = v.endswith("+")
    major, minor = (int(x) for x in v.rstrip("+").split("."))
    return (version >= (major, minor)) if plus else version == (major, minor)


def selects(sel, r):
    if sel == "*":
        return True
    if sel.startswith("dtype:"):
        dt = r.get("dtype", "")
        return bool(dt) and dt in sel[6:].split(",")
    if sel.startswith("label:"):
        return sel[6:] in r.get("label", "")
    return r.get("case_id", "") == sel


# --- derived in-place and out= overloads (include/crucible/ops/variants.h) ---


def read_variants():
    """variant op -> (functional op, in place, destination argument names, factory)."""
    path = os.path.join(ROOT, "src", "ops", "variant_schemas.inc")
    text = open(path, encoding="utf-8").read()
    out = {}
    entry = re.compile(r'\{R"\((aten::[^(]+)\((.*?)\) -> .*?\)",\s*"([^"]+)", WriteRule::(\w+)\}',
                       re.S)
    for m in entry.finditer(text):
        name, args, functional, rule = m.groups()
        base = name[len("aten::"):]
        op = "aten." + (base if "." in base else base + ".default")
        dests, inplace = [], False
        for a in args.split(", "):
            mm = re.match(r"Tensor\([a-z]!\) (\w+)", a.strip())
            if mm:
                if mm.group(1) == "self" and not dests:
                    inplace = True
                dests.append(mm.group(1))
        out[op] = (functional, inplace, [] if inplace else dests, rule == "Factory")
    return out


def splitmix(z):
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & MASK
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & MASK
    z ^= z >> 31
    return z


def hash64(data, seed=0):
    h = 0xCBF29CE484222325 ^ splitmix((seed + 0x9E3779B97F4A7C15) & MASK)
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & MASK
    return splitmix(h)


def top_level_split(text):
    """Splits "a, b, c" at the commas outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, None, ""
    for ch in text:
        if quote:
            cur += ch
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def functional_case_id(r, variant):
    """The id of the functional op's case with the variant case's inputs, as Case::id()."""
    functional, inplace, dests, factory = variant
    if factory:
        return ""
    call = r.get("case", "")
    if not inplace and dests:
        m = re.fullmatch(r"\((\(.*\)), \{(.*)\}\)", call, re.S)
        if not m:
            return ""
        kwargs = [kv for kv in top_level_split(m.group(2))
                  if not any(kv.startswith(f"'{d}': ") for d in dests)]
        call = f"({m.group(1)}, {{{', '.join(kwargs)}}})"
    seed = int(r.get("seed", 0))
    return "%016x" % hash64(f"{functional}|{call}|{seed}".encode(), seed=0)


def lacks_it(r):
    """Unsupported because libtorch lacks the overload, its kernel or the dtype."""
    d = r.get("detail", "")
    if d.startswith("libtorch ") and (" has no aten::" in d or " has no CPU kernel for " in d
                                      or " has no CUDA kernel for " in d):
        return True
    return "not implemented for '" in d or "Could not run '" in d or " has no dtype " in d


def explained_by(rows, variants, r):
    op = r.get("op", "")
    v = variants.get(op)
    fid = functional_case_id(r, v) if v else ""
    for d in rows:
        own, functional = d["op"] == op, v is not None and d["op"] == v[0]
        if not own and not functional:
            continue
        for s in d["selectors"]:
            if own and selects(s, r):
                return d
            if functional and (s == fid if CASE_ID.fullmatch(s) else selects(s, r)):
                return d
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("results", help="results.jsonl of an aten run")
    p.add_argument("--version", required=True, help="libtorch version, e.g. 2.11 or 1.13.0")
    p.add_argument("--device", required=True, choices=["cpu", "cuda"])
    p.add_argument("--doc", default=os.path.join(ROOT, "docs", "aten-differences.md"))
    p.add_argument("--show", type=int, default=200, help="list at most this many (default 200)")
    a = p.parse_args()
    version = parse_version(a.version)
    rows = [d for d in read_differences(a.doc)
            if any(scope_covers(s, version, a.device) for s in d["scopes"])]
    variants = read_variants()
    counts = {"passed": 0, "explained": 0, "lacking": 0, "unexplained": 0}
    used = set()
    unexplained = []
    if not os.path.isfile(a.results):
        fail(f"{a.results} does not exist")
    with open(a.results, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                fail(f"{a.results}:{n}: not JSON: {e}")
            if r.get("record", "case") != "case":
                continue
            status = r.get("status", "")
            if status in ("passed", "skipped"):
                counts["passed"] += 1
                continue
            if status == "unsupported" and lacks_it(r):
                counts["lacking"] += 1
                continue
            d = explained_by(rows, variants, r)
            if d:
                counts["explained"] += 1
                used.add(d["line"])
                continue
            counts["unexplained"] += 1
            unexplained.append(r)
    for r in unexplained[: a.show]:
        print(f"{r.get('op')} {r.get('case_id')} [{r.get('dtype', '')}, {r.get('label', '')}] "
              f"{r.get('case', '')[:160]}\n    {r.get('status')}: {r.get('detail', '')[:240]}")
    print(f"{a.results}: libtorch {version[0]}.{version[1]} {a.device}: "
          f"{counts['passed']} passed or skipped, {counts['lacking']} unsupported by this libtorch, "
          f"{counts['explained']} explained by {len(used)} of the {len(rows)} rows that apply, "
          f"{counts['unexplained']} unexplained")
    return 1 if counts["unexplained"] else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Compares two crucible run folders case by case: the verdict of every case both ran, and the
error of every must-raise case (what the reference raised). Used to show that a change to the
catalog or a backend left behaviour unchanged:

    scripts/compare_verdicts.py runs/before runs/after

Prints each difference (case id, op, call, both verdicts) and a count; exit status 0 when the
two runs agree on every common case and ran the same cases, 1 otherwise, 2 on bad input.
"""

import json
import sys
from pathlib import Path


def load(folder: str) -> dict:
    path = Path(folder) / "results.jsonl"
    if not path.is_file():
        sys.exit(f"compare_verdicts: {path}: no such file (give two run folders)")
    cases = {}
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                print(f"compare_verdicts: {path}:{n}: not JSON ({e})", file=sys.stderr)
                sys.exit(2)
            if r.get("record") == "case":
                cases[r["case_id"]] = r
    return cases


def error_of(r: dict) -> str:
    # A must-raise case's detail is "raised as the reference does: <message>".
    return r.get("detail", "") if r.get("expected_error") else ""


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = load(sys.argv[1]), load(sys.argv[2])
    differences = 0
    for cid in sorted(a.keys() & b.keys()):
        ra, rb = a[cid], b[cid]
        what = None
        if ra["status"] != rb["status"]:
            what = f"{ra['status']} -> {rb['status']}"
        elif ra.get("expected_error") != rb.get("expected_error"):
            what = f"must-raise {ra.get('expected_error')} -> {rb.get('expected_error')}"
        elif error_of(ra) != error_of(rb):
            what = f"error «{error_of(ra)}» -> «{error_of(rb)}»"
        if what:
            differences += 1
            print(f"{cid} {ra['op']} {ra['case']}: {what}")
    only_a, only_b = a.keys() - b.keys(), b.keys() - a.keys()
    for cid in sorted(only_a):
        print(f"{cid} {a[cid]['op']} {a[cid]['case']}: only in {sys.argv[1]}")
    for cid in sorted(only_b):
        print(f"{cid} {b[cid]['op']} {b[cid]['case']}: only in {sys.argv[2]}")
    common = len(a.keys() & b.keys())
    print(f"{common} common cases, {differences} with another verdict or error; "
          f"{len(only_a)} only in the first run, {len(only_b)} only in the second")
    return 1 if differences or only_a or only_b else 0


if __name__ == "__main__":
    sys.exit(main())

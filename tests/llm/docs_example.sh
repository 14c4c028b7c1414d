#!/usr/bin/env bash
# Regenerates the example output of docs/llm.md: the scripted model server on loopback
# (tests/llm/scripted_server.py) answers a generation of three ops. Run from the source tree
# after building: tests/llm/docs_example.sh [build/crucible]
set -euo pipefail
crucible=${1:-build/crucible}
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
python3 - "$work/script.json" <<'PY'
import json, sys
k = "tests/llm/kernels/"
code = lambda f: {"code": open(k + f).read()}
json.dump({"ops": {
    "aten.relu.default": [code("relu_no_compile.cc"), code("relu_right.cc")],
    "aten.neg.default": [{"status": 503}, {"status": 503}, code("neg_constant.cc")],
    "aten.abs.default": [{"text": "Here is my plan: ..."}, code("abs_cache_ptr.cc")],
}}, open(sys.argv[1], "w"))
PY
python3 tests/llm/scripted_server.py "$work/script.json" "$work/port" "$work/log" &
server=$!
for _ in $(seq 100); do [ -f "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
cd "$work"
echo "\$ crucible generate --provider openai --base-url http://127.0.0.1:$port/v1 --model scripted --ops relu.default,neg.default,abs.default --max-attempts 2 --max-tries 2 --run-id demo"
"$OLDPWD/$crucible" generate --provider openai --base-url "http://127.0.0.1:$port/v1" \
  --model scripted --ops relu.default,neg.default,abs.default --max-attempts 2 --max-tries 2 \
  --run-id demo 2>&1 || true
echo
echo "\$ cat generated_kernels/demo/abs.default/attempts/2/feedback.txt | head -4"
head -4 generated_kernels/demo/abs.default/attempts/2/feedback.txt
echo
echo "\$ grep -h '\"outcome\"' generated_kernels/demo/*/attempts/*/attempt.json"
grep -h '"outcome"' generated_kernels/demo/*/attempts/*/attempt.json
echo
echo "\$ ls generated_kernels/demo generated_kernels/demo/relu.default generated_kernels/demo/relu.default/attempts/2"
ls generated_kernels/demo generated_kernels/demo/relu.default generated_kernels/demo/relu.default/attempts/2
echo
echo "\$ crucible run --backend pregenerated --kernels-dir generated_kernels/demo --ops relu.default,neg.default,abs.default --workers 1"
"$OLDPWD/$crucible" run --backend pregenerated --kernels-dir generated_kernels/demo \
  --ops relu.default,neg.default,abs.default --workers 1 --out runs/demo 2>/dev/null || true

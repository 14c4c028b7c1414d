#!/usr/bin/env python3
"""A scripted model server on 127.0.0.1 for crucible's tests: it speaks the Anthropic Messages API
(POST .../v1/messages) and the OpenAI chat-completions API (POST .../chat/completions) and answers
each request with the next step of the script of the op its prompt names ("OP: aten.x.y").

The script is a JSON object: {"require_key": "<key>" (optional), "ops": {"aten.relu.default":
[step, ...]}}. A step is one of
  {"code": "<source>"}          an answer holding the source in a ```cpp block
  {"text": "<answer>"}          the answer as given
  {"status": 429, "message": "..."}  an error response of that HTTP status
  {"garbage": "<body>"}         a 200 response whose body is not the API's JSON
and may add "delay": <seconds> (the response waits that long). Past the last step, the last step
repeats. Every request is appended to the log (JSON lines: api, op, index, kind, t) when it
arrives, and again with kind "done" when its answer has been sent (stamped as it goes out).
Usage: scripted_server.py SCRIPT PORT_FILE LOG_FILE
"""
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

script = json.load(open(sys.argv[1]))
port_file, log_file = sys.argv[2], sys.argv[3]
counts = {}
lock = threading.Lock()


def log(entry):
    with lock:
        with open(log_file, "a") as f:
            f.write(json.dumps(entry) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, ctype="application/json"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        if status == 429:
            self.send_header("Retry-After", "0")
        self.end_headers()
        # "done" is stamped before the body goes out: once it has, the client may send its next
        # request, which another thread can log before this one logs "done".
        self.sent_t = time.time()
        self.wfile.write(data)

    def do_POST(self):
        self.sent_t = None  # a connection's handler may answer several requests
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length).decode("utf-8", "replace")
        anthropic = self.path.endswith("/messages")
        api = "anthropic" if anthropic else "openai"
        key = self.headers.get("x-api-key") if anthropic else (
            self.headers.get("Authorization", "")[len("Bearer "):] or None)
        try:
            req = json.loads(raw)
            prompt = req["messages"][0]["content"]
            model = req["model"]
        except Exception:
            self.send(400, json.dumps({"error": {"message": "bad request"}}))
            return
        m = re.search(r"^OP: (\S+)", prompt, re.M)
        op = m.group(1) if m else "?"
        if "require_key" in script and key != script["require_key"]:
            log({"api": api, "op": op, "index": -1, "kind": "refused key"})
            msg = "invalid x-api-key" if anthropic else "Incorrect API key provided"
            self.send(401, json.dumps({"type": "error", "error": {"type": "authentication_error",
                                                                   "message": msg}}))
            return
        with lock:
            index = counts.get(op, 0)
            counts[op] = index + 1
        steps = script.get("ops", {}).get(op, [{"text": "no script for " + op}])
        step = steps[min(index, len(steps) - 1)]
        kind = next(k for k in ("code", "text", "status", "garbage") if k in step)
        log({"api": api, "op": op, "index": index, "kind": kind, "model": model,
             "prompt_chars": len(prompt), "t": time.time()})
        try:
            self.answer(step, kind, anthropic, prompt, model)
        finally:
            log({"api": api, "op": op, "index": index, "kind": "done",
                 "t": getattr(self, "sent_t", None) or time.time()})

    def answer(self, step, kind, anthropic, prompt, model):
        if step.get("delay"):
            time.sleep(step["delay"])
        if kind == "status":
            self.send(step["status"], json.dumps({"type": "error", "error": {
                "type": "scripted", "message": step.get("message", "scripted error")}}))
            return
        if kind == "garbage":
            self.send(200, step["garbage"], "text/plain")
            return
        answer = step["text"] if kind == "text" else (
            "Here is the kernel.\n\n```cpp\n" + step["code"].rstrip("\n") + "\n```\n")
        tin, tout = len(prompt) // 4, len(answer) // 4
        if anthropic:
            body = {"id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
                    "content": [{"type": "text", "text": answer}], "stop_reason": "end_turn",
                    "usage": {"input_tokens": tin, "output_tokens": tout}}
        else:
            body = {"id": "chatcmpl-scripted", "object": "chat.completion", "model": model,
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": answer}}],
                    "usage": {"prompt_tokens": tin, "completion_tokens": tout,
                              "total_tokens": tin + tout}}
        try:
            self.send(200, json.dumps(body))
        except (BrokenPipeError, ConnectionResetError):
            pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os  # noqa: E402
os.rename(port_file + ".tmp", port_file)
server.serve_forever()

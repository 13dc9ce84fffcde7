#!/usr/bin/env python3
"""llm_stub.py: a scripted OpenAI-compatible server for tests (standard library only).

Usage:
  python3 tests/llm_stub.py --port-file PATH [--script SCRIPT.json] [--log LOG.jsonl]
                            [--max-seconds 60]

Binds 127.0.0.1 on a free port (port 0), then writes the port number to PATH
(atomically: PATH.tmp + rename) once it listens.  Serves each connection on
its own daemon thread (HTTP/1.1 keep-alive).  Exits by itself after
--max-seconds, and at once on SIGTERM or SIGINT.

Log (--log): one JSON object per request, written and flushed as it arrives
(before the reply):
  {"n": arrival index from 0, "t": seconds since start, "method": "POST",
   "path": "/v1/chat/completions", "authorization": header value or null,
   "content_type": header value or null, "user_agent": ..., "in_flight": requests
   being served at arrival (this one included), "body": parsed JSON or null,
   "raw": the body as text (undecodable bytes replaced)}

Script (--script, JSON object; every key optional):
  {"sequence": [B0, B1, ...],   # behaviour of the Nth request in arrival order
                                # (N = 0..len-1); later requests fall through
   "rules": [{"match": "substring of the raw request body",
              "path": "substring of the path" (optional),
              "times": how many requests it applies to (optional, default unlimited),
              "behaviour": B}, ...],   # first rule that matches (and has times left) wins
   "default": B,                # otherwise (default: {} i.e. status 200, content "YES")
   "embedding_dim": 8}          # dimension of the /embeddings hash vectors

A behaviour B (JSON object; every key optional):
  status        HTTP status (default 200)
  content       assistant message text (default "YES"); null gives "content": null
  content_json  any JSON value put as "content" (e.g. a number, for shape tests)
  finish_reason default "stop"
  usage         object (default {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11})
  delay         seconds to wait before answering
  headers       extra headers, e.g. {"Retry-After": "1"}
  body          raw text body overriding everything (sent as is)
  body_b64      raw bytes body (base64), e.g. non-UTF-8 bytes
  truncate      true: announce a Content-Length 100 bytes larger than the body, send
                the body, then close the connection
  close         true: close the connection without replying
  error_message with error_type/error_code: an OpenAI-shaped error body
                {"error": {"message", "type", "code"}}; error_shape "vllm" gives
                {"object": "error", "message", "type", "code"} instead
  echo          true: the content is the request's last message content
  embeddings    {"input text": [numbers], ...}: scripted vectors for /embeddings;
                other inputs get a deterministic vector from a SHA-256 of the text

For /embeddings (path ending in "embeddings") with status 200 and no body
override, the reply is {"object":"list","data":[{"object":"embedding","index":i,
"embedding":[...]}...],"model":...,"usage":{"prompt_tokens":N,"total_tokens":N}}.
Every loop is bounded; nothing listens on any address but 127.0.0.1.
"""
import argparse
import base64
import hashlib
import json
import os
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class State:
    def __init__(self, script, log_path):
        self.script = script
        self.lock = threading.Lock()
        self.count = 0
        self.in_flight = 0
        self.rule_used = [0] * len(script.get("rules", []))
        self.log = open(log_path, "a", encoding="utf-8") if log_path else None
        self.t0 = time.monotonic()

    def choose(self, n, raw, path):
        seq = self.script.get("sequence", [])
        if n < len(seq):
            return seq[n]
        for i, rule in enumerate(self.script.get("rules", [])):
            if rule.get("match", "") not in raw:
                continue
            if rule.get("path", "") not in path:
                continue
            times = rule.get("times")
            if times is not None and self.rule_used[i] >= times:
                continue
            self.rule_used[i] += 1
            return rule.get("behaviour", {})
        return self.script.get("default", {})


STATE = None


def hash_vector(text, dim):
    out = []
    block = 0
    while len(out) < dim and block < 1000:
        h = hashlib.sha256((str(block) + ":" + text).encode("utf-8", "replace")).digest()
        for i in range(0, 32, 4):
            if len(out) == dim:
                break
            v = int.from_bytes(h[i:i + 4], "little") / 4294967295.0
            out.append(round(v * 2.0 - 1.0, 6))
        block += 1
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "llm_stub/1"

    def setup(self):
        super().setup()
        # Headers and body leave in separate writes: without TCP_NODELAY,
        # Nagle's algorithm and the client's delayed ACK add 40 ms a reply.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):  # quiet: the JSONL log is the record
        pass

    def do_GET(self):
        self.handle_request(b"")

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        self.handle_request(raw)

    def handle_request(self, raw):
        st = STATE
        text = raw.decode("utf-8", "replace")
        with st.lock:
            n = st.count
            st.count += 1
            st.in_flight += 1
            in_flight = st.in_flight
            b = st.choose(n, text, self.path)
        try:
            try:
                parsed = json.loads(text) if text else None
            except ValueError:
                parsed = None
            if st.log:
                rec = {"n": n, "t": round(time.monotonic() - st.t0, 6), "method": self.command,
                       "path": self.path, "authorization": self.headers.get("Authorization"),
                       "content_type": self.headers.get("Content-Type"),
                       "user_agent": self.headers.get("User-Agent"),
                       "in_flight": in_flight, "body": parsed, "raw": text}
                with st.lock:
                    st.log.write(json.dumps(rec) + "\n")
                    st.log.flush()
            delay = float(b.get("delay", 0))
            if delay > 0:
                time.sleep(min(delay, 600))
            self.reply(b, parsed)
        finally:
            with st.lock:
                st.in_flight -= 1

    def reply(self, b, req):
        if b.get("close"):
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        status = int(b.get("status", 200))
        if "body_b64" in b:
            body = base64.b64decode(b["body_b64"])
        elif "body" in b:
            body = b["body"].encode("utf-8")
        else:
            body = json.dumps(self.make_json(b, status, req)).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        extra = 100 if b.get("truncate") else 0
        self.send_header("Content-Length", str(len(body) + extra))
        for k, v in b.get("headers", {}).items():
            self.send_header(k, str(v))
        if extra:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        if extra:
            self.close_connection = True

    def make_json(self, b, status, req):
        req = req if isinstance(req, dict) else {}
        if "error_message" in b or status >= 400:
            msg = b.get("error_message", "stub error %d" % status)
            if b.get("error_shape") == "vllm":
                return {"object": "error", "message": msg, "type": b.get("error_type", "BadRequestError"),
                        "code": b.get("error_code", status)}
            return {"error": {"message": msg, "type": b.get("error_type", "invalid_request_error"),
                              "code": b.get("error_code")}}
        model = req.get("model", "stub-model")
        if self.path.rstrip("/").endswith("embeddings"):
            inputs = req.get("input", [])
            if isinstance(inputs, str):
                inputs = [inputs]
            dim = int(STATE.script.get("embedding_dim", 8))
            scripted = b.get("embeddings", {})
            data = []
            for i, t in enumerate(inputs[:100000]):
                vec = scripted.get(t) if isinstance(t, str) else None
                data.append({"object": "embedding", "index": i,
                             "embedding": vec if vec is not None else hash_vector(str(t), dim)})
            ntok = sum(len(str(t).split()) for t in inputs[:100000])
            return {"object": "list", "data": data, "model": model,
                    "usage": {"prompt_tokens": ntok, "total_tokens": ntok}}
        if "content_json" in b:
            content = b["content_json"]
        elif b.get("echo"):
            msgs = req.get("messages") or [{}]
            content = msgs[-1].get("content", "") if isinstance(msgs[-1], dict) else ""
        else:
            content = b.get("content", "YES")
        return {"id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": b.get("finish_reason", "stop")}],
                "usage": b.get("usage", {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11})}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        pass  # clients that time out or reset are part of the tests


def main():
    global STATE
    ap = argparse.ArgumentParser(description="scripted OpenAI-compatible stub server")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--script")
    ap.add_argument("--log")
    ap.add_argument("--max-seconds", type=float, default=60.0)
    a = ap.parse_args()
    script = {}
    if a.script:
        with open(a.script, encoding="utf-8") as f:
            script = json.load(f)
    STATE = State(script, a.log)
    srv = Server(("127.0.0.1", 0), Handler)
    port = srv.server_address[1]
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, a.port_file)

    def stop(*_):
        # shutdown() waits for serve_forever, so it runs on another thread.
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    timer = threading.Timer(a.max_seconds, stop)
    timer.daemon = True
    timer.start()
    srv.serve_forever(poll_interval=0.05)
    timer.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(main())

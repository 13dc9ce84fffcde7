#!/usr/bin/python3
"""A small deterministic OpenAI-compatible judging server, for trying
`ragsweep judge` without an LLM (README, "Trying it without an LLM").

It answers POST /v1/chat/completions (and /chat/completions) the way a
perfect assessor of scripts/judge_demo_data.py's sweep would: it reads the
question and the passage out of the prompt ("Question: ..." and
"Passage: ..." lines, as ragsweep's built-in prompts write them), looks up
the question's answer string in --answers (TSV: question<TAB>answer), and
says YES when the passage contains it, NO otherwise.  For the graded prompt
it ends with "Final score: 3" (answer present), 1 (the passage shares a
word of four or more letters with the question) or 0.  Usage is reported
as bytes / 4 prompt tokens and 1 (or 8) completion tokens.

  scripts/judge_server.py --answers answers.tsv [--port 8089] [--or-any-port] [--port-file F]
                          [--delay SECONDS] [--max-seconds N]

Listens on 127.0.0.1 only.  Standard library only.
"""
import argparse
import errno
import json
import os
import re
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def load_answers(path):
    answers = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            q, _, a = line.rstrip("\n").partition("\t")
            answers[q] = a
    return answers


def field(text, name):
    m = re.search(r"^%s: (.*)$" % name, text, re.M)
    return m.group(1) if m else ""


def judge(answers, user):
    question, passage = field(user, "Question"), field(user, "Passage")
    answer = answers.get(question)
    if answer and answer in passage:
        return 3
    words = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", question)}
    if words & {w.lower() for w in re.findall(r"[A-Za-z]{4,}", passage)}:
        return 1
    return 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # Headers and body leave in separate writes: without TCP_NODELAY,
        # Nagle's algorithm and the client's delayed ACK add 40 ms a reply.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):  # quiet
        pass

    def reply(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self.reply(200, {"object": "list", "data": [{"id": "judge-demo", "object": "model"}]})
        else:
            self.reply(404, {"error": {"message": "not found: " + self.path, "type": "invalid_request_error"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.reply(404, {"error": {"message": "not found: " + self.path, "type": "invalid_request_error"}})
            return
        try:
            req = json.loads(raw)
            messages = req["messages"]
            user = "\n".join(m.get("content", "") for m in messages if m.get("role") == "user")
        except (ValueError, KeyError, TypeError, AttributeError):
            self.reply(400, {"error": {"message": "expected a chat completion request", "type": "invalid_request_error"}})
            return
        if self.server.delay:
            time.sleep(self.server.delay)
        grade = judge(self.server.answers, user)
        if "Final score" in user:
            content, completion = "The passage %s.\nFinal score: %d" % (
                "states the answer" if grade == 3 else "does not answer the question", grade), 8
        else:
            content, completion = ("YES" if grade == 3 else "NO"), 1
        with self.server.lock:
            self.server.count += 1
            n = self.server.count
        self.reply(200, {
            "id": "chatcmpl-demo-%d" % n, "object": "chat.completion", "created": int(time.time()),
            "model": req.get("model", "judge-demo"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(raw) // 4, "completion_tokens": completion,
                      "total_tokens": len(raw) // 4 + completion}})


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that goes away mid-request (a killed judge) is no error.
        if not isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--answers", required=True)
    ap.add_argument("--port", type=int, default=8089)
    ap.add_argument("--port-file")
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--max-seconds", type=float, default=0.0, help="stop after N seconds (0: run until killed)")
    ap.add_argument("--or-any-port", action="store_true",
                    help="when --port is taken, listen on a free port instead (--port-file says which)")
    args = ap.parse_args()
    try:
        server = Server(("127.0.0.1", args.port), Handler)
    except OSError as e:
        if not args.or_any_port or e.errno != errno.EADDRINUSE:
            raise
        # judge's cache keys include the base URL: another port means every
        # request is asked again.
        print("judge_server: port %d is taken; listening on a free port (the cache of a run against port %d "
              "will not be used)" % (args.port, args.port), file=sys.stderr)
        server = Server(("127.0.0.1", 0), Handler)
    server.answers = load_answers(args.answers)
    server.delay = args.delay
    server.lock = threading.Lock()
    server.count = 0
    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    if args.max_seconds > 0:
        timer = threading.Timer(args.max_seconds, server.shutdown)
        timer.daemon = True
        timer.start()
    if not args.port_file:
        print("judge_server: http://127.0.0.1:%d/v1 (Ctrl-C stops)" % port, file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    server.server_close()


if __name__ == "__main__":
    main()

"""What the demo assessors (judge_server.py, rag_server.py) share: a JSON
handler on HTTP/1.1 keep-alive, a threaded server that shrugs off clients
going away, and the command line that starts them on 127.0.0.1 (--port,
--or-any-port, --port-file, --delay, --max-seconds).  Standard library
only."""
import argparse
import errno
import json
import os
import signal
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JsonHandler(BaseHTTPRequestHandler):
    """Replies in JSON; GET .../models lists server.model_ids."""
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

    def bad(self, message):
        self.reply(400, {"error": {"message": message, "type": "invalid_request_error"}})

    def not_found(self):
        self.reply(404, {"error": {"message": "not found: " + self.path, "type": "invalid_request_error"}})

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def next_count(self):
        """The number of this reply (1, 2, ...), for its id."""
        with self.server.lock:
            self.server.count += 1
            return self.server.count

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self.reply(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in self.server.model_ids]})
        else:
            self.not_found()


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that goes away mid-request (a killed judge or rag) is no error.
        if not isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            super().handle_error(request, client_address)


def serve(name, doc, default_port, handler, model_ids, add_args=None, configure=None):
    """Parses the shared options (and add_args(parser)'s), listens on
    127.0.0.1, runs configure(server, args), then serves until SIGTERM,
    Ctrl-C or --max-seconds."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    if add_args:
        add_args(ap)
    ap.add_argument("--port", type=int, default=default_port)
    ap.add_argument("--port-file")
    ap.add_argument("--delay", type=float, default=0.0, help="seconds to wait before each reply")
    ap.add_argument("--max-seconds", type=float, default=0.0, help="stop after N seconds (0: run until killed)")
    ap.add_argument("--or-any-port", action="store_true",
                    help="when --port is taken, listen on a free port instead (--port-file says which)")
    args = ap.parse_args()
    try:
        server = Server(("127.0.0.1", args.port), handler)
    except OSError as e:
        if not args.or_any_port or e.errno != errno.EADDRINUSE:
            raise
        # The cache keys include the base URL: another port means every
        # request is asked again.
        print("%s: port %d is taken; listening on a free port (the cache of a run against port %d "
              "will not be used)" % (name, args.port, args.port), file=sys.stderr)
        server = Server(("127.0.0.1", 0), handler)
    server.delay = args.delay
    server.lock = threading.Lock()
    server.count = 0
    server.model_ids = model_ids
    if configure:
        configure(server, args)
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
        print("%s: http://127.0.0.1:%d/v1 (Ctrl-C stops)" % (name, port), file=sys.stderr)
    try:
        # A short poll: SIGTERM's shutdown() waits for it (tests stop the
        # servers many times).
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    server.server_close()

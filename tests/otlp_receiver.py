#!/usr/bin/env python3
"""otlp_receiver.py: an OTLP/HTTP JSON metrics receiver for tests (standard library only).

Usage:
  python3 tests/otlp_receiver.py --port-file PATH [--port 0] [--max-seconds 30]

Binds 127.0.0.1 (port 0: a free one), writes the port to PATH (PATH.tmp +
rename) once it listens, and exits by itself after --max-seconds, or at once
on SIGTERM/SIGINT.  It serves POST /v1/metrics only.

Each request body is checked strictly against the OTLP specification's JSON
encoding of an ExportMetricsServiceRequest (opentelemetry-proto
metrics/v1/metrics.proto, "JSON Protobuf Encoding"): known fields only, in
lowerCamelCase; 64-bit integers (timeUnixNano, startTimeUnixNano, asInt,
count, bucketCounts, intValue) as decimal strings; doubles as numbers or
"NaN"/"Infinity"/"-Infinity"; enums (aggregationTemporality) as integers;
exactly one data field per metric; len(bucketCounts) == len(explicitBounds)
+ 1, bounds strictly increasing, counts adding up to count; attribute keys
unique per point.  A valid request gets 200 and {} (or the reply scripted
below); an invalid one 400 and the first problem found as text.

Log: DIR/log.jsonl (DIR: the port file's folder), one line per request:
  {"path": ..., "content_type": ..., "problem": null or text, "raw": body text}

Script: DIR/script.json, read at each request when present:
  {"status": HTTP status to answer with, "rejected": N (a partialSuccess with
   rejectedDataPoints N), "message": its errorMessage}
"""
import argparse
import json
import os
import re
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIGITS = re.compile(r"^[0-9]+$")
INT64 = re.compile(r"^-?[0-9]+$")
METRIC_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.\-/]{0,254}$")


class Bad(Exception):
    pass


def need(cond, where, what):
    if not cond:
        raise Bad(f"{where}: {what}")


def fields(obj, where, required, optional=()):
    need(isinstance(obj, dict), where, f"expected an object, found {type(obj).__name__}")
    for k in obj:
        need(k in required or k in optional, where, f"unknown field '{k}'")
    for k in required:
        need(k in obj, where, f"missing field '{k}'")


def u64(v, where):
    need(isinstance(v, str) and DIGITS.match(v) is not None, where,
         f"expected a uint64 as a decimal string, found {v!r}")
    return int(v)


def double(v, where):
    if isinstance(v, str):
        need(v in ("NaN", "Infinity", "-Infinity"), where, f"expected a number, found the string {v!r}")
        return float(v.replace("Infinity", "inf"))
    need(isinstance(v, (int, float)) and not isinstance(v, bool), where, f"expected a number, found {v!r}")
    return float(v)


def attributes(lst, where):
    need(isinstance(lst, list), where, "expected a list of KeyValue")
    keys = set()
    for i, kv in enumerate(lst):
        w = f"{where}[{i}]"
        fields(kv, w, ("key", "value"))
        need(isinstance(kv["key"], str) and kv["key"], w, "expected a non-empty string key")
        need(kv["key"] not in keys, w, f"attribute key '{kv['key']}' repeated")
        keys.add(kv["key"])
        v = kv["value"]
        fields(v, w + ".value", (), ("stringValue", "intValue", "doubleValue", "boolValue"))
        need(len(v) == 1, w + ".value", "expected exactly one of stringValue, intValue, doubleValue, boolValue")
        if "stringValue" in v:
            need(isinstance(v["stringValue"], str), w, "stringValue: expected a string")
        if "intValue" in v:
            need(isinstance(v["intValue"], str) and INT64.match(v["intValue"]), w,
                 "intValue: expected an int64 as a decimal string")
        if "doubleValue" in v:
            double(v["doubleValue"], w + ".doubleValue")
        if "boolValue" in v:
            need(isinstance(v["boolValue"], bool), w, "boolValue: expected true or false")


def times(p, where, start_required):
    t = u64(p["timeUnixNano"], where + ".timeUnixNano")
    need(t > 0, where, "timeUnixNano is 0")
    if start_required:
        need("startTimeUnixNano" in p, where, "missing field 'startTimeUnixNano'")
    if "startTimeUnixNano" in p:
        s = u64(p["startTimeUnixNano"], where + ".startTimeUnixNano")
        need(s <= t, where, "startTimeUnixNano after timeUnixNano")


def number_point(p, where, start_required):
    fields(p, where, ("attributes", "timeUnixNano"), ("startTimeUnixNano", "asDouble", "asInt", "flags"))
    attributes(p["attributes"], where + ".attributes")
    times(p, where, start_required)
    need(("asDouble" in p) != ("asInt" in p), where, "expected exactly one of asDouble, asInt")
    if "asDouble" in p:
        double(p["asDouble"], where + ".asDouble")
    else:
        need(isinstance(p["asInt"], str) and INT64.match(p["asInt"]), where, "asInt: expected a decimal string")


def temporality(v, where):
    need(isinstance(v, int) and not isinstance(v, bool) and v in (1, 2), where,
         f"aggregationTemporality: expected 1 (delta) or 2 (cumulative) as a number, found {v!r}")


def histogram_point(p, where):
    fields(p, where, ("attributes", "startTimeUnixNano", "timeUnixNano", "count", "bucketCounts", "explicitBounds"),
           ("sum", "min", "max", "flags"))
    attributes(p["attributes"], where + ".attributes")
    times(p, where, True)
    count = u64(p["count"], where + ".count")
    b = p["bucketCounts"]
    e = p["explicitBounds"]
    need(isinstance(b, list) and isinstance(e, list), where, "bucketCounts and explicitBounds: expected lists")
    counts = [u64(c, f"{where}.bucketCounts[{i}]") for i, c in enumerate(b)]
    bounds = [double(x, f"{where}.explicitBounds[{i}]") for i, x in enumerate(e)]
    need(len(counts) == len(bounds) + 1, where,
         f"len(bucketCounts) = {len(counts)}, expected len(explicitBounds) + 1 = {len(bounds) + 1}")
    need(all(bounds[i] < bounds[i + 1] for i in range(len(bounds) - 1)), where, "explicitBounds not increasing")
    need(sum(counts) == count, where, f"bucketCounts add up to {sum(counts)}, count says {count}")
    for k in ("sum", "min", "max"):
        if k in p:
            double(p[k], f"{where}.{k}")


def check(req):
    fields(req, "request", ("resourceMetrics",))
    rms = req["resourceMetrics"]
    need(isinstance(rms, list) and rms, "resourceMetrics", "expected a non-empty list")
    for i, rm in enumerate(rms):
        w = f"resourceMetrics[{i}]"
        fields(rm, w, ("resource", "scopeMetrics"), ("schemaUrl",))
        fields(rm["resource"], w + ".resource", ("attributes",), ("droppedAttributesCount",))
        attributes(rm["resource"]["attributes"], w + ".resource.attributes")
        need(any(kv["key"] == "service.name" for kv in rm["resource"]["attributes"]), w, "no service.name")
        need(isinstance(rm["scopeMetrics"], list) and rm["scopeMetrics"], w, "scopeMetrics: expected a list")
        for j, sm in enumerate(rm["scopeMetrics"]):
            ws = f"{w}.scopeMetrics[{j}]"
            fields(sm, ws, ("scope", "metrics"), ("schemaUrl",))
            fields(sm["scope"], ws + ".scope", ("name",), ("version", "attributes"))
            need(isinstance(sm["scope"]["name"], str) and sm["scope"]["name"], ws, "scope.name: expected a string")
            need(isinstance(sm["metrics"], list) and sm["metrics"], ws, "metrics: expected a non-empty list")
            names = set()
            for k, m in enumerate(sm["metrics"]):
                wm = f"{ws}.metrics[{k}]"
                fields(m, wm, ("name",), ("description", "unit", "gauge", "sum", "histogram", "metadata"))
                need(isinstance(m["name"], str) and METRIC_NAME.match(m["name"]), wm, f"bad name {m['name']!r}")
                need(m["name"] not in names, wm, f"metric {m['name']} twice in one scope")
                names.add(m["name"])
                data = [d for d in ("gauge", "sum", "histogram") if d in m]
                need(len(data) == 1, wm, f"expected exactly one of gauge, sum, histogram, found {data}")
                d = m[data[0]]
                wd = f"{wm}.{data[0]}"
                if data[0] == "gauge":
                    fields(d, wd, ("dataPoints",))
                elif data[0] == "sum":
                    fields(d, wd, ("dataPoints", "aggregationTemporality", "isMonotonic"))
                    temporality(d["aggregationTemporality"], wd)
                    need(isinstance(d["isMonotonic"], bool), wd, "isMonotonic: expected true or false")
                else:
                    fields(d, wd, ("dataPoints", "aggregationTemporality"))
                    temporality(d["aggregationTemporality"], wd)
                pts = d["dataPoints"]
                need(isinstance(pts, list) and pts, wd, "dataPoints: expected a non-empty list")
                for n, p in enumerate(pts):
                    wp = f"{wd}.dataPoints[{n}]"
                    if data[0] == "histogram":
                        histogram_point(p, wp)
                    else:
                        number_point(p, wp, data[0] == "sum")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="application/json"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n).decode("utf-8", "replace") if n > 0 else ""
        ctype = self.headers.get("Content-Type")
        problem = None
        if self.path != "/v1/metrics":
            problem = f"path {self.path}: expected /v1/metrics"
        elif ctype != "application/json":
            problem = f"Content-Type {ctype}: expected application/json"
        else:
            try:
                check(json.loads(raw))
            except ValueError as e:
                problem = f"not JSON: {e}"
            except Bad as e:
                problem = str(e)
        with self.server.lock:
            with open(self.server.log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"path": self.path, "content_type": ctype, "problem": problem, "raw": raw}) + "\n")
        if problem:
            self.reply(400, problem + "\n", "text/plain")
            return
        script = {}
        try:
            with open(self.server.script, encoding="utf-8") as f:
                script = json.load(f)
        except (OSError, ValueError):
            pass
        body = {}
        if script.get("rejected"):
            body = {"partialSuccess": {"rejectedDataPoints": str(script["rejected"]),
                                       "errorMessage": script.get("message", "")}}
        self.reply(int(script.get("status", 200)), json.dumps(body))

    def do_GET(self):
        self.reply(405, "POST only\n", "text/plain")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=30)
    a = ap.parse_args()
    d = os.path.dirname(os.path.abspath(a.port_file))
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.lock = threading.Lock()
    srv.log = os.path.join(d, "log.jsonl")
    srv.script = os.path.join(d, "script.json")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    timer = threading.Timer(a.max_seconds, lambda: os._exit(0))
    timer.daemon = True
    timer.start()
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(tmp, a.port_file)
    try:
        srv.serve_forever(poll_interval=0.1)
    except (KeyboardInterrupt, SystemExit):
        pass


if __name__ == "__main__":
    main()

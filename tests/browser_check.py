#!/usr/bin/env python3
"""browser_check.py: opens an HTML report in headless Chromium and checks it
(standard library only).

Usage:
  python3 tests/browser_check.py REPORT.html [--expect-chart ID=N ...]
          [--min-charts N] [--max-load-ms M] [--screenshot PATH] [--no-external]
          [--timeout S] [--chromedriver PATH] [--chromium PATH]

Starts /usr/bin/chromedriver on 127.0.0.1 (a free port), drives it over the
W3C WebDriver HTTP protocol, opens file:///abs/REPORT.html in headless
Chromium with no network (every host name resolves to nothing and every
connection goes to a proxy port that refuses it), and checks:

  errors      no console message at level SEVERE (the browser log) and no
              uncaught error, unhandled rejection, console.error call or failed
              resource load (recorded by a script installed before the page
              loads, so errors during load count too).
  charts      every <figure class="chart" id="chart-..." data-series="N"> holds
              an <svg> with a non-zero box and exactly N elements of class
              "series" inside the svg, each of which is (or contains) a path
              with a non-empty d, a circle, rect, line, polyline, polygon or
              ellipse that has a non-zero getBBox() and a fill or stroke, and
              is not hidden.  N must be a whole number >= 1.
  tables      for each table.sortable, the first column whose cells are
              numbers (data-value if present, else the text's leading number;
              at least two distinct values): clicking its <th> (a real click)
              sorts the column one way with the rows kept whole, and a second
              click sorts it the other way.  A table without such a column is
              listed as not checked (it cannot be).
  load time   performance navigation entry's loadEventEnd, in ms.

Elements to check are found by the report's DOM contract only (class and
data attributes), so the report may draw its SVG however it likes.

Options:
  --expect-chart ID=N   chart ID must exist and have N series (repeatable)
  --min-charts N        at least N charts (default 1)
  --max-load-ms M       fail when loadEventEnd exceeds M ms
  --screenshot PATH     write a full-page PNG (written to PATH.tmp, renamed)
  --screenshot-top PATH the same of the page's first 4500 px
  --no-external         fail on any resource timing entry; on any src, href,
                        srcset, poster, data, xlink:href or action starting with
                        http://, https:// or // (hyperlinks included); on a
                        resource attribute (src, <link rel=stylesheet|icon|...>
                        href, <use>/<image> href) naming a local file, i.e. not
                        data:, blob: or #; on CSS url() or @import of anything
                        but data: or #.  (Without it, a fetch still fails and
                        its console error fails the run.)
  --timeout S           overall time limit in seconds (default 60); the page
                        itself gets half the time left when it is opened
                        (chromedriver then gives up on it); stopping the
                        browser may add up to 10 s after the limit
  --chromedriver PATH   default /usr/bin/chromedriver
  --chromium PATH       default /usr/bin/chromium

Output: one JSON line on stdout:
  {"status": "pass" | "fail" | "no-browser" | "usage" | "stopped", "report": path,
   "charts": [{"id", "declared", "series", "svg": [w, h]}], "tables": [{"table",
   "column", "first", "second"} (each "asc", "desc", "equal" or "unsorted")
   or {"table", "skipped": reason}], "load_ms",
   "resources": [urls], "errors": [texts], "failures": [texts],
   "screenshot": path or null, "harness_ms"}
and each failure on stderr as "browser_check: FAIL: ...".

Exit status: 0 every check passed; 1 a check failed (the message names the
chart or table, what was expected and what was found); 2 the browser could
not start (the reason: chromedriver or chromium missing, no answer, session
refused); 3 bad command line or unreadable report.  An unexpected error of
this script itself: exit 1, with "internal error" and a traceback.  Stopped
by SIGTERM, SIGINT or SIGHUP: exit 128 + the signal (status "stopped").

chromedriver and every Chromium process (one process group, plus a profile
and temporary folder of our own) are stopped at exit, also on an exception or
SIGTERM/SIGINT/SIGHUP; a watchdog process kills them if this script itself is
killed.  Every HTTP call has a timeout within the overall limit.
"""
import argparse
import base64
import json
import math
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

INSTALL_HINT = "run scripts/install-deps.sh with RAGSWEEP_WITH_TESTS=1"
ELEMENT_KEY = "element-6066-11e4-a52e-4f735466cecf"  # W3C web element reference
MAX_SHOT_HEIGHT = 20000  # px; beyond this the screenshot is cut (and says so)
TOP_SHOT_HEIGHT = 4500   # px: --screenshot-top, the page's head (a picture for a README)


class Usage(Exception):
    """Bad command line or report: exit 3."""


class NoBrowser(Exception):
    """chromedriver or Chromium could not start: exit 2."""


class OutOfTime(Exception):
    """The overall limit passed."""


class Interrupted(Exception):
    """SIGTERM, SIGINT or SIGHUP: exit 128 + the signal's number."""


class WebDriverError(Exception):
    """A WebDriver command answered with an error."""


# --- the injected recorder ----------------------------------------------------------
# Installed with Page.addScriptToEvaluateOnNewDocument, so it runs before any
# script of the page: errors thrown while the report loads are recorded too.
# `key` is the part that also appears in the browser log's line for the same
# event, to list each error once.
RECORDER = r"""
(() => {
  if (window.__browserCheck) return;
  const rec = window.__browserCheck = {errors: []};
  const push = (kind, text, key) => {
    if (rec.errors.length < 100)
      rec.errors.push({kind, text: String(text).slice(0, 500), key: String(key).slice(0, 200)});
  };
  window.addEventListener('error', e => {
    if (e instanceof ErrorEvent) {
      push('uncaught error', `${e.message} (${e.filename}:${e.lineno}:${e.colno})`, e.message);
    } else {
      const t = e.target || {};
      const attr = t.getAttribute ? (t.getAttribute('src') || t.getAttribute('href') ||
                                     t.getAttribute('xlink:href')) : null;
      const url = t.currentSrc || (typeof t.src === 'string' && t.src) ||
                  (typeof t.href === 'string' && t.href) || attr || '?';
      push('failed resource', `<${(t.tagName || '?').toLowerCase()}> ${url}`, String(url));
    }
  }, true);
  window.addEventListener('unhandledrejection', e => {
    const r = e.reason;
    const m = r && r.message ? r.message : String(r);
    push('unhandled rejection', m, m);
  });
  const original = console.error;
  const text = a => {
    if (a && a.message) return a.message;
    if (a && typeof a === 'object') { try { return JSON.stringify(a); } catch (e) { /* cyclic */ } }
    return String(a);
  };
  console.error = function (...args) {
    const m = args.map(text).join(' ');
    const caller = ((new Error().stack || '').split('\n')[2] || '').trim().replace(/^at /, '');
    push('console.error', caller ? `${m} (${caller})` : m, m);
    return original.apply(this, args);
  };
})();
//# sourceURL=browser-check-recorder.js
"""
RECORDER_URL = "browser-check-recorder.js"

# Waits two animation frames, so drawing scheduled by the load handlers is done.
SETTLE = r"""
const done = arguments[arguments.length - 1];
requestAnimationFrame(() => requestAnimationFrame(() => done(true)));
"""

TIMING = r"""
const nav = performance.getEntriesByType('navigation')[0];
return {load_ms: nav ? nav.loadEventEnd : null,
        resources: performance.getEntriesByType('resource').map(e => e.name)};
"""

# Resource-bearing attributes and CSS that would make the report depend on
# another file or the network.
EXTERNAL_REFS = r"""
const found = [];
const remote = v => /^\s*(https?:)?\/\//i.test(v);
const local = v => !/^\s*(data:|blob:|#|about:|javascript:)/i.test(v) && v.trim() !== '';
const what = el => '<' + el.tagName.toLowerCase() + '>';
for (const el of document.querySelectorAll('*')) {
  for (const a of ['src', 'href', 'srcset', 'poster', 'data', 'xlink:href', 'action']) {
    const v = el.getAttribute(a);
    if (v === null) continue;
    // a hyperlink to a local file is not loaded; a resource is
    const resource = a !== 'href' || !['a', 'area'].includes(el.tagName.toLowerCase());
    const linkRel = el.tagName.toLowerCase() === 'link' ? (el.getAttribute('rel') || '') : '';
    if (remote(v) || (resource && local(v) && (a !== 'href' || el.tagName.toLowerCase() !== 'link' ||
        /stylesheet|icon|preload|prefetch|manifest|import|modulepreload/i.test(linkRel))))
      found.push(`${what(el)} ${a}="${v.slice(0, 200)}"`);
  }
}
const cssRefs = text => {
  const out = [];
  const re = /url\(\s*(['"]?)(.*?)\1\s*\)|@import\s+(['"])(.*?)\3/gi;
  let m;
  while ((m = re.exec(text)) !== null) {
    const v = m[2] !== undefined ? m[2] : m[4];
    if (v !== undefined && !/^\s*(data:|#)/i.test(v))
      out.push(m[2] !== undefined ? `url(${v.slice(0, 200)})` : `@import "${v.slice(0, 200)}"`);
  }
  return out;
};
for (const s of document.querySelectorAll('style'))
  for (const v of cssRefs(s.textContent)) found.push(`<style> ${v}`);
for (const el of document.querySelectorAll('[style]'))
  for (const v of cssRefs(el.getAttribute('style'))) found.push(`${what(el)} style ${v}`);
return found;
"""

CHARTS = r"""
const DRAWN = 'path, circle, rect, line, polyline, polygon, ellipse';
const drawn = el => {
  if (!el.matches(DRAWN) || typeof el.getBBox !== 'function') return false;
  if (el.tagName.toLowerCase() === 'path' && !(el.getAttribute('d') || '').trim()) return false;
  const st = getComputedStyle(el);
  if (st.display === 'none' || st.visibility === 'hidden') return false;
  if (st.fill === 'none' && st.stroke === 'none') return false;
  let b;
  try { b = el.getBBox(); } catch (e) { return false; }
  return b.width > 0 || b.height > 0;
};
const charts = [];
let k = 0;
for (const fig of document.querySelectorAll('figure.chart')) {
  k++;
  const c = {id: fig.id || null, name: fig.id || `figure.chart #${k} (no id)`, declared: null,
             series: 0, svg: null, problems: []};
  if (!fig.id) c.problems.push('has no id (expected id="chart-...")');
  else if (document.querySelectorAll(`[id="${CSS.escape(fig.id)}"]`).length > 1)
    c.problems.push('its id is not unique in the page');
  const d = fig.getAttribute('data-series');
  if (d === null) c.problems.push('has no data-series attribute');
  else if (!/^\s*\d+\s*$/.test(d) || +d < 1)
    c.problems.push(`data-series="${d}": expected a whole number >= 1`);
  else c.declared = +d;
  const svg = fig.querySelector('svg');
  const series = [...fig.querySelectorAll('.series')];
  c.series = series.length;
  if (!svg) {
    c.problems.push('has no <svg>');
  } else {
    const r = svg.getBoundingClientRect();
    c.svg = [Math.round(r.width * 10) / 10, Math.round(r.height * 10) / 10];
    if (!(r.width > 0 && r.height > 0))
      c.problems.push(`its <svg> box is ${r.width}x${r.height}, expected a non-zero width and height`);
  }
  if (c.declared !== null && c.series !== c.declared)
    c.problems.push(`data-series="${c.declared}" but ${c.series} elements of class "series" found`);
  series.forEach((s, i) => {
    const label = s.getAttribute('data-name') || s.id || s.getAttribute('aria-label') || '';
    const which = `series ${i + 1} of ${c.series}` + (label ? ` ("${label}")` : '');
    if (!s.closest('svg')) { c.problems.push(`${which} is not inside an <svg>`); return; }
    if (![s, ...s.querySelectorAll(DRAWN)].some(drawn))
      c.problems.push(`${which} has nothing drawn: expected a path with a non-empty d, a circle, ` +
                      'rect, line or polyline with a non-zero box and a fill or stroke');
  });
  charts.push(c);
}
return charts;
"""

# Tables: per table.sortable, the header to click (an element reference) and
# a description; the column values are read by COLUMN after each click.
SORTABLE = r"""
const num = (cell) => {
  if (!cell) return null;
  const raw = cell.hasAttribute('data-value') ? cell.getAttribute('data-value') : cell.textContent;
  const m = /^\s*([+\-\u2212]?(\d[\d,]*(\.\d*)?|\.\d+)([eE][+\-]?\d+)?)/.exec(raw);
  if (!m) return /\d/.test(raw) ? undefined : null;  // undefined: text with digits; null: empty/dash
  return parseFloat(m[1].replace(/,/g, '').replace('\u2212', '-'));
};
const cellAt = (row, col) => {
  let x = 0;
  for (const cell of row.cells) { if (x === col) return cell; x += cell.colSpan || 1; if (x > col) return null; }
  return null;
};
const out = [];
let k = 0;
for (const t of document.querySelectorAll('table.sortable')) {
  k++;
  const name = t.id ? `table#${t.id}` : `table.sortable #${k}`;
  // A table inside a closed <details> is opened first, as a reader would
  // before clicking its header.
  for (let e = t.parentElement; e; e = e.parentElement) if (e.tagName === 'DETAILS') e.open = true;
  const head = t.tHead ? t.tHead.rows[t.tHead.rows.length - 1] : [...t.rows].find(r => r.querySelector('th'));
  const rows = [...t.tBodies].flatMap(b => [...b.rows]).filter(r => r !== head && r.querySelector('td'));
  let pick = null;
  if (head) {
    let x = 0;
    for (const th of head.cells) {
      const col = x;
      x += th.colSpan || 1;
      if (th.tagName.toLowerCase() !== 'th') continue;
      const vals = rows.map(r => num(cellAt(r, col)));
      if (vals.some(v => v === undefined)) continue;
      const nums = vals.filter(v => v !== null);
      if (nums.length >= 2 && new Set(nums).size >= 2) { pick = {th, col, header: th.textContent.trim()}; break; }
    }
  }
  if (!pick) out.push({table: name, skipped: rows.length < 2 ? `${rows.length} data row(s)` :
                       'no column of numbers with two distinct values'});
  else out.push({table: name, index: k - 1, col: pick.col, column: pick.header, th: pick.th});
}
return out;
"""

COLUMN = r"""
const [index, col] = arguments;
const t = document.querySelectorAll('table.sortable')[index];
const cellAt = (row, c) => {
  let x = 0;
  for (const cell of row.cells) { if (x === c) return cell; x += cell.colSpan || 1; if (x > c) return null; }
  return null;
};
const head = t.tHead ? t.tHead.rows[t.tHead.rows.length - 1] : [...t.rows].find(r => r.querySelector('th'));
const rows = [...t.tBodies].flatMap(b => [...b.rows]).filter(r => r !== head && r.querySelector('td'));
const values = rows.map(r => {
  const cell = cellAt(r, col);
  if (!cell) return null;
  const raw = cell.hasAttribute('data-value') ? cell.getAttribute('data-value') : cell.textContent;
  const m = /^\s*([+\-\u2212]?(\d[\d,]*(\.\d*)?|\.\d+)([eE][+\-]?\d+)?)/.exec(raw);
  return m ? parseFloat(m[1].replace(/,/g, '').replace('\u2212', '-')) : null;
});
return {values, rows: rows.map(r => r.textContent.replace(/\s+/g, ' ').trim())};
"""

RECORDED = "return window.__browserCheck ? window.__browserCheck.errors : null;"


# --- WebDriver over HTTP -------------------------------------------------------------
class Driver:
    def __init__(self, port, deadline):
        self.base = f"http://127.0.0.1:{port}"
        self.deadline = deadline
        self.session = None

    def call(self, method, path, body=None, timeout=20.0):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise OutOfTime(f"{method} {path}")
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json; charset=utf-8"})
        try:
            with urllib.request.urlopen(req, timeout=max(0.2, min(timeout, left))) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as e:
            payload = e.read()
            try:
                value = json.loads(payload).get("value", {})
                kind, msg = str(value.get("error", e.code)), str(value.get("message", ""))
                msg = msg if msg.startswith(kind) else f"{kind}: {msg}"
            except (ValueError, AttributeError):
                msg = f"HTTP {e.code}"
            raise WebDriverError(f"{method} {path}: {msg.splitlines()[0] if msg else e.code}") from None
        except (socket.timeout, TimeoutError):
            if self.deadline - time.monotonic() <= 0.2:
                raise OutOfTime(f"{method} {path}") from None
            raise WebDriverError(f"{method} {path}: no answer within {timeout:g} s") from None
        return json.loads(payload or b"{}").get("value")

    def s(self, method, path, body=None, timeout=20.0):
        return self.call(method, f"/session/{self.session}{path}", body, timeout)

    def script(self, source, *args, timeout=20.0):
        return self.s("POST", "/execute/sync", {"script": source, "args": list(args)}, timeout)

    def cdp(self, cmd, params=None, timeout=20.0):
        return self.s("POST", "/goog/cdp/execute", {"cmd": cmd, "params": params or {}}, timeout)


# --- processes -------------------------------------------------------------------------
# A process of its own session that outlives us: when our end of its pipe
# closes before we said "done" (we were killed, even by SIGKILL) or the hard
# limit passes, it kills the browser's process groups and removes the
# temporary folder.  After "done" (we stopped them ourselves) it kills nothing:
# a process group id of ours may since have been reused.
WATCHDOG = r"""
import os, select, shutil, signal, sys, time
end, tmp = time.monotonic() + float(sys.argv[1]), sys.argv[2]
groups, buf = [], b""
while True:  # reads the process groups to kill, one a line, until EOF or the limit
    left = end - time.monotonic()
    if left <= 0 or not select.select([0], [], [], left)[0]:
        break
    chunk = os.read(0, 256)
    if not chunk:
        break
    *lines, buf = (buf + chunk).split(b"\n")
    if b"done" in lines:
        sys.exit(0)
    groups += [int(x) for x in lines if x.strip()]
for pgid in groups:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except OSError:
            break
        for _ in range(20):
            try:
                os.killpg(pgid, 0)
            except OSError:
                break
            time.sleep(0.1)
        else:
            continue
        break
shutil.rmtree(tmp, ignore_errors=True)
"""


class Browser:
    """chromedriver (leader of its own process group, where Chromium runs
    too), its temporary folder, and the watchdog."""

    def __init__(self):
        self.proc = None
        self.watchdog = None
        self.tmp = None
        self.blackhole = None  # a bound, non-listening socket: the proxy that refuses
        self.hard_limit = 70.0

    def start(self, chromedriver, deadline, hard_limit):
        self.hard_limit = hard_limit
        self.tmp = tempfile.mkdtemp(prefix="ragsweep-browser-")
        self.blackhole = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.blackhole.bind(("127.0.0.1", 0))
        env = dict(os.environ, TMPDIR=self.tmp)
        last = "no attempt"
        for attempt in range(5):  # another process may take the free port first
            port = free_port()
            log = os.path.join(self.tmp, f"chromedriver-{attempt}.log")
            with open(log, "wb") as logf:
                self.proc = subprocess.Popen(
                    [chromedriver, f"--port={port}", "--allowed-ips=127.0.0.1"],
                    stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, env=env,
                    start_new_session=True)
            self.watch(self.proc.pid)
            driver = Driver(port, deadline)
            until = min(deadline, time.monotonic() + 10)
            while time.monotonic() < until and self.proc.poll() is None:
                try:
                    if driver.call("GET", "/status", timeout=1).get("ready"):
                        return driver
                except (OSError, WebDriverError, OutOfTime, ValueError):
                    pass
                time.sleep(0.05)
            code = self.proc.poll()
            with open(log, "rb") as f:
                tail = f.read()[-400:].decode("utf-8", "replace").strip().replace("\n", " | ")
            last = (f"chromedriver exited with status {code}: {tail}" if code is not None
                    else "chromedriver did not answer /status within 10 s")
            self.kill_group()
            if code is None or "bind" not in tail.lower():
                break
        raise NoBrowser(last)

    def watch(self, pgid):
        if not self.watchdog:
            self.watchdog = subprocess.Popen(
                [sys.executable, "-c", WATCHDOG, str(self.hard_limit), self.tmp],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True)
        self.watchdog.stdin.write(f"{pgid}\n".encode())
        self.watchdog.stdin.flush()

    def kill_group(self):
        """SIGTERM, then SIGKILL, to chromedriver's group; True once it is empty."""
        if not self.proc:
            return True
        pgid, gone = self.proc.pid, False
        for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 3.0)):
            try:
                os.killpg(pgid, sig)
            except OSError:
                gone = True
                break
            until = time.monotonic() + wait
            while not gone and time.monotonic() < until:
                self.proc.poll()  # reaps chromedriver; Chromium's processes are reaped by init
                gone = not group_alive(pgid)
                if not gone:
                    time.sleep(0.05)
            if gone:
                break
        self.proc.poll()
        self.proc = None
        return gone

    def stop(self, driver):
        if driver and driver.session:
            try:  # chromedriver closes Chromium and removes its profile
                driver.deadline = time.monotonic() + 5
                driver.call("DELETE", f"/session/{driver.session}", timeout=5)
            except Exception:
                pass
            driver.session = None
        gone = self.kill_group()
        if self.blackhole:
            self.blackhole.close()
            self.blackhole = None
        if self.watchdog:
            try:
                if gone:
                    self.watchdog.stdin.write(b"done\n")
                self.watchdog.stdin.close()
                self.watchdog.wait(timeout=8)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self.watchdog = None
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


def group_alive(pgid):
    """True while a process of the group runs (zombies, dead already and
    waiting for init to reap them, do not count)."""
    try:
        os.killpg(pgid, 0)
    except OSError:
        return False
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return True
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- checks ----------------------------------------------------------------------------
def new_session(driver, chromium, browser, timeout_ms):
    proxy = browser.blackhole.getsockname()[1]
    args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--window-size=1400,1000", f"--user-data-dir={os.path.join(browser.tmp, 'profile')}",
            # no network: names resolve to nothing, and every connection (loopback
            # included) goes to a port that refuses it
            "--host-resolver-rules=MAP * ~NOTFOUND",
            f"--proxy-server=http://127.0.0.1:{proxy}", "--proxy-bypass-list=<-loopback>",
            "--disable-background-networking", "--disable-component-update", "--no-first-run",
            "--disable-crash-reporter", "--hide-scrollbars"]
    caps = {"capabilities": {"alwaysMatch": {
        "browserName": "chrome",
        "pageLoadStrategy": "normal",
        "unhandledPromptBehavior": "dismiss",
        "timeouts": {"pageLoad": timeout_ms, "script": timeout_ms, "implicit": 0},
        "goog:chromeOptions": {"binary": chromium, "args": args},
        "goog:loggingPrefs": {"browser": "ALL"},
    }}}
    try:
        value = driver.call("POST", "/session", caps, timeout=30)
    except (WebDriverError, OSError, OutOfTime) as e:
        raise NoBrowser(f"chromedriver could not start {chromium}: {e}") from None
    driver.session = value["sessionId"]


def browser_log(driver):
    """SEVERE lines of the browser log, or None when the driver keeps none."""
    for path in ("/se/log", "/log"):  # chromedriver 156 answers both
        try:
            entries = driver.s("POST", path, {"type": "browser"}, timeout=10)
        except WebDriverError:
            continue
        return [f"console ({e.get('source', '?')}): {e.get('message', '')}"
                for e in entries or [] if e.get("level") == "SEVERE"]
    return None


def merge_errors(logged, recorded):
    """The browser log's lines, then what the recorder saw that the log did not.
    The log places console.error calls in the recorder's wrapper; the
    recorder's own entry for them names the page's line instead."""
    if recorded is not None:
        logged = [line for line in logged or [] if RECORDER_URL not in line]
    errors = list(logged or [])
    for r in recorded or []:
        key = r.get("key") or r.get("text", "")
        if logged is not None and key and any(key in line for line in logged):
            continue  # the same event, already in the browser log
        errors.append(f"{r.get('kind')}: {r.get('text')}")
    return errors


def monotone(values):
    """'asc', 'desc', 'equal' or 'unsorted' over the numbers (cells without
    one are skipped)."""
    v = [x for x in values if x is not None and not (isinstance(x, float) and math.isnan(x))]
    up = all(a <= b for a, b in zip(v, v[1:]))
    down = all(a >= b for a, b in zip(v, v[1:]))
    return "asc" if up and not down else "desc" if down and not up else "equal" if up else "unsorted"


def preview(values, n=8):
    shown = ", ".join("-" if x is None else f"{x:g}" for x in values[:n])
    return f"[{shown}{', ...' if len(values) > n else ''}]"


def check_tables(driver, failures):
    tables = []
    for t in driver.script(SORTABLE):
        if "skipped" in t:
            tables.append({"table": t["table"], "skipped": t["skipped"]})
            continue
        name = f"{t['table']} column \"{t['column']}\""
        before = driver.script(COLUMN, t["index"], t["col"])
        orders = []
        for click in ("first", "second"):
            try:
                driver.s("POST", f"/element/{t['th'][ELEMENT_KEY]}/click", {})
            except WebDriverError as e:  # hidden or covered header
                failures.append(f"{name}: the {click} click on its header failed: {e}")
                break
            now = driver.script(COLUMN, t["index"], t["col"])
            order = monotone(now["values"])
            orders.append(order)
            if sorted(now["rows"]) != sorted(before["rows"]):
                failures.append(f"{name}: after the {click} click on its header the rows changed "
                                "content (expected the same rows in another order)")
                break
            if order not in ("asc", "desc"):
                failures.append(f"{name}: after the {click} click on its header, expected the column "
                                f"sorted, found {preview(now['values'])}")
                break
        if len(orders) == 2 and orders[0] in ("asc", "desc") and orders[1] == orders[0]:
            failures.append(f"{name}: the second click should reverse the order, found {orders[1]} "
                            "both times")
        tables.append({"table": t["table"], "column": t["column"],
                       "first": orders[0] if orders else None,
                       "second": orders[1] if len(orders) > 1 else None})
    return tables


def screenshot(driver, path, max_height=MAX_SHOT_HEIGHT):
    m = driver.cdp("Page.getLayoutMetrics")
    size = m.get("cssContentSize") or m.get("contentSize")
    width, height = math.ceil(size["width"]), math.ceil(size["height"])
    clipped = height > MAX_SHOT_HEIGHT and max_height == MAX_SHOT_HEIGHT
    shot = driver.cdp("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": min(height, max_height), "scale": 1}},
        timeout=30)
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    os.replace(tmp, path)
    if clipped:
        print(f"browser_check: note: page is {height} px high; the screenshot keeps the first "
              f"{MAX_SHOT_HEIGHT}", file=sys.stderr)


def run_checks(driver, args, summary):
    failures = summary["failures"]
    recorder = True
    try:
        driver.cdp("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
    except WebDriverError:
        recorder = False  # no CDP: record from after load on; the browser log has the rest
    try:
        driver.s("POST", "/url", {"url": pathlib.Path(summary["report"]).as_uri()},
                 timeout=args.page_load_s + 5)
    except WebDriverError as e:
        failures.append(f"the page did not load within {args.page_load_s:.3g} s: {e}")
        return
    if not recorder:
        driver.script(RECORDER)
    driver.s("POST", "/execute/async", {"script": SETTLE, "args": []})

    timing = driver.script(TIMING)
    summary["load_ms"] = None if timing["load_ms"] is None else round(timing["load_ms"], 1)
    summary["resources"] = timing["resources"]
    if summary["load_ms"] is None or summary["load_ms"] <= 0:
        failures.append(f"load time: no finished navigation entry (loadEventEnd {timing['load_ms']})")
    elif args.max_load_ms is not None and summary["load_ms"] > args.max_load_ms:
        failures.append(f"load time: expected at most {args.max_load_ms:g} ms, found "
                        f"{summary['load_ms']:g} ms (loadEventEnd)")
    if args.no_external:
        for url in timing["resources"]:
            failures.append(f"external resource fetched or attempted: {url} (expected none)")
        for ref in driver.script(EXTERNAL_REFS):
            failures.append(f"external reference: {ref} (expected a self-contained page)")

    charts = driver.script(CHARTS)
    summary["charts"] = [{"id": c["id"], "declared": c["declared"], "series": c["series"],
                          "svg": c["svg"]} for c in charts]
    for c in charts:
        for p in c["problems"]:
            failures.append(f"chart {c['name']}: {p}")
    if len(charts) < args.min_charts:
        failures.append(f"expected at least {args.min_charts} figure.chart, found {len(charts)}")
    by_id = {c["id"]: c for c in charts if c["id"]}
    for cid, n in args.expect_chart:
        if cid not in by_id:
            failures.append(f"chart {cid}: expected with {n} series, not found (charts: "
                            f"{', '.join(by_id) or 'none'})")
        elif by_id[cid]["series"] != n:
            failures.append(f"chart {cid}: expected {n} series, found {by_id[cid]['series']}")

    for path, height in ((args.screenshot, MAX_SHOT_HEIGHT), (args.screenshot_top, TOP_SHOT_HEIGHT)):
        if not path:
            continue
        try:
            screenshot(driver, path, height)
            if not summary.get("screenshot"):
                summary["screenshot"] = path
        except (WebDriverError, OSError, KeyError, ValueError) as e:
            failures.append(f"screenshot {path}: not written: {e}")

    summary["tables"] = check_tables(driver, failures)

    logged = browser_log(driver)
    recorded = driver.script(RECORDED)
    summary["errors"] = merge_errors(logged, recorded)
    if logged is None:
        summary["errors"].append("note: the browser log is unavailable; only recorded errors are listed")
    for e in summary["errors"]:
        if not e.startswith("note:"):
            failures.append(f"browser error: {e}")


# --- command line --------------------------------------------------------------------------
class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Usage(message)


def expectation(text):
    cid, eq, n = text.rpartition("=")
    if not eq or not cid or not n.isdigit():
        raise argparse.ArgumentTypeError(f"'{text}': expected ID=N, such as chart-ndcg=24")
    return cid, int(n)


def parse_args(argv):
    p = Parser(prog="browser_check.py", description="Checks an HTML report in headless Chromium.")
    p.add_argument("report")
    p.add_argument("--expect-chart", type=expectation, action="append", default=[], metavar="ID=N")
    p.add_argument("--min-charts", type=int, default=1, metavar="N")
    p.add_argument("--max-load-ms", type=float, metavar="M")
    p.add_argument("--screenshot", metavar="PATH")
    p.add_argument("--screenshot-top", metavar="PATH")
    p.add_argument("--no-external", action="store_true")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S")
    p.add_argument("--chromedriver", default="/usr/bin/chromedriver", metavar="PATH")
    p.add_argument("--chromium", default="/usr/bin/chromium", metavar="PATH")
    args = p.parse_args(argv)
    if args.timeout <= 0 or args.min_charts < 0:
        raise Usage("--timeout must be > 0 and --min-charts >= 0")
    if args.screenshot:
        args.screenshot = os.path.abspath(args.screenshot)
        if not os.path.isdir(os.path.dirname(args.screenshot)):
            raise Usage(f"--screenshot {args.screenshot}: its folder does not exist")
    if args.screenshot_top:
        args.screenshot_top = os.path.abspath(args.screenshot_top)
        if not os.path.isdir(os.path.dirname(args.screenshot_top)):
            raise Usage(f"--screenshot-top {args.screenshot_top}: its folder does not exist")
    return args


def main(argv):
    started = time.monotonic()
    summary = {"status": "usage", "report": None, "charts": [], "tables": [], "load_ms": None,
               "resources": [], "errors": [], "failures": [], "screenshot": None}
    browser, driver, code, limit = Browser(), None, 3, 60.0

    def on_signal(signum, frame):
        if signum == signal.SIGALRM:
            raise OutOfTime("the hard stop")
        raise Interrupted(signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        args = parse_args(argv)
        limit = args.timeout
        report = os.path.abspath(args.report)
        summary["report"] = report
        try:
            with open(report, "rb") as f:
                f.read(1)
        except OSError as e:
            raise Usage(f"{args.report}: cannot read the report ({e.strerror})") from None
        deadline = started + args.timeout
        # the hard stop, should an HTTP call be stuck past its own timeout
        signal.signal(signal.SIGALRM, on_signal)
        signal.alarm(int(args.timeout) + 5)
        for program in (args.chromedriver, args.chromium):
            if not os.path.isfile(program) or not os.access(program, os.X_OK):
                raise NoBrowser(f"{program}: not found or not executable; {INSTALL_HINT}")
        driver = browser.start(args.chromedriver, deadline, args.timeout + 10)
        # chromedriver gives up on a page that does not load in time with a
        # message of its own, well before our overall limit (half the time left)
        args.page_load_s = max(1.0, min(30.0, (deadline - time.monotonic()) / 2))
        new_session(driver, args.chromium, browser, int(args.page_load_s * 1000))
        run_checks(driver, args, summary)
        code = 1 if summary["failures"] else 0
    except Usage as e:
        summary["failures"].append(f"usage: {e}")
        code = 3
    except NoBrowser as e:
        summary["failures"].append(f"the browser could not start: {e}")
        code = 2
    except OutOfTime as e:
        summary["failures"].append(f"out of time: the checks did not finish within {limit:g} s "
                                   f"(at {e})")
        code = 2 if driver is None or driver.session is None else 1
    except WebDriverError as e:
        summary["failures"].append(f"webdriver: {e}")
        code = 1
    except Interrupted as e:
        summary["failures"].append(f"stopped by signal {e.args[0]}")
        code = 128 + e.args[0]
    except Exception as e:  # a bug here, or a driver that answers otherwise
        traceback.print_exc()
        summary["failures"].append(f"internal error: {type(e).__name__}: {e}")
        code = 1
    finally:
        signal.alarm(0)
        browser.stop(driver)
    summary["status"] = {0: "pass", 1: "fail", 2: "no-browser", 3: "usage"}.get(code, "stopped")
    summary["harness_ms"] = round((time.monotonic() - started) * 1000)
    for f in summary["failures"]:
        print(f"browser_check: FAIL: {f}", file=sys.stderr)
    print(json.dumps(summary, ensure_ascii=False), flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/python3
"""Independent end-to-end check of `ragsweep eval` (HDF5 sweep corpus -> CSV).

The corpus is written with h5py, read back with h5py, and every expected value
is computed here in plain Python from the written definitions. Nothing is
shared with the C code, so agreement means two separate readings of the spec
agree.

  /usr/bin/python3 tests/indep/h5py_check.py BIN [KEEPDIR]   # check BIN
  /usr/bin/python3 tests/indep/h5py_check.py --selftest [KEEPDIR]

Exit 0 when every CSV row matches; 1 with the first ~20 mismatches otherwise.
Needs only the standard library, numpy and h5py (python3-h5py, python3-numpy).
"""
import argparse
import csv
import functools
import itertools
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

NQ, ND, K = 60, 400, 20
LZ4_FILTER = 32004  # the registered id of the LZ4 filter (hdf5-filter-plugin)
SEED = 20240617
MEASURE_SPECS = ["P@{1,5,10}", "R@{5,20}", "F1@5", "Success@{1,3}", "RR", "RR@5", "AP", "AP@10",
                 "nDCG@{5,10}", "nDCG(gain=exp)@10", "DCG@5", "Rprec", "bpref", "Judged@10",
                 "NumRet", "NumRel", "NumRelRet", "P(rel=2)@5", "R(rel=2)@10"]
SUM_MEASURES = {"NumRet", "NumRel", "NumRelRet"}  # summed, not averaged, in aggregate.csv
# Awkward query ids: CSV quoting (comma, quote), UTF-8, a space. These queries
# are always given relevant judgments, so they appear in per_query.csv.
SPECIAL_QIDS = {3: "q,comma", 17: 'say "hi"', 29: "café", 44: "query with space"}
LAT_COLS = ["n", "mean_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms"]
PERCENTILES = [50, 90, 95, 99, 99.9]
# (label, extra CLI flags, --queries mode, --ties mode)
CONFIGS = [("default", [], "judged", "trec"),
           ("queries_all", ["--queries=all"], "all", "trec"),
           ("ties_stored", ["--ties=stored"], "judged", "stored")]
MAX_REPORT = 20


# ----------------------------------------------------------------------------- measures
def expand(spec):
    """`P@{5,1}` -> P@1, P@5 (ascending); `R@1..3` -> R@1, R@2, R@3; else unchanged."""
    m = re.fullmatch(r"(.*@)\{([\d,]+)\}", spec)
    if m:
        return [m.group(1) + str(k) for k in sorted({int(x) for x in m.group(2).split(",")})]
    m = re.fullmatch(r"(.*@)(\d+)\.\.(\d+)", spec)
    if m:
        return [m.group(1) + str(k) for k in range(int(m.group(2)), int(m.group(3)) + 1)]
    return [spec]


MEASURES = [name for spec in MEASURE_SPECS for name in expand(spec)]


def parse_measure(name):
    """Canonical name -> (base, cutoff or None, relevance level L, gain kind)."""
    base, pkey, pval, k = re.fullmatch(r"([A-Za-z0-9]+)(?:\((\w+)=(\w+)\))?(?:@(\d+))?",
                                       name).groups()
    return (base, int(k) if k else None, int(pval) if pkey == "rel" else 1,
            pval if pkey == "gain" else "linear")


def gain(g, kind):
    # Only judged grades > 0 earn gain; unjudged (None) and grade 0 earn nothing.
    if g is None or g <= 0:
        return 0.0
    return float(g) if kind == "linear" else 2.0 ** g - 1.0


def dcg(grades, k, kind):
    return sum(gain(g, kind) / math.log2(i + 1) for i, g in enumerate(grades[:k], start=1))


def measure(name, ranking, judg):
    """One measure for one query. ranking: doc indexes best first; judg: {doc: grade}."""
    base, k, L, kind = parse_measure(name)
    grades = [judg.get(d) for d in ranking]            # None = unjudged
    rel = [g is not None and g >= L for g in grades]
    R = sum(1 for g in judg.values() if g >= L)

    def relret(n):                                     # relevant docs in the top n
        return sum(rel[:n])

    first = next((i for i, r in enumerate(rel, start=1) if r), None)
    if base == "P":
        return relret(k) / k                           # short ranking: still divide by k
    if base == "R":
        return relret(k) / R if R else 0.0
    if base == "F1":
        p, r = relret(k) / k, (relret(k) / R if R else 0.0)
        return 2 * p * r / (p + r) if p + r > 0 else 0.0
    if base == "Success":
        return 1.0 if relret(k) > 0 else 0.0
    if base == "RR":
        return 1.0 / first if first is not None and (k is None or first <= k) else 0.0
    if base == "AP":
        last = len(rel) if k is None else min(k, len(rel))
        total = sum(relret(i) / i for i in range(1, last + 1) if rel[i - 1])
        return total / R if R else 0.0
    if base in ("nDCG", "DCG"):
        d = dcg(grades, k, kind)
        if base == "DCG":
            return d
        ideal = dcg(sorted((g for g in judg.values() if g > 0), reverse=True), k, kind)
        return d / ideal if ideal > 0 else 0.0
    if base == "Rprec":
        return relret(R) / R if R else 0.0
    if base == "bpref":
        # SEMANTICS.md section 4: skip unjudged docs; nr = judged non-relevant seen so far.
        if R == 0:
            return 0.0
        N = sum(1 for g in judg.values() if 0 <= g < L)
        nr, total = 0, 0.0
        for g, r in zip(grades, rel):
            if g is None:
                continue
            if r:
                total += 1.0 - min(nr, R) / min(N, R) if nr > 0 else 1.0
            else:
                nr += 1
        return total / R
    if base == "Judged":
        return sum(1 for g in grades[:k] if g is not None) / k
    if base == "NumRet":
        return float(len(ranking))
    if base == "NumRel":
        return float(R)
    if base == "NumRelRet":
        return float(sum(rel))
    raise ValueError("unknown measure " + name)


# ----------------------------------------------------------------------------- corpus
def write_corpus(d):
    """Write corpus.h5 and runs_extra.h5 into d (deterministic); return their paths."""
    rng = np.random.default_rng(SEED)
    # Doc ids of mixed shapes (prefixes like d5/d50, upper case, a UTF-8 byte
    # sequence, one exactly 12 bytes so the S12 field has no NUL), shuffled so
    # that doc-id order differs from doc-index order (tie-breaking must use ids).
    pats = ["d%d", "doc-%04d", "D%d", "d\u00e9%d", "d%d_x"]
    ids = [(pats[i % 5] % i).encode() for i in range(ND)]
    ids[7] = b"exactly12byt"
    ids = [ids[j] for j in rng.permutation(ND)]
    qids = ["q%d" % i for i in range(NQ)]              # unpadded: corpus order != sorted order
    for i, s in SPECIAL_QIDS.items():
        qids[i] = s

    others = [i for i in range(NQ) if i not in SPECIAL_QIDS]
    perm = [int(x) for x in rng.permutation(others)]
    no_judg, only_zero, many_rel = set(perm[:8]), set(perm[8:14]), set(perm[14:20])
    qrels = []                                         # per query: list of (doc, grade)
    for i in range(NQ):
        if i in no_judg:
            grades = []
        elif i in only_zero:
            grades = [0] * int(rng.integers(1, 8))
        elif i in many_rel:                            # > K relevant docs
            grades = [int(g) for g in rng.choice([1, 2, 3], size=int(rng.integers(28, 45)))]
            for j in range(len(grades) // 6):
                grades[j] = 0
        else:
            grades = [int(g) for g in rng.choice(4, size=int(rng.integers(2, 25)),
                                                   p=[.5, .25, .15, .1])]
        docs = rng.choice(ND, size=len(grades), replace=False)   # unsorted on purpose
        qrels.append([(int(dd), g) for dd, g in zip(docs, grades)])

    def pool(i, n):
        """n distinct docs: the query's judged docs mixed with random (mostly unjudged) ones."""
        cand = list(dict.fromkeys([dd for dd, _ in qrels[i]] +
                                  [int(x) for x in rng.choice(ND, 40, replace=False)]))
        return [cand[j] for j in rng.permutation(len(cand))[:n]]

    # bm25: dense int32, float32 scores on a 0.5 grid (many ties, +0.0 and -0.0 mixed),
    # stored order random, float32 latency with zeros and an outlier.
    docA, scA = np.full((NQ, K), -1, np.int32), np.zeros((NQ, K), np.float32)
    for i in range(NQ):
        r = pool(i, K if rng.random() < 0.85 else int(rng.integers(1, K)))
        s = rng.integers(0, 8, size=len(r)) / 2.0
        s = np.where((s == 0) & (rng.random(len(r)) < 0.5), -0.0, s)
        docA[i, :len(r)], scA[i, :len(r)] = r, s
    latA = rng.lognormal(-4, 0.7, NQ).astype(np.float32)
    latA[5], latA[6], latA[11] = 0.0, 0.0, 2.5

    # Dense-int64: int64, float64 scores, varying lengths, some empty rows (judged
    # queries too), padding scores 1e30 (must be ignored), stored order nearly sorted.
    judged_q = [i for i in range(NQ) if qrels[i]]
    empty = {int(x) for x in rng.choice(judged_q, 5, replace=False)} | set(sorted(no_judg)[:2])
    docB, scB = np.full((NQ, K), -1, np.int64), np.full((NQ, K), 1e30)
    for i in range(NQ):
        n = 0 if i in empty else int(rng.integers(1, K + 1))
        s = np.round(np.sort(rng.normal(10, 3, n))[::-1], 1)
        for j in range(n - 1):                         # a few swaps: trec order != stored
            if rng.random() < 0.2:
                s[j], s[j + 1] = s[j + 1], s[j]
        docB[i, :n], scB[i, :n] = pool(i, n), s

    # rerank_noscore: no scores, so stored order is the ranking in every mode.
    docC = np.full((NQ, K), -1, np.int32)
    for i in range(NQ):
        n = [0, 3, 11, K, K, K, K][int(rng.integers(0, 7))]
        docC[i, :n] = pool(i, n)
    latC = rng.lognormal(-2.5, 0.5, NQ)
    latC[0] = 0.0

    # Zcsr (extra file): CSR form, lists of 0..25 docs (longer than K is allowed), ties.
    lens = rng.integers(0, 26, NQ)
    docD = np.array([dd for i in range(NQ) for dd in pool(i, int(lens[i]))], np.int64)
    scD = np.round(rng.uniform(0, 1, len(docD)), 1)
    offD = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)

    corpus, extra = os.path.join(d, "corpus.h5"), os.path.join(d, "runs_extra.h5")
    # Aligned (every dataset on an 8-byte boundary): eval maps the
    # contiguous runs of this file in place; the extra file keeps h5py's
    # default layout, whose unaligned datasets are read through HDF5.
    with h5py.File(corpus, "w", alignment_threshold=1, alignment_interval=8) as f:
        f.attrs["format"] = "ragsweep-corpus"
        f.attrs["version"] = np.int64(1)
        f.create_dataset("queries/id", data=qids, dtype=h5py.string_dtype())
        f.create_dataset("queries/text", data=["text of %s" % q for q in qids],
                         dtype=h5py.string_dtype())
        f.create_dataset("docs/id", data=np.array(ids, dtype="S12"))
        qoff = np.concatenate([[0], np.cumsum([len(q) for q in qrels])])
        f["qrels/offsets"] = qoff.astype(np.int64)
        f["qrels/doc"] = np.array([dd for q in qrels for dd, _ in q], np.int32)
        f["qrels/grade"] = np.array([g for q in qrels for _, g in q], np.int8)
        g = f.create_group("runs/bm25")
        g["doc"], g["score"], g["latency"] = docA, scA, latA
        g.attrs["model"], g.attrs["chunk"] = "bm25", np.int64(512)
        # The same run stored so that it cannot be mapped (chunked + gzip;
        # big-endian): read through HDF5, it must score as bm25 does.
        g = f.create_group("runs/bm25_gzip")
        g.create_dataset("doc", data=docA, chunks=(7, K), compression="gzip")
        g.create_dataset("score", data=scA, chunks=(7, K), compression="gzip")
        # The same run compressed by a filter plugin that libhdf5 loads at
        # run time (LZ4, filter 32004, Debian's hdf5-filter-plugin): the
        # ragsweep program has HDF5 linked in, and must still read it.
        if not h5py.h5z.filter_avail(LZ4_FILTER):
            sys.exit("h5py_check: the LZ4 filter plugin (HDF5 filter %d) is not available; "
                     "install hdf5-filter-plugin (scripts/install-deps.sh does for the tests)" % LZ4_FILTER)
        g = f.create_group("runs/bm25_lz4")
        g.create_dataset("doc", data=docA, chunks=(7, K), compression=LZ4_FILTER)
        g.create_dataset("score", data=scA, chunks=(7, K), compression=LZ4_FILTER)
        g = f.create_group("runs/bm25_bigendian")
        g["doc"], g["score"] = docA.astype(">i4"), scA.astype(">f4")
        g = f.create_group("runs/Dense-int64")
        g["doc"], g["score"] = docB, scB
        g.attrs["model"], g.attrs["top_k"] = 'e5 "large", v2', np.int32(100)
        g = f.create_group("runs/rerank_noscore")
        g["doc"], g["latency"] = docC, latC
        g.attrs["reranker"] = np.bytes_(b"monoT5-3B")   # fixed-length string attribute
    with h5py.File(extra, "w") as f:
        g = f.create_group("runs/Zcsr")
        g["offsets"], g["doc"], g["score"] = offD, docD, scD
        g.attrs["temp"], g.attrs["chunk"] = 0.5, np.int32(256)
        # No attributes, no ranking at all: no evaluated query unless --queries=all.
        f.create_group("runs/alpha_empty")["doc"] = np.full((NQ, K), -1, np.int32)
    return corpus, extra


def attr_value(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, (np.integer, int)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return float(v)
    return str(v)


def read_runs(f, nq):
    """Runs of one file, sorted bytewise by name; rows cut at the first -1."""
    out = []
    for name in sorted(f["runs"].keys() if "runs" in f else [], key=lambda s: s.encode()):
        g = f["runs"][name]
        doc = g["doc"][()]
        score = g["score"][()] if "score" in g else None
        if "offsets" in g:
            off = g["offsets"][()]
            spans = [(int(off[i]), int(off[i + 1])) for i in range(nq)]
            drows = [doc[a:b] for a, b in spans]
            srows = None if score is None else [score[a:b] for a, b in spans]
        else:
            drows, srows = list(doc), (None if score is None else list(score))
        docs, scores = [], []
        for i in range(nq):
            row = [int(x) for x in drows[i]]
            n = row.index(-1) if -1 in row else len(row)
            docs.append(row[:n])
            scores.append(None if srows is None else [float(x) for x in srows[i][:n]])
        lat = g["latency"][()].astype(np.float64) if "latency" in g else None
        out.append(dict(name=name, docs=docs, scores=None if srows is None else scores,
                        latency=lat, attrs={a: attr_value(v) for a, v in g.attrs.items()}))
    return out


def load(corpus, extras):
    with h5py.File(corpus, "r") as f:
        assert attr_value(f.attrs["format"]) == "ragsweep-corpus" and f.attrs["version"] == 1
        qids = list(f["queries/id"].asstr()[()])
        docids = [bytes(x) for x in f["docs/id"][()]]
        off, qd, qg = f["qrels/offsets"][()], f["qrels/doc"][()], f["qrels/grade"][()]
        qrels = [{int(qd[j]): int(qg[j]) for j in range(off[i], off[i + 1])}
                 for i in range(len(qids))]
        runs = read_runs(f, len(qids))
    for p in extras:
        with h5py.File(p, "r") as f:
            runs += read_runs(f, len(qids))
    return dict(qids=qids, docids=docids, qrels=qrels, runs=runs)


def ranking(run, i, ties, docids):
    """Query i's ranking: stored order, or score desc then external doc id desc (strcmp)."""
    docs = run["docs"][i]
    if ties == "stored" or run["scores"] is None:
        return list(docs)

    def cmp(a, b):
        if a[0] != b[0]:                               # 0.0 == -0.0 here, as required
            return -1 if a[0] > b[0] else 1
        da, db = docids[a[1]], docids[b[1]]            # bytes compare like strcmp
        return (da < db) - (da > db)

    return [dd for _, dd in sorted(zip(run["scores"][i], docs), key=functools.cmp_to_key(cmp))]


# ----------------------------------------------------------------------------- expected CSVs
# A cell is (kind, value): 's' exact string, 'i' integer literal, 'f' float that
# must parse to exactly this double, 'n' number compared with tolerance.
def attr_cell(v):
    if v is None:
        return ("s", "")
    if isinstance(v, str):
        return ("s", v)
    return ("i", v) if isinstance(v, int) else ("f", v)


def expected(data, queries_mode, ties):
    """{file: (header, key columns, rows)} for one invocation."""
    qids, qrels, runs = data["qids"], data["qrels"], data["runs"]
    attrs = sorted({a for r in runs for a in r["attrs"]}, key=str.encode)
    agg, pq, lat = [], [], []
    # aggregate.csv's last column names the query policy (eval: "ranked" by default)
    policy = ("s", "all" if queries_mode == "all" else "ranked")
    for run in runs:
        name = ("s", run["name"])
        acells = [attr_cell(run["attrs"].get(a)) for a in attrs]
        evaluated = []                                 # (query index, ranking), corpus order
        for i in range(len(qids)):
            rk = ranking(run, i, ties, data["docids"])
            if qrels[i] and (rk or queries_mode == "all"):
                evaluated.append((i, rk))
        per = {m: [] for m in MEASURES}
        for i, rk in evaluated:
            for m in MEASURES:
                v = measure(m, rk, qrels[i])
                per[m].append(v)
                pq.append([name, ("s", qids[i])] + measure_cells(m) + [("n", v)])
        for m in MEASURES:
            total = sum(per[m])
            v = total if m in SUM_MEASURES else (total / len(evaluated) if evaluated else 0.0)
            agg.append([name] + acells + measure_cells(m) + [("n", v), policy])
        no_rel = sum(1 for i, rk in evaluated if not any(qrels[i].get(dd, -1) >= 1 for dd in rk))
        perfect = sum(1 for i, rk in evaluated if rk and qrels[i].get(rk[0], -1) >= 1)
        for m, v in [("num_q", len(evaluated)), ("num_q_no_rel_ret", no_rel),
                     ("num_q_perfect_P@1", perfect)]:
            # a count is a base of its own, without a cutoff
            agg.append([name] + acells + [("s", m), ("s", m), ("s", ""), ("n", float(v)), policy])
        if run["latency"] is not None:
            # The spec defines percentiles by numpy.percentile (linear); the data is
            # widened to float64 first because numpy would otherwise work in float32.
            s = np.asarray(run["latency"], dtype=np.float64)
            vals = [float(len(s)), math.fsum(s) / len(s) * 1000]
            vals += [float(np.percentile(s, p)) * 1000 for p in PERCENTILES]
            vals.append(float(s.max()) * 1000)
            lat.append([name] + acells + [("n", v) for v in vals])
    nattr = len(attrs)
    return {"aggregate.csv": (["run"] + attrs + ["measure", "base", "cutoff", "value", "queries"], (0, nattr + 1), agg),
            "per_query.csv": (["run", "query", "measure", "base", "cutoff", "value"], (0, 1, 2), pq),
            "latency.csv": (["run"] + attrs + LAT_COLS, (0,), lat)}


def measure_cells(m):
    """measure, base, cutoff: the digits after the last '@' are the cutoff (nDCG@10 -> nDCG, 10)."""
    base, at, cut = m.rpartition("@")
    if at and re.fullmatch(r"[0-9]+", cut):
        return [("s", m), ("s", base), ("s", cut)]
    return [("s", m), ("s", m), ("s", "")]


# ----------------------------------------------------------------------------- comparison
def cell_ok(cell, s):
    kind, v = cell
    try:
        if kind == "s":
            return s == v
        if kind == "i":
            return re.fullmatch(r"-?[0-9]+", s) is not None and int(s) == v
        if kind == "f":
            return float(s) == v
        return math.isclose(float(s), v, rel_tol=1e-9, abs_tol=1e-12)
    except ValueError:
        return False


def compare_table(path, header, keycols, rows, label, problems):
    """Append a message to problems for every difference; return the row count checked."""
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            got = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError) as e:
        problems.append("%s: cannot read: %s" % (label, e))
        return 0
    if not got or got[0] != header:
        problems.append("%s: header %r, expected %r" % (label, got[0] if got else None, header))
        return 0
    exp = {tuple(r[c][1] for c in keycols): r for r in rows}
    act, act_order = {}, []
    for lineno, row in enumerate(got[1:], start=2):
        key = tuple(row[c] for c in keycols) if len(row) == len(header) else None
        if key is None:
            problems.append("%s:%d: %d fields, expected %d: %r"
                            % (label, lineno, len(row), len(header), row))
        elif key in act:
            problems.append("%s:%d: duplicate row %r" % (label, lineno, key))
        else:
            act[key] = row
            act_order.append(key)
    for key in exp:
        if key not in act:
            problems.append("%s: missing row %r" % (label, key))
    for key in act_order:
        if key not in exp:
            problems.append("%s: unexpected row %r" % (label, key))
    # Row order is specified too (run order, corpus query order, measure order).
    a = [k for k in act_order if k in exp]
    e = [k for k in exp if k in act]
    if a != e:
        j = next(j for j, (x, y) in enumerate(zip(a, e)) if x != y)
        problems.append("%s: row order differs at row %r, expected %r" % (label, a[j], e[j]))
    for key in e:
        for col, cell, s in zip(header, exp[key], act[key]):
            if not cell_ok(cell, s):
                problems.append("%s: %r column %s: got %r, expected %r"
                                % (label, key, col, s, cell[1]))
    return len(act)


def fmt_cell(cell):
    return repr(cell[1]) if cell[0] in ("f", "n") else str(cell[1])


def write_tables(outdir, tables):
    """Write expected tables as CSV (used by the selftest to exercise compare_table)."""
    os.makedirs(outdir, exist_ok=True)
    for fname, (header, _, rows) in tables.items():
        with open(os.path.join(outdir, fname), "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(header)
            w.writerows([[fmt_cell(c) for c in r] for r in rows])


def compare_dir(outdir, tables, label, problems):
    return {f: compare_table(os.path.join(outdir, f), h, k, r, "%s/%s" % (label, f), problems)
            for f, (h, k, r) in tables.items()}


# ----------------------------------------------------------------------------- modes
def run_binary(binary, corpus, extra, work):
    data = load(corpus, [extra])
    problems = []
    for label, flags, qmode, ties in CONFIGS:
        outdir = os.path.join(work, "out_" + label)
        if os.path.isdir(outdir):                      # never judge stale files
            shutil.rmtree(outdir)
        cmd = ([binary, "eval", corpus, extra, "-o", outdir]
               + [x for spec in MEASURE_SPECS for x in ("-m", spec)] + ["--per-query"] + flags)
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=600)
        if p.returncode != 0:
            problems.append("%s: exit %d: %s" % (label, p.returncode, p.stderr.strip()[:400]))
            continue
        before = len(problems)
        counts = compare_dir(outdir, expected(data, qmode, ties), label, problems)
        print("%-12s rows checked: %s; mismatches: %d"
              % (label, ", ".join("%s=%d" % kv for kv in counts.items()), len(problems) - before))
    if problems:
        print("FAIL: %d mismatches; first %d:" % (len(problems), min(MAX_REPORT, len(problems))))
        for msg in problems[:MAX_REPORT]:
            print("  " + msg)
        return 1
    print("OK: every aggregate, per-query and latency row matches (%d configurations)"
          % len(CONFIGS))
    return 0


def signed_char_matters(a, b):
    """Would a strcmp on signed char order a and b differently (first differing byte)?"""
    j = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), None)
    return j is not None and (a[j] >= 0x80) != (b[j] >= 0x80)


def selftest(corpus, extra, work):
    data = load(corpus, [extra])
    qrels, runs, docids = data["qrels"], data["runs"], data["docids"]
    byname = {r["name"]: r for r in runs}

    # 1. Hand-computed toy query. Docs: 0..4 judged, 9 unjudged.
    judg = {0: 1, 1: 0, 2: 2, 3: 1, 4: 0}              # R = 3 (docs 0, 2, 3), N = 2
    rk = [9, 2, 1, 0]
    want = {"P@1": 0.0, "P@5": 2 / 5, "R@5": 2 / 3, "F1@5": 2 * .4 * (2 / 3) / (.4 + 2 / 3),
            "Success@1": 0.0, "Success@3": 1.0, "RR": 0.5, "RR@1": 0.0,
            "AP": (1 / 2 + 2 / 4) / 3, "AP@2": (1 / 2) / 3, "Rprec": 1 / 3,
            "bpref": (1 + (1 - 1 / 2)) / 3, "Judged@10": 3 / 10, "NumRet": 4.0,
            "NumRelRet": 2.0, "P(rel=2)@5": 1 / 5, "R(rel=2)@10": 1.0,
            "DCG@5": 2 / math.log2(3) + 1 / math.log2(5),
            "nDCG@5": (2 / math.log2(3) + 1 / math.log2(5)) / (2 + 1 / math.log2(3) + 1 / 2),
            "nDCG(gain=exp)@10":
                (3 / math.log2(3) + 1 / math.log2(5)) / (3 + 1 / math.log2(3) + .5)}
    for m, v in want.items():
        assert math.isclose(measure(m, rk, judg), v, rel_tol=1e-12), (m, measure(m, rk, judg), v)
    assert MEASURES[:3] == ["P@1", "P@5", "P@10"] and expand("R@1..3") == ["R@1", "R@2", "R@3"]
    assert [r["name"] for r in runs] == ["Dense-int64", "bm25", "rerank_noscore",
                                         "Zcsr", "alpha_empty"]

    # 2. The corpus really contains the awkward cases it is meant to.
    bm = byname["bm25"]
    facts = {
        "queries without judgments": sum(1 for q in qrels if not q),
        "queries judged, grade 0 only": sum(1 for q in qrels if q and max(q.values()) == 0),
        "queries with R > K": sum(1 for q in qrels if sum(g >= 1 for g in q.values()) > K),
        "bm25 queries with score ties": sum(1 for s in bm["scores"] if len(set(s)) < len(s)),
        "bm25 queries with both 0.0 and -0.0": sum(
            1 for s in bm["scores"] if {math.copysign(1, x) for x in s if x == 0} == {1, -1}),
        "bm25 rankings trec != stored": sum(
            1 for i in range(NQ) if ranking(bm, i, "trec", docids) != bm["docs"][i]),
        "bm25 tied pairs ordered differently by signed strcmp": sum(
            1 for i in range(NQ) for (s1, d1), (s2, d2)
            in itertools.combinations(zip(bm["scores"][i], bm["docs"][i]), 2)
            if s1 == s2 and signed_char_matters(docids[d1], docids[d2])),
        "Dense-int64 judged queries with empty ranking": sum(
            1 for i in range(NQ) if qrels[i] and not byname["Dense-int64"]["docs"][i]),
        "Zcsr lists longer than K": sum(1 for dd in byname["Zcsr"]["docs"] if len(dd) > K),
        "unjudged retrieved (all runs)": sum(
            1 for r in runs for i in range(NQ) for dd in r["docs"][i] if dd not in qrels[i]),
        "12-byte doc ids": sum(1 for x in docids if len(x) == 12),
    }
    for what, n in facts.items():
        print("corpus: %-52s %d" % (what, n))
        assert n > 0, what

    # 3. Expected values; a sample is printed.
    tables = {label: expected(data, qmode, ties) for label, _, qmode, ties in CONFIGS}
    for label, t in tables.items():
        print("%-12s expected rows: %s" % (label, ", ".join(
            "%s=%d" % (f, len(v[2])) for f, v in t.items())))
    print("aggregate header:", ",".join(tables["default"]["aggregate.csv"][0]))
    samples = [("default", "aggregate.csv", lambda t: t[0] == "bm25" and t[-3] in
                ("P@5", "AP", "nDCG@10", "bpref", "NumRel", "num_q", "num_q_perfect_P@1")),
               ("queries_all", "aggregate.csv", lambda t: t[0] == "alpha_empty" and t[-3] in
                ("NumRel", "num_q")),
               ("ties_stored", "aggregate.csv", lambda t: t[0] == "bm25" and t[-3] == "nDCG@10"),
               ("default", "per_query.csv", lambda t: t[0] == "bm25" and t[2] in ("AP", "RR")
                and t[1] in ("café", 'say "hi"')),
               ("default", "latency.csv", lambda t: True)]
    for label, fname, wanted in samples:
        for row in tables[label][fname][2]:
            text = [fmt_cell(c) for c in row]
            if wanted(text):
                print("  %-12s %-14s %s" % (label, fname, ",".join(text)))

    # 4. The comparison itself: a faithful copy passes, tampered copies fail.
    fake = os.path.join(work, "selftest_out")
    write_tables(fake, tables["default"])
    problems = []
    compare_dir(fake, tables["default"], "copy", problems)
    assert not problems, problems[:5]
    pq = os.path.join(fake, "per_query.csv")
    with open(pq, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    rows[5][3] = repr(float(rows[5][3]) * (1 + 1e-12) + 1e-14)   # within tolerance
    rows[7][3] = repr(float(rows[7][3]) + 1e-6)                   # outside tolerance
    rows[8], rows[9] = rows[9], rows[8]                           # order
    del rows[12]                                                  # missing row
    rows.append(rows[1][:2] + ["P@99", "0"])                      # extra row
    with open(pq, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    compare_dir(fake, tables["default"], "tampered", problems)
    for kind in ("missing row", "unexpected row", "row order", "column value"):
        assert sum(kind in msg for msg in problems) == 1, (kind, problems)
    print("compare self-check: tampered per_query.csv gave %d mismatches:" % len(problems))
    for msg in problems:
        print("  " + msg)
    assert len(problems) == 4, problems
    print("SELFTEST OK")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary", nargs="?", help="the ragsweep binary")
    ap.add_argument("keepdir", nargs="?", help="keep corpus and outputs here")
    ap.add_argument("--selftest", action="store_true",
                    help="check this script only (no binary); the first positional is KEEPDIR")
    args = ap.parse_args()
    keep = args.binary if args.selftest else args.keepdir
    if not args.selftest and not args.binary:
        ap.error("BIN is required unless --selftest")
    with tempfile.TemporaryDirectory(prefix="ragsweep_h5py_") as tmp:
        work = keep or tmp
        os.makedirs(work, exist_ok=True)
        corpus, extra = write_corpus(work)
        if args.selftest:
            return selftest(corpus, extra, work)
        return run_binary(os.path.abspath(args.binary), corpus, extra, work)


if __name__ == "__main__":
    sys.exit(main())

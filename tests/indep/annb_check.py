#!/usr/bin/python3
"""Independent check of ragsweep's ann-benchmarks input (`eval DATASET RESULT...`).

  /usr/bin/python3 tests/indep/annb_check.py make DIR        # write the files
  /usr/bin/python3 tests/indep/annb_check.py check BIN DIR   # run BIN on them, compare

The files follow erikbern/ann-benchmarks at commit
f402b2cc17b980d7cd45241ab5a7a4cc0f965e55: a dataset as datasets.py's
write_output lays it out (train, test, neighbors, distances; attribute
distance), result files as results.py's store_results writes them (times "f",
neighbors "i", distances "f", -1 / inf padding) with the attributes of
runner.py (run_individual_query and run).  The expected values are computed
here, in Python, from those definitions; nothing is shared with the C code.

k-nn (ann_benchmarks/plotting/metrics.py, get_recall_values with
knn_threshold, epsilon = 1e-3):
    t_i    = dataset_distances[i][count - 1] + epsilon
    hits_i = number of d in run_distances[i][:count] with d <= t_i
    k-nn   = np.mean(hits) / float(count)
epsilon / largeepsilon: threshold dataset_distances[i][count - 1] * (1 + eps),
eps = 0.01 / 0.1.  qps (queries_per_second) = 1.0 / attrs["best_search_time"].
build = attrs["build_time"]; indexsize = attrs.get("index_size", 0);
distcomps = attrs.get("dist_comps", 0) / (attrs["run_count"] * len(queries)).
The commit pins numpy==2.2.4, where (NEP 50) a float32 numpy scalar plus a
Python float is computed in float32; the functions below spell that out with
explicit float32 scalars, so they give NumPy 2's answer under any NumPy.
Latency: ann-benchmarks' p50/p95/p99/p999 are np.percentile(times, p) * 1000.

Exit 0 when everything matches, 1 with the mismatches listed.
"""
import csv
import os
import subprocess
import sys

import h5py
import numpy as np

K = 10          # true neighbours stored per query
COUNT = 4       # neighbours each run was asked for
F32_EPS = np.float32(1e-3)


# --- the data ---------------------------------------------------------------

def euclidean(a, b):
    # ann_benchmarks/distance.py: norm(a - b) = np.sum((a - b) ** 2) ** 0.5, on float32 vectors
    return np.sum((a - b) ** 2) ** 0.5


def boundary32():
    """The float32 k-nn threshold above a true distance of 1.0: 1 + 1e-3 in float32."""
    return np.float32(1.0) + F32_EPS


def make_train():
    pts = [
        (0.25, 0.0),          # 0: 0.25 from query 0
        (0.5, 0.0),           # 1: 0.5
        (1.0, 0.0),           # 2: 1.0  } three points tie at query 0's 4th distance
        (0.0, 1.0),           # 3: 1.0  }
        (-1.0, 0.0),          # 4: 1.0  } (the ground truth keeps 2 and 3)
        (0.0, np.float32(1.0005)),    # 5: within epsilon above the threshold
        (float(boundary32()), 0.0),   # 6: exactly the float32 threshold, above the float64 one
        (0.0, -1.002),        # 7: beyond epsilon
    ]
    rng = np.random.RandomState(20250611)
    grid = rng.randint(24, 160, size=(40, 2)) / 8.0   # eighths: exact in float32, many equal distances
    train = np.array(pts + [tuple(p) for p in grid], dtype=np.float32)
    return train


def make_test():
    rng = np.random.RandomState(7)
    q = [(0.0, 0.0)] + [tuple(p) for p in rng.randint(30, 150, size=(5, 2)) / 8.0]
    return np.array(q, dtype=np.float32)


def ground_truth(train, test, k=K):
    nb = np.zeros((len(test), k), dtype=np.int64)
    di = np.zeros((len(test), k), dtype=np.float32)
    for i, v in enumerate(test):
        d = [float(euclidean(v, x)) for x in train]
        order = sorted(range(len(train)), key=lambda j: (d[j], j))[:k]
        nb[i] = order
        di[i] = [d[j] for j in order]
    return nb, di


def write_dataset(path, train, test, nb, di, dist_dtype):
    with h5py.File(path, "w") as f:
        f.attrs["type"] = "dense"
        f.attrs["distance"] = "euclidean"
        f.attrs["dimension"] = train.shape[1]
        f.attrs["point_type"] = "float"
        f.create_dataset("train", data=train)
        f.create_dataset("test", data=test)
        f.create_dataset("neighbors", data=nb)
        f.create_dataset("distances", data=di.astype(dist_dtype))


def run_result(train, test, answers):
    """results.py's rows from each query's returned points, distances as runner.py computes them."""
    out = []
    for v, idx in zip(test, answers):
        out.append([(int(j), float(euclidean(v, train[j]))) for j in idx])
    return out


def write_result(path, attrs, results, times, count=COUNT, drop=None, rows=None):
    with h5py.File(path, "w") as f:
        for k, v in attrs.items():
            f.attrs[k] = v
        n = len(results) if rows is None else rows
        if drop != "times":
            f.create_dataset("times", (n,), "f")[:] = times[:n]
        nb = f.create_dataset("neighbors", (n, count), "i")
        if drop != "distances":
            ds = f.create_dataset("distances", (n, count), "f")
        for i, ds_row in enumerate(results[:n]):
            nb[i] = [a for a, _ in ds_row] + [-1] * (count - len(ds_row))
            if drop != "distances":
                ds[i] = [d for _, d in ds_row] + [float("inf")] * (count - len(ds_row))


def attrs_of(name, algo, bst, build, index_size, batch, extra=None):
    a = {"batch_mode": batch, "best_search_time": bst, "candidates": 4.0, "expect_extra": False, "name": name,
         "run_count": 3, "distance": "euclidean", "count": COUNT, "build_time": build, "index_size": index_size,
         "algo": algo, "dataset": "tiny-2-euclidean"}
    a.update(extra or {})
    return a


def make(d):
    os.makedirs(d, exist_ok=True)
    train, test = make_train(), make_test()
    nb, di = ground_truth(train, test)
    assert list(nb[0][:COUNT]) == [0, 1, 2, 3], nb[0]
    assert di[0][COUNT - 1] == 1.0
    write_dataset(os.path.join(d, "tiny.hdf5"), train, test, nb, di, np.float32)
    write_dataset(os.path.join(d, "tiny64.hdf5"), train, test, nb, di, np.float64)
    exact = [list(r[:COUNT]) for r in nb]
    # r1: query 0 returns the third tied point (4) and the two points just
    # above the threshold (5: within epsilon; 6: at the float32 threshold).
    a1 = [list(r) for r in exact]
    a1[0] = [0, 4, 5, 6]
    # r2: misses (points further out), a short answer (padding), the point
    # beyond epsilon.
    a2 = [list(nb[i][[0, 2, 5, 9]]) for i in range(len(test))]
    a2[0] = [1, 7, 2]
    a2[3] = [int(nb[3][1])]
    # r3: the exact answer.
    a3 = exact
    rng = np.random.RandomState(3)
    times = [rng.uniform(0.0001, 0.01, size=len(test)).astype(np.float32) for _ in range(3)]
    write_result(os.path.join(d, "r1.hdf5"), attrs_of("hnsw(M=16)", "hnswlib", 0.00125, 12.5, 2048.0, False),
                 run_result(train, test, a1), times[0])
    write_result(os.path.join(d, "r2.hdf5"), attrs_of("ivf(n_probe=1)", "faiss-ivf", 0.0003, 3.25, 512, False,
                 {"dist_comps": 1234}), run_result(train, test, a2), times[1])
    write_result(os.path.join(d, "r3.hdf5"), attrs_of("bruteforce", "bf", 0.02, 0.5, 100.0, True),
                 run_result(train, test, a3), times[2])
    # A result asked for 3 neighbours: k-nn is defined, id-based measures
    # (one relevant set per query) are not, beside count-4 results.
    write_result(os.path.join(d, "count3.hdf5"), attrs_of("three", "bf", 0.01, 1.0, 1, False, {"count": 3}),
                 run_result(train, test, [r[:3] for r in exact]), times[2], count=3)
    # Bad files.
    write_result(os.path.join(d, "no_distances.hdf5"), attrs_of("x", "x", 0.1, 1.0, 1, False),
                 run_result(train, test, a3), times[0], drop="distances")
    write_result(os.path.join(d, "short.hdf5"), attrs_of("y", "y", 0.1, 1.0, 1, False),
                 run_result(train, test, a3), times[0], rows=len(test) - 2)
    big = [list(r) for r in ground_truth(train, test, K + 1)[0]]
    write_result(os.path.join(d, "count11.hdf5"), attrs_of("z", "z", 0.1, 1.0, 1, False, {"count": K + 1}),
                 run_result(train, test, big), times[0], count=K + 1)


# --- the expected values (ann_benchmarks/plotting/metrics.py @ f402b2c) ---------

def threshold(kth, rule, eps):
    # NumPy 2 (NEP 50): numpy float32 scalar op Python float -> float32 arithmetic.
    if kth.dtype == np.float32:
        return np.float32(kth) + np.float32(eps) if rule == "add" else np.float32(kth) * np.float32(1 + eps)
    return np.float64(kth) + eps if rule == "add" else np.float64(kth) * (1 + eps)


def recall_values(dataset_distances, run_distances, count, rule, eps):
    # get_recall_values: recalls[i] = #{d in run_distances[i][:count] : d <= t}; mean / count
    recalls = np.zeros(len(run_distances))
    for i in range(len(run_distances)):
        t = threshold(dataset_distances[i][count - 1], rule, eps)
        actual = 0
        for d in run_distances[i][:count]:
            if d <= t:
                actual += 1
        recalls[i] = actual
    return np.mean(recalls) / float(count), recalls


FIGURES = {"k-nn": ("add", 1e-3), "epsilon": ("mul", 0.01), "largeepsilon": ("mul", 0.1)}


def expected(ds_path, res_paths):
    """{run: {measure: value}}, {(run, query): {measure: value}}, {run: times}."""
    agg, pq, times = {}, {}, {}
    with h5py.File(ds_path, "r") as f:
        true_d = np.array(f["distances"])
        true_nb = np.array(f["neighbors"])
    for p in res_paths:
        with h5py.File(p, "r") as f:
            attrs = dict(f.attrs)
            run_d = np.array(f["distances"])
            run_nb = np.array(f["neighbors"])
            t = np.array(f["times"])
        name, count, nq = attrs["name"], int(attrs["count"]), len(true_d)
        a = agg[name] = {}
        for m, (rule, eps) in FIGURES.items():
            mean, rec = recall_values(true_d, run_d, count, rule, eps)
            a[m] = mean
            for q in range(nq):
                pq.setdefault((name, str(q)), {})[m] = rec[q] / count
        a["qps"] = 1.0 / attrs["best_search_time"]
        a["build"] = attrs["build_time"]
        a["indexsize"] = attrs.get("index_size", 0)
        a["candidates"] = attrs["candidates"]
        a["distcomps"] = attrs.get("dist_comps", 0) / (attrs["run_count"] * nq)
        # Id-based: relevant = the first count true neighbours, ranking = the stored neighbours.
        for k in (1, 4):
            vals = []
            for q in range(nq):
                rel = set(int(x) for x in true_nb[q][:count])
                ranking = [int(x) for x in run_nb[q] if x >= 0]
                vals.append(len(rel & set(ranking[:k])) / len(rel))
                pq.setdefault((name, str(q)), {})["R@%d" % k] = vals[-1]
            s = 0.0
            for v in vals:
                s += v
            a["R@%d" % k] = s / nq
        times[name] = t
    return agg, pq, times


# --- the comparison -----------------------------------------------------------------

def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def check(bin_path, d):
    bad = []
    ds, ds64 = os.path.join(d, "tiny.hdf5"), os.path.join(d, "tiny64.hdf5")
    res = [os.path.join(d, n) for n in ("r1.hdf5", "r2.hdf5", "r3.hdf5")]
    measures = ["k-nn", "epsilon", "largeepsilon", "qps", "build", "indexsize", "candidates", "distcomps", "R@1", "R@4"]
    for dataset in (ds, ds64):
        out = os.path.join(d, "out-" + os.path.basename(dataset))
        cmd = [bin_path, "eval", dataset] + res + ["-o", out, "--per-query", "--top", "0"]
        for m in measures:
            cmd += ["-m", m]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print("FAIL: %s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
            return 1
        agg_want, pq_want, times = expected(dataset, res)
        got = {}
        for row in read_csv(os.path.join(out, "aggregate.csv")):
            got[(row["run"], row["measure"])] = row
        for run, vals in agg_want.items():
            for m, v in vals.items():
                row = got.get((run, m))
                if row is None or float(row["value"]) != v:
                    bad.append("%s aggregate %s %s: want %r, got %s" % (dataset, run, m, v, row and row["value"]))
            row = got.get((run, "num_q"))
            if row is None or row["value"] != "6" or row["queries"] != "all":
                bad.append("%s %s num_q: %s" % (dataset, run, row))
            if got[(run, "k-nn")]["algo"] == "" or got[(run, "k-nn")]["batch_mode"] not in ("true", "false"):
                bad.append("%s %s: attribute columns %r" % (dataset, run, got[(run, "k-nn")]))
        n_pq = 0
        for row in read_csv(os.path.join(out, "per_query.csv")):
            n_pq += 1
            want = pq_want.get((row["run"], row["query"]), {}).get(row["measure"])
            if want is None or float(row["value"]) != want:
                bad.append("%s per_query %s %s %s: want %r, got %s" % (dataset, row["run"], row["query"],
                                                                     row["measure"], want, row["value"]))
        if n_pq != 3 * 6 * 5:  # runs x queries x per-query measures (k-nn, epsilon, largeepsilon, R@1, R@4)
            bad.append("%s per_query.csv: %d rows, want %d" % (dataset, n_pq, 3 * 6 * 5))
        for row in read_csv(os.path.join(out, "latency.csv")):
            t = times[row["run"]]
            t64 = t.astype(np.float64)
            s = 0.0
            for x in t64:
                s += x
            want = {"n": len(t), "mean_ms": s / len(t) * 1000.0, "max_ms": t64.max() * 1000.0}
            for col, p_ in (("p50_ms", 50), ("p90_ms", 90), ("p95_ms", 95), ("p99_ms", 99), ("p999_ms", 99.9)):
                want[col] = np.percentile(t64, p_) * 1000.0
                # ann-benchmarks' own figure (np.percentile of the float32 times, x 1000)
                # agrees to float32 precision; ragsweep's is the same definition in double.
                theirs = float(np.float32(np.percentile(t, p_)) * np.float32(1000.0))
                if abs(theirs - float(row[col])) > 2e-7 * abs(theirs):
                    bad.append("%s latency %s %s: ann-benchmarks %r, ragsweep %s" % (dataset, row["run"], col,
                                                                                 theirs, row[col]))
            for col, v in want.items():
                if float(row[col]) != v:
                    bad.append("%s latency %s %s: want %r, got %s" % (dataset, row["run"], col, v, row[col]))
    # The cases the data is made of must show.
    a32, _, _ = expected(ds, res)
    a64, _, _ = expected(ds64, res)
    if not (a32["hnsw(M=16)"]["k-nn"] != a64["hnsw(M=16)"]["k-nn"]):
        bad.append("the float32 threshold case does not show (k-nn equal for float32 and float64 distances)")
    if not (a32["hnsw(M=16)"]["k-nn"] > a32["hnsw(M=16)"]["R@4"]):
        bad.append("the tie case does not show (k-nn not above R@4 for hnsw)")
    for b in bad[:30]:
        print("MISMATCH:", b)
    if not bad:
        print("ok: k-nn, epsilon, largeepsilon, qps, build, indexsize, candidates, distcomps, R@1, R@4, latency")
        print("hnsw k-nn float32 distances %r, float64 %r" % (a32["hnsw(M=16)"]["k-nn"], a64["hnsw(M=16)"]["k-nn"]))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    print(__doc__)
    sys.exit(2)

#!/usr/bin/python3
"""Writes a small seeded retrieval sweep with texts, for trying `ragsweep judge`
without an LLM (README, "Trying it without an LLM").

Every query asks for the code of one item; exactly one passage per query
states that code (the answer string), a few more mention the item without
the code, and the rest are about other items.  Three runs rank them with
different quality.  Output folder (argument 1):
  queries.tsv   id<TAB>text
  docs.tsv      id<TAB>text
  answers.tsv   query text<TAB>answer string (what scripts/judge_server.py reads)
  qrels.txt     TREC qrels for a third of the queries (the "human" labels)
  <run>.txt     TREC runs: bm25, dense, hybrid
  corpus.h5     all of it as a ragsweep corpus (format 1, with /queries/text and
                /docs/text; written with h5py), qrels for a third of the queries
"""
import os
import random
import sys

WORDS = ("river stone garden window lantern harbor meadow copper violet orchard canyon "
         "thunder pillow marble saddle compass velvet falcon glacier ember").split()


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: judge_demo_data.py OUTDIR [--queries N] [--seed S]")
    out = sys.argv[1]
    n_queries = int(sys.argv[sys.argv.index("--queries") + 1]) if "--queries" in sys.argv else 200
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 7
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    queries, docs, answers, qrels, pools = [], [], [], [], {}
    for q in range(n_queries):
        qid = "q%04d" % q
        item = "%s-%s-%d" % (rng.choice(WORDS), rng.choice(WORDS), q)
        code = "%c%c%d" % (rng.choice("ABCDEFGH"), rng.choice("KLMNPQRS"), rng.randrange(1000, 9999))
        text = "What is the access code of item %s?" % item
        queries.append((qid, text))
        answers.append((text, code))
        pool = []
        did = "d%05d" % len(docs)
        docs.append((did, "Inventory note. The access code of item %s is %s. Keep it safe." % (item, code)))
        pool.append((did, 1))
        for k in range(3):  # about the item, without the answer
            did = "d%05d" % len(docs)
            docs.append((did, "Item %s was moved to shelf %d near the %s." % (item, rng.randrange(1, 90), rng.choice(WORDS))))
            pool.append((did, 0))
        pools[qid] = pool
    n_docs = len(docs)
    for q, (qid, _) in enumerate(queries):
        if q % 3 == 0:  # the people judged a third of the queries, as teams do
            for did, grade in pools[qid]:
                qrels.append((qid, did, grade))
    runs = {"bm25": 0.55, "dense": 0.75, "hybrid": 0.85}
    run_lines = {}
    for name, quality in runs.items():
        lines = []
        for qid, _ in queries:
            own = [d for d, _ in pools[qid]]
            others = rng.sample(range(n_docs), 12)
            ranked = ["d%05d" % o for o in others if "d%05d" % o not in own]
            answer = own[0]
            rest = own[1:] + ranked
            rng.shuffle(rest)
            pos = 0 if rng.random() < quality else rng.randrange(1, 12)
            ranking = rest[:pos] + [answer] + rest[pos:]
            for rank, did in enumerate(ranking[:12]):
                lines.append("%s Q0 %s %d %.4f %s\n" % (qid, did, rank + 1, 20.0 - rank, name))
        run_lines[name] = lines

    def write(name, rows):
        with open(os.path.join(out, name), "w") as f:
            f.writelines(rows)

    write("queries.tsv", ["%s\t%s\n" % r for r in queries])
    write("docs.tsv", ["%s\t%s\n" % r for r in docs])
    write("answers.tsv", ["%s\t%s\n" % r for r in answers])
    write("qrels.txt", ["%s 0 %s %d\n" % r for r in qrels])
    for name, lines in run_lines.items():
        write(name + ".txt", lines)
    write_corpus(os.path.join(out, "corpus.h5"), queries, docs, qrels, run_lines)


def write_corpus(path, queries, docs, qrels, run_lines):
    import h5py
    import numpy as np
    qindex = {qid: i for i, (qid, _) in enumerate(queries)}
    dindex = {did: i for i, (did, _) in enumerate(docs)}
    strings = h5py.string_dtype()
    tmp = path + ".tmp"
    with h5py.File(tmp, "w") as f:
        f.attrs["format"], f.attrs["version"] = "ragsweep-corpus", 1
        f["queries/id"] = np.array([q for q, _ in queries], dtype=strings)
        f["queries/text"] = np.array([t for _, t in queries], dtype=strings)
        f["docs/id"] = np.array([d for d, _ in docs], dtype=strings)
        f["docs/text"] = np.array([t for _, t in docs], dtype=strings)
        by_query = [[] for _ in queries]
        for qid, did, grade in qrels:
            by_query[qindex[qid]].append((dindex[did], grade))
        offsets, qdoc, qgrade = [0], [], []
        for rows in by_query:
            for d, g in sorted(rows):
                qdoc.append(d)
                qgrade.append(g)
            offsets.append(len(qdoc))
        f["qrels/offsets"] = np.array(offsets, dtype=np.int64)
        f["qrels/doc"] = np.array(qdoc, dtype=np.int32)
        f["qrels/grade"] = np.array(qgrade, dtype=np.int32)
        for name, lines in run_lines.items():
            doc = np.full((len(queries), 12), -1, dtype=np.int32)
            score = np.zeros((len(queries), 12), dtype=np.float64)
            for line in lines:
                qid, _, did, rank, sc, _ = line.split()
                doc[qindex[qid], int(rank) - 1] = dindex[did]
                score[qindex[qid], int(rank) - 1] = float(sc)
            f["runs/%s/doc" % name] = doc
            f["runs/%s/score" % name] = score
            f["runs/%s" % name].attrs["retriever"] = name
    os.replace(tmp, path)


if __name__ == "__main__":
    main()

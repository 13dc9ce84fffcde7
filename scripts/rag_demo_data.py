#!/usr/bin/python3
"""Writes a small seeded RAG sweep in ragas's JSONL fields, for trying
`ragsweep rag` without an LLM (README, section 5, "Trying it without an LLM").

Every sample asks for two facts about one made-up landmark: its access code
and the island it stands on.  Two gold passages state them (the reference
contexts); a third mentions the landmark without either; the rest are about
other landmarks.  Three configurations (retriever x chunking) retrieve 3-5
passages each, the better ones finding the gold passages more often and
ranking them higher, and a generator writes the response from what was
retrieved: the facts it found, sometimes a wrong code or an invented claim
(unfaithful), "I don't know" when it found nothing (noncommittal), and now
and then no retrieval at all (context_precision undefined).

Output folder (argument 1):
  sweep.jsonl  3 configurations x N samples (--samples, default 300; --seed)
  tone.txt     a --criterion template using {user_input} and {response}
"""
import json
import os
import random
import sys

WORDS = ("river stone garden window lantern harbor meadow copper violet orchard canyon "
         "thunder pillow marble saddle compass velvet falcon glacier ember").split()
KINDS = "lighthouse observatory granary chapel watchtower boathouse mill archive".split()
ISLANDS = "Arden Brisk Corran Dunmore Elsay Farra Gorse Hallin Islay Jura Kerrera Lismore".split()

# name: (retriever, chunking, P(a gold passage is retrieved), P(no retrieval at all),
#        P(an unfaithful addition), latency ms (mean, sd), cost per sample in USD)
CONFIGS = (("bm25", "fixed512", 0.55, 0.06, 0.25, (420, 60), 0.00031),
           ("dense", "fixed512", 0.75, 0.03, 0.15, (610, 90), 0.00042),
           ("hybrid", "semantic", 0.90, 0.01, 0.08, (780, 110), 0.00055))

TONE = """Criterion: the response answers in a direct, polite and concise tone, without hedging or padding.

Question: {user_input}

Response: {response}

Score the response's tone on the criterion above.
"""


def code(rng):
    return "%c%c%d" % (rng.choice("ABCDEFGH"), rng.choice("KLMNPQRS"), rng.randrange(1000, 9999))


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: rag_demo_data.py OUTDIR [--samples N] [--seed S]")
    out = sys.argv[1]
    n = int(sys.argv[sys.argv.index("--samples") + 1]) if "--samples" in sys.argv else 300
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 11
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)

    # The collection: three passages per landmark.
    topics, passages = [], {}
    for i in range(n):
        first, second = rng.sample(WORDS, 2)
        name = "%s %s %s" % (first.capitalize(), second.capitalize(), rng.choice(KINDS))
        t = {"id": "q%04d" % (i + 1), "name": name, "code": code(rng), "island": rng.choice(ISLANDS),
             "year": rng.randrange(1820, 1990), "colour": rng.choice(WORDS)}
        base = "p%04d" % (i + 1)
        t["gold"] = [base + "a", base + "b"]
        t["near"] = base + "c"
        passages[base + "a"] = "Records show the access code of the %s is %s; it changes every spring." % (name, t["code"])
        passages[base + "b"] = "The %s stands on %s island, facing the %s bay." % (name, t["island"], rng.choice(WORDS))
        passages[base + "c"] = "The %s was painted %s in %d by volunteers from the village." % (name, t["colour"], t["year"])
        topics.append(t)
    others = sorted(passages)

    rows = []
    for retriever, chunking, p_gold, p_none, p_unfaithful, (lat_mu, lat_sd), cost in CONFIGS:
        for t in topics:
            question = "What is the access code of the %s, and on which island does it stand?" % t["name"]
            reference = "The access code of the %s is %s. The %s stands on %s island." % (
                t["name"], t["code"], t["name"], t["island"])
            if rng.random() < p_none:
                retrieved = []
            else:
                k = rng.randrange(3, 6)
                found = [g for g in t["gold"] if rng.random() < p_gold]
                pool = found + ([t["near"]] if rng.random() < 0.7 else [])
                while len(pool) < k:
                    p = rng.choice(others)
                    if p not in pool and p not in t["gold"] and p != t["near"]:
                        pool.append(p)
                # Better retrievers put what they found first more often.
                rng.shuffle(pool)
                pool.sort(key=lambda p: 0 if p in found and rng.random() < p_gold else 1)
                retrieved = pool[:k]
            has_code = t["gold"][0] in retrieved
            has_island = t["gold"][1] in retrieved
            parts = []
            if has_code:
                parts.append("The access code of the %s is %s." % (t["name"], t["code"]))
            if has_island:
                parts.append("The %s stands on %s island." % (t["name"], t["island"]))
            u = rng.random()
            if not parts:
                if u < 0.5:
                    parts.append("I don't know the access code of the %s; the documents do not say." % t["name"])
                elif u < 0.8:
                    # a hallucinated answer: a wrong code and a wrong island
                    parts.append("The access code of the %s is %s." % (t["name"], code(rng)))
                    parts.append("It was moved to %s island during the storms of last winter." % rng.choice(ISLANDS))
                else:
                    parts.append("I'm not sure; the %s may be on %s island." % (t["name"], rng.choice(ISLANDS)))
            elif u < p_unfaithful:
                parts.append(rng.choice((
                    "The harbour authority recalled every key after a burglary in March.",
                    "Visitors need written permission from the county council beforehand.",
                    "A second entrance opens only during the summer festival.")))
            elif u > 0.97:
                parts.append("Please double-check with the site warden, who keeps the official register "
                             "of codes, keys, visiting hours, restoration works and every change made over "
                             "the last few decades, before travelling there.")
            rows.append({
                "id": t["id"], "retriever": retriever, "chunking": chunking,
                "user_input": question, "response": " ".join(parts), "reference": reference,
                "retrieved_contexts": [passages[p] for p in retrieved],
                "retrieved_context_ids": retrieved, "reference_context_ids": t["gold"],
                "latency_ms": round(max(50.0, rng.gauss(lat_mu, lat_sd)), 1),
                "cost_usd": round(cost * rng.uniform(0.8, 1.2), 6)})

    tmp = os.path.join(out, "sweep.jsonl.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    os.replace(tmp, os.path.join(out, "sweep.jsonl"))
    with open(os.path.join(out, "tone.txt"), "w", encoding="utf-8") as f:
        f.write(TONE)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""A small deterministic OpenAI-compatible server that answers every prompt
of `ragsweep rag`, for trying it without an LLM (README, section 5, "Trying
it without an LLM").

It tells the prompts apart by the first sentence of their system message
(src/llm/rag_prompts.c, quoted in the README) and answers each the way a
simple word-overlap assessor would, always with the JSON object asked for.
A "content word" is a lowercased run of letters and digits, four or more
long; a text "supports" another when more than half of the other's content
words occur in it.

  statements  the answer split on ". " (an empty or noncommittal answer: [])
  nli         verdict 1 per statement the context supports, in order
  questions   {n} questions built from the answer's words; noncommittal 1
              when it says "don't know", "not sure" or "cannot answer"
  useful      verdict 1 when the context supports a sentence of the reference
  recall      the reference's sentences, attributed 1 when the contexts
              support them
  criterion   a score 1-5 from the response's length (the "Response:"
              paragraph of the template when there is one), with a reason
  /embeddings a 64-dimension bag of words (each word hashed with CRC-32, stop
              words left out), so that texts sharing words have a high cosine

Anything else gets {"error": ...} with status 400 (an unknown prompt is a
test's mistake, not something to guess at).  Usage: prompt_tokens is the
request's bytes / 4, completion_tokens the reply text's bytes / 4.

  scripts/rag_server.py [--port 8090] [--or-any-port] [--port-file F]
                        [--delay SECONDS] [--max-seconds N]

Listens on 127.0.0.1 only (scripts/demo_http.py).  Standard library only.
"""
import json
import re
import time
import zlib

from demo_http import JsonHandler, serve

EMBED_DIM = 64
NONCOMMITTAL = ("don't know", "do not know", "not sure", "cannot answer", "can't answer")
STOP = set("a an and are as at be by did do does for from has have how in is it its of on or that the "
           "this to was were what when where which who why will with".split())


def content_words(text):
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 4]


def supported(claim, premise_words):
    """More than half of the claim's content words occur in the premise."""
    words = content_words(claim)
    return bool(words) and 2 * sum(w in premise_words for w in words) > len(words)


def sentences(text):
    parts = [p.strip() for p in text.strip().split(". ")]
    out = []
    for p in parts:
        if p and not p.endswith((".", "?", "!")):
            p += "."
        if content_words(p):
            out.append(p)
    return out


def noncommittal(text):
    low = text.lower().replace("\u2019", "'")
    return any(n in low for n in NONCOMMITTAL)


def after(text, label):
    """What follows the first line starting with label ('' when absent)."""
    m = re.search(r"(?m)^" + re.escape(label), text)
    return text[m.end():] if m else ""


def between(text, start, end):
    s = after(text, start)
    i = s.find(end)
    return s if i < 0 else s[:i]


# --- one function per prompt: (system, user) -> the reply's JSON object ---

def answer_statements(system, user):
    answer = after(user, "Answer: ")
    if not answer.strip() or noncommittal(answer):
        return {"statements": []}
    return {"statements": sentences(answer)}


def answer_nli(system, user):
    # The statements are the last part ("Statements (JSON list):" then the
    # list): the context before it may hold anything.
    head, sep, tail = user.rpartition("\n\nStatements (JSON list):\n")
    if not sep:
        raise ValueError("no 'Statements (JSON list):' part in the user message")
    statements = json.loads(tail)
    if not isinstance(statements, list):
        raise ValueError("the statements are not a JSON list")
    premise = set(content_words(head[len("Context:\n"):] if head.startswith("Context:\n") else head))
    out = []
    for s in statements:
        s = str(s)
        ok = supported(s, premise)
        out.append({"statement": s,
                    "reason": "the context says it" if ok else "the context does not say it",
                    "verdict": 1 if ok else 0})
    return {"verdicts": out}


def answer_questions(system, user):
    m = re.search(r"write (\d+) different questions", system)
    n = int(m.group(1)) if m else 3
    answer = after(user, "Answer: ")
    words = []
    for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9-]*", answer):
        if w.lower() not in STOP and w not in words:
            words.append(w)
    if not words:
        words = ["the", "answer"]
    questions = []
    for i in range(n):
        # A different window of the answer's words for each question, so the
        # N questions differ but all come from the answer.
        start = (i * len(words)) // max(n, 1)
        window = (words[start:] + words[:start])[:6]
        questions.append("What is %s?" % " ".join(window))
    return {"questions": questions, "noncommittal": 1 if noncommittal(answer) else 0}


def answer_useful(system, user):
    reference = between(user, "Reference answer: ", "\nContext: ")
    context = after(after(user, "Reference answer: "), "Context: ")
    words = set(content_words(context))
    ok = any(supported(s, words) for s in sentences(reference))
    return {"reason": "the context states part of the reference answer" if ok else
            "the context does not state the reference answer", "verdict": 1 if ok else 0}


def answer_recall(system, user):
    head, sep, reference = user.rpartition("\n\nReference answer: ")
    if not sep:
        raise ValueError("no 'Reference answer:' part in the user message")
    words = set(content_words(after(head, "Contexts:\n")))
    out = []
    for s in sentences(reference):
        ok = supported(s, words)
        out.append({"statement": s, "reason": "in the contexts" if ok else "not in the contexts",
                    "attributed": 1 if ok else 0})
    return {"classifications": out}


def answer_criterion(system, user):
    m = re.search(r"(?ms)^Response:[ \n]?(.*?)(?:\n\n|\Z)", user)
    response = m.group(1) if m else user
    n = len(response.split())
    if noncommittal(response):
        score, reason = 2, "evasive: it does not commit to an answer"
    elif n == 0:
        score, reason = 1, "empty response"
    elif n <= 4:
        score, reason = 3, "curt: %d words" % n
    elif n <= 30:
        score, reason = 5, "direct and complete in %d words" % n
    elif n <= 50:
        score, reason = 4, "clear but wordy: %d words" % n
    else:
        score, reason = 3, "rambling: %d words" % n
    return {"score": score, "reason": reason}


PROMPTS = (("You split answers into statements.", answer_statements),
           ("You check statements against a context.", answer_nli),
           ("You infer questions from answers.", answer_questions),
           ("You judge retrieved passages.", answer_useful),
           ("You check a reference answer against retrieved contexts.", answer_recall),
           ("You are an evaluator.", answer_criterion))


def chat_answer(messages):
    system = "\n".join(m.get("content") or "" for m in messages if m.get("role") == "system")
    user = "\n".join(m.get("content") or "" for m in messages if m.get("role") == "user")
    for first, fn in PROMPTS:
        if system.startswith(first):
            return fn(system, user)
    raise ValueError("not one of ragsweep rag's prompts (system message starts %r)" % system[:60])


def embed(text):
    v = [0] * EMBED_DIM
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if w not in STOP:
            v[zlib.crc32(w.encode()) % EMBED_DIM] += 1
    return v


class Handler(JsonHandler):
    def do_POST(self):
        raw = self.body()
        path = self.path.rstrip("/")
        if not path.endswith(("/chat/completions", "/embeddings")):
            self.not_found()
            return
        try:
            req = json.loads(raw)
        except ValueError:
            self.bad("the body is not JSON")
            return
        if self.server.delay:
            time.sleep(self.server.delay)
        n = self.next_count()
        if path.endswith("/embeddings"):
            inputs = req.get("input") if isinstance(req, dict) else None
            if isinstance(inputs, str):
                inputs = [inputs]
            if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
                self.bad("expected {\"input\": [strings]}")
                return
            self.reply(200, {
                "object": "list", "model": req.get("model", "rag-demo-embed"),
                "data": [{"object": "embedding", "index": i, "embedding": embed(t)} for i, t in enumerate(inputs)],
                "usage": {"prompt_tokens": len(raw) // 4, "total_tokens": len(raw) // 4}})
            return
        try:
            messages = req["messages"]
            if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
                raise TypeError("messages")
            content = json.dumps(chat_answer(messages))
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            self.bad("expected a chat completion request with one of ragsweep rag's prompts: %s" % e)
            return
        completion = len(content.encode()) // 4
        self.reply(200, {
            "id": "chatcmpl-rag-demo-%d" % n, "object": "chat.completion", "created": int(time.time()),
            "model": req.get("model", "rag-demo"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(raw) // 4, "completion_tokens": completion,
                      "total_tokens": len(raw) // 4 + completion}})


def main():
    serve("rag_server", __doc__, 8090, Handler, ["rag-demo", "rag-demo-embed"])


if __name__ == "__main__":
    main()

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

Listens on 127.0.0.1 only (scripts/demo_http.py).  Standard library only.
"""
import json
import re
import time

from demo_http import JsonHandler, serve


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


class Handler(JsonHandler):
    def do_POST(self):
        raw = self.body()
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.not_found()
            return
        try:
            req = json.loads(raw)
            messages = req["messages"]
            user = "\n".join(m.get("content", "") for m in messages if m.get("role") == "user")
        except (ValueError, KeyError, TypeError, AttributeError):
            self.bad("expected a chat completion request")
            return
        if self.server.delay:
            time.sleep(self.server.delay)
        grade = judge(self.server.answers, user)
        if "Final score" in user:
            content, completion = "The passage %s.\nFinal score: %d" % (
                "states the answer" if grade == 3 else "does not answer the question", grade), 8
        else:
            content, completion = ("YES" if grade == 3 else "NO"), 1
        n = self.next_count()
        self.reply(200, {
            "id": "chatcmpl-demo-%d" % n, "object": "chat.completion", "created": int(time.time()),
            "model": req.get("model", "judge-demo"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(raw) // 4, "completion_tokens": completion,
                      "total_tokens": len(raw) // 4 + completion}})


def main():
    def configure(server, args):
        server.answers = load_answers(args.answers)
    serve("judge_server", __doc__, 8089, Handler, ["judge-demo"],
          add_args=lambda ap: ap.add_argument("--answers", required=True), configure=configure)


if __name__ == "__main__":
    main()

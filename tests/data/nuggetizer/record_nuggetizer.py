"""Records castorini's nuggetizer 0.0.5 (`Nuggetizer`, the synchronous class TREC RAG 2024's scripts use), run
unmodified against a fake OpenAI-compatible server on 127.0.0.1, into nuggetizer.json: for each topic every chat
request it sent (in order, with its parameters), the reply it got, the scored nuggets `create` returned, the
assigned nuggets `assign` returned for the topic's answer, `calculate_nugget_scores` of them and
`calculate_global_metrics` over the topics. tests/metrics/test_nuggetizer_metric.py replays the replies through ragbench's
judge path and compares.

The fake server answers from the prompt: the system message says which step asks (creator, scorer, assigner) and
the "Search Query:" line which topic; each topic's SCRIPT gives the replies of that step in order (the last one
repeated), so malformed replies (prose, a dict, a string literal, a list too short or too long, a non-string
label, an unknown label, a code fence) and nuggetizer's retries of them are recorded as they happen.

It also records the parser oracle: ORACLE_REPLIES generated replies (seeded), each given once as the creator's
and once as the assigner's first reply through the real `Nuggetizer.create` / `assign` (a stub handler answers:
nuggetizer's own parsing runs), what each step kept from it and whether it asked again.

In a scratch environment:
    python -m venv /work/scratch/nuggets_venv && /work/scratch/nuggets_venv/bin/pip install nuggetizer==0.0.5
    /work/scratch/nuggets_venv/bin/python tests/data/nuggetizer/record_nuggetizer.py
"""

from __future__ import annotations

import json
import os
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ORACLE_REPLIES = 400
STEPS = {"NuggetizeLLM": "creator", "NuggetizeScoreLLM": "scorer", "NuggetizeAssignerLLM": "assigner"}


def facts(prefix: str, count: int) -> list[str]:
    return [f"{prefix} fact {i}" for i in range(count)]


def topic(qid: str, query: str, passages: int, answer: str, script: dict[str, list[str]], model: str = "gpt-4o"):
    return {
        "qid": qid,
        "query": query,
        "passages": [f"Passage {i} about {query}: detail {i}." for i in range(passages)],
        "answer": answer,
        "model": model,
        "script": script,
    }


TOPICS = [
    topic(  # two creator windows (12 passages), 12 nuggets: two scorer and two assigner calls of 10 and 2
        "bare",
        "what are bare replies",
        12,
        "Bare replies list facts 0 to 5.",
        {
            "creator": [repr(facts("bare", 8)), repr(facts("bare", 12))],
            "scorer": [repr(["vital", "okay"] * 5), repr(["okay", "vital"])],
            "assigner": [repr(["support", "partial_support", "not_support"] * 3 + ["support"]), "['support', 'x']"],
        },
    ),
    topic(  # code fences, capitalised labels (lowered), a list too short (zip drops) and too long (ignored)
        "fenced",
        "what do fenced replies hold",
        3,
        "Fenced facts.",
        {
            "creator": ["```python\n" + repr(facts("fenced", 4)) + "\n```"],
            "scorer": ["```\n['Vital', 'OKAY', 'vital']\n```"],
            "assigner": ["```python\n['SUPPORT', 'Partial_Support', 'not_support', 'support', 'support']\n```"],
        },
    ),
    topic(  # prose, then a dict (slicing fails): asked again at temperature 0.2; a non-string label mid-list
        # (its earlier labels were kept before the error: nuggets twice); unknown labels kept as written
        "malformed",
        "how does nuggetizer retry",
        2,
        "Retries happen.",
        {
            "creator": ["Here are the nuggets: none", "{'a': 1}", repr(facts("retry", 3))],
            "scorer": ["['vital', 'okay', 3]", "['vital', 'important', 'okay']"],
            "assigner": ["not a list at all", "['maybe', 'support']"],
        },
    ),
    topic(  # a string literal: its characters become the nuggets; a tuple is read as a list would be
        "literal",
        "what is a literal reply",
        1,
        "abc",
        {"creator": ["'abc'"], "scorer": ["('vital', 'okay', 'vital')"], "assigner": ["['support', 'support']"]},
    ),
    topic(  # 35 nuggets: cut to 30 (max nuggets), three scorer windows; no vital nugget: vital scores 0.0
        "many",
        "what if there are many nuggets",
        1,
        "Many facts.",
        {
            "creator": [repr(facts("many", 35))],
            "scorer": [repr(["okay"] * 10)],
            "assigner": [repr(["support", "not_support"] * 5)],
        },
    ),
    topic(  # an empty answer: every nugget not_support, no assigner call
        "empty_answer",
        "what if the answer is empty",
        1,
        "",
        {"creator": [repr(facts("empty", 2))], "scorer": ["['vital', 'vital']"], "assigner": []},
    ),
    topic(  # the scorer never parses: 500 calls, then every nugget's importance "failed"
        "scorer_gives_up",
        "what if the scorer never parses",
        1,
        "Gave up.",
        {"creator": [repr(facts("gaveup", 2))], "scorer": ["no"], "assigner": ["['support', 'not_support']"]},
    ),
    topic(  # an o1 model: the system message joined into the user message (nuggetizer's dicts, mutated at each
        # call, so a retry's prompt holds it twice) and temperature 1.0
        "o1_model",
        "how is an o1 model asked",
        1,
        "O1 fact 0.",
        {"creator": ["oops", repr(facts("o1", 2))], "scorer": ["['vital', 'okay']"], "assigner": ["['support', 'x']"]},
        model="o1-mini",
    ),
]


class FakeJudge(BaseHTTPRequestHandler):
    calls: list[dict[str, Any]] = []
    asked: dict[tuple[str, str], int] = {}

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = "\n".join(m["content"] for m in body["messages"])
        step = next(name for marker, name in STEPS.items() if f"You are {marker}," in text)
        query = text.split("Search Query: ", 1)[1].split("\n", 1)[0]
        entry = next(t for t in TOPICS if t["query"] == query)
        replies = entry["script"][step]
        n = self.asked.get((query, step), 0)
        self.asked[(query, step)] = n + 1
        reply = replies[min(n, len(replies) - 1)]
        params = {k: v for k, v in body.items() if k != "messages"}
        self.calls.append({"qid": entry["qid"], "step": step, "messages": body["messages"], "params": params})
        self.calls[-1]["reply"] = reply
        out = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def oracle_replies() -> list[str]:
    """Replies a judge might write: lists of labels or texts (fenced, tupled, nested, too short or long), prose,
    other literals, unbalanced brackets, unicode."""
    rng = random.Random(69)
    words = ["support", "Partial_Support", "not_support", "vital", "OKAY", "x", "", "naïve", "日本", "a'b", 'q"t']

    def item() -> str:
        return rng.choice([repr(rng.choice(words)), str(rng.randint(-3, 9)), "None", "[1]", "'a' 'b'", "3.5"])

    out = []
    for _ in range(ORACLE_REPLIES):
        items = ", ".join(item() if rng.random() < 0.25 else repr(rng.choice(words)) for _ in range(rng.randint(0, 5)))
        shape = rng.choice(
            ["[{}]", "({})", "{{{}}}", "```python\n[{}]\n```", "```[{}]```", "Labels: [{}]", "[{}", "{}"]
        )
        text = shape.format(items)
        out.append(rng.choice(["", " ", "\n", "  \t"]) + text + rng.choice(["", "\n", " ."]))
    return out


class Stub:
    """An LLM handler answering `first`, then `then` to every later call (nuggetizer's parsing untouched)."""

    def __init__(self, first: str, then: str) -> None:
        self.replies, self.calls = [first], 0
        self.then = then

    def run(self, messages: Any, temperature: float = 0) -> tuple[str, int]:
        self.calls += 1
        return (self.replies[0] if self.calls == 1 else self.then), 0


def oracle(nuggetizer_cls: Any, types: Any) -> list[dict[str, Any]]:
    cases = []
    request = types.Request(types.Query("q", "q"), [types.Document("d", "passage")])
    nuggets = [types.ScoredNugget(text=f"n{i}", importance="vital") for i in range(3)]
    for reply in oracle_replies():
        n = nuggetizer_cls(model="gpt-4o", api_keys="fake")
        n.creator_llm, n.scorer_llm = Stub(reply, "['fallback']"), Stub("['vital']", "['vital']")
        try:
            created: Any = [x.text for x in n.create(request)]
            created = created if n.creator_llm.calls == 1 else "asked again"
        except Exception as exc:
            created = f"raised {type(exc).__name__}"
        n.assigner_llm = Stub(reply, "['not_support', 'not_support', 'not_support']")
        try:
            assigned = [x.assignment for x in n.assign("q", "answer", nuggets)]
        except Exception as exc:
            assigned = [f"raised {type(exc).__name__}"]
        cases.append({"reply": reply, "created": created, "assigned": assigned, "asked": n.assigner_llm.calls})
    return cases


class ByteEncoding:
    def encode(self, text: str) -> list[int]:
        return list(text.encode())


def runs(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive identical calls (request and reply) kept once, with `times` how many were made."""
    out: list[dict[str, Any]] = []
    for call in calls:
        if out and {k: v for k, v in out[-1].items() if k != "times"} == call:
            out[-1]["times"] += 1
        else:
            out.append({**call, "times": 1})
    return out


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeJudge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    import tiktoken

    # nuggetizer counts the reply's tokens (and drops the count); tiktoken would download cl100k_base: no network
    tiktoken.get_encoding = lambda name: ByteEncoding()
    from nuggetizer.core import types
    from nuggetizer.core.metrics import calculate_global_metrics, calculate_nugget_scores
    from nuggetizer.models.nuggetizer import Nuggetizer

    topics, records = [], []
    for entry in TOPICS:
        first = len(FakeJudge.calls)
        nuggetizer = Nuggetizer(model=entry["model"], api_keys="fake")
        documents = [types.Document(docid=str(i), segment=p) for i, p in enumerate(entry["passages"])]
        scored = nuggetizer.create(types.Request(types.Query(entry["qid"], entry["query"]), documents))
        assigned = nuggetizer.assign(entry["query"], entry["answer"], scored)
        record = {"qid": entry["qid"], "nuggets": [vars(n) for n in assigned]}
        records.append(record)
        topics.append(
            {
                **{k: v for k, v in entry.items() if k != "script"},
                "calls": runs(FakeJudge.calls[first:]),
                "created": [vars(n) for n in scored],
                "assigned": record["nuggets"],
                "scores": vars(calculate_nugget_scores(entry["qid"], record["nuggets"])),
            }
        )
    server.shutdown()
    fixture = {
        "versions": {p: version(p) for p in ("nuggetizer", "openai")},
        "topics": topics,
        "global": calculate_global_metrics(records),
        "oracle": oracle(Nuggetizer, types),
    }
    (HERE / "nuggetizer.json").write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

"""Records TREC RAG's AutoNuggetizer pipeline as nuggetizer's own scripts run it, unmodified, with the nuggetizer
0.0.5 package against a fake OpenAI-compatible judge on 127.0.0.1, into pool.json: `create_nuggets.py` makes each
topic's nuggets once from its pool, `assign_nuggets.py` assigns them against each of two runs' answers and
`calculate_metrics.py` scores each run. tests/metrics/test_nuggetizer_pool.py scores the same topics with ragbench's
`nuggetizer` metric (passages=pool) and compares.

The scripts are castorini/nuggetizer's, read from its git history: create_nuggets.py and calculate_metrics.py at
849232b (the source of the 0.0.5 package: its models/ and core/ are byte for byte the package's), assign_nuggets.py
at a17fd03, the first commit whose call `assign(query, answer_text, nuggets=...)` fits the package (849232b's
`assign(answer_text, nuggets)` raises TypeError on every topic, which the script logs and skips).

The pool: create_nuggets.py's input line per topic, its candidates the topic's QRELS segments in the qrels' order
with their `judgment`, each `doc.segment` the CORPUS text (the script keeps a candidate whose judgment is above 0).
Each run's answers are 2024 submission lines (`answer`: sentences `{"text", "citations"}`); `ragbench_answer` is
the same answer as a ragbench answer cites (`[n]` before each sentence's full stop).

The fake judge answers from the request (messages and temperature): the creator adds the first six words of each
context passage to the initial list (topic t2's first call at temperature 0 answers prose, so nuggetizer asks
again at 0.2), the scorer labels every third nugget okay and the rest vital, the assigner labels a nugget support
where all its words are in the passage, partial_support where one of its last three is, else not_support.

    /work/scratch/nuggets_venv/bin/python tests/data/nuggetizer/record_pool.py /work/.mirror/castorini+nuggetizer/repo
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import runpy
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCRIPTS = {"create_nuggets": "849232b", "assign_nuggets": "a17fd03", "calculate_metrics": "849232b"}
STEPS = {"NuggetizeLLM": "creator", "NuggetizeScoreLLM": "scorer", "NuggetizeAssignerLLM": "assigner"}


def doc(topic: int, n: int) -> str:
    return f"msmarco_v2.1_doc_{topic:02d}_{1000 + n}#{n}_{n * 97}"


TOPICS = {"t1": "how long do galapagos tortoises live", "t2": "why is the sky blue", "t3": "who wrote hamlet"}
CORPUS = {
    **{doc(1, n): f"Tortoise fact {n}: giant tortoises reach age {100 + n} in the wild." for n in range(14)},
    **{doc(2, n): f"Sky fact {n}: sunlight scatters off air molecules at {400 + n} nm." for n in range(4)},
    doc(3, 0): "Hamlet is a tragedy staged in London.",
    doc(9, 0): "A segment no topic judges.",
}
# qrels order is not docid order: the pool keeps the qrels' order; grade 0 is left out of the pool
QRELS = [("t1", doc(1, n), grade) for n, grade in zip(range(13, -1, -1), [3, 0, 1, 2, 2, 1, 3, 0, 1, 1, 2, 3, 1, 2])]
QRELS += [("t2", doc(2, 2), 2), ("t2", doc(2, 0), 0), ("t2", doc(2, 3), 1), ("t2", doc(2, 1), 3)]
QRELS += [("t3", doc(3, 0), 0)]
ANSWERS = {
    "run_a": {
        "t1": ["Giant tortoises reach age 113 in the wild.", "Tortoise fact 4: giant tortoises live long."],
        "t2": ["Sunlight scatters off air molecules.", "Blue light scatters most."],
        "t3": ["Shakespeare wrote it."],
    },
    "run_b": {
        "t1": ["Tortoise fact 12: giant tortoises reach age 112 in the wild."],
        "t2": [],
        "t3": ["Nobody knows."],
    },
}


def listed(text: str, label: str) -> list[Any]:
    return list(ast.literal_eval(text.split(label, 1)[1].split("\n", 1)[0]))


def reply(messages: list[dict[str, str]], temperature: float) -> str:
    text = "\n".join(m["content"] for m in messages)
    step = next(name for marker, name in STEPS.items() if f"You are {marker}," in text)
    query = text.split("Search Query: ", 1)[1].split("\n", 1)[0]
    if step == "creator":
        if query == TOPICS["t2"] and temperature == 0.0:
            return "Here are the nuggets you asked for."
        context = text.split("Context:\n", 1)[1].split("\nSearch Query:", 1)[0].split("\n")
        added = [" ".join(line.split("] ", 1)[1].split()[:6]) for line in context]
        return repr(listed(text, "Initial Nugget List: ") + added)
    nuggets = listed(text, "Nugget List: ")
    if step == "scorer":
        return repr(["okay" if i % 3 == 2 else "vital" for i in range(len(nuggets))])
    passage = set(text.split("Passage: ", 1)[1].split("\n", 1)[0].lower().split())
    labels = []
    for nugget in nuggets:
        words = nugget.lower().split()
        labels.append(
            "support" if set(words) <= passage else "partial_support" if set(words[-3:]) & passage else "not_support"
        )
    return "```python\n" + repr(labels) + "\n```"


class FakeJudge(BaseHTTPRequestHandler):
    calls: list[dict[str, Any]] = []
    phase = ""

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        answer = reply(body["messages"], body["temperature"])
        params = {k: v for k, v in body.items() if k != "messages"}
        self.calls.append({"phase": self.phase, "messages": body["messages"], "params": params, "reply": answer})
        out = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


class ByteEncoding:
    def encode(self, text: str) -> list[int]:
        return list(text.encode())


def jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_script(folder: Path, name: str, *args: str) -> str:
    FakeJudge.phase = name
    argv, sys.argv = sys.argv, [name, *args]
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            runpy.run_path(str(folder / f"{name}.py"), run_name="__main__")
    finally:
        sys.argv = argv
    return printed.getvalue()


def ragbench_answer(sentences: list[str]) -> str:
    return " ".join(f"{s[:-1]} [{i}]{s[-1]}" for i, s in enumerate(sentences, 1))


def main(repo: str) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeJudge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    os.environ["OPENAI_API_KEY"] = "sk-fake"
    import tiktoken

    tiktoken.get_encoding = lambda name: ByteEncoding()  # nuggetizer counts reply tokens (and drops the count)
    folder = Path(tempfile.mkdtemp())
    for name, commit in SCRIPTS.items():
        source = subprocess.run(["git", "-C", repo, "show", f"{commit}:scripts/{name}.py"], capture_output=True)
        (folder / f"{name}.py").write_bytes(source.stdout)
    pool = [
        {
            "query": {"qid": qid, "text": text},
            "candidates": [{"docid": d, "doc": {"segment": CORPUS[d]}, "judgment": g} for t, d, g in QRELS if t == qid],
        }
        for qid, text in TOPICS.items()
    ]
    jsonl(folder / "pool.jsonl", pool)
    run_script(
        folder,
        "create_nuggets",
        "--input_file",
        str(folder / "pool.jsonl"),
        "--output_file",
        str(folder / "nuggets.jsonl"),
    )
    runs = {}
    for run, answers in ANSWERS.items():
        lines = [
            {
                "run_id": run,
                "topic_id": qid,
                "topic": TOPICS[qid],
                "references": [],
                "response_length": sum(len(s.split()) for s in answers[qid]),
                "answer": [{"text": s, "citations": [0]} for s in answers[qid]],
            }
            for qid in TOPICS
        ]
        jsonl(folder / f"{run}.jsonl", lines)
        first = len(FakeJudge.calls)
        assigned = folder / f"assigned_{run}.jsonl"
        run_script(folder, "assign_nuggets", "--nugget_file", str(folder / "nuggets.jsonl"), "--answer_file",
                   str(folder / f"{run}.jsonl"), "--output_file", str(assigned))  # fmt: skip
        printed = run_script(folder, "calculate_metrics", "--input_file", str(assigned), "--output_file",
                             str(folder / f"metrics_{run}.jsonl"))  # fmt: skip
        runs[run] = {
            "answers": {qid: {"sentences": s, "ragbench_answer": ragbench_answer(s)} for qid, s in answers.items()},
            "calls": FakeJudge.calls[first:],
            "assigned": read_jsonl(assigned),
            "metrics": read_jsonl(folder / f"metrics_{run}.jsonl"),
            "printed": printed.strip(),
        }
    server.shutdown()
    fixture = {
        "versions": {p: version(p) for p in ("nuggetizer", "openai")} | {"python": sys.version.split()[0]},
        "scripts": SCRIPTS,
        "topics": TOPICS,
        "corpus": CORPUS,
        "qrels": QRELS,
        "pool_input": pool,
        "create_calls": [c for c in FakeJudge.calls if c["phase"] == "create_nuggets"],
        "nuggets": read_jsonl(folder / "nuggets.jsonl"),
        "runs": runs,
    }
    (HERE / "pool.json").write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])

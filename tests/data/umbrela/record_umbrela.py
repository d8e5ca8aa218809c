"""Records castorini's umbrela, run unmodified, against a fake OpenAI-compatible judge on 127.0.0.1, into
umbrela_calls.json: every HTTP request umbrela's GPTJudge sent (path and JSON body, in arrival order), the reply
the fake judge gave, and the judgments umbrela returned (its `judgment` 0-3, `result_status` and `prediction`).
tests/metrics/test_umbrela.py sends ragbench's `umbrela` metric the same replies and compares.

The fake judge answers from the prompt: the passage after the prompt's last "Passage: " picks its reply
(REPLIES), malformed ways included (no "##final score:", a score out of range, extra text, upper case, JSON,
an empty reply, an HTTP 400 that umbrela reads as an empty reply). Runs: the `bing` and `basic` zero-shot
prompts with gpt-4o-mini, and two reasoning-model names (umbrela's o1/o3/o4 rule folds the system message into
the user's; gpt-5 keeps it). `max_concurrency=1` so the requests arrive in umbrela's order (its default 8 sends
a query's passages at once, in that order). The few-shot prompts are not recorded: umbrela builds them from
pyserini's MS MARCO qrels and index (downloads).

It also runs umbrela's reply parser (`common_utils.parse_fewshot_response`) on PARSER_CASES generated replies
(fragments of its patterns, digits, case and whitespace, seeded) and stores each grade and status.

In a scratch environment with Python 3.12 (the versions are written into the fixture):
    python3.12 -m venv /tmp/ub && /tmp/ub/bin/pip install git+https://github.com/castorini/umbrela@COMMIT openai
    /tmp/ub/bin/python tests/data/umbrela/record_umbrela.py COMMIT
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BAD_REQUEST = "@@400@@"  # the fake judge answers HTTP 400 (umbrela: an empty reply, `result_status` 0)
PARSER_CASES = 1500

QUERIES = [
    {
        "qid": "q1",
        "query": "how long do galapagos tortoises live",
        "candidates": [
            ("d11", "Galapagos tortoises live for more than 100 years in the wild.", "##final score: 3"),
            (
                "d12",
                "Tortoises are reptiles of the family Testudinidae.",
                "Intent: lifespan. M: 1, T: 2.\n##final score: 1\nThe passage names the family only; 3 is not met.",
            ),
            ("d13", "The islands were visited by Darwin in 1835.", "I cannot judge this passage."),
            ("d14", "Giant tortoises can exceed 150 years; one lived to 175.", "##FINAL SCORE: 2"),
            ("d15", "Sea turtles migrate across oceans.", "##final score: 7"),
        ],
    },
    {
        "qid": "q2",
        "query": "what is the boiling point of water at sea level",
        "candidates": [
            ("d21", "Water boils at 100 degrees Celsius at sea level.", "The final score is 3, as asked."),
            ("d22", "Boiling is a phase transition.", "##final score: 5 (on the 0-3 scale)"),
            ("d23", "Pressure changes the boiling point.", '{"M": 2, "T": 3, "O": 1}'),
            ("d24", "Ice melts at zero degrees.", ""),
            ("d25", "Kettles are kitchen appliances.", BAD_REQUEST),
            ("d26", "At 1 atm pure water boils at 212 F.", "score of 2\n\n"),
        ],
    },
]
RUNS = [
    {"name": "bing", "model": "gpt-4o-mini", "prompt_type": "bing", "queries": ["q1", "q2"]},
    {"name": "basic", "model": "gpt-4o-mini", "prompt_type": "basic", "queries": ["q1", "q2"]},
    {"name": "o4", "model": "o4-mini", "prompt_type": "bing", "queries": ["q1"]},
    {"name": "gpt5", "model": "gpt-5-mini", "prompt_type": "bing", "queries": ["q1"]},
]
REPLIES = {segment: reply for q in QUERIES for _, segment, reply in q["candidates"]}

FRAGMENTS = [
    "##final score:", "##final score: ", "final score is ", "final score", '"final score"', '"final_score"',
    '"overall_score"', '"overall"', '"overall score"', '"score"', '"o_score"', '"o"', "'o'", "o", "O", "score is ",
    "score of ", "score: ", "output score is ", "assign it a score of ", "assigning a score of ", "concluded with ",
    "i would give it a score of ", "given a score of ", "relevance category ", "relevance category is ",
    "category", "it falls into the category ", "the relevance category would be ", "passage is ", "it is ", " is ",
    "FINAL SCORE: ", "Score Of ", "ß", "İ", "two", "zero", "\n", "\n\n", " ", "  ", "\t", ":", "-", "=", ";",
    "<", ">", ",", ".", '"', "'", "0", "1", "2", "3", "4", "5", "7", "9", "10", "-1", "2.5", "M: ", "T: ", "O: ",
]  # fmt: skip


def case_text(rng: random.Random) -> str:
    """A reply of up to 12 fragments, a third of them a digit 0-3 (so that most replies parse)."""
    pieces = [rng.choice("0123") if rng.random() < 1 / 3 else rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 12))]
    return "".join(pieces)


class Fake:
    def __init__(self) -> None:
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        fake: Fake = self.server.fake  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][-1]["content"]
        passage = re.findall(r"Passage: (.*)\n", prompt)[-1]
        reply = REPLIES[passage]
        with fake.lock:
            fake.log.append({"path": self.path, "body": body, "reply": reply})
        if reply == BAD_REQUEST:
            status, payload = 400, {"error": {"message": "bad request", "type": "invalid_request_error"}}
        else:
            status = 200
            payload = {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def main(commit: str) -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake = Fake()
    httpd.fake = fake  # type: ignore[attr-defined]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    os.environ["OPENAI_API_KEY"] = "sk-fake"
    os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    os.environ.pop("OPENROUTER_API_KEY", None)

    from umbrela.gpt_judge import GPTJudge
    from umbrela.utils.common_utils import parse_fewshot_response

    by_qid = {q["qid"]: q for q in QUERIES}
    runs = []
    for run in RUNS:
        judge = GPTJudge("dl19-passage", run["model"], prompt_type=run["prompt_type"], max_concurrency=1)
        for qid in run["queries"]:
            query = by_qid[qid]
            request = {
                "query": {"text": query["query"], "qid": qid},
                "candidates": [{"docid": d, "doc": {"segment": s}} for d, s, _ in query["candidates"]],
            }
            start = len(fake.log)
            judgments = judge.judge(request)
            runs.append(
                {
                    "run": run["name"],
                    "model": run["model"],
                    "prompt_type": run["prompt_type"],
                    "qid": qid,
                    "calls": [{k: v for k, v in call.items()} for call in fake.log[start:]],
                    "judgments": [{k: j[k] for k in ("judgment", "result_status", "prediction")} for j in judgments],
                }
            )
    httpd.shutdown()

    rng = random.Random(69)
    texts = [case_text(rng) for _ in range(PARSER_CASES)]
    cases = []
    for text in texts:
        grade, status = parse_fewshot_response(text, "p", "q")
        cases.append({"text": text, "grade": grade, "status": status})

    fixture = {
        "umbrela_commit": commit,
        "versions": {p: version(p) for p in ("umbrela", "openai")} | {"python": sys.version.split()[0]},
        "queries": QUERIES,
        "bad_request": BAD_REQUEST,
        "runs": runs,
        "parser_cases": cases,
    }
    (HERE / "umbrela_calls.json").write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    main(sys.argv[1])

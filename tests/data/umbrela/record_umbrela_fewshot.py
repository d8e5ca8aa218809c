"""Records castorini's umbrela's few-shot prompts, umbrela run unmodified, into umbrela_fewshot.json: the judge
built with `few_shot_count` > 0 after `random.seed(SEED)`, its `prompt_examples` (drawn from the qrels by
`qrel_utils.generate_examples_prompt`), every HTTP request it sent for record_umbrela.py's queries q1 and q2 (the
same fake judge on 127.0.0.1, answering from the prompt's last "Passage: "), and its judgments.
tests/metrics/test_umbrela_fewshot.py builds ragbench's `umbrela` metric with the same options and compares.

umbrela reads its examples through pyserini (`get_qrels_file`, `get_topics`, the MS MARCO passage index's
`doc_raw`), which downloads; a stand-in `pyserini` package (written to a temporary folder put first on sys.path)
answers those three calls from QRELS, TOPICS and PASSAGES, as the real ones answer for `dl19-passage`: the qrels
file's path, `{int(qid): {"title": text}}` and `{"id", "contents"}` JSON. umbrela's code runs as it is.

    /work/scratch/umbrela_venv/bin/python tests/data/umbrela/record_umbrela_fewshot.py
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import threading
from http.server import ThreadingHTTPServer
from importlib.metadata import version
from pathlib import Path

from record_umbrela import QUERIES, Fake, Handler

HERE = Path(__file__).resolve().parent
TOPICS = {
    "1030303": "who is aziz hashim",
    "1037496": "who is rep scalise",
    "1063750": "why did the us volunterilay enter ww1",
}
PASSAGES = {str(7000 + n): f"Example passage {n}: a text judged for the few-shot prompt." for n in range(24)}
# each topic judges eight passages, every grade at least three times; 7005 is judged twice (first place, last grade)
GRADES = [0, 1, 2, 3, 0, 1, 2, 3, 3, 2, 1, 0, 0, 0, 1, 2, 3, 3, 1, 2, 0, 1, 2, 3]
QRELS = [(list(TOPICS)[n // 8], str(7000 + n), grade) for n, grade in enumerate(GRADES)]
QRELS.insert(20, (list(TOPICS)[0], "7005", 3))
RUNS = [
    {"name": "bing-2", "prompt_type": "bing", "few_shot_count": 2, "seed": 3},
    {"name": "basic-1", "prompt_type": "basic", "few_shot_count": 1, "seed": 0},
    {"name": "basic-2", "prompt_type": "basic", "few_shot_count": 2, "seed": 7},
    {"name": "basic-3", "prompt_type": "basic", "few_shot_count": 3, "seed": 11},
]
PYSERINI = {
    "__init__.py": "",
    "search/__init__.py": """import json, os
DATA = json.loads(open(os.environ["FAKE_PYSERINI"]).read())
def get_qrels_file(name):
    return DATA["qrels_file"]
def get_topics(name):
    return {int(qid): {"title": text} for qid, text in DATA["topics"].items()}
""",
    "index/__init__.py": "",
    "index/lucene.py": """import json
from pyserini.search import DATA
class LuceneIndexReader:
    @classmethod
    def from_prebuilt_index(cls, name):
        return cls()
    def doc_raw(self, docid):
        return json.dumps({"id": docid, "contents": DATA["passages"][docid]})
""",
}


def fake_pyserini(qrels: list[tuple[str, str, int]]) -> Path:
    """The stand-in pyserini, first on sys.path, answering for `qrels`; the temporary folder it is in."""
    folder = Path(tempfile.mkdtemp())
    for name, text in PYSERINI.items():
        (folder / "pyserini" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "pyserini" / name).write_text(text, encoding="utf-8")
    qrels_file = folder / "qrels.dl19-passage.txt"
    qrels_file.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels), encoding="utf-8")
    data = {"qrels_file": str(qrels_file), "topics": TOPICS, "passages": PASSAGES}
    (folder / "data.json").write_text(json.dumps(data), encoding="utf-8")
    os.environ["FAKE_PYSERINI"] = str(folder / "data.json")
    sys.path.insert(0, str(folder))
    return folder


def fake_judge() -> tuple[ThreadingHTTPServer, Fake]:
    """record_umbrela.py's fake judge on 127.0.0.1, umbrela's OpenAI client pointed at it."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake = Fake()
    httpd.fake = fake  # type: ignore[attr-defined]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    os.environ["OPENAI_API_KEY"] = "sk-fake"
    os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    os.environ.pop("OPENROUTER_API_KEY", None)
    return httpd, fake


def main() -> None:
    fake_pyserini(QRELS)
    httpd, fake = fake_judge()
    from umbrela.gpt_judge import GPTJudge

    runs = []
    for run in RUNS:
        random.seed(run["seed"])
        judge = GPTJudge(
            "dl19-passage",
            "gpt-4o-mini",
            prompt_type=run["prompt_type"],
            few_shot_count=run["few_shot_count"],
            max_concurrency=1,
        )
        for query in QUERIES:
            request = {
                "query": {"text": query["query"], "qid": query["qid"]},
                "candidates": [{"docid": d, "doc": {"segment": s}} for d, s, _ in query["candidates"]],
            }
            start = len(fake.log)
            judgments = judge.judge(request)
            runs.append(
                run
                | {
                    "qid": query["qid"],
                    "prompt_examples": judge.prompt_examples,
                    "calls": fake.log[start:],
                    "judgments": [{k: j[k] for k in ("judgment", "result_status", "prediction")} for j in judgments],
                }
            )
    httpd.shutdown()
    try:
        GPTJudge("dl19-passage", "gpt-4o-mini", prompt_type="basic", few_shot_count=7)
        too_many = ""
    except AssertionError as exc:
        too_many = str(exc)
    fixture = {
        "umbrela_commit": "e2c4e4126bf7b568d9230008b465a58445cabc30",
        "versions": {p: version(p) for p in ("umbrela", "openai")} | {"python": sys.version.split()[0]},
        "topics": TOPICS,
        "passages": PASSAGES,
        "qrels": QRELS,
        "runs": runs,
        "too_many": {"few_shot_count": 7, "assertion": too_many},
    }
    (HERE / "umbrela_fewshot.json").write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    main()

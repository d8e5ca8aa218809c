"""Records what ragas 0.4.3 (instructor 1.17.0), run unmodified, scores where the judge's 0/1 fields are out of
range, into ragas_verdicts.json: a fake OpenAI-compatible judge on 127.0.0.1 answers every prompt as
record_ragas_replies.py's judge does (bare JSON, word overlap), but with every 0/1 field (a verdict, `attributed`,
`noncommittal`) written as VALUE (2 or -1: integers, which ragas's output models take, as they take any integer;
and for context precision and recall 10**200 and 10**400, past a float's range: ragas scores infinity or raises).
For faithfulness, context precision, context recall, factual correctness and answer relevancy (all-MiniLM-L6-v2)
on record_ragas_replies.py's first sample: the value `ascore` returned (ragas does not bound it) or the exception it
raised, and the judge's
replies, one a request, in order. And answer relevancy where the judge's generated question is unrelated to the
question ("unrelated": a negative cosine). tests/metrics/test_ragas_verdicts.py scores the same sample with ragbench on the
same replies and compares.

In a scratch environment (the versions are written into the fixture):
    python -m venv /tmp/rg && /tmp/rg/bin/pip install ragas==0.4.3 instructor==1.17.0 "openai<3" \\
        "langchain-community<0.4.2" pydantic==2.14.4 sentence-transformers==6.2.0
    /tmp/rg/bin/python tests/data/parity/record_ragas_verdicts.py MINILM_FOLDER
(MINILM_FOLDER: `python -c "from ragbench.api.retrieval import model_location as m; print(m('embedded'))"`.)
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from record_ragas_replies import answer, samples, title_and_given  # noqa: E402

VALUES = (2, -1)
SAMPLE = samples()[0]
PACKAGES = ("ragas", "instructor", "openai", "pydantic", "pydantic-core", "sentence-transformers")
# verdicts past a float's range: ragas's arithmetic overflows (infinity, or OverflowError)
HUGE = {10**200: "10**200", 10**400: "10**400"}
WRITTEN: dict[str, tuple[int | str, ...]] = {
    "context_precision": (*VALUES, *HUGE),
    "context_recall": (*VALUES, *HUGE),
    "answer_relevancy": (*VALUES, "unrelated"),
}
NAMES: dict[int | str, str] = dict(HUGE)
UNRELATED = "Quantum chromodynamics lattice"  # all-MiniLM-L6-v2's cosine to the sample's question: -0.059


def out_of_range(value: Any, written: int | str) -> Any:
    """The judge's object with each 0/1 field written as `written`; "unrelated": its generated question UNRELATED."""
    if written == "unrelated":
        return {**value, "question": UNRELATED}
    if isinstance(value, dict):
        return {k: out_of_range(v, written) for k, v in value.items()}
    if isinstance(value, list):
        return [out_of_range(v, written) for v in value]
    return written if isinstance(value, int) else value


class Judge(BaseHTTPRequestHandler):
    written: int | str = 2
    replies: list[str] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = json.dumps(out_of_range(answer(*title_and_given(body)), Judge.written))
        Judge.replies.append(text)
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        out = json.dumps(
            {
                "id": "fake",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [choice],
                "usage": usage,
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: Any) -> None:
        pass


async def run(base_url: str, minilm: str) -> dict[str, Any]:
    import openai
    from ragas.embeddings import HuggingFaceEmbeddings
    from ragas.llms import llm_factory
    from ragas.metrics import collections as c

    llm = llm_factory("gpt-4o-mini", client=openai.AsyncOpenAI(base_url=base_url, api_key="fake", max_retries=0))
    relevancy = c.AnswerRelevancy(llm=llm, embeddings=HuggingFaceEmbeddings(model=minilm))
    metrics = {
        "faithfulness": (c.Faithfulness(llm=llm), ("user_input", "response", "retrieved_contexts")),
        "context_precision": (c.ContextPrecision(llm=llm), ("user_input", "reference", "retrieved_contexts")),
        "context_recall": (c.ContextRecall(llm=llm), ("user_input", "retrieved_contexts", "reference")),
        "factual_correctness": (c.FactualCorrectness(llm=llm), ("response", "reference")),
        "answer_relevancy": (relevancy, ("user_input", "response")),
    }
    outcomes: dict[str, dict[str, Any]] = {name: {} for name in metrics}
    for name, (metric, inputs) in metrics.items():
        for written in WRITTEN.get(name, VALUES):
            Judge.written, Judge.replies = written, []
            try:
                outcome: dict[str, Any] = {"value": (await metric.ascore(**{k: SAMPLE[k] for k in inputs})).value}
            except OverflowError as exc:  # what ragas raised, recorded
                outcome = {"error": type(exc).__name__, "message": str(exc)}
            outcomes[name][NAMES.get(written, str(written))] = {**outcome, "replies": list(Judge.replies)}
    return outcomes


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Judge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        outcomes = asyncio.run(run(f"http://127.0.0.1:{server.server_address[1]}/v1", sys.argv[1]))
    finally:
        server.shutdown()
    fixture = {
        "source": {name: version(name) for name in PACKAGES},
        "how": (__doc__ or "").split("\n\nIn a scratch")[0].replace("\n", " "),
        "sample": SAMPLE,
        "outcomes": outcomes,
    }
    (HERE / "ragas_verdicts.json").write_text(json.dumps(fixture, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

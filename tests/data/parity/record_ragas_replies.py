"""Records ragas 0.4.3, run unmodified, against a fake OpenAI-compatible judge whose replies are malformed the ways
local judges often are, into ragas_replies.json: every request ragas sent (instructor's re-asks included), the
reply it got, and what each collections metric's `ascore` returned or raised. tests/metrics/test_ragas_replies.py runs
ragbench's metrics on the same replies and compares.

Each sample's texts name one capital city; the city picks how the fake judge writes its FIRST reply to every
call of that sample (STYLES): bare JSON, JSON in a code fence, text before the JSON, integers written `1.0`,
`true` or `"1"`, unterminated JSON, a reply nested 100,000 array or 5,000 object levels deep, or (Quito) an
unterminated reply to every attempt, or (Rome) bare JSON and 1,100 spaces with finish_reason "length" (cut at
max_tokens). A malformed first reply also flips each 0/1 field, so a reading that
accepts it scores differently. A re-ask (a conversation holding an assistant message) gets bare JSON. The
fake judge's verdicts: word overlap of the statement with the context.

In a scratch environment (the versions are written into the fixture):
    python -m venv /tmp/rg && /tmp/rg/bin/pip install ragas==0.4.3 instructor==1.17.0 "openai<3" \\
        "langchain-community<0.4.2" sentence-transformers==6.2.0
    /tmp/rg/bin/python tests/data/parity/record_ragas_replies.py MINILM_FOLDER
(MINILM_FOLDER: `python -c "from ragbench.api.retrieval import model_location as m; print(m('embedded'))"`.)
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
STYLES = {
    "Paris": "bare",
    "Tokyo": "fenced",
    "Canberra": "preamble",
    "Ottawa": "float",
    "Nairobi": "bool",
    "Lima": "string",
    "Oslo": "invalid",
    "Cairo": "deep_array",
    "Hanoi": "deep_object",
    "Quito": "always_invalid",
    "Rome": "cut",
}
COUNTRIES = {
    "Paris": "France",
    "Tokyo": "Japan",
    "Canberra": "Australia",
    "Ottawa": "Canada",
    "Nairobi": "Kenya",
    "Lima": "Peru",
    "Oslo": "Norway",
    "Cairo": "Egypt",
    "Hanoi": "Vietnam",
    "Quito": "Ecuador",
    "Rome": "Italy",
}


# the two deep replies, written into the fixture as @@NAME@@ (they are 200 kB and 30 kB)
DEEP = {
    "deep_array": '{"statements": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "deep_object": '{"a": ' * 5_000 + "1" + "}" * 5_000,
}


def compact(value: Any) -> Any:
    """The value with each deep reply in its strings written as its @@NAME@@."""
    if isinstance(value, dict):
        return {k: compact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [compact(v) for v in value]
    if isinstance(value, str):
        for name, text in DEEP.items():
            value = value.replace(text, f"@@{name}@@")
    return value


def samples() -> list[dict[str, Any]]:
    return [
        {
            "id": STYLES[city],
            "user_input": f"What is the capital of {country}?",
            "response": f"{city} is the capital of {country}. {city} hosts the famous glass bakery.",
            "reference": f"{city} is the capital of {country}. {city} lies near a river delta.",
            "retrieved_contexts": [
                f"{city} is the capital and largest city of {country}.",
                "Mountain goats climb steep cliffs.",
            ],
        }
        for city, country in COUNTRIES.items()
    ]


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3}


def supported(statement: str, context: str) -> int:
    return int(words(statement) <= words(context))


def sentences(text: str) -> list[str]:
    return [s.strip() + "." for s in text.split(".") if s.strip()]


def answer(title: str, given: dict[str, Any]) -> dict[str, Any]:
    """The fake judge's correct object for the prompt whose output model is `title`."""
    if title == "StatementGeneratorOutput":
        return {"statements": sentences(given["answer"])}
    if title == "ClaimDecompositionOutput":
        return {"claims": sentences(given["response"])}
    if title == "NLIStatementOutput":
        judged = [
            {"statement": s, "reason": "fake judge: word overlap", "verdict": supported(s, given["context"])}
            for s in given["statements"]
        ]
        return {"statements": judged}
    if title == "ContextPrecisionOutput":
        return {
            "reason": "fake judge: shared words",
            "verdict": int(bool(words(given["context"]) & words(given["answer"]))),
        }
    if title == "ContextRecallOutput":
        classified = [
            {"statement": s, "reason": "fake judge: word overlap", "attributed": supported(s, given["context"])}
            for s in sentences(given["answer"])
        ]
        return {"classifications": classified}
    if title == "AnswerRelevanceOutput":
        return {"question": "What does this say: " + given["response"].split(".")[0] + "?", "noncommittal": 0}
    raise ValueError(f"no fake answer for {title}")


def flipped(value: Any, written: str) -> Any:
    """The object with each 0/1 field flipped and written as style `written` says (a JSON literal per value)."""
    if isinstance(value, dict):
        return {k: flipped(v, written) for k, v in value.items()}
    if isinstance(value, list):
        return [flipped(v, written) for v in value]
    if isinstance(value, int):
        return {"float": float(1 - value), "bool": not value, "string": str(1 - value)}.get(written, 1 - value)
    return value


def title_and_given(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The request's output model title (from instructor's system message) and its prompt's input object."""
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    title = re.search(r'"title": "(\w+)",\s*"type": "object"\s*}\s*\n\s*Make sure', system)
    if title is None:
        raise ValueError("no output model title in the system message")
    return title.group(1), json.loads(user[user.rindex("\ninput: ") + len("\ninput: ") : user.rindex("\nOutput: ")])


def reply(body: dict[str, Any]) -> str:
    user = body["messages"][1]["content"]
    style = next((s for city, s in STYLES.items() if city in user[user.rindex("\ninput: ") :]), "bare")
    reask = any(m["role"] == "assistant" for m in body["messages"])
    correct = answer(*title_and_given(body))
    if style == "always_invalid":
        return json.dumps(correct)[:40]
    if style == "cut":
        return json.dumps(correct) + " " * 1_100
    if reask or style == "bare":
        return json.dumps(correct)
    wrong = flipped(correct, style)
    return {
        "fenced": lambda: "```json\n" + json.dumps(wrong, indent=2) + "\n```",
        "preamble": lambda: "Here is the JSON you asked for:\n" + json.dumps(wrong),
        "float": lambda: json.dumps(wrong),
        "bool": lambda: json.dumps(wrong),
        "string": lambda: json.dumps(wrong),
        "invalid": lambda: json.dumps(wrong)[:40],
        "deep_array": lambda: DEEP["deep_array"],
        "deep_object": lambda: DEEP["deep_object"],
    }[style]()


class Judge(BaseHTTPRequestHandler):
    log: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = reply(body)
        finish = "length" if text.endswith(" " * 1_100) else "stop"
        Judge.log.append(
            {"messages": body["messages"], "params": {k: v for k, v in body.items() if k != "messages"}, "reply": text}
        )
        out = json.dumps(
            {
                "id": "fake",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
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

    def llm(model: str = "gpt-4o-mini") -> Any:
        return llm_factory(model, client=openai.AsyncOpenAI(base_url=base_url, api_key="fake", max_retries=0))

    embeddings = HuggingFaceEmbeddings(model=minilm)
    metrics = {
        "faithfulness": (c.Faithfulness(llm=llm()), ("user_input", "response", "retrieved_contexts")),
        "context_precision": (c.ContextPrecision(llm=llm()), ("user_input", "reference", "retrieved_contexts")),
        "context_recall": (c.ContextRecall(llm=llm()), ("user_input", "retrieved_contexts", "reference")),
        "factual_correctness": (c.FactualCorrectness(llm=llm()), ("response", "reference")),
        "answer_relevancy": (c.AnswerRelevancy(llm=llm(), embeddings=embeddings), ("user_input", "response")),
    }
    calls: dict[str, dict[str, Any]] = {name: {} for name in metrics}
    outcomes: dict[str, dict[str, Any]] = {name: {} for name in metrics}
    for name, (metric, inputs) in metrics.items():
        for sample in samples():
            Judge.log.clear()
            try:
                value = (await metric.ascore(**{k: sample[k] for k in inputs})).value
                outcomes[name][sample["id"]] = None if value != value else value
            except Exception as exc:  # what ragas raised, recorded
                outcomes[name][sample["id"]] = {"error": type(exc).__name__, "message": str(exc)[:2000]}
            calls[name][sample["id"]] = list(Judge.log)
    reasoning = {}
    for model in ("o3-mini", "gpt-5", "codex-mini", "gpt-4o"):
        Judge.log.clear()
        await c.ContextPrecision(llm=llm(model)).ascore(
            user_input="What is the capital of France?", reference="Paris.", retrieved_contexts=["Paris is in France."]
        )
        reasoning[model] = Judge.log[0]["params"]
    return {"calls": calls, "outcomes": outcomes, "reasoning_models": reasoning}


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Judge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        recorded = asyncio.run(run(f"http://127.0.0.1:{server.server_address[1]}/v1", sys.argv[1]))
    finally:
        server.shutdown()
    packages = ("ragas", "instructor", "openai", "pydantic", "pydantic-core", "sentence-transformers")
    fixture = {
        "source": {name: version(name) for name in packages},
        "how": (__doc__ or "").split("\n\nIn a scratch")[0].replace("\n", " "),
        "styles": {STYLES[city]: city for city in STYLES},
        "samples": samples(),
        **compact(recorded),
    }
    (HERE / "ragas_replies.json").write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

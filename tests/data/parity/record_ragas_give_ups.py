"""Records what ragas 0.4.3 (instructor 1.17.0), run unmodified, does with judge replies it cannot use, into
ragas_give_ups.json: its `ContextPrecision` (collections, an `llm_factory` LLM on the OpenAI client) scores one
sample against a fake OpenAI-compatible judge on 127.0.0.1 that answers every request in one way (REPLIES): a reply
holding a lone surrogate (JSON's `\\ud800`: the reply is refused, and the re-ask holding it cannot be encoded by
the client), a 20 MB unterminated reply to every attempt, a 20 MB one first and bare JSON to the re-ask, a
20 MB reply that is valid JSON, and a message whose content is a list of content parts (one text part holding
bare JSON of ragas's output) where OpenAI's API sends text. For each: the value `ascore` returned or the exception
it raised (and its last attempt's error), and every request the judge got (its message count and the characters of
its messages' contents, a list's as JSON text: the 20 MB texts are not kept; the turns after ragas's prompt, the
re-asks, where they are short).
tests/metrics/test_ragas_give_ups.py scores the same sample with ragbench on the same replies and compares.

In a scratch environment (the versions are written into the fixture):
    python -m venv /tmp/rg && /tmp/rg/bin/pip install ragas==0.4.3 instructor==1.17.0 "openai<3" \\
        "langchain-community<0.4.2" pydantic==2.14.4
    /tmp/rg/bin/python tests/data/parity/record_ragas_give_ups.py
"""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SAMPLE = {
    "user_input": "What is the capital of France?",
    "reference": "Paris.",
    "retrieved_contexts": ["Paris is in France.", "Goats climb."],
}
GOOD = json.dumps({"reason": "r", "verdict": 1})
HUGE = '{"reason": "' + "x" * 20_000_000  # unterminated: 20,000,012 characters
REPLIES = {  # the judge's reply to a first request and to a re-ask (a conversation holding an assistant turn)
    "lone_surrogate": ('{"reason": "\ud800", "verdict": 1}', '{"reason": "\ud800", "verdict": 1}'),
    "huge_every_time": (HUGE, HUGE),
    "huge_then_bare": (HUGE, GOOD),
    "huge_valid": (json.dumps({"reason": "x" * 20_000_000, "verdict": 1}),) * 2,
    "content_parts": ([{"type": "text", "text": GOOD}],) * 2,
}
SHORT = 10_000  # the re-ask turns of a request are recorded where they are no longer


def chars(content: str | list[Any]) -> int:
    """The characters of a message's content: a list of content parts as its JSON text."""
    return len(content) if isinstance(content, str) else len(json.dumps(content))


class Judge(BaseHTTPRequestHandler):
    replies: tuple[str | list[Any], ...] = ("", "")
    log: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        messages = body["messages"]
        logged = {"messages": len(messages), "chars": sum(chars(m["content"]) for m in messages)}
        if len(messages) > 2 and logged["chars"] <= SHORT:
            logged["reasks"] = messages[2:]
        Judge.log.append(logged)
        text = Judge.replies[any(m["role"] == "assistant" for m in messages)]
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        out = json.dumps(
            {
                "id": "fake",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [choice],
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


async def run(base_url: str) -> dict[str, Any]:
    import openai
    from ragas.llms import llm_factory
    from ragas.metrics.collections import ContextPrecision

    outcomes = {}
    for name, replies in REPLIES.items():
        Judge.replies, Judge.log = replies, []
        llm = llm_factory("gpt-4o-mini", client=openai.AsyncOpenAI(base_url=base_url, api_key="fake", max_retries=0))
        try:
            value = (await ContextPrecision(llm=llm).ascore(**SAMPLE)).value
            outcome: dict[str, Any] = {"value": None if value != value else value}
        except Exception as exc:  # what ragas raised, recorded
            last = str(exc).rsplit("<exception>", 1)[-1].split("</exception>", 1)[0]  # its last attempt's
            outcome = {"error": type(exc).__name__, "last_attempt": " ".join(last.split())[:300]}
        outcomes[name] = {**outcome, "requests": list(Judge.log)}
    return outcomes


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Judge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        outcomes = asyncio.run(run(f"http://127.0.0.1:{server.server_address[1]}/v1"))
    finally:
        server.shutdown()
    fixture = {
        "source": {name: version(name) for name in ("ragas", "instructor", "openai", "pydantic", "pydantic-core")},
        "how": (__doc__ or "").split("\n\nIn a scratch")[0].replace("\n", " "),
        "sample": SAMPLE,
        "outcomes": outcomes,
    }
    (HERE / "ragas_give_ups.json").write_text(json.dumps(fixture, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

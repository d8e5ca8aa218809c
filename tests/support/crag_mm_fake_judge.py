"""A fake OpenAI chat-completions server judging CRAG-MM answers from the prompt text alone, and recording every
request it gets. It runs where nothing of ragbench is installed (the scratch venv that runs facebookresearch/CRAG-MM's
`local_evaluation.py --mode evaluate`: tests/data/parity/record_crag_mm_evaluate.py), so it uses the standard library
only; ragbench's parity test (tests/tasks/crag_mm/test_crag_mm_evaluate_parity.py) serves the same replies.

`plan` maps a prediction (the text after "Prediction: " in the judge's user message) to its replies, one per request
made for it, the last one repeated: a reply's text, or one of
- "__500__": HTTP 500 (the SDK's own retries take it again);
- "__no_choices__": HTTP 200 holding a completion without choices (`choices[0]` fails in the client's caller);
- "__null__": a completion whose message content is null.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from support.http_threads import send_json, serving

USER_TAIL = "\nGive your output below:\n"


def prediction_of(body: Mapping[str, Any]) -> str:
    """The prediction a judge request asks about (LLMJudge.evaluate's user message)."""
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    return str(user.split("\nPrediction: ", 1)[1].rsplit(USER_TAIL, 1)[0])


def completion(model: str, content: str | None, choices: bool = True) -> dict[str, Any]:
    message = {"role": "assistant", "content": content}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}] if choices else [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
    }


class FakeJudge:
    """What the server was asked (`requests`: each request's JSON body, in the order they arrived) and its URL
    (`base_url`, ending in /v1)."""

    def __init__(self, plan: Mapping[str, Sequence[str]]) -> None:
        self.plan = {prediction: list(replies) for prediction, replies in plan.items()}
        self.asked: dict[str, int] = {}
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.base_url = ""

    def next_reply(self, body: dict[str, Any]) -> str:
        with self.lock:
            self.requests.append(body)
            prediction = prediction_of(body)
            replies = self.plan[prediction]
            count = self.asked.get(prediction, 0)
            self.asked[prediction] = count + 1
            return replies[min(count, len(replies) - 1)]

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        body = json.loads(handler.rfile.read(int(handler.headers.get("Content-Length", 0))))
        reply, model = self.next_reply(body), str(body.get("model"))
        if reply == "__500__":
            send_json(handler, 500, {"error": {"message": "the fake judge's server error", "type": "server_error"}})
        else:
            content = None if reply in ("__no_choices__", "__null__") else reply
            send_json(handler, 200, completion(model, content, choices=reply != "__no_choices__"))


@contextmanager
def fake_judge(plan: Mapping[str, Sequence[str]]) -> Iterator[FakeJudge]:
    judge = FakeJudge(plan)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # the pre-flight's probe of /v1/models
            send_json(self, 200, {"object": "list", "data": [{"id": "gpt-4o", "object": "model", "created": 0}]})

        def do_POST(self) -> None:
            judge.answer(self)

    with serving(Handler, poll_seconds=0.05) as url:
        judge.base_url = f"{url}/v1"
        yield judge

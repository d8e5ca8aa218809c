"""A fake Gemini API judge for DeepResearch Bench's RACE (the recorder runs it for the released scripts in their
own venv, the tests for ragbench): `POST /v1beta/models/MODEL:generateContent` answered from the prompt's text
alone, every request body kept as sent (test_engine_openai's FakeServer).

A cleaning prompt (no `<criteria_list>`) is answered with its article, the text between the prompt's first line
that opens with a quote and its last line that closes one, its "[n]" markers taken out. A scoring prompt is answered
with a fenced JSON block scoring each criterion of its `<criteria_list>` for both articles: a number 0-10 with one
decimal drawn from a hash of the dimension, the criterion and the article; every fifth criterion (by that hash)
is named in upper case, so RACE's case-insensitive match of criteria is exercised. FACT's prompts are answered by
drb_fake_fact.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from test_engine_openai import FakeServer

from support.drb_fake_fact import fact_reply

MARKER = re.compile(r"\[\d+\]")


def _between(text: str, start: str, end: str) -> str:
    head = text.index(start) + len(start)
    return text[head : text.index(end, head)]


def _digest(*parts: str) -> int:
    return int(hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest(), 16)


def cleaned(prompt: str) -> str:
    lines = prompt.split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith('"'))
    last = max(i for i, line in enumerate(lines) if line.endswith('"'))
    article = "\n".join(lines[first : last + 1])[1:-1]
    return MARKER.sub("", article)


def scored(prompt: str) -> str:
    criteria = json.loads(_between(prompt, "<criteria_list>\n", "\n</criteria_list>"))
    articles = [_between(prompt, f"<article_{n}>\n", f"\n</article_{n}>") for n in (1, 2)]
    out: dict[str, list[dict[str, Any]]] = {}
    for dim, items in criteria.items():
        out[dim] = []
        for item in items:
            name = item["criterion"]
            first, second = (_digest(dim, name, article) % 101 / 10 for article in articles)
            shown = name.upper() if _digest(dim, name) % 5 == 0 else name
            out[dim].append(
                {"criterion": shown, "analysis": "compared", "article_1_score": first, "article_2_score": second}
            )
    return "Scores follow.\n```json\n" + json.dumps(out, ensure_ascii=False, indent=2) + "\n```"


def reply(prompt: str) -> str:
    fact = fact_reply(prompt)
    if fact is not None:
        return fact
    return scored(prompt) if "<criteria_list>" in prompt else cleaned(prompt)


def answer(body: dict[str, Any]) -> dict[str, Any]:
    prompt = "".join(part.get("text", "") for content in body["contents"] for part in content.get("parts", ()))
    text = reply(prompt)
    usage = {
        "promptTokenCount": len(prompt) // 4,
        "candidatesTokenCount": len(text) // 4,
        "totalTokenCount": len(prompt) // 4 + len(text) // 4,
    }
    candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "fake-gemini"}


def fake_gemini() -> FakeServer:
    """test_engine_openai's fake server answering as the Gemini API; its `requests` hold each request's path and
    body; `gemini_url(fake)` is the base URL google-genai takes ($GOOGLE_GEMINI_BASE_URL)."""
    return FakeServer(answer=lambda path, body: answer(body))


def camel(value: Any) -> Any:
    """A body's field names in lowerCamelCase: google-genai 1.20 (the script's) writes a nested config's names so,
    3.6 (ragbench's) as snake_case; the Gemini API reads both as one field (proto3's JSON mapping)."""
    if isinstance(value, dict):
        return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): camel(v) for k, v in value.items()}
    return [camel(v) for v in value] if isinstance(value, list) else value


def gemini_url(fake: FakeServer) -> str:
    return fake.base_url.removesuffix("/v1")

"""A fake judge for the `auto_argue` metric on 127.0.0.1 (test_engine_openai's FakeServer), answering each of its
three YES/NO questions from the prompt's text alone: a document attests a sentence where it holds three quarters of
the sentence's words of four or more letters; a sentence gives an answer where it holds the answer's text (case
ignored); an uncited sentence needs a citation where it holds a digit."""

from __future__ import annotations

import re
from typing import Any

from test_engine_openai import FakeServer

WORD = re.compile(r"[a-z0-9]{4,}")


def _between(text: str, start: str, end: str) -> str:
    head = text.index(start) + len(start)
    return text[head : text.index(end, head)]


def verdict(prompt: str) -> str:
    if prompt.startswith("Document:\n"):
        document, sentence = _between(prompt, "Document:\n", "\n\nSentence:"), _between(prompt, "Sentence:\n", "\n\n")
        words = WORD.findall(sentence.lower())
        held = sum(word in document.lower() for word in words)
        return "YES" if held * 4 >= len(words) * 3 else "NO"
    if prompt.startswith("Question: "):
        answer, sentence = _between(prompt, "Answer: ", "\n\nSentence:"), _between(prompt, "Sentence:\n", "\n\n")
        return "YES" if answer.lower() in sentence.lower() else "NO"
    sentence = _between(prompt, "Sentence of the report:\n", "\n\n")
    return "YES." if re.search(r"\d", sentence) else "No."


def reply(body: dict[str, Any]) -> str:
    return verdict(next(m["content"] for m in body["messages"] if m["role"] == "user"))


def fake_argue_judge() -> FakeServer:
    return FakeServer(reply=reply)

"""A fake judge for the `auto_argue` metric, answering each of its yes/no questions from the question's text alone
(the last message of the chat; the few-shot examples before it are not read), on 127.0.0.1 (test_engine_openai's
FakeServer, `fake_argue_judge`) or as a scripted engine (`scripted:support.argue_fake_judge:answer`):

- a document attests a sentence, and an earlier sentence states what a new one does, where it holds three quarters
  of the sentence's words of four or more letters;
- a sentence gives an answer where it holds the answer's text (case ignored), and a nugget confirms a negative
  assertion where the sentence holds one of its answers;
- a sentence is a negative assertion where it says "no evidence", "not known" or "no record";
- an uncited sentence needs a citation where it holds a digit.

`contrary` answers every question the other way round (a second judge that disagrees)."""

from __future__ import annotations

import re
from typing import Any

from test_engine_openai import FakeServer

WORD = re.compile(r"[a-z0-9]{4,}")
NEGATIVE = re.compile(r"\b(no evidence|not known|no record)\b", re.IGNORECASE)


def _between(text: str, start: str, end: str) -> str:
    head = text.index(start) + len(start)
    return text[head : text.index(end, head)]


def _holds(text: str, sentence: str) -> bool:
    words = WORD.findall(sentence.lower())
    return sum(word in text.lower() for word in words) * 4 >= len(words) * 3


def verdict(prompt: str) -> str:
    if prompt.startswith("Document:\n"):
        document, sentence = _between(prompt, "Document:\n", "\n\nSentence:"), _between(prompt, "Sentence:\n", "\n\n")
        return "YES" if _holds(document, sentence) else "NO"
    if prompt.startswith("Question: "):
        answer, sentence = _between(prompt, "Answer: ", "\n\nSentence:"), _between(prompt, "Sentence:\n", "\n\n")
        return "YES" if answer.lower() in sentence.lower() else "NO"
    if prompt.startswith("Sentence to classify:\n"):
        return "YES" if NEGATIVE.search(_between(prompt, "classify:\n", "\n\n")) else "NO"
    if prompt.startswith("Known facts"):
        facts, sentence = _between(prompt, ":\n", "\n\nNegative"), _between(prompt, "assertion:\n", "\n\n")
        answers = [a for line in facts.splitlines() for a in line.split(" Answers: ", 1)[1].split(" | ")]
        return "YES" if any(a.lower() in sentence.lower() for a in answers) else "NO"
    if prompt.startswith("Earlier sentences"):
        earlier, sentence = _between(prompt, ":\n", "\n\nNew sentence"), _between(prompt, "New sentence:\n", "\n\n")
        return "YES" if any(_holds(line, sentence) for line in earlier.splitlines()) else "NO"
    sentence = _between(prompt, "Sentence of the report:\n", "\n\n")
    return "YES." if re.search(r"\d", sentence) else "No."


def reply(body: dict[str, Any]) -> str:
    return verdict([m["content"] for m in body["messages"] if m["role"] == "user"][-1])


def answer(request: Any) -> str:
    """`scripted:support.argue_fake_judge:answer`: the verdict on the request's last message."""
    return verdict(request.messages[-1][1])


def contrary(request: Any) -> str:
    """`scripted:support.argue_fake_judge:contrary`: the opposite verdict."""
    return "NO" if answer(request).rstrip(".").upper() == "YES" else "YES"


def fake_argue_judge() -> FakeServer:
    return FakeServer(reply=reply)

"""Scripted models whose replies vary in length as real ones do, for `ragbench estimate`'s tests and
benchmarks/estimate_accuracy.py (as `scripted:support.estimate_fake:NAME`).

Each reply is drawn from a random stream seeded by the request's text (sha256), so the same request gets the same
reply in a pilot, in the run that resumes it and in a run of its own: the run's actual cost does not depend on how
it was split. Reply lengths are log-normal (median about 12 words, a long tail), as model replies are.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from ragbench._engines.scripted import last_text
from ragbench._values.llm_request import Request

WORDS = "the of a city founder company river born works organisation country capital north old".split()


def _stream(text: str) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))


def _words(rng: random.Random) -> str:
    count = max(1, min(200, round(rng.lognormvariate(2.5, 0.8))))
    return " ".join(rng.choice(WORDS) for _ in range(count))


def reply(request: Request) -> str:
    """A reply of random length; about a third of them end IRCoT's loop ("So the answer is:") and another third
    Self-Ask's ("So the final answer is:"), so those take a varying number of steps."""
    rng = _stream(last_text(request) if request.messages is None else repr(request.messages))
    text, draw = _words(rng), rng.random()
    ending = "So the answer is: " if draw < 0.3 else "So the final answer is: " if draw < 0.6 else ""
    return ending + text


def _role(turn: Any) -> str:
    return str(turn[0] if isinstance(turn, tuple) else turn.role)


def agent(request: Request) -> Any:
    """A tool-calling agent: 0 to 4 searches (drawn from the question's stream), then an answer of random length."""
    messages = request.messages or ()
    first_user = next((turn for turn in messages if _role(turn) == "user"), None)
    rng = _stream(repr(first_user))
    rounds = min(4, int(rng.expovariate(0.6)))
    done = sum(1 for turn in messages if _role(turn) == "tool")
    if request.tools and done < rounds:
        query = " ".join(rng.choice(WORDS) for _ in range(3 + done))
        return {"tool_calls": [{"id": f"call_{done}", "name": "search", "arguments": {"query": query}}]}
    return _words(_stream(repr(messages)))


def judge(request: Request) -> str:
    """A judge's verdict, its reasoning of random length before it."""
    rng = _stream(last_text(request))
    return f"{_words(rng)}\nVerdict: {'correct' if rng.random() < 0.5 else 'incorrect'}"


def within_limit(request: Request) -> str:
    """`reply` cut at the request's max_tokens (a word a token here), as a model stops there: what --max-cost's
    worst case of a call (ragbench._cost.spending_cap) bounds. `reply` answers as written, past it."""
    return " ".join(reply(request).split()[: request.sampling.max_tokens])


def judge_within_limit(request: Request) -> str:
    """`judge`'s reasoning cut so that with its verdict (2 words) it is at most the request's max_tokens."""
    reasoning, verdict = judge(request).rsplit("\n", 1)
    return " ".join(reasoning.split()[: max(0, request.sampling.max_tokens - 2)]) + "\n" + verdict

"""A model's reply as an example's trace holds it: whole up to 1,000,000 characters, an excerpt beyond (with the
length as sent), while the caller gets the whole reply: a server that answers 20 MB to a call cannot make its
example's sample unwritable (tests/metrics/test_ragas_give_ups.py runs one, resumes it and replays its judge's calls)."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.testing import ScriptedLLM, make_context

# docs/outputs.md, "Samples": a reply over 1,000,000 characters is kept in the trace as its first 10,000
TRACED_CHARS, EXCERPT_CHARS = 1_000_000, 10_000

SIZES = st.one_of(st.integers(0, 100), st.integers(TRACED_CHARS - 3, TRACED_CHARS + 3), st.just(20_000_000))


@settings(max_examples=20, deadline=None)
@given(size=SIZES, letter=st.characters(codec="utf-8"))
def test_a_reply_is_traced_whole_or_as_its_excerpt(size, letter):
    reply = letter * size
    ctx = make_context("demo", llm=ScriptedLLM(reply))
    answered = asyncio.run(ctx.llm.generate("Q"))
    assert answered.text == reply
    (step,) = ctx.trace
    if size <= TRACED_CHARS:
        assert step.response["texts"] == [reply] and "full_chars" not in step.response
    else:
        assert step.response["texts"] == [reply[:EXCERPT_CHARS]] and step.response["full_chars"] == [size]
    assert len(step.to_dict()["response"]["texts"][0]) <= TRACED_CHARS

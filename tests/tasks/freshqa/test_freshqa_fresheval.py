"""FreshEval against the notebooks fresheval_relaxed.ipynb and fresheval_strict.ipynb, run unmodified on
tests/data/freshqa/FreshQA_sample.csv with a scripted judge (tests/data/parity/freshqa.json): the messages they
send and how they read the judge's replies."""

from __future__ import annotations

import asyncio
import json

import pytest

from conftest import TEST_DATA
from ragbench.api import ConfigError, Prediction
from ragbench.tasks.freshqa.fresheval import UNPARSED, FreshEval, extract_rating
from ragbench.testing import ScriptedLLM, make_context

PARITY = json.loads((TEST_DATA / "parity" / "freshqa.json").read_text(encoding="utf-8"))
SAMPLE = TEST_DATA / "freshqa" / "FreshQA_sample.csv"
RATINGS = {"TRUE": True, "FALSE": False, None: None}


def examples():
    """Every row of the sample, both splits, as the freshqa task reads them (upstream evaluates every row)."""
    from ragbench.testing import installed_registry

    task = installed_registry().load("tasks", "freshqa")
    return [e for split in ("test", "dev") for e in task(SAMPLE, split=split).examples()]


def score(metric: FreshEval, example, response: str, replies, counted: list[str] | None = None):
    judges = [ScriptedLLM(reply) for reply in replies]
    ctx = make_context("freshqa", judges=judges)
    if counted is not None:
        ctx.count = counted.append
    value = asyncio.run(metric.score(example, Prediction(example.id, answer=response), ctx))
    return value, judges


@pytest.mark.parametrize("mode", ["relaxed", "strict"])
def test_the_judge_is_asked_exactly_what_the_notebook_asks(mode):
    metric = FreshEval(mode=mode, current_date=PARITY["current_date"])
    asked = {}
    for example in examples():
        _, [judge] = score(metric, example, PARITY["responses"][example.id], ["evaluation: correct"])
        [request] = judge.requests
        asked[example.question] = request
    upstream = PARITY["modes"][mode]["requests"]
    assert len({json.dumps(r["messages"]) for r in upstream}) == len(asked) == 4  # each row once (retries repeat it)
    for sent in upstream:
        question = sent["messages"][-1]["content"].rsplit("\n\n\nquestion: ", 1)[1].split("\n")[0]
        request = asked[question]
        assert [{"role": role, "content": content} for role, content in request.messages] == sent["messages"]
        assert request.sampling.temperature == sent["temperature"] == 0.0
        assert request.sampling.max_tokens == sent["max_tokens"] == 256


def test_the_modes_ask_with_their_own_instructions_and_demonstrations():
    relaxed, strict = (FreshEval(mode=mode).prompt.text("Q?", ["a"], "r") for mode in ("relaxed", "strict"))
    assert "under relaxed evaluation" in relaxed and "under strict evaluation" in strict
    assert relaxed.count("evaluation: correct") == 8 and strict.count("evaluation: correct") == 3


@pytest.mark.parametrize("reply", sorted(PARITY["modes"]["relaxed"]["extract_ratings"]))
def test_a_reply_is_read_as_extract_ratings_reads_it(reply):
    assert extract_rating(reply) is RATINGS[PARITY["modes"]["relaxed"]["extract_ratings"][reply]]


def test_a_reply_upstream_finds_invalid_is_not_scored_and_counted():
    counted: list[str] = []
    value, _ = score(FreshEval(), examples()[0], "Ansgar Pell", ["evaluation: correct."], counted)
    assert value is None and counted == [UNPARSED]


def test_several_judges_are_averaged_over_the_replies_that_parse():
    counted: list[str] = []
    value, _ = score(
        FreshEval(),
        examples()[0],
        "Ansgar Pell",
        ["Thus, the response is credited.", "evaluation: incorrect", "evaluation: correct", "maybe"],
        counted,
    )
    assert value == pytest.approx(2 / 3) and counted == [UNPARSED]


def test_the_current_date_is_the_dataset_versions_unless_given():
    default = FreshEval().prompt.messages("Q?", ["a"], "r")
    assert default[0]["content"].endswith("Knowledge cutoff: November 24, 2025.")
    given = FreshEval(current_date="March 03, 2026").prompt.messages("Q?", ["a"], "r")
    assert given[2]["content"] == "Today is March 03, 2026 in Pacific Standard Time."
    assert "As of today March 03, 2026, the most up-to-date" in given[3]["content"]
    assert "November 24, 2025" not in json.dumps(given)


def test_a_current_date_not_written_as_the_notebooks_write_it_is_refused():
    with pytest.raises(ConfigError, match="current_date '2026-03-03' is not a date"):
        FreshEval(current_date="2026-03-03")

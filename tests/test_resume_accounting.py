"""A resumed run's accounting: its examples counted once however many attempts ran them, and the system's model
named, with no made-up $0, where the resume's calls were answered from the cache."""

from __future__ import annotations

import json

from ragbench.api import EngineError, Prediction, System
from ragbench.testing import run_eval

FAILING = [True]  # while set, every example fails after its model call (a sentence splitter not installed)


class FailsAfterItsCall(System):
    """Calls the model, then fails while FAILING is set: the call is paid and cached, the example is not saved
    as scored; a --resume runs it again, its call answered from the run's cache."""

    name = "fails_after_its_call"

    async def run(self, example, ctx):
        reply = await ctx.llm.generate(example.question, step="answer")
        if FAILING[0]:
            raise EngineError("the answer's sentences could not be split")
        return Prediction(example.id, answer=reply.text)


def resumed_run(tmp_path):
    """Three examples: a first attempt in which each fails after its call, then a --resume that completes them."""
    FAILING[0] = True
    run_eval("demo", FailsAfterItsCall, "scripted:echo", limit=3, output=tmp_path / "run")
    FAILING[0] = False
    return run_eval("demo", FailsAfterItsCall, "scripted:echo", limit=3, output=tmp_path / "run", resume=True)


def test_a_resume_counts_each_example_once_and_says_the_runs_beside_them(tmp_path):
    resumed = resumed_run(tmp_path)
    cost = resumed.results["cost"]
    assert cost["attempts"] == 2 and cost["examples"] == 6  # the runs of an example, as each attempt counted them
    report = (tmp_path / "run" / "report.md").read_text()
    [line] = [line for line in report.splitlines() if " s over 2 attempts" in line]
    assert line.startswith("3 examples in ") and ", 6 runs of an example among them (" in line, line


def test_a_model_the_cache_answered_for_is_named_and_unpriced_is_no_money_figure(tmp_path):
    resumed = resumed_run(tmp_path)
    model_cost = json.loads((tmp_path / "run" / "results.json").read_text())["model_cost"]["demo"]
    assert model_cost["calls"] == 3 and model_cost["cached"] == 3
    assert model_cost["model"] == "scripted:echo"
    assert model_cost["usd"] is None and "scripted:echo has no price" in model_cost["usd_note"]
    report = (tmp_path / "run" / "report.md").read_text()
    assert "the system's model scripted:echo: 3 calls (3 from the cache" in report
    assert "no money figure (scripted:echo has no price" in report and "$0.0000" not in report
    assert resumed.complete

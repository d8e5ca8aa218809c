"""A resumed run's accounting: its examples counted once however many attempts ran them, the system's model
named, with no made-up $0, where the resume's calls were answered from the cache, and `model_cost` counting
every call sent over all attempts (those of the runs a resume superseded too), as `cost` does, never one twice."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.api import EngineError, Metric, Prediction, System
from ragbench.testing import cli, run_eval

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


def resumed_run(tmp_path, **options):
    """Three examples: a first attempt in which each fails after its call, then a --resume that completes them."""
    FAILING[0] = True
    run_eval("demo", FailsAfterItsCall, "scripted:echo", limit=3, output=tmp_path / "run", **options)
    FAILING[0] = False
    return run_eval(
        "demo", FailsAfterItsCall, "scripted:echo", limit=3, output=tmp_path / "run", resume=True, **options
    )


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
    assert model_cost["calls"] == 6 and model_cost["cached"] == 3  # the first attempt's 3 sent, the resume's cached
    assert model_cost["model"] == "scripted:echo"
    assert model_cost["usd"] is None and "scripted:echo has no price" in model_cost["usd_note"]
    report = (tmp_path / "run" / "report.md").read_text()
    assert "the system's model scripted:echo: 6 calls (3 from the cache" in report
    assert "no money figure (scripted:echo has no price" in report and "$0.0000" not in report
    assert resumed.complete


PRICE = {"prompt": 3.0, "completion": 15.0}  # US dollars per million tokens


def sent(results: dict) -> dict:
    """What `cost` (every attempt's scheduler counts) and `model_cost` (the samples' traces) say was sent."""
    cost = results["cost"]
    [model_cost] = (
        results.get("model_cost") or {"demo": {"calls": 0, "cached": 0, "prompt_tokens": 0, "completion_tokens": 0}}
    ).values()
    return {
        "cost": (cost["llm_calls"], cost["prompt_tokens"], cost["completion_tokens"]),
        "model_cost": (
            model_cost["calls"] - model_cost["cached"],
            model_cost["prompt_tokens"],
            model_cost["completion_tokens"],
        ),
    }


def test_model_cost_counts_the_calls_tokens_and_dollars_of_the_attempt_a_resume_ran_again(tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"scripted:echo": PRICE}))
    FAILING[0] = True
    first = run_eval(
        "demo", FailsAfterItsCall, "scripted:echo", limit=3, output=tmp_path / "run", price_table=str(prices)
    )
    FAILING[0] = False
    resumed = run_eval(
        "demo",
        FailsAfterItsCall,
        "scripted:echo",
        limit=3,
        output=tmp_path / "run",
        resume=True,
        price_table=str(prices),
    )
    paid = first.results["cost"]  # the first attempt sent every call; the resume's were answered by the cache
    assert paid["llm_calls"] == 3 and paid["prompt_tokens"] > 0
    figures = sent(resumed.results)
    assert figures["model_cost"] == figures["cost"] == (3, paid["prompt_tokens"], paid["completion_tokens"])
    model_cost = resumed.results["model_cost"]["demo"]
    usd = (paid["prompt_tokens"] * PRICE["prompt"] + paid["completion_tokens"] * PRICE["completion"]) / 1e6
    assert model_cost["usd"] == round(usd, 6) and model_cost["model"] == "scripted:echo"
    [line] = [json.loads(text) for text in (tmp_path / "run" / "samples" / "demo.jsonl").read_text().splitlines()][:1]
    assert [step["cached"] for step in line["trace"]] == [True]  # the kept run's; the first run's carried beside it
    assert [step["cached"] for step in line["earlier_trace"]] == [False] and "request" not in line["earlier_trace"][0]


def test_a_rescore_of_a_resumed_run_and_a_resume_that_only_re_scores_count_no_call_twice(tmp_path):
    FLAKY[0] = True  # the resume's runs are scored by a metric that fails: a second resume re-scores them
    resumed = resumed_run(tmp_path, metrics=[FlakyMetric])
    assert resumed.results["counts"]["demo"]["metric_failures"] == 3
    FLAKY[0] = False
    rescored = run_eval(
        "demo", FailsAfterItsCall, "scripted:echo", limit=3, output=tmp_path / "run", resume=True, metrics=[FlakyMetric]
    )
    assert rescored.complete and all(record.rescored for record in rescored.samples["demo"])
    figures = sent(rescored.results)
    assert figures["model_cost"] == figures["cost"] and figures["cost"][0] == 3
    assert rescored.results["model_cost"]["demo"]["calls"] == 6  # 3 sent, 3 from the cache: none counted twice
    outcome = CliRunner().invoke(
        cli, ["rescore", str(tmp_path / "run"), "--metrics", "match", "--output", str(tmp_path / "again")]
    )
    assert outcome.exit_code == 0, outcome.output
    again = json.loads((tmp_path / "again" / "results.json").read_text())
    assert again["model_cost"] == rescored.results["model_cost"]


FLAKY = [False]  # while set, FlakyMetric fails on every example


class FlakyMetric(Metric):
    name = "flaky"

    def score(self, example, prediction, ctx=None):
        if FLAKY[0]:
            raise RuntimeError("flaky")
        return 1.0


class CallsByPlan(System):
    """Each example's calls by `plan[attempt][its position]`: (calls made, whether it then fails); a call's prompt
    names the attempt where its number is odd (sent again by each attempt), else not (a later attempt's answered
    by the cache)."""

    name = "calls_by_plan"
    attempt = 0
    plan: list[list[tuple[int, bool]]] = []

    async def run(self, example, ctx):
        calls, fails = self.plan[self.attempt][example.index]
        for n in range(calls):
            again = f" (attempt {self.attempt})" if n % 2 else ""
            await ctx.llm.generate(f"{example.question} call {n}{again}", step=f"call {n}")
        if fails:
            raise EngineError("failed after its calls")
        return Prediction(example.id, answer="")


ATTEMPT = st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=3, max_size=3)  # 3 examples' plans


@settings(max_examples=8, deadline=None)
@given(attempts=st.lists(ATTEMPT, min_size=1, max_size=3))
def test_over_any_pattern_of_failures_and_resumes_model_cost_counts_what_was_sent(attempts):
    """Property: whichever examples fail after however many calls in each attempt (then a last attempt completes
    the run), model_cost's calls sent and tokens equal `cost`'s, every attempt's scheduler counts added up."""
    CallsByPlan.plan = [*attempts, [(2, False)] * 3]
    with tempfile.TemporaryDirectory() as folder:
        for n in range(len(CallsByPlan.plan)):
            CallsByPlan.attempt = n
            run = run_eval("demo", CallsByPlan, "scripted:echo", limit=3, output=Path(folder) / "run", resume=n > 0)
            if run.complete:
                break
    assert run.complete
    figures = sent(run.results)
    assert figures["model_cost"] == figures["cost"]
    cost, traced = run.results["cost"], (run.results.get("model_cost") or {}).get("demo", {})
    answered = cost["llm_calls"] + cost["cache_hits"] + cost["shared"] + cost["errors"]
    assert traced.get("calls", 0) == answered  # the cache's answers too: each call once, whichever attempt

"""Every example has a ceiling (ragbench._values.ceiling): a system that would not end - a model that keeps
searching under search_r1_own's unbounded rounds, a loop that swallows every failure, a loop of its own steps -
ends that example as a counted failure, `CeilingReached: ...` naming what was reached and the option that lifts
it, and the run goes on to results.json; `--resume` tries the example once more, under the ceiling it is given.
A metric that would not end fails on that example the same way. The ceiling is not part of the run's identity."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._config.run_config import RunConfig
from ragbench._llm import LLM
from ragbench._retrieval.handle import Retrieval
from ragbench._retrieval.provided import ProvidedRetriever
from ragbench._run.example import process_example
from ragbench._run.plan.planned_task import PlannedTask
from ragbench._run.services import ExampleServices
from ragbench._scheduler import Scheduler
from ragbench._values.ceiling import (
    MAX_PROMPT_CHARS,
    MAX_STEPS,
    Ceiling,
    CeilingCount,
    CeilingReached,
    ExampleCeiling,
)
from ragbench.api import Document, Example, Metric, MetricDeclaration, Prediction, System, Task
from ragbench.testing import ScriptedLLM, make_context
from support.helpers import cli_here, run, samples

KEEPS_SEARCHING = "<answer><search>x</search>Zealion</answer>"  # cut at "</search>": never the model's end


def search_r1_own_run(tmp_path: Path, name: str = "run", **config) -> dict:
    """search_r1_own (max_retrieval_num none, as upstream) on two questions: the model keeps searching on q1 and
    answers q2 at once."""
    if not (tmp_path / "qa.jsonl").exists():  # written once: a --resume reads the same files
        rules = [{"pattern": "who founded Olm", "response": KEEPS_SEARCHING}, {"response": "<answer> Ann </answer>"}]
        (tmp_path / "rules.json").write_text(json.dumps(rules))
        (tmp_path / "searches.jsonl").write_text(json.dumps({"query": "x", "ids": ["1"], "scores": [1.0]}) + "\n")
        (tmp_path / "corpus.jsonl").write_text(json.dumps({"id": "1", "contents": '"Olm"\nOlm was founded by Ann.'}))
        questions = [("q1", "who founded Olm"), ("q2", "who is Ann")]
        (tmp_path / "qa.jsonl").write_text(
            "".join(json.dumps({"id": i, "question": q, "golden_answers": ["Ann"]}) + "\n" for i, q in questions)
        )
    return run(
        tmp_path,
        name,
        tasks=["nq_open_flashrag"],
        data={"nq_open_flashrag": str(tmp_path / "qa.jsonl")},
        system="search_r1_own",
        model=f"scripted:{tmp_path / 'rules.json'}",
        retriever="replay",
        retriever_args={"file": str(tmp_path / "searches.jsonl"), "corpus": str(tmp_path / "corpus.jsonl")},
        metrics=["em"],
        **config,
    )


def test_a_model_that_keeps_searching_fails_its_example_at_the_step_ceiling_and_the_run_finishes(tmp_path):
    results = search_r1_own_run(tmp_path, max_steps_per_example=30)
    assert results["counts"]["nq_open_flashrag"] == {
        "records": 2,
        "scored": 1,
        "failed": 1,
        "bad_records": 0,
        "missing": 0,
        "metric_failures": 0,
    }
    [failure] = results["failures"]["nq_open_flashrag"]
    assert failure["cause"] == "CeilingReached" and failure["ids"] == ["q1"]
    looped, answered = samples(tmp_path / "run", "nq_open_flashrag")
    assert looped["error"] == (
        "CeilingReached: system search_r1_own did not end within 30 steps on this example (model calls, searches, "
        "tool and recorded steps): a loop? --max-steps-per-example N lifts the ceiling"
    )
    assert len(looped["trace"]) == 30  # the 31st step was refused, not traced
    assert answered["error"] is None and answered["scores"]["em"] == 1.0
    assert (tmp_path / "run" / "results.json").is_file()
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())
    assert recorded["config"]["max_steps_per_example"] == 30
    assert "max_steps_per_example" not in recorded["identity"]


def test_resume_tries_the_example_once_more_under_the_ceiling_it_is_given(tmp_path):
    search_r1_own_run(tmp_path, max_steps_per_example=30)
    again = search_r1_own_run(tmp_path, resume=True, max_steps_per_example=45)  # not refused: not the run's identity
    assert again["counts"]["nq_open_flashrag"]["failed"] == 1
    looped, answered = samples(tmp_path / "run", "nq_open_flashrag")  # q1's new sample in place of its first
    assert "within 45 steps" in looped["error"] and len(looped["trace"]) == 45
    assert answered["error"] is None
    assert json.loads((tmp_path / "run" / "run.json").read_text())["config"]["max_steps_per_example"] == 45


def test_a_prompt_that_keeps_growing_fails_its_example_at_the_characters_ceiling(tmp_path):
    search_r1_own_run(tmp_path, max_prompt_chars_per_example=6_000)
    looped = samples(tmp_path / "run", "nq_open_flashrag")[0]
    assert looped["error"].startswith(
        "CeilingReached: system search_r1_own did not end within 6,000 characters of prompts on this example"
    )
    assert looped["error"].endswith("--max-prompt-chars-per-example N lifts the ceiling")
    sent = sum(len(step["request"]["prompt"]) for step in looped["trace"] if step["kind"] == "llm")
    assert 0 < sent <= 6_000


def test_the_ceiling_is_not_the_run_s_identity_and_its_default_is_recorded_as_not_given():
    plain = RunConfig.of(tasks=["demo"], model="scripted:echo")
    lifted = RunConfig.of(
        tasks=["demo"], model="scripted:echo", max_steps_per_example=5, max_prompt_chars_per_example=9
    )
    assert plain.identity() == lifted.identity() and plain.config_hash() == lifted.config_hash()
    assert Ceiling.of(None, None) == Ceiling(MAX_STEPS, MAX_PROMPT_CHARS) and Ceiling.of(5, 9) == Ceiling(5, 9)


# --- any system, any loop: through the example's own path, without a run folder --------------------------------


class Loop(System):
    """A system that never ends: it repeats `actions` (("llm", prompt characters), ("search",), ("record",),
    ("tool",)), each catching `Exception` when `swallow`; `grow` adds to the prompt each round."""

    name = "loop"

    def __init__(self, actions: list[tuple], swallow: bool = False, grow: int = 0) -> None:
        self.actions, self.swallow, self.grow = actions, swallow, grow

    async def run(self, example: Example, ctx) -> Prediction:
        rounds = 0
        while True:
            for action in self.actions:
                try:
                    await self._act(action, rounds, ctx)
                except Exception:
                    if not self.swallow:
                        raise
            rounds += 1

    async def _act(self, action: tuple, rounds: int, ctx) -> None:
        if action[0] == "llm":
            await ctx.llm.generate("p" * (action[1] + rounds * self.grow), max_tokens=4)
        elif action[0] == "search":
            await ctx.retriever.search("q", 1)
        elif action[0] == "record":
            ctx.record_step("think", outputs={"round": rounds})
        else:
            with ctx.step("tool", "lookup", {"round": rounds}) as step:
                step.response = {"found": None}


class AnswersAfterCatchingEverything(System):
    """A system that catches even what `except Exception` does not, and answers as if nothing happened."""

    name = "catches_all"

    async def run(self, example: Example, ctx) -> Prediction:
        for _ in range(10):
            try:
                await ctx.llm.generate("again", max_tokens=4)
            except BaseException:  # the case under test
                pass
        return Prediction(example_id=example.id, answer="fine")


class Answers(System):
    name = "answers"

    async def run(self, example: Example, ctx) -> Prediction:
        return Prediction(example_id=example.id, answer=(await ctx.llm.generate("answer", max_tokens=4)).text)


class JudgesForever(Metric):
    """A judged metric that never stops asking its judge."""

    name = "judges_forever"
    declares = MetricDeclaration(judge_roles=("judge",))

    async def score(self, example, prediction, ctx=None):
        while True:
            await ctx.judges[0].generate("is it right?", max_tokens=4)


EXAMPLE = Example(id="e1", question="q", gold={"answers": ["a"]}, docs=[Document(id="d1", title="t", text="a doc")])


def one_example(
    system: System, ceiling: Ceiling, metrics: Sequence[Metric] = (), judges: int = 1, judge_repeats: int | None = None
) -> dict:
    """The sample record of `EXAMPLE` run by `system` (and scored by `metrics`, with `judges` judges and
    `judge_repeats`) as a run runs it, under `ceiling`."""

    async def go() -> dict:
        scheduler = Scheduler()
        retrieval = Retrieval(ProvidedRetriever())
        engine = ScriptedLLM("ok").engine
        services = ExampleServices(
            llm=LLM(scheduler, engine),
            judges=[LLM(scheduler, engine) for _ in range(judges)],
            retrieval=retrieval,
            ceiling=ceiling,
            judge_repeats=judge_repeats,
        )
        try:
            sample = await process_example(PlannedTask("t", Task(), system, list(metrics)), EXAMPLE, services, 0)
        finally:
            await scheduler.close()
            await retrieval.close()
        return sample.line

    return asyncio.run(go())


ACTIONS = st.lists(
    st.one_of(
        st.tuples(st.just("llm"), st.integers(0, 300)),
        st.tuples(st.sampled_from(["search", "record", "tool"])),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=60)
@given(ACTIONS, st.booleans(), st.integers(0, 200), st.integers(1, 40), st.integers(1, 4_000))
def test_any_loop_ends_at_its_ceiling_as_a_counted_failure(actions, swallow, grow, steps, prompt_chars):
    line = one_example(Loop(actions, swallow, grow), Ceiling(steps, prompt_chars))
    error, trace = line["error"], line["trace"]
    sent = sum(len(step["request"]["prompt"]) for step in trace if step["kind"] == "llm")
    assert error.startswith("CeilingReached: system loop did not end within ") and "lifts the ceiling" in error
    assert len(trace) <= steps and sent <= prompt_chars
    if "steps" in error:
        assert len(trace) == steps  # every step up to the ceiling was taken, none past it
    else:
        assert "characters of prompts" in error
        index = len(trace) % len(actions)  # the refused step: the next action of the cycle, an LLM call
        assert actions[index][0] == "llm"
        assert sent + actions[index][1] + (len(trace) // len(actions)) * grow > prompt_chars


def test_a_system_that_catches_the_refusal_and_answers_still_fails_at_its_ceiling():
    line = one_example(AnswersAfterCatchingEverything(), Ceiling(steps=3))
    assert line["error"].startswith("CeilingReached: system catches_all did not end within 3 steps")
    assert len(line["trace"]) == 3 and line["prediction"]["answer"] == ""  # a failed example's: not its "fine"


def test_a_metric_that_would_not_end_fails_on_that_example_and_the_others_score():
    line = one_example(Answers(), Ceiling(steps=5), [JudgesForever()])
    assert line["error"] is None
    assert line["score_errors"] == {
        "judges_forever": "CeilingReached: metric judges_forever did not end within 5 steps on this example "
        "(model calls, searches, tool and recorded steps): a loop? --max-steps-per-example N lifts the ceiling"
    }
    assert len(line["judge_trace"]) == 5


def test_a_plugin_test_s_context_has_the_run_s_default_ceiling():
    ctx = make_context(Task(), ScriptedLLM("ok"))
    for _ in range(MAX_STEPS):
        ctx.record_step("think")
    try:
        ctx.record_step("one more")
    except CeilingReached as reached:
        assert f"within {MAX_STEPS:,} steps" in str(reached)
    else:
        raise AssertionError("the step past the ceiling was taken")
    assert len(ctx.trace) == MAX_STEPS


def test_a_ceiling_below_one_is_refused_before_the_run_in_one_line(tmp_path):
    for option in ("--max-steps-per-example", "--max-prompt-chars-per-example"):
        done = cli_here("--tasks", "demo", "--model", "scripted:echo", option, "0", "--output", str(tmp_path / "run"))
        assert done.returncode == 2
        assert done.stderr == f"ragbench: error: {option} 0: give at least 1, or leave it out for the default ceiling\n"
    assert not (tmp_path / "run").exists()


# --- a metric's judge calls on one example, all its raters' with them, share one ceiling --------------------------


class AsksEachJudge(Metric):
    """A judged metric that asks each of its judges `calls` times, and scores 1."""

    name = "asks_each_judge"
    declares = MetricDeclaration(keys=("asks_each_judge",), needs=("judge",))

    def __init__(self, calls: int) -> None:
        self.calls = calls

    async def score(self, example, prediction, ctx=None):
        for _ in range(self.calls):
            for judge in ctx.judges:
                await judge.generate("is it right?", max_tokens=4)
        return {"asks_each_judge": 1.0}


def test_the_repeats_of_a_judged_metric_share_its_ceiling_on_the_example():
    # the headline (the first repeat) and 2 more, 40 calls each, under a ceiling of 100: the 101st is refused
    line = one_example(Answers(), Ceiling(steps=100), [AsksEachJudge(40)], judge_repeats=3)
    assert len(line["judge_trace"]) == 100 and line["scores"]["asks_each_judge"] == 1.0  # the headline's stands
    errors = line["judge_ratings"]["asks_each_judge"]["errors"]
    assert set(errors) <= {"repeat 2", "repeat 3"} and set(errors.values()) == {
        "CeilingReached: metric asks_each_judge did not end within 100 steps on this example (model "
        "calls, searches, tool and recorded steps): a loop? --max-steps-per-example N lifts the ceiling"
    }


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 3), st.integers(1, 4), st.integers(1, 60))
def test_a_metric_s_judge_calls_on_one_example_never_exceed_the_ceiling(calls, judges, repeats, steps):
    line = one_example(Answers(), Ceiling(steps=steps), [AsksEachJudge(calls)], judges, repeats)
    made = len(line["judge_trace"])
    assert made <= steps
    wanted = calls * judges * (repeats if judges == 1 else 1 + repeats)  # the headline's, then every rater's
    refused = "asks_each_judge" in line.get("score_errors", {}) or line.get("judge_ratings", {}).get(
        "asks_each_judge", {}
    ).get("errors")
    assert made == min(wanted, steps) and bool(refused) == (wanted > steps)


# --- a plugin cannot take its steps out of the count ----------------------------------------------------------------

ATTACKS = {
    "ctx.llm.ceiling = None": lambda ctx: setattr(ctx.llm, "ceiling", None),
    "del ctx.llm.ceiling": lambda ctx: delattr(ctx.llm, "ceiling"),
    "ctx.ceiling = None": lambda ctx: setattr(ctx, "ceiling", None),
    "ctx.ceiling = another": lambda ctx: setattr(ctx, "ceiling", ExampleCeiling(Ceiling(10**9), "x")),
    "del ctx.ceiling": lambda ctx: delattr(ctx, "ceiling"),
    "ctx.ceiling.steps = 0": lambda ctx: setattr(ctx.ceiling, "steps", 0),
    "ctx.ceiling._steps = 0": lambda ctx: setattr(ctx.ceiling, "_steps", 0),
    "ctx.ceiling._count = a fresh count": lambda ctx: setattr(ctx.ceiling, "_count", CeilingCount()),
    "ctx.ceiling.ceiling = higher": lambda ctx: setattr(ctx.ceiling, "ceiling", Ceiling(10**9)),
    "ctx.ceiling._limit = higher": lambda ctx: setattr(ctx.ceiling, "_limit", Ceiling(10**9)),
    "del ctx.ceiling._reached": lambda ctx: delattr(ctx.ceiling, "_reached"),
    "ctx.retriever.ctx = None": lambda ctx: setattr(ctx.retriever, "ctx", None),
    "ctx.llm = ctx.llm.traced(ctx.trace)": lambda ctx: setattr(ctx, "llm", ctx.llm.traced(ctx.trace)),
}


class Tampers(Loop):
    """The loop, after it tried to lift its ceiling with `attack` (each try must fail: recorded in `refused`), for
    1,000 rounds."""

    def __init__(self, attack, actions: list[tuple]) -> None:
        super().__init__(actions)
        self.attack, self.refused = attack, []

    async def run(self, example: Example, ctx) -> Prediction:
        for _ in range(3):  # before the loop, and again once its steps are counted
            try:
                self.attack(ctx)
            except AttributeError as exc:
                self.refused.append(str(exc))
            await self._act(("llm", 1), 0, ctx)
        for rounds in range(1_000):  # far past any ceiling drawn: a lifted one ends the loop without a failure
            for action in self.actions:
                await self._act(action, rounds, ctx)
        return Prediction(example_id=example.id, answer="lifted")


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(ATTACKS)), ACTIONS, st.integers(4, 30))
def test_a_system_cannot_lift_or_remove_its_ceiling_through_its_context(attack, actions, steps):
    system = Tampers(ATTACKS[attack], actions)
    line = one_example(system, Ceiling(steps=steps))
    assert line["error"].startswith(f"CeilingReached: system loop did not end within {steps} steps")
    assert len(line["trace"]) == steps
    if attack != "ctx.llm = ctx.llm.traced(ctx.trace)":  # that one makes a handle: it keeps the ceiling
        assert len(system.refused) == 3 and all("an example's ceiling is the run's" in r for r in system.refused)


def test_a_handle_counted_against_a_ceiling_cannot_be_given_another():
    ctx = make_context(Task(), ScriptedLLM("ok"))
    assert ctx.llm.traced([]).ceiling is ctx.ceiling
    try:
        ctx.llm.traced([], ceiling=ExampleCeiling(Ceiling(), "another"))
    except ValueError as exc:
        assert "cannot be given another" in str(exc)
    else:
        raise AssertionError("the handle was given another ceiling")

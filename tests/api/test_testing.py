"""ragbench.testing: a scripted LLM in each of its forms, a context a system's `run` is awaited with, a
whole run in one call with typed samples (classes registered for the run, the reporting hooks given
SampleRecords), and the trace assertions."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

import ragbench.testing
from ragbench.api import (
    ConfigError,
    Document,
    EngineError,
    Example,
    Metric,
    MetricDeclaration,
    Prediction,
    SampleRecord,
    System,
    SystemDeclaration,
    Task,
    TaskPrompting,
    TaskScoring,
)
from ragbench.api.run import RunResources
from ragbench.testing import (
    PreflightError,
    ReplayLLM,
    ScriptedLLM,
    assert_steps,
    make_context,
    preflight,
    prompts,
    run_eval,
    run_examples,
)
from support import paths

DOCS = [Document("1", "A", "alpha"), Document("2", "B", "beta"), Document("3", "C", "gamma")]


class Lookup(System):
    """Retrieves, asks the task's prompt, then asks a role model to check the answer."""

    name = "lookup"
    declares = SystemDeclaration(roles=("checker",))

    async def run(self, example, ctx):
        docs = await ctx.retriever.search(example.question, 2)
        answer = await ctx.llm.generate(ctx.task.prompting.answer_prompt(example, docs), step="answer", stop=["\n"])
        with ctx.group("check"):
            verdict = await ctx.model("checker").chat(
                [{"role": "user", "content": f"Check: {answer.text}"}], step="check"
            )
        return Prediction(example.id, answer=answer.text, docs=docs, extras={"verdict": verdict.text})

    def statistics(self, samples):
        return {
            "records": sorted({type(s).__name__ for s in samples}),
            "has_text": any(s.has_text for s in samples),
            "steps": [[f"{step.kind}:{step.name}" for step in s.trace] for s in samples],
            "verdicts": [s.extras["verdict"] for s in samples],
        }

    def format_adherence(self, samples):
        return [
            {
                "format": "one line",
                "followed": sum(1 for s in samples if "\n" not in s.answer),
                "of": len(samples),
                "fix": "none",
            }
        ]

    def report(self, samples, complete_data):
        return {"errors": [], "ids": [s.id for s in samples], "complete_data": complete_data}


class LettersPrompting(TaskPrompting):
    def build_prompt(self, example, docs=None, **options):
        return "".join(f"{d.text}\n" for d in docs or []) + f"Q: {example.question}"


class Letters(Task):
    name = "letters"
    scoring = TaskScoring(metrics=("match",))
    prompting = LettersPrompting()

    def examples(self):
        for i, letter in enumerate("abc"):
            yield Example(
                id=f"q{i}", question=f"Which letter is {letter}?", gold={"answers": [letter]}, docs=DOCS, index=i
            )


def example() -> Example:
    return next(Letters().examples())


async def test_a_system_runs_on_a_made_context_with_every_call_traced():
    ctx = make_context(Letters(), ScriptedLLM("a\nmore"), docs=DOCS, models={"checker": ScriptedLLM(["fine"])})
    prediction = await Lookup().run(example(), ctx)
    assert (prediction.answer, prediction.docs, prediction.extras) == ("a", DOCS[:2], {"verdict": "fine"})
    assert_steps(ctx, ["retrieval:retrieve", "llm:answer", "check"])
    assert prompts(ctx) == ["alpha\nbeta\nQ: Which letter is a?", [{"role": "user", "content": "Check: a"}]]
    assert ctx.trace[2].group == ["check"] and ctx.trace[0].response["ids"] == ["1", "2"]


def test_each_form_of_script_answers_as_documented():
    async def ask(llm, *prompts_):
        ctx = make_context(Letters(), llm)
        return [(await ctx.llm.generate(p)).text for p in prompts_]

    assert asyncio.run(ask(ScriptedLLM("same"), "x", "y")) == ["same", "same"]
    assert asyncio.run(ask(ScriptedLLM(["one", "two"]), "x", "y")) == ["one", "two"]
    assert asyncio.run(ask(ScriptedLLM({"b+": "bees", "": "other"}), "abbb", "c")) == ["bees", "other"]
    assert asyncio.run(ask(ScriptedLLM(lambda request: request.prompt.upper()), "x")) == ["X"]
    with pytest.raises(EngineError, match="all 1 scripted replies were used; one more call: 'y'"):
        asyncio.run(ask(ScriptedLLM(["one"]), "x", "y"))
    with pytest.raises(EngineError, match="no scripted rule matches: 'c'"):
        asyncio.run(ask(ScriptedLLM({"b": "bees"}), "c"))
    with pytest.raises(EngineError, match="this context has no LLM"):
        asyncio.run(ask(None, "x"))


def test_run_eval_registers_classes_and_returns_typed_samples_in_data_order():
    run = run_eval(
        Letters, Lookup, ScriptedLLM({"letter is b": "b", "": "a"}), role_models={"checker": ScriptedLLM("fine")}
    )
    assert run.complete and run.scores == {"letters": {"match": pytest.approx(2 / 3)}}
    samples = run.samples["letters"]
    assert [(s.id, s.answer, s.scores["match"]) for s in samples] == [
        ("q0", "a", 1.0),
        ("q1", "b", 1.0),
        ("q2", "a", 0.0),
    ]
    assert all(isinstance(s, SampleRecord) and s.has_text for s in samples) and samples[1].docs == DOCS[:2]
    assert_steps(samples[0], ["retrieval", "llm:answer", "llm:check"])
    assert samples[2].prompts[0] == "alpha\nbeta\nQ: Which letter is c?"
    assert run.results["config"]["role_models"] == {"checker": "scripted_llm:1"} and run.run_dir is None


def test_the_reporting_hooks_receive_sample_records_without_their_texts(tmp_path):
    run = run_eval(
        Letters,
        Lookup,
        ScriptedLLM("a"),
        role_models={"checker": ScriptedLLM("fine")},
        limit=2,
        output=tmp_path / "run",
    )
    stats = run.results["system_stats"]["letters"]
    assert stats == {
        "records": ["SampleRecord"],
        "has_text": False,
        "verdicts": ["fine", "fine"],
        "steps": [["retrieval:retrieve", "llm:answer", "llm:check"]] * 2,
    }
    assert run.results["system_reports"]["letters"] == {"errors": [], "ids": ["q0", "q1"], "complete_data": False}
    assert run.results["format_adherence"]["letters"][0]["followed"] == 2
    assert run.run_dir == tmp_path / "run" and (tmp_path / "run" / "results.json").is_file()


def test_run_eval_takes_names_data_and_options_as_the_command_line_does(tmp_path):
    data = tmp_path / "popqa.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": i, "question": f"Who is {i}?", "answers": [f"p{i}"], "ctxs": []}) + "\n" for i in range(3)
        )
    )
    run = run_eval(
        "popqa",
        "closed_book",
        ScriptedLLM({"Who is 1": "p1", "": "?"}),
        metrics=["match", "+em"],
        data=data,
        limit=2,
        seed=7,
    )
    assert run.scores["popqa"] == {"match": 0.5, "em": 0.5} and run.results["config"]["seed"] == 7
    with pytest.raises(ConfigError, match="unknown system 'no_such_system'"):
        run_eval("popqa", "no_such_system", data=data)
    with pytest.raises(ConfigError, match="needs a single task"):
        run_eval(["popqa", "demo"], data=data)


def test_run_eval_says_when_a_resumed_run_had_nothing_left_to_run(tmp_path):
    first = run_eval("demo", "closed_book", limit=2, output=tmp_path / "run")
    again = run_eval("demo", "closed_book", limit=2, output=tmp_path / "run", resume=True)
    assert not first.already_finished and again.already_finished and again.scores == first.scores


class NeedsANote(System):
    """A plugin whose own pre-flight check refuses a run without its `note` option, and warns about a short one."""

    name = "needs_a_note"
    declares = SystemDeclaration(uses_llm=False)

    def __init__(self, note: str = "") -> None:
        self.note = note

    def preflight(self, check, task):
        if not self.note:
            check.problem("system needs_a_note: give --system-arg note=TEXT")
        elif len(self.note) < 3:
            check.warn(f"system needs_a_note: note {self.note!r} is short")

    async def run(self, example, ctx):
        return Prediction(example.id, answer=self.note)


def test_preflight_is_the_runs_pre_flight_alone_with_run_evals_arguments(tmp_path):
    with pytest.raises(PreflightError) as refused:
        preflight("demo", NeedsANote, output=tmp_path / "run")
    assert refused.value.problems == ["system needs_a_note: give --system-arg note=TEXT"]
    checked = preflight("demo", NeedsANote, system_args={"note": "ok"}, output=tmp_path / "run")
    assert checked.warnings == ["system needs_a_note: note 'ok' is short"] and checked.checked
    assert not (tmp_path / "run").exists()  # nothing written, no example run
    assert preflight("demo", NeedsANote, system_args={"note": "a long note"}).warnings == []


def test_assert_steps_names_what_differs():
    trace = make_context(Letters()).trace
    assert_steps(trace, [])
    record = SampleRecord.from_dict(
        {"id": "x", "trace": [{"kind": "llm", "name": "answer", "request": {"prompt": "p"}}]}
    )
    with pytest.raises(AssertionError, match=r"steps: expected \['retrieval'\], got \['llm:answer'\]"):
        assert_steps(record, ["retrieval"])


async def test_run_examples_batches_the_calls_of_the_examples_in_flight_together():
    answers, checker = ScriptedLLM({"letter is b": "b", "": "a"}, batch_size=2), ScriptedLLM("fine")
    samples = await run_examples(Lookup(), list(Letters().examples()), answers, Letters, models={"checker": checker})
    assert [(s.id, s.answer, s.extras) for s in samples] == [
        (f"q{i}", a, {"verdict": "fine"}) for i, a in enumerate("aba")
    ]
    assert answers.batch_sizes == [2, 1]  # at most batch_size calls of the examples in flight at once
    assert_steps(samples[1], ["retrieval", "llm:answer", "llm:check"]) and samples[1].gold_references == ["b"]
    assert [r.prompt for r in answers.requests] == [f"alpha\nbeta\nQ: Which letter is {x}?" for x in "abc"]


class Failing(System):
    name = "failing"

    async def run(self, example, ctx):
        await ctx.llm.generate("first", step="answer")
        raise KeyError("docs")


async def test_run_examples_records_a_raising_system_as_a_run_does():
    [sample] = await run_examples(Failing(), [example()], ScriptedLLM("x"), Letters)
    assert sample.error == "KeyError: 'docs'" and sample.scores == {}
    assert_steps(sample, ["llm:answer"])


def test_a_scripted_llm_keeps_every_request_and_the_batches_it_was_given():
    llm = ScriptedLLM("a")
    ctx = make_context(Letters(), llm)
    asyncio.run(ctx.llm.generate("one")), asyncio.run(ctx.llm.chat([{"role": "user", "content": "two"}]))
    assert [(r.prompt, r.messages) for r in llm.requests] == [("one", None), (None, (("user", "two"),))]
    assert llm.batch_sizes == [1, 1]
    run_llm = ScriptedLLM("a", batch_size=2)
    run_eval(Letters, "closed_book", run_llm)
    assert run_llm.batch_sizes == [2, 1] and len(run_llm.requests) == 3


def test_a_replay_llm_answers_from_a_recording_and_fails_on_a_call_it_does_not_hold(tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"prompt": "Q: one", "response": "recorded"}) + "\n")
    ctx = make_context(Letters(), ReplayLLM(calls))
    assert asyncio.run(ctx.llm.generate("Q: one")).text == "recorded"
    with pytest.raises(EngineError, match="Q: two"):
        asyncio.run(ctx.llm.generate("Q: two"))


def test_a_made_context_gives_a_metric_its_nli():
    class Entails:
        async def entails(self, premise, hypothesis):
            return int(hypothesis in premise)

    ctx = make_context(Letters, nli=Entails())
    assert asyncio.run(ctx.nli.entails("alpha beta", "beta")) == 1


def test_a_metric_asks_every_judge_or_one_per_role_and_is_told_what_to_pass_otherwise():
    class Averaged(Metric):
        name, declares = "averaged", MetricDeclaration(needs=("judge",))

    class Roles(Metric):
        name, declares = "roles", MetricDeclaration(needs=("judge",), judge_roles=("extractor", "checker"))

    first, second, third = (ScriptedLLM({"": word}) for word in ("one", "two", "three"))
    ctx = make_context(Letters, judges=[first, second])
    replies = asyncio.run(ctx.ask_judges(Averaged(), [{"role": "user", "content": "q"}]))
    assert [r.text for r in replies] == ["one", "two"] and assert_steps(ctx, ["llm:judge:averaged"] * 2) is None
    assert [j.text for j in asyncio.run(ctx.ask_judges(Roles(), [{"role": "user", "content": "q"}]))] == ["one", "two"]
    alone = make_context(Letters, judges=[first]).judges_for(Roles())
    assert [asyncio.run(j.generate("q")).text for j in alone] == ["one", "one"]  # the last judge takes the roles left
    with pytest.raises(ValueError, match=r"^metric roles asks one judge per role \(extractor, checker\): pass --judge"):
        make_context(Letters).judges_for(Roles())
    with pytest.raises(ValueError, match=r"^metric averaged asks an LLM judge: pass --judge ENGINE:MODEL$"):
        make_context(Letters).judges_for(Averaged())
    with pytest.raises(
        ValueError,
        match=r"asks at most 2 judge\(s\), one per role \(extractor, checker\), and "
        r"this run has 3 --judge$",
    ):
        make_context(Letters, judges=[first, second, third]).judges_for(Roles())


async def test_a_made_context_lends_the_resources_it_is_given_to_the_system():
    with RunResources() as resources:
        ctx = make_context(Letters(), resources=resources)
        worker_pid = await ctx.resources.workers.run(os.getpid)
    assert ctx.resources is resources and worker_pid != os.getpid()
    assert make_context(Letters()).resources is None


def test_the_testing_guide_documents_every_name_of_the_kit():
    guide = (paths.REPO / "docs" / "testing-plugins.md").read_text(encoding="utf-8")
    assert [name for name in ragbench.testing.__all__ if f"`{name}" not in guide] == []

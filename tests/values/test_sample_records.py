"""A sample record as an object (`ragbench.api.SampleRecord`): read back from the line a run writes, a bad record's
line included; without its texts it says so instead of answering with empty prompts. A reporting hook
written for dict records fails without costing the run its results."""

from __future__ import annotations

import json

import pytest

from conftest import write_jsonl
from ragbench.api import Document, Prediction, SampleRecord, Step, System
from ragbench.plugins.vanilla.system import Vanilla
from ragbench.testing import ScriptedLLM, run_eval


class Cites(System):
    """One call in a group of its own, and a prediction with every field a record keeps."""

    name = "cites"

    async def run(self, example, ctx):
        with ctx.group("g"):
            raw = (await ctx.llm.generate(example.question, step="answer")).text
        return Prediction(
            example.id,
            answer="A",
            raw_output=raw,
            citations=[[1]],
            docs=[Document("d", "T", "text")],
            extras={"mine": 1},
        )


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict:
    """The line a run writes for its fourth example (index 3)."""
    folder = tmp_path_factory.mktemp("records")
    rows = [{"id": f"e{i}", "question": "Q?", "answers": ["A"], "prop": "x", "pop": 7, "ctxs": []} for i in range(4)]
    data = write_jsonl(folder / "questions.jsonl", rows)
    run_eval("demo", Cites, ScriptedLLM("A.\n"), metrics=["em"], data=data, output=folder / "run", bootstrap_iters=0)
    return json.loads((folder / "run" / "samples" / "demo.jsonl").read_text().splitlines()[3])


def test_a_written_record_reads_back_field_by_field(written):
    record = SampleRecord.from_dict(written)
    assert (record.id, record.index, record.question, record.gold, record.meta) == (
        "e3",
        3,
        "Q?",
        {"answers": ["A"]},
        {"prop": "x", "pop": 7},
    )
    assert (record.answer, record.output, record.citations, record.docs) == (
        "A",
        "A.\n",
        [[1]],
        [Document("d", "T", "text")],
    )
    assert (record.extras, record.scores, record.error) == ({"mine": 1}, {"em": 1.0}, None)
    assert record.seconds == written["seconds"] > 0
    [step] = record.trace
    assert (step.kind, step.name, step.request["prompt"], step.response["texts"], step.group) == (
        "llm",
        "answer",
        "Q?",
        ["A.\n"],
        ["g"],
    )
    assert step.to_dict() == written["trace"][0]
    assert record.prompts == ["Q?"]


def test_a_bad_records_line_and_a_damaged_step_still_read():
    bad = SampleRecord.from_dict(
        {"id": None, "error": "bad record: x.jsonl:2: not JSON", "bad_record": True, "index": 1}
    )
    assert (bad.id, bad.bad_record, bad.error, bad.trace, bad.answer) == (
        None,
        True,
        "bad record: x.jsonl:2: not JSON",
        [],
        "",
    )
    damaged = SampleRecord.from_dict({"index": 0, "trace": [{"name": "odd", "response": None, "extra": 1}]})
    assert damaged.trace == [Step("", "odd", {}, group=[])] and "extra" not in vars(damaged.trace[0])


def test_the_reporting_view_says_its_texts_were_left_out(written):
    record = SampleRecord.from_dict(written, has_text=False)
    assert (record.answer, record.extras, record.docs, record.output) == ("A", {"mine": 1}, [], None)
    assert record.trace[0].prompt_tokens == written["trace"][0]["prompt_tokens"] > 0
    assert "prompt" not in record.trace[0].request
    with pytest.raises(ValueError, match="sample e3: this record was read without its texts"):
        record.prompts  # noqa: B018


class DictStatistics(Vanilla):
    """A system whose statistics hook still reads the dicts of samples/<task>.jsonl."""

    name = "dict_statistics"

    def statistics(self, samples):
        return {"answers": [s["prediction"]["answer"] for s in samples]}


class RaisingStatistics(Vanilla):
    """A system whose statistics hook raises."""

    name = "raising_statistics"

    def statistics(self, samples):
        raise TypeError("no figures")


def test_a_hook_that_fails_is_reported_and_the_run_keeps_its_scores():
    run = run_eval("demo", RaisingStatistics, "scripted:echo", limit=2)
    assert not run.complete and run.scores["demo"]["match"] is not None and "system_stats" not in run.results
    [error] = run.results["system_reports"]["demo"]["errors"]
    assert error == (
        "System.statistics of RaisingStatistics failed (TypeError: no figures); "
        "its records are ragbench.api.SampleRecord objects (docs/writing-plugins.md)"
    )


def test_a_hook_still_reading_dicts_fails_as_a_hook_and_the_run_keeps_its_scores():
    run = run_eval("demo", DictStatistics, "scripted:echo", limit=2)
    assert not run.complete and run.scores["demo"]["match"] is not None and "system_stats" not in run.results
    [error] = run.results["system_reports"]["demo"]["errors"]
    assert error == (
        "System.statistics of DictStatistics failed (TypeError: 'SampleRecord' object is not subscriptable); "
        "its records are ragbench.api.SampleRecord objects (docs/writing-plugins.md)"
    )

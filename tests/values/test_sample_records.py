"""A sample record as an object (ragbench._records): read back from the line a run writes, a bad record's
line included; without its texts it says so instead of answering with empty prompts. A reporting hook
written for dict records fails without costing the run its results."""

from __future__ import annotations

import pytest

from ragbench._records import SampleRecord, sample_line, step_from_dict
from ragbench._run.example import sample_record
from ragbench.api import Document, Example, Prediction, Step
from ragbench.plugins.vanilla.system import Vanilla
from ragbench.testing import run_eval


def written() -> dict:
    example = Example(id="e1", question="Q?", gold={"answers": ["A"]}, meta={"domain": "x"}, index=3)
    prediction = Prediction(
        "e1",
        answer="A",
        raw_output="A.\n",
        citations=[[1]],
        docs=[Document("d", "T", "text")],
        extras={"mine": 1},
        trace=[Step("llm", "answer", {"prompt": "Q?"}, {"texts": ["A.\n"]}, prompt_tokens=2, group=["g"])],
    )
    return sample_line(sample_record(example, prediction).read_only(scores={"em": 1.0}, seconds=0.5))


def test_a_written_record_reads_back_field_by_field():
    record = SampleRecord.from_dict(written())
    assert (record.id, record.index, record.question, record.gold, record.meta) == (
        "e1",
        3,
        "Q?",
        {"answers": ["A"]},
        {"domain": "x"},
    )
    assert (record.answer, record.output, record.citations, record.docs) == (
        "A",
        "A.\n",
        [[1]],
        [Document("d", "T", "text")],
    )
    assert (record.extras, record.scores, record.error, record.seconds) == ({"mine": 1}, {"em": 1.0}, None, 0.5)
    assert record.trace == [Step("llm", "answer", {"prompt": "Q?"}, {"texts": ["A.\n"]}, prompt_tokens=2, group=["g"])]
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
    assert step_from_dict({"name": "odd", "response": None, "extra": 1}) == Step("", "odd", {}, group=[])


def test_the_reporting_view_says_its_texts_were_left_out():
    record = SampleRecord.from_dict(written(), has_text=False)
    assert (record.answer, record.extras, record.docs, record.output) == ("A", {"mine": 1}, [], None)
    assert record.trace[0].prompt_tokens == 2 and "prompt" not in record.trace[0].request
    with pytest.raises(ValueError, match="sample e1: this record was read without its texts"):
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

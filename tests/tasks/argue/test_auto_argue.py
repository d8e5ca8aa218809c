"""The `argue_report` task and `auto_argue` metric, built from Auto-ARGUE's paper (arXiv 2509.26184) and the formats
of its public assets (argue-viz: report requests, v3 nugget banks, report JSONL), NOT against its package (which
could not be had here): report files scored end to end against a fake judge on 127.0.0.1 answering from the prompt
(tests/support/argue_fake_judge.py), every number worked out by hand from the sample data (tests/data/argue, written for
ragbench); the nugget and report readers and the judge replies' reading."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest

from conftest import TEST_DATA
from ragbench.api import ConfigError, Document, Example, Prediction
from ragbench.metrics.auto_argue.metric import KEYS, AutoArgue
from ragbench.tasks.argue.data import report_record
from ragbench.tasks.argue.nuggets import BankError, read_bank
from ragbench.tasks.argue.task import ArgueReport
from ragbench.testing import ScriptedLLM, make_context
from support.argue_fake_judge import fake_argue_judge
from support.helpers import cli_here, samples, score_args

DATA = TEST_DATA / "argue"
# worked out from the sample reports (module docstring of argue_fake_judge.py for the judge's answers)
R1 = {
    "argue_sentence_support": 1 / 3,  # 3 sentences cite or need a citation; 1 is attested by each citation
    "argue_nugget_coverage": 2 / 3,  # 412 (OR), more fish AND fewer boats; not the sandbanks
    "argue_nugget_coverage_weighted": 3 / 4,  # vital 2 + okay 1 of 2 + 1 + 1
    "argue_f1": 4 / 9,
    "argue_f1_weighted": 2 * (1 / 3) * (3 / 4) / (1 / 3 + 3 / 4),
    "argue_citation_support": 2 / 3,  # d1 and d2 attest, d5 does not
    "argue_citation_relevance": 2 / 3,  # d5 attests no nugget answer
}
R2 = dict.fromkeys(KEYS, 0.0) | {
    "argue_nugget_coverage": 1.0,
    "argue_nugget_coverage_weighted": 1.0,
    "argue_citation_relevance": 1.0,
}


@pytest.fixture
def judge():
    fake = fake_argue_judge()
    yield fake
    fake.stop()


def score(out: Path, judge, *extra: str) -> dict:
    done = cli_here(
        *score_args("argue_report", DATA, DATA / "reports"),
        *("--judge", "openai:fake-judge", "--judge-arg", f"0.base_url={judge.base_url}", "--output", str(out)),
        *extra,
    )
    assert done.returncode == 0, done.stderr
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_report_files_are_scored_as_the_paper_describes(tmp_path: Path, judge):
    out = tmp_path / "run"
    results = score(out, judge)
    scored = {line["id"]: line["scores"] for line in samples(out, "argue_report")}
    assert scored.keys() == {"r1", "r2"}
    for got, expected in ((scored["r1"], R1), (scored["r2"], R2)):
        assert got == pytest.approx(expected, rel=1e-12)
    assert results["results"]["argue_report"]["argue_sentence_support"] == pytest.approx(1 / 6)
    counted = results["counted"]["argue_report"]["auto_argue"]
    assert {name: entry["count"] for name, entry in counted.items()} == {"argue_over_limit": 1}
    # r1: 2 uncited sentences asked whether negative and whether they need a citation, the one that does whether it
    # repeats an earlier one; 3 attestations; answers: 412 and about 400 (d1), then about 400, more fish, fewer boats
    # (d2); r2, its second sentence past the 300-character limit: 1 attestation, 1,200 and felt safer once
    assert len(judge.requests) == 2 * 2 + 1 + 3 + 5 + 1 + 2


def test_the_judged_numbers_carry_repeats_agreement_and_cost(tmp_path: Path, judge):
    results = score(tmp_path / "run", judge, "--judge-repeats", "2")
    agreement = results["judge_agreement"]["argue_report"]["argue_nugget_coverage"]
    assert agreement["measured"] and agreement["percent_agreement"] == 1.0
    assert results["judge_cost"]["argue_report"]["auto_argue"]["calls"] == 2 * 16


def test_a_report_line_becomes_an_answer_citing_its_documents_in_order():
    docs = {"a": {"id": "a", "title": "A", "text": "Text of a."}}
    line = {
        "metadata": {"topic_id": "t"},
        "responses": [{"text": "One.", "citations": {"b": 1.0, "a": 0.5}}, {"text": "Two", "citations": ["a"]}],
    }
    record = report_record(line, docs)
    assert record["output"] == "One [1][2]. Two [2]"
    assert record["docs"] == [{"id": "b", "title": "", "text": ""}, docs["a"]]
    with pytest.raises(ValueError, match="topic_id"):
        report_record({"responses": []}, docs)


def test_nugget_banks_drop_answers_without_documents_and_refuse_what_is_not_v3():
    query, nuggets = read_bank(json.loads((DATA / "nuggets" / "nuggets_r1.v3.json").read_text(encoding="utf-8")))
    assert query == "r1" and [len(n["answers"]) for n in nuggets] == [2, 2, 1]
    assert [(n["aggregator"], n["importance"]) for n in nuggets] == [("OR", "vital"), ("AND", "okay"), ("OR", None)]
    for bank, message in (
        ([], "nugget_bank"),
        ({"nugget_bank": {"q": {"answers": {}, "aggregator_type": "XOR"}}}, "neither OR nor AND"),
        ({"nugget_bank": {"q": {"answers": {}, "importance": "high"}}}, "neither vital nor okay"),
        ({"nugget_bank": {"q": {"answers": [{"answer": "a", "references": [{"id": 1}]}]}}}, "doc_id"),
    ):
        with pytest.raises(BankError, match=message):
            read_bank(bank)


def test_a_request_without_nuggets_is_a_bad_record_and_a_broken_bank_one_line(tmp_path: Path):
    (tmp_path / "nuggets").mkdir()
    (tmp_path / "requests.jsonl").write_text((DATA / "requests.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    bank = (DATA / "nuggets" / "nuggets_r1.v3.json").read_text(encoding="utf-8")
    (tmp_path / "nuggets" / "r1.json").write_text(bank, encoding="utf-8")
    found = list(ArgueReport(tmp_path).examples())
    assert [e.id for e in found if isinstance(e, Example)] == ["r1"]
    assert "request r2 has no nugget bank" in str(found[1])
    (tmp_path / "nuggets" / "r2.json").write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"r2.json:1:2: not valid JSON .*give a v3 nugget bank"):
        list(ArgueReport(tmp_path).examples())


def one_nugget(aggregator: str) -> Example:
    answers = [{"answer": "red", "docs": ["d"]}, {"answer": "blue", "docs": ["d"]}]
    nugget = {"question": "Which colours?", "answers": answers, "aggregator": aggregator, "importance": None}
    return Example(id="x", question="q", gold={"argue_nuggets": [nugget]}, meta={})


def scored(example: Example, answer: str, replies: list[str], docs: list[Document]) -> tuple[dict, Counter]:
    counted: Counter = Counter()
    ctx = make_context("demo", judges=[ScriptedLLM(replies)])
    ctx.count = lambda name: counted.update([name])
    values = asyncio.run(AutoArgue().score(example, Prediction("x", answer=answer, docs=docs), ctx))
    return values, counted


@pytest.mark.parametrize(("aggregator", "coverage"), [("OR", 1.0), ("AND", 0.0)])
def test_an_and_nugget_needs_every_answer_an_or_nugget_one(aggregator, coverage):
    doc = [Document(id="d", title="", text="It is red and blue.")]
    values, _ = scored(one_nugget(aggregator), "It is red [1].", ["YES", "YES", "NO"], doc)
    assert values["argue_nugget_coverage"] == coverage and values["argue_sentence_support"] == 1.0


def test_a_reply_without_yes_or_no_is_counted_and_read_as_no_and_an_unknown_citation_too():
    doc = [Document(id="d", title="", text="It is red.")]
    values, counted = scored(one_nugget("OR"), "It is red [1][4].", ["Perhaps.", "NO", "NO"], doc)
    assert values["argue_citation_support"] == 0.0 and values["argue_citation_relevance"] == 0.5
    assert counted == Counter(argue_unparsed=1, argue_unknown_citation=1)

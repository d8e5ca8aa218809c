"""The rules of ARGUE's sentence flow that `auto_argue` takes from Auto-ARGUE's README (negative assertions, the first
instance of an uncited claim), the report cut at its request's character limit, the judge asked few-shot, and
several judges each judging alone: report files scored with `ragbench score` against the scripted fake judge
(tests/support/argue_fake_judge.py), and reports of any sentence and citation layout through `make_context`."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragbench.api import Document, Example, Metric, Prediction, Task
from ragbench.testing import ScriptedLLM, installed_registry, make_context
from support.argue_fake_judge import answer
from support.helpers import cli_here, samples, score_args

JUDGE = "scripted:support.argue_fake_judge:answer"
SURVEY = "The survey counted 412 harbour seals on the estuary."
DIP = "The cause of the 2019 dip is not known."
DOCS = {
    "d1": "The 2024 survey counted 412 harbour seals on the estuary.",
    "d2": "Counters say the cause of the 2019 dip is not known.",
}
NUGGETS = {  # question -> (answer, the document attesting it)
    "How many seals were counted?": ("412", "d1"),
    "Is the cause of the 2019 dip known?": ("cause of the 2019 dip is not known", "d2"),
}


def data_folder(tmp_path: Path, responses: list[dict], limit: int = 2000) -> Path:
    """An ARGUE data folder of one request (its nuggets NUGGETS, its documents DOCS) and one report of `responses`."""
    data = tmp_path / "data"
    (data / "nuggets").mkdir(parents=True)
    (data / "reports").mkdir()
    request = {"request_id": "q", "title": "Seals", "background": "", "problem_statement": "Seal numbers?"}
    (data / "requests.jsonl").write_text(json.dumps(request | {"limit": limit}) + "\n", encoding="utf-8")
    bank = {
        question: {"question": question, "answers": {text: {"answer": text, "references": [{"doc_id": doc}]}}}
        for question, (text, doc) in NUGGETS.items()
    }
    (data / "nuggets" / "q.json").write_text(json.dumps({"query_id": "q", "nugget_bank": bank}), encoding="utf-8")
    docs = "".join(json.dumps({"id": doc, "title": "", "text": text}) + "\n" for doc, text in DOCS.items())
    (data / "docs.jsonl").write_text(docs, encoding="utf-8")
    report = {"metadata": {"topic_id": "q", "run_id": "t"}, "responses": responses}
    (data / "reports" / "run.jsonl").write_text(json.dumps(report) + "\n", encoding="utf-8")
    return data


def scored(tmp_path: Path, responses: list[dict], *args: str, limit: int = 2000) -> tuple[dict, dict, dict]:
    """The report's scores, what was counted ({name: count}) and its sample line; `args`: more of the command line
    (default: the fake judge); the run in tmp_path/run."""
    data, out = data_folder(tmp_path, responses, limit), tmp_path / "run"
    judging = args or ("--judge", JUDGE)
    done = cli_here(*score_args("argue_report", data, data / "reports"), *judging, "--output", str(out))
    assert done.returncode == 0, done.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    counted = results.get("counted", {}).get("argue_report", {}).get("auto_argue", {})
    [sample] = samples(out, "argue_report")
    return sample["scores"], {name: entry["count"] for name, entry in counted.items()}, sample


def cited(text: str, *docs: str) -> dict:
    return {"text": text, "citations": list(docs)}


@pytest.mark.parametrize(
    ("negative", "support"),
    [(DIP, 1.0), ("There is no evidence that seals left the estuary.", 0.5)],
    ids=["a nugget confirms it", "no nugget does"],
)
def test_an_uncited_negative_assertion_is_rewarded_where_a_nugget_confirms_it_and_penalised_otherwise(
    tmp_path: Path, negative: str, support: float
):
    scores, counted, _ = scored(tmp_path, [cited(SURVEY, "d1"), cited(negative)])
    assert scores["argue_sentence_support"] == support  # the cited sentence is attested by d1
    assert scores["argue_nugget_coverage"] == 0.5  # a negative assertion answers no nugget: 412 only
    assert counted == {"argue_negative_assertion": 1}


def test_an_uncited_claim_is_penalised_at_its_first_instance_only(tmp_path: Path):
    rise = "Numbers rose by 122 seals in five years."
    responses = [cited(SURVEY, "d1"), cited("The survey counted 412 harbour seals."), cited(rise), cited(rise)]
    scores, counted, _ = scored(tmp_path, responses)
    # the survey repeated uncited (stated, cited, before) and the second rise are ignored; the first rise penalised
    assert scores["argue_sentence_support"] == 0.5
    assert counted == {"argue_repeated_claim": 2}


@pytest.mark.parametrize(("spare", "coverage"), [(0, 1.0), (-1, 0.5)], ids=["fits exactly", "one character over"])
def test_a_report_is_cut_to_the_whole_sentences_within_its_character_limit(tmp_path: Path, spare: int, coverage: float):
    limit = len(f"{SURVEY} {DIP}") + spare  # the sentences' texts and the space between, citations not counted
    scores, counted, sample = scored(tmp_path, [cited(SURVEY, "d1"), cited(DIP, "d2")], limit=limit)
    assert scores["argue_nugget_coverage"] == coverage  # the dip sentence, when kept, answers the second nugget
    assert counted == ({} if spare == 0 else {"argue_over_limit": 1})
    # asked per sentence kept: an attestation and its document's answer
    assert len(sample["judge_trace"]) == (4 if spare == 0 else 2)


def test_every_judgment_is_asked_after_worked_examples_of_both_verdicts(tmp_path: Path):
    rise = "Numbers rose by 122 seals in five years."
    _, _, sample = scored(tmp_path, [cited(SURVEY, "d1"), cited(DIP), cited(rise), cited(SURVEY)])
    questions = set()
    for step in sample["judge_trace"]:
        *examples, question = step["request"]["messages"][1:]
        assert [m["role"] for m in examples] == ["user", "assistant"] * 2 and question["role"] == "user"
        assert sorted(m["content"] for m in examples[1::2]) == ["NO", "YES"]
        asked = question["content"].rsplit("\n", 1)[-1]  # the question, after what it is asked of
        assert all(m["content"].rsplit("\n", 1)[-1] == asked for m in examples[::2])
        questions.add(asked)
    # attestation, answers, negative assertion, its confirmation, needs a citation, repeats an earlier sentence
    assert len(questions) == 6


def test_several_judges_each_judge_the_report_alone_and_every_key_is_their_mean(tmp_path: Path):
    judges = ("--judge", JUDGE, "--judge", "scripted:support.argue_fake_judge:contrary", "--judge-repeats", "1")
    scores, _, _ = scored(tmp_path, [cited(SURVEY, "d1"), cited(DIP)], *judges)
    # the fake: both sentences rewarded, 412 answered; the contrary judge: the cited one penalised, the other
    # neither negative nor needing a citation, nothing answered
    assert scores["argue_sentence_support"] == (1.0 + 0.0) / 2
    assert scores["argue_nugget_coverage"] == (0.5 + 0.0) / 2
    results = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    agreement = results["judge_agreement"]["argue_report"]["argue_sentence_support"]
    assert agreement["measured"] and agreement["raters"] == ["judge 1", "judge 2"]


# Reports of any layout: sentences of a pool (some with a number, so needing a citation; one a negative assertion),
# each citing any of three documents or none.
POOL = (
    SURVEY,
    DIP,
    "Seal watching is a popular pastime.",
    "Numbers rose by 122 seals in five years.",
    "There is no evidence that seals left the estuary.",
    "Counters met 12 times in the spring.",
)
LAYOUT = st.lists(st.tuples(st.sampled_from(POOL), st.sets(st.integers(1, 3), max_size=2)), min_size=1, max_size=6)


@functools.cache
def components() -> tuple[Metric, Task]:
    registry = installed_registry()
    return registry.load("metrics", "auto_argue")(), registry.load("tasks", "argue_report")()


def judged(layout: list[tuple[str, set[int]]], limit: int | None = None) -> tuple[dict, int]:
    """The scores of a report of `layout` and the number of judge calls made."""
    metric, task = components()
    nuggets = [
        {"question": q, "answers": [{"answer": a, "docs": [doc]}], "aggregator": "OR", "importance": None}
        for q, (a, doc) in NUGGETS.items()
    ]
    example = Example(id="q", question="Seal numbers?", gold={"argue_nuggets": nuggets}, meta={"limit": limit})
    docs = [Document(id=doc, title="", text=text) for doc, text in [*DOCS.items(), ("d3", "Unrelated.")]]
    report = " ".join(text[:-1] + "".join(f" [{n}]" for n in sorted(numbers)) + "." for text, numbers in layout)
    judge = ScriptedLLM(answer)
    ctx = make_context(task, judges=[judge])
    scores = asyncio.run(metric.score(example, Prediction("q", answer=report, docs=docs), ctx))
    return scores, len(judge.requests)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=LAYOUT, repeated=st.data(), past_limit=LAYOUT)
def test_repeats_and_sentences_past_the_limit_change_nothing_whatever_the_layout(layout, repeated, past_limit):
    scores, _ = judged(layout)
    assert all(value is None or 0 <= value <= 1 for value in scores.values())
    # a claim already stated, repeated without a citation, is ignored (a negative assertion is always judged)
    text = repeated.draw(
        st.sampled_from([t for t, _ in layout if "not known" not in t and "no evidence" not in t] or [POOL[2]])
    )
    if any(t == text for t, _ in layout):
        assert judged([*layout, (text, set())])[0] == scores
    # sentences past the limit are neither judged nor scored
    limit = len(" ".join(text for text, _ in layout))
    assert judged([*layout, *past_limit], limit) == judged(layout, limit)

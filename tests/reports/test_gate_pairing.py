"""`ragbench gate` on run folders made by real (scripted) runs: failed examples counted, named and scored at the
key's worst value (the candidate's failures against it, the baseline's for it), each task's failed examples tested,
examples in one run only left out and named, and the runs it refuses to gate (other data under the same ids, other
judges of a judged key, a task the candidate did not run). A judged key's noise does not fail it, and where both runs
have human labels the judge's error against them is in the test. Any two runs' examples are each paired or left out,
once, and counted (a property over generated examples)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._errors import ConfigError
from ragbench._reports.gate.pairing import FAILED_KEY, Seen, _failures, _pair
from ragbench.testing import gate_runs
from support.gate_runs import DEMO, EVERY, QUESTIONS, demo_gate_run
from support.helpers import cli_here, run

ALL_RIGHT = dict.fromkeys(EVERY, True)
ID = [str(q["id"]) for q in QUESTIONS]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("gate_runs")
    return {
        "base": demo_gate_run(folder, "base", judged=ALL_RIGHT),
        "failing": demo_gate_run(folder, "failing", failing={1, 5, 9}, judged=ALL_RIGHT),
        "fewer": demo_gate_run(folder, "fewer", judged=ALL_RIGHT, limit=20),
        "judge_noise": demo_gate_run(folder, "judge_noise", judged={i: i not in {2, 7, 11} for i in EVERY}),
    }


def rows(report) -> dict[str, object]:
    return {row.metric: row for row in report.rows}


def test_the_candidates_failed_examples_are_counted_named_and_scored_worst(runs):
    report = gate_runs(runs["failing"], runs["base"])
    em = rows(report)["em"]
    assert em.paired.scored_worst.ids == {"failed in the candidate": [ID[1], ID[5], ID[9]]}
    assert em.n == 24 and em.baseline == 1.0 and em.candidate == pytest.approx(21 / 24)  # 0 for the three
    failed = rows(report)[FAILED_KEY]
    assert (failed.baseline, failed.candidate, failed.n) == (0.0, pytest.approx(3 / 24), 24)
    assert failed.p == pytest.approx(1 / 8)  # three failed in the candidate, none in the baseline: 0.5^3
    assert not report.regressions  # three of 24 is not significant


def test_the_baselines_failed_examples_are_the_candidates_gain(runs):
    report = gate_runs(runs["base"], runs["failing"])
    em = rows(report)["em"]
    assert em.paired.scored_worst.ids == {"failed in the baseline": [ID[1], ID[5], ID[9]]}
    assert em.delta == pytest.approx(3 / 24) and em.p == 1.0


def test_examples_in_one_run_only_are_left_out_and_named_not_failed(runs):
    report = gate_runs(runs["fewer"], runs["base"])
    em = rows(report)["em"]
    assert em.n == 20 and em.paired.left_out.ids == {"not among the candidate's examples": ID[20:]}
    assert rows(report)[FAILED_KEY].n == 20 and not report.regressions
    assert rows(gate_runs(runs["base"], runs["fewer"]))["em"].paired.left_out.ids == {"only in the candidate": ID[20:]}


def test_a_judges_noise_is_no_failure_while_a_fixed_threshold_fails_on_it(runs):
    """The same answers; the judge says "incorrect" of three right ones in the candidate's run."""
    report = gate_runs(runs["judge_noise"], runs["base"], thresholds={"llm_judge": 0.02})
    judged = rows(report)["llm_judge"]
    assert judged.delta == pytest.approx(-3 / 24) and judged.p == pytest.approx(1 / 8)
    assert judged.paired.judge is not None and not judged.paired.judge.against_humans
    assert not report.regressions and report.threshold_failures == [judged]
    assert rows(report)["em"].p == 1.0  # the answers did not change


def test_the_judges_error_against_human_labels_is_counted_where_both_runs_have_them(runs, tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": ID[i], "metric": "llm_judge", "label": 1}) + "\n" for i in range(12)))
    base = demo_gate_run(tmp_path, "base_labelled", judged=ALL_RIGHT, human_labels=str(labels))
    noisy = demo_gate_run(
        tmp_path, "noisy_labelled", judged={i: i not in {2, 7, 11} for i in EVERY}, human_labels=str(labels)
    )
    judged = rows(gate_runs(noisy, base))["llm_judge"]
    judge = judged.paired.judge
    assert judge is not None and judge.against_humans
    assert (judge.baseline_errors.n, judge.baseline_errors.mean) == (12, 0.0)
    assert (judge.candidate_errors.n, judge.candidate_errors.mean) == (12, pytest.approx(3 / 12))  # 2, 7, 11 labelled
    assert judged.test == "sign-flip + judge's error vs humans"
    assert judged.worse_by == pytest.approx(3 / 24 - 3 / 12)  # the judge's bias against the candidate corrected
    assert not judged.regression


def test_the_same_ids_holding_other_data_are_refused(runs, tmp_path):
    records = [json.loads(line) for line in DEMO.read_text().splitlines()]
    records[4]["question"] += " (edited)"
    edited = tmp_path / "demo_edited.jsonl"
    edited.write_text("".join(json.dumps(record) + "\n" for record in records))
    other = demo_gate_run(tmp_path, "edited", data={"demo": str(edited)})
    with pytest.raises(
        ConfigError, match=rf"demo: 1 example\(s\) of the same id hold other data in the two runs \({ID[4]}\)"
    ):
        gate_runs(other, runs["base"])


def test_a_judged_key_judged_by_another_judge_is_refused_and_can_be_left_out(runs, tmp_path):
    verdicts = json.loads((runs["base"].parent / "judge.json").read_text())
    (tmp_path / "other_judge.json").write_text(json.dumps(verdicts))
    model = runs["base"].parent / "base.json"
    run(
        tmp_path,
        name="other",
        tasks=["demo"],
        system="closed_book",
        model=f"scripted:{model}",
        metrics=["+llm_judge"],
        judges=[f"scripted:{tmp_path / 'other_judge.json'}"],
    )
    with pytest.raises(
        ConfigError, match=r"demo llm_judge, demo llm_judge_unparsed judged differently in the two runs"
    ):
        gate_runs(tmp_path / "other", runs["base"])
    report = gate_runs(tmp_path / "other", runs["base"], metrics=["em", "f1"])
    assert [row.metric for row in report.rows] == ["em", "f1", FAILED_KEY] and not report.regressions


def test_a_task_the_candidate_did_not_run_is_refused(runs, tmp_path):
    task = tmp_path / "other.yaml"
    task.write_text(
        (Path(DEMO).parents[1] / "demo.yaml")
        .read_text()
        .replace("task: demo", "task: gate_other")
        .replace("path: data/demo_qa.jsonl", f"path: {DEMO}")
    )
    shutil.copy(runs["base"].parent / "base.json", tmp_path / "model.json")
    run(
        tmp_path,
        name="other_task",
        tasks=[str(task)],
        system="closed_book",
        model=f"scripted:{tmp_path / 'model.json'}",
    )
    with pytest.raises(ConfigError, match=r"has no results for demo, which the baseline .* has; run the candidate on"):
        gate_runs(tmp_path / "other_task", runs["base"])


def test_keys_asked_for_must_be_gateable(runs):
    with pytest.raises(ConfigError, match=r"gate --metrics: nosuch is no key the baseline scores per example"):
        gate_runs(runs["base"], runs["base"], metrics=["em", "nosuch"])


def test_examples_a_candidate_never_finished_are_failed_in_it(runs, tmp_path):
    """A real loss: the candidate's samples file cut after 20 of its 24 lines, then rescored (its results.json counts
    the 4 lost records as never finished): the gate scores them as failed in the candidate, named."""
    shutil.copytree(runs["base"], tmp_path / "cut")
    samples = tmp_path / "cut" / "samples" / "demo.jsonl"
    samples.write_text("".join(samples.read_text().splitlines(keepends=True)[:20]))
    rescored = cli_here("rescore", str(tmp_path / "cut"), "--output", str(tmp_path / "rescored"))
    assert json.loads((tmp_path / "rescored" / "results.json").read_text())["counts"]["demo"]["missing"] == 4, rescored
    report = gate_runs(tmp_path / "rescored", runs["base"])
    em = rows(report)["em"]
    assert em.paired.scored_worst.ids == {"not reached by the candidate": ID[20:]} and em.n == 24
    assert rows(report)[FAILED_KEY].candidate == pytest.approx(4 / 24)


seen = st.builds(
    Seen,
    failed=st.booleans(),
    bad=st.booleans(),
    scores=st.one_of(st.just({}), st.just({"k": None}), st.builds(lambda v: {"k": v}, st.floats(0, 1))),
    digest=st.none(),
)
examples = st.dictionaries(st.sampled_from([f"q{i}" for i in range(30)]), seen, max_size=30)


@given(examples, examples, st.booleans(), st.sampled_from([0.0, None]))
@settings(max_examples=200)
def test_every_example_is_paired_scored_worst_or_left_out_and_counted_once(ours, theirs, unreached, worst):
    """Any two runs' examples (values, none, failed metrics, failed examples, bad records, in either or both): each
    of the baseline's examples is a pair or left out, once, those scored worst among the pairs; each of the
    candidate's alone is left out; the failed-examples row counts them alike."""
    for paired in (_pair("t", "k", True, worst, ours, theirs, unreached), _failures("t", ours, theirs, unreached)):
        left_out = [i for ids in paired.left_out.ids.values() for i in ids]
        scored_worst = [i for ids in paired.scored_worst.ids.values() for i in ids]
        assert len(paired.baseline) == len(paired.candidate)
        assert len(paired.baseline) + len(left_out) == len(ours) + len(set(theirs) - set(ours))
        assert len(set(left_out)) == len(left_out) and set(scored_worst) <= set(ours) - set(left_out)
        assert not set(scored_worst) & set(left_out)
        assert sorted(set(theirs) - set(ours)) == sorted(paired.left_out.ids.get("only in the candidate", []))
        if worst is None:
            assert not scored_worst  # no worst value: nothing is scored as one

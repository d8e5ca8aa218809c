"""`ragbench rescore RUN --judge B`: the judge-swap report of every judged key against the run's own judge
(results.json `judge_swap`, report.md, the console), and `compare` naming a judge difference as not like for like."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from test_rescore import popqa_run

from ragbench._reports.compare.comparison import compare_runs, load_run
from ragbench._reports.compare.full_report import markdown
from ragbench._reports.compare.like_for_like import judge_differences
from ragbench._statistics.paired_tests import paired_bootstrap
from ragbench._statistics.rater_agreement import agreement
from ragbench.testing import cli, installed_registry
from support.helpers import samples
from support.scoring_plugin import COIN_JUDGE, JUDGE, plugin_state  # noqa: F401 (plugin_state: an autouse fixture)


@pytest.fixture
def judged(tmp_path, popqa_records):
    """A finished run on popqa scored by match and judged by llm_judge with JUDGE (every answer "correct")."""
    popqa_run(tmp_path, popqa_records, ["match", "llm_judge"], judges=[JUDGE], bootstrap_iters=50)
    return tmp_path / "run"


def test_rescore_with_another_judge_reports_agreement_and_the_headline_delta(judged, tmp_path):
    out = tmp_path / "swapped"
    result = CliRunner().invoke(
        cli,
        [
            "rescore",
            str(judged),
            "--judge",
            COIN_JUDGE,
            "--metric-arg",
            "llm_judge.temperature=1",
            "--output",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    before = [r["scores"]["llm_judge"] for r in samples(judged, "popqa")]
    after = [r["scores"]["llm_judge"] for r in samples(out, "popqa")]
    assert set(before) == {1.0} and 0 < after.count(1.0) < len(after)  # the coin judge disagrees on some
    swap = json.loads((out / "results.json").read_text())["judge_swap"]["popqa"]
    assert set(swap) == {"llm_judge", "llm_judge_unparsed"}  # every key of the judged metric
    entry = swap["llm_judge"]
    stats = agreement([[a, b] for a, b in zip(before, after, strict=True)])
    interval, _ = paired_bootstrap(np.array(before), np.array(after), 50, 0)
    assert entry == {
        "judge": JUDGE,
        "against": COIN_JUDGE,
        "examples": 6,
        "percent_agreement": stats["percent_agreement"],
        "cohen_kappa": 0.0,  # the run's judge said "correct" throughout: agreement no better than chance
        "krippendorff_alpha": stats["krippendorff_alpha"],
        "flipped": pytest.approx(1 - after.count(1.0) / 6),
        "before": 1.0,
        "after": pytest.approx(sum(after) / 6),
        "delta": pytest.approx(sum(after) / 6 - 1),
        "delta_ci95": list(interval),
    }
    line = f"popqa llm_judge: judge {COIN_JUDGE} vs the run's {JUDGE} on 6 example(s)"
    assert f"judge swap: {line}" in result.output
    assert "## Judge swap" in (out / "report.md").read_text() and line in (out / "report.md").read_text()


def test_rescore_without_another_judge_has_no_judge_swap(judged, tmp_path):
    result = CliRunner().invoke(cli, ["rescore", str(judged), "--output", str(tmp_path / "again")])
    assert result.exit_code == 0, result.output
    assert "judge_swap" not in json.loads((tmp_path / "again" / "results.json").read_text())
    assert "judge swap" not in result.output


def test_compare_names_a_judge_difference():
    one = {"judges": ["openai:gpt-4o"], "judge_args": {}}
    assert judge_differences(one, dict(one)) == []
    assert judge_differences({}, {}) == []  # no judge: nothing to say
    assert judge_differences(one, {"judges": ["openai:gpt-4o-mini"], "judge_args": {"0": {"temperature": 0.7}}}) == [
        "judge openai:gpt-4o vs openai:gpt-4o-mini (temperature=0.7)"
    ]
    assert judge_differences(one, {**one, "judge_repeats": 3}) == ["judge repeats 1 vs 3"]
    assert judge_differences(one, {"judges": []}) == ["judge openai:gpt-4o vs none"]


def test_compare_calls_a_rescoring_with_another_judge_not_like_for_like(judged, tmp_path):
    swapped, again = tmp_path / "swapped", tmp_path / "again"
    for out, extra in ((swapped, ["--judge", COIN_JUDGE]), (again, [])):
        done = CliRunner().invoke(cli, ["rescore", str(judged), *extra, "--output", str(out)])
        assert done.exit_code == 0, done.output
    report = compare_runs(
        load_run(judged), load_run(swapped), iterations=50, metric_class=installed_registry().metric_class
    )
    rows = {r.metric: r for r in report.rows if not r.slice}
    assert rows["llm_judge"].unlike == [f"judge {JUDGE} vs {COIN_JUDGE}"] and rows["match"].unlike == []  # no judge
    text = markdown(report)
    assert f"Not like for like on popqa: judge {JUDGE} vs {COIN_JUDGE}." in text
    assert "| popqa | llm_judge | higher | all | 6 | 1.0000 | 1.0000 | +0.0000 | no |" in text
    assert "| popqa | match | higher | all | 6 | 0.0000 | 0.0000 | +0.0000 | yes |" in text
    unknown = compare_runs(load_run(judged), load_run(swapped), iterations=50)  # no metric classes to tell
    assert {r.metric: r.unlike for r in unknown.rows if not r.slice}["match"] == [f"judge {JUDGE} vs {COIN_JUDGE}"]
    same = compare_runs(load_run(judged), load_run(again), iterations=50)  # the same judge: like for like
    assert all(r.unlike == [] for r in same.rows)

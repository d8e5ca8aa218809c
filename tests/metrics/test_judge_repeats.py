"""`--judge-repeats K` and several judges: every judged metric scored again by each rater (ragbench._run.judges.raters),
the values kept in the sample's `judge_ratings`, summed up in results.json `judge_agreement`, report.md and the
console; the headline is the run's without raters, and a run without them is as it was."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from test_rescore import popqa_run

from ragbench._config.run_config import RunConfig
from ragbench._reports.judging.judge_agreement import judge_agreement_lines
from ragbench._reports.results.file import read_results
from ragbench._run.judges.raters import headline_draws, headline_is_a_rater, raters
from ragbench._statistics.rater_agreement import agreement, judged_interval
from ragbench._view.catalog import RunCatalog
from ragbench._view.site import Site
from ragbench.api import Metric, MetricDeclaration
from ragbench.testing import cli, installed_registry
from support import scoring_plugin
from support.helpers import samples
from support.scoring_plugin import COIN_JUDGE, JUDGE, plugin_state  # noqa: F401 (plugin_state: an autouse fixture)

SAMPLED = {"llm_judge.temperature": 1.0}


@pytest.fixture
def records():
    return [
        {
            "question": f"Who is person {i}?",
            "answers": [f"answer{i}"],
            "id": 100 + i,
            "prop": "occupation",
            "ctxs": [{"id": str(i), "title": f"Title {i}", "text": f"Person {i} is answer{i}."}],
        }
        for i in range(12)
    ]


def results_of(run) -> dict:
    return json.loads((run / "results.json").read_text())


def test_repeats_of_a_sampled_judge_report_their_agreement_and_keep_the_headline(tmp_path, records):
    (tmp_path / "once").mkdir()
    popqa_run(tmp_path / "once", records, ["llm_judge"], judges=[COIN_JUDGE], metric_args=SAMPLED, bootstrap_iters=100)
    popqa_run(
        tmp_path, records, ["llm_judge"], judges=[COIN_JUDGE], metric_args=SAMPLED, judge_repeats=3, bootstrap_iters=100
    )
    once, repeated = samples(tmp_path / "once" / "run", "popqa"), samples(tmp_path / "run", "popqa")
    assert scoring_plugin.CALLS["judge"] == 12 + 12 * 3  # the run judged once, then three times per example
    assert [r["scores"] for r in repeated] == [r["scores"] for r in once]  # the headline: the first repeat's
    assert all("judge_ratings" not in r for r in once)  # a run without repeats: its samples as they were
    table = []
    for record in repeated:
        entry = record["judge_ratings"]["llm_judge"]
        assert entry["raters"] == ["repeat 1", "repeat 2", "repeat 3"] and entry["averaged"] == 1
        assert entry["scores"]["llm_judge"][0] == record["scores"]["llm_judge"]
        table.append(entry["scores"]["llm_judge"])
    assert len({tuple(row) for row in table}) > 1 and any(len(set(row)) > 1 for row in table)  # the repeats differ
    found = results_of(tmp_path / "run")["judge_agreement"]["popqa"]["llm_judge"]
    assert found == {
        "measured": True,
        "raters": ["repeat 1", "repeat 2", "repeat 3"],
        "averaged": 1,
        **{k: v for k, v in agreement(table).items() if k != "raters"},
        "missing_ratings": 0,
        "failed_ratings": 0,
        "failure": None,
        "ci95_judged": list(judged_interval(table, 100, 0)),
    }
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## Judge agreement" in report and "- popqa llm_judge: 3 raters (repeat 1, repeat 2, repeat 3)" in report
    once_agreement = results_of(tmp_path / "once" / "run")["judge_agreement"]["popqa"]["llm_judge"]
    assert once_agreement["measured"] is False  # judged once: said, not left out


def test_each_repeat_of_a_greedy_judge_is_its_own_request(tmp_path, records):
    popqa_run(tmp_path, records[:3], ["llm_judge"], judges=[JUDGE], judge_repeats=3, bootstrap_iters=10)
    assert scoring_plugin.CALLS["judge"] == 9  # none of the repeats answered by the cache
    for record in samples(tmp_path / "run", "popqa"):
        seeds = [step["request"]["sampling"].get("seed") for step in record["judge_trace"]]
        assert seeds[0] is None and len(set(seeds)) == 3  # the first as a run without repeats sends it
    found = results_of(tmp_path / "run")["judge_agreement"]["popqa"]["llm_judge"]
    assert found["percent_agreement"] == 1 and found["flipped"] == 0 and found["krippendorff_alpha"] is None


def test_several_judges_are_each_a_rater_and_the_headline_their_mean(tmp_path, records):
    popqa_run(
        tmp_path,
        records,
        ["llm_judge"],
        judges=[JUDGE, COIN_JUDGE],
        metric_args=SAMPLED,
        judge_repeats=1,
        bootstrap_iters=50,
    )
    table = []
    for record in samples(tmp_path / "run", "popqa"):
        entry = record["judge_ratings"]["llm_judge"]
        assert entry["raters"] == ["judge 1", "judge 2"] and entry["averaged"] == 2
        first, second = entry["scores"]["llm_judge"]
        assert first == 1.0 and record["scores"]["llm_judge"] == (first + second) / 2  # the metric's own mean
        table.append([first, second])
    assert scoring_plugin.CALLS["judge"] == 24  # each judge alone once: the headline's requests, from the cache
    found = results_of(tmp_path / "run")["judge_agreement"]["popqa"]["llm_judge"]
    assert found["cohen_kappa"] == 0.0  # judge 1 says "correct" throughout: no better than chance
    assert found["flipped"] == pytest.approx(sum(a != b for a, b in table) / len(table))
    assert found["ci95_judged"] == list(judged_interval(table, 50, 0, averaged=2))


def test_a_repeat_that_fails_is_counted_and_named_and_the_headline_stands(tmp_path, records):
    """A real fault: rescoring with the run's own judge replayed, whose recording holds the first repeat's
    requests only; the second repeat's are not there."""
    popqa_run(tmp_path, records[:4], ["llm_judge"], judges=[JUDGE], bootstrap_iters=10)
    replay = f"replay:{tmp_path / 'run' / 'judge0_calls.jsonl'}"
    out = tmp_path / "repeated"
    result = CliRunner().invoke(
        cli, ["rescore", str(tmp_path / "run"), "--judge", replay, "--judge-repeats", "2", "--output", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert [r["scores"] for r in samples(out, "popqa")] == [r["scores"] for r in samples(tmp_path / "run", "popqa")]
    found = results_of(out)["judge_agreement"]["popqa"]["llm_judge"]
    assert found["failed_ratings"] == 4 and found["missing_ratings"] == 4 and found["examples"] == 0
    assert "replay" in found["failure"]
    assert "judge agreement: popqa llm_judge: 2 raters (repeat 1, repeat 2) on 0 example(s)" in result.output
    assert "4 rating(s) failed" in result.output


def test_judge_repeats_leave_the_identity_of_a_run_without_them():
    assert "judge_repeats" not in RunConfig.of(tasks=["popqa"]).identity()
    assert RunConfig.of(tasks=["popqa"], judge_repeats=2).config_hash() != RunConfig.of(tasks=["popqa"]).config_hash()


def test_the_viewer_run_page_carries_the_judge_agreement(tmp_path, records):
    popqa_run(tmp_path, records[:4], ["llm_judge"], judges=[JUDGE], judge_repeats=2, bootstrap_iters=10)
    site = Site(RunCatalog([str(tmp_path / "run")]), registry=installed_registry())
    page = site.data(f"run/{site.runs[0].rid}")
    assert page["judge_notes"]["popqa"] == judge_agreement_lines(
        read_results(tmp_path / "run" / "results.json", "test")
    )
    assert page["judge_notes"]["popqa"][0].startswith("popqa llm_judge: 2 raters (repeat 1, repeat 2) on 4 example(s)")


def test_repeats_that_compare_nothing_are_said(tmp_path, records, caplog):
    popqa_run(tmp_path, records[:2], ["llm_judge"], judges=[JUDGE], judge_repeats=1, bootstrap_iters=10)
    assert "--judge-repeats 1 compares nothing: each judged metric is judged once by its judge (give 2 or more)" in (
        caplog.text
    )
    assert not any(entry["measured"] for entry in results_of(tmp_path / "run")["judge_agreement"]["popqa"].values())


def test_raters_repeat_judges_with_roles_together_and_interchangeable_judges_each_alone():
    class Roles(Metric):
        name, declares = "roles", MetricDeclaration(needs=("judge",), judge_roles=("extractor", "checker"))

    class Interchangeable(Metric):
        name, declares = "interchangeable", MetricDeclaration(needs=("judge",))

    class Unjudged(Metric):
        name = "unjudged"

    together = raters(Roles(), 2, 2)
    assert [r.label for r in together] == ["repeat 1", "repeat 2"] and {r.judges for r in together} == {(0, 1)}
    assert headline_is_a_rater(together) and headline_draws(together) == 1
    alone = raters(Interchangeable(), 2, 2)
    assert [r.label for r in alone] == ["judge 1", "judge 1, repeat 2", "judge 2", "judge 2, repeat 2"]
    assert not headline_is_a_rater(alone) and headline_draws(alone) == 2
    assert raters(Interchangeable(), 2, None) == raters(Interchangeable(), 1, 1) == raters(Unjudged(), 1, 3) == []

"""A run judged once still says, for every judged key, how far its judge agrees: that it was not measured
(results.json `judge_agreement` with `measured` false), beside the number in the console, report.md and the
viewer, with the one command that measures it on the finished run - and that command works as written."""

from __future__ import annotations

import json
import shlex

from click.testing import CliRunner
from test_judge_repeats import SAMPLED, records  # noqa: F401 (records: a fixture)
from test_rescore import popqa_run

from ragbench.testing import cli
from support import scoring_plugin
from support.scoring_plugin import COIN_JUDGE, JUDGE, plugin_state  # noqa: F401 (plugin_state: an autouse fixture)
from support.viewer_pages import viewer_page


def results_of(run) -> dict:
    return json.loads((run / "results.json").read_text())


def run_command(command: str, run) -> list[str]:
    """`measure_with` as the user runs it: RUN is the run folder; the leading `ragbench` is the CLI."""
    words = shlex.split(command.replace("RUN", shlex.quote(str(run))))
    assert words[0] == "ragbench"
    return words[1:]


def test_every_judged_key_of_a_run_judged_once_says_its_agreement_is_not_measured(tmp_path, records):
    popqa_run(tmp_path, records[:4], ["match", "llm_judge"], judges=[JUDGE], bootstrap_iters=10)
    found = results_of(tmp_path / "run")["judge_agreement"]["popqa"]
    assert list(found) == ["llm_judge", "llm_judge_unparsed"]  # the judged keys; match is no judge's
    for entry in found.values():
        assert entry["measured"] is False and entry["raters"] == ["repeat 1"] and entry["averaged"] == 1
        assert entry["measure_with"] == "ragbench rescore RUN --judge-repeats 3"
        assert entry["examples"] == 0
        stats = ("percent_agreement", "cohen_kappa", "krippendorff_alpha", "flipped", "ci95_judged")
        assert all(entry[name] is None for name in stats)  # unknown, never a made-up 1
    report = (tmp_path / "run" / "report.md").read_text()
    assert "| judge agreement |" in report
    assert "| popqa | llm_judge | higher |" in report and "| not measured (judged once) |" in report
    match_row = next(line for line in report.splitlines() if line.startswith("| popqa | match | higher |"))
    assert match_row.endswith("| - |")  # a key no judge scores
    assert (
        "- popqa llm_judge, llm_judge_unparsed: judged once, agreement not measured: "
        "`ragbench rescore RUN --judge-repeats 3` (RUN: the run's folder) measures it" in report
    )


def test_the_console_and_the_viewer_carry_it_beside_the_number(tmp_path, records):
    popqa_run(tmp_path, records[:3], ["llm_judge"], judges=[JUDGE], bootstrap_iters=10)
    run = tmp_path / "run"
    page = viewer_page([run], "run/{rid}")
    assert page["tasks"]["popqa"]["metrics"]["llm_judge"]["judge"] == "not measured (judged once)"
    assert page["judge_notes"]["popqa"] == [  # report.md's line, the run's folder in place of RUN
        "popqa llm_judge, llm_judge_unparsed: judged once, agreement not measured: "
        f"`ragbench rescore {shlex.quote(str(run))} --judge-repeats 3` measures it "
        "(`--judge ENGINE:MODEL` instead: another judge)"
    ]
    out = tmp_path / "again"  # the console: a rescoring with the run's own judge, judged once again
    result = CliRunner().invoke(cli, ["rescore", str(run), "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert "| llm_judge | higher |" in result.output and "| not measured (judged once) |" in result.output
    assert (
        f"judge agreement: popqa llm_judge, llm_judge_unparsed: judged once, agreement not measured: "
        f"`ragbench rescore {shlex.quote(str(out))} --judge-repeats 3` measures it" in result.output
    )


def test_the_one_command_measures_the_agreement_of_a_finished_run_judged_once(tmp_path, records):
    popqa_run(tmp_path, records, ["llm_judge"], judges=[COIN_JUDGE], metric_args=SAMPLED, bootstrap_iters=20)
    run = tmp_path / "run"
    command = results_of(run)["judge_agreement"]["popqa"]["llm_judge"]["measure_with"]
    result = CliRunner().invoke(cli, [*run_command(command, run), "--output", str(tmp_path / "measured")])
    assert result.exit_code == 0, result.output
    assert scoring_plugin.CALLS["judge"] == len(records) * 3  # the run's; two repeats more (the first: RUN's cache)
    found = results_of(tmp_path / "measured")["judge_agreement"]["popqa"]["llm_judge"]
    assert found["measured"] is True and found["raters"] == ["repeat 1", "repeat 2", "repeat 3"]
    assert found["examples"] == len(records) and found["percent_agreement"] is not None
    assert found["ci95_judged"] is not None
    assert "judge agreement: popqa llm_judge: 3 raters (repeat 1, repeat 2, repeat 3)" in result.output
    before, after = results_of(run)["results"]["popqa"], results_of(tmp_path / "measured")["results"]["popqa"]
    assert after["llm_judge"] == before["llm_judge"]  # the headline is the run's own verdicts


def test_several_judges_averaged_are_measured_from_the_runs_cache_alone(tmp_path, records):
    popqa_run(tmp_path, records[:6], ["llm_judge"], judges=[JUDGE, COIN_JUDGE], metric_args=SAMPLED, bootstrap_iters=10)
    run = tmp_path / "run"
    entry = results_of(run)["judge_agreement"]["popqa"]["llm_judge"]
    assert entry["measured"] is False and entry["raters"] == ["judge 1", "judge 2"] and entry["averaged"] == 2
    assert entry["measure_with"] == "ragbench rescore RUN --judge-repeats 1"
    judge_row = next(line for line in (run / "report.md").read_text().splitlines() if "| popqa | llm_judge |" in line)
    assert judge_row.endswith("| not measured (2 judges averaged) |")
    calls = scoring_plugin.CALLS["judge"]
    result = CliRunner().invoke(cli, [*run_command(entry["measure_with"], run), "--output", str(tmp_path / "m")])
    assert result.exit_code == 0, result.output
    assert scoring_plugin.CALLS["judge"] == calls  # the headline and each judge alone: RUN's requests, its cache's
    found = results_of(tmp_path / "m")["judge_agreement"]["popqa"]["llm_judge"]
    assert found["measured"] is True and found["raters"] == ["judge 1", "judge 2"] and found["examples"] == 6


def test_entries_of_results_written_before_measured_was_recorded_read_as_measured(tmp_path, records):
    popqa_run(tmp_path, records[:4], ["match", "llm_judge"], judges=[JUDGE], judge_repeats=2, bootstrap_iters=10)
    results_file = tmp_path / "run" / "results.json"
    results = json.loads(results_file.read_text())
    for entry in results["judge_agreement"]["popqa"].values():  # as a ragbench before `measured` wrote them
        del entry["measured"]
        entry.update(percent_agreement=0.75, krippendorff_alpha=0.5)
    results_file.write_text(json.dumps(results))
    metrics = viewer_page([tmp_path / "run"], "run/{rid}")["tasks"]["popqa"]["metrics"]
    assert metrics["llm_judge"]["judge"] == "75.0% agree, alpha 0.50 (2 raters)"
    assert "judge" not in metrics["match"]  # a key no judge scores: no cell

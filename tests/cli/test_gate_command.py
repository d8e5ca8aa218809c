"""`ragbench gate RUN --baseline BASE` end to end on run folders made by real (scripted) runs of the demo task: exit 0
on a candidate equal to its baseline or worse by noise alone, 3 on a significant regression, 2 where it refuses (and
writes nothing), 1 where the disk fails gate.json; the fixed threshold's verdict beside the gate's; gate.json; GitHub
Actions' annotations and step summary."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from support.gate_runs import demo_gate_run
from support.helpers import cli_here, tmpfs


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("gate_cli")
    return {
        "base": demo_gate_run(folder, "base"),
        "same": demo_gate_run(folder, "same"),
        "one_wrong": demo_gate_run(folder, "one_wrong", right=range(1, 24)),  # 23 of 24
        "worse": demo_gate_run(folder, "worse", right=range(6)),  # 6 of 24
    }


def gate(runs, candidate: str, *options: str, env: dict | None = None):
    return cli_here("gate", str(runs[candidate]), "--baseline", str(runs["base"]), *options, env=env)


def last_line(done) -> str:
    return done.stdout.rstrip("\n").splitlines()[-1]


def test_a_candidate_equal_to_its_baseline_passes(runs):
    done = gate(runs, "same")
    assert done.returncode == 0, done.stderr
    assert last_line(done) == (
        "ragbench: gate pass: no significant regression of 5 key(s) tested (Holm over the 0 on which the runs "
        "differ, alpha 0.05)"
    )
    assert (
        "| demo | em | higher | 24 | 1.0000 | 1.0000 | +0.0000 [+0.0000, +0.0000] | 1 | - | pass | - |" in done.stdout
    )


def test_a_significant_regression_fails_with_exit_3_and_gate_json(runs, tmp_path):
    done = gate(runs, "worse", "--output", str(tmp_path))
    assert done.returncode == 3, done.stderr
    assert last_line(done).startswith(
        "ragbench: gate FAIL: 4 significant regression(s) of 5 key(s) tested (Holm over the 4 on which the runs differ"
    )
    written = json.loads((tmp_path / "gate.json").read_text())
    assert written["kind"] == "ragbench gate" and written["verdict"] == "fail" and written["line"] == last_line(done)
    assert written["regressions"] == ["demo match", "demo match_normalized", "demo em", "demo f1"]
    em = next(row for row in written["rows"] if row["metric"] == "em")
    assert em["p"] == 0.5**18 and em["verdict"] == "regression" and em["test"] == "exact sign test (McNemar)"
    assert em["delta"] == pytest.approx(-18 / 24) and em["ci95"][1] < 0
    again = gate(runs, "same", "--output", str(tmp_path / "gate.json"))  # its own gate.json is written over
    assert again.returncode == 0 and json.loads((tmp_path / "gate.json").read_text())["verdict"] == "pass"


def test_the_fixed_threshold_fails_on_noise_where_the_gate_passes(runs):
    """One answer of 24 wrong: worse by 0.0417, over a threshold of 0.02; p = 0.5, no significant regression."""
    done = gate(runs, "one_wrong", "--threshold", "em=0.02", "--threshold", "f1=0.05")
    assert done.returncode == 0, done.stderr
    assert (
        "| demo | em | higher | 24 | 1.0000 | 0.9583 | -0.0417 [-0.1250, +0.0000] | 0.5 | 1 | pass | "
        "**FAIL** (allowed 0.02) |" in done.stdout
    )
    assert "| pass | pass (allowed 0.05) |" in done.stdout
    assert last_line(done).endswith("; the fixed threshold(s) would FAIL on demo em (worse by 0.0417 > 0.02)")


def test_a_minimum_effect_keeps_a_significant_but_small_worsening_from_failing(runs):
    assert gate(runs, "worse", "--metrics", "em", "--min-effect", "em=0.8").returncode == 0
    assert gate(runs, "worse", "--metrics", "em", "--min-effect", "0.5").returncode == 3


def test_under_github_actions_it_annotates_and_adds_to_the_step_summary(runs, tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    done = gate(runs, "worse", "--metrics", "em", env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 3
    assert (
        "::error title=ragbench gate::demo em regressed: worse by 0.7500, Holm p 3.815e-06" in done.stdout.splitlines()
    )
    text = summary.read_text()
    assert text.startswith("earlier step\n### ragbench gate: FAIL\n") and "| demo | em | higher | 24 |" in text
    quiet = gate(runs, "worse", "--metrics", "em")  # not under GitHub Actions: no workflow command
    assert "::error" not in quiet.stdout


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (["--threshold", "em"], "--threshold em: expected KEY=DELTA, DELTA a number of at least 0"),
        (["--threshold", "em=-0.1"], "--threshold em=-0.1: expected KEY=DELTA"),
        (["--min-effect", "em=nan"], "--min-effect em=nan: expected [KEY=]DELTA"),
        (["--threshold", "nosuch=0.1"], "gate --threshold: nosuch is no key gated"),
        (["--metrics", "em,nosuch"], "gate --metrics: nosuch is no key the baseline scores per example"),
        (["--iterations", "2000000000"], "gate --iterations 2000000000: at most"),
    ],
)
def test_refused_options_exit_2_in_one_line(runs, tmp_path, options, line):
    done = gate(runs, "same", *options, "--output", str(tmp_path / "gate.json"))
    assert done.returncode == 2 and line in done.stderr and done.stdout == ""
    assert not (tmp_path / "gate.json").exists()


def test_a_folder_that_is_no_run_is_refused(runs, tmp_path):
    done = cli_here("gate", str(tmp_path), "--baseline", str(runs["base"]))
    assert done.returncode == 2 and f"gate: {tmp_path} has no results.json" in done.stderr


def test_a_file_the_gate_did_not_write_is_never_written_over(runs, tmp_path):
    mine = tmp_path / "notes.json"
    mine.write_text('{"mine": true}\n')
    done = gate(runs, "same", "--output", str(mine))
    assert done.returncode == 2 and "is no gate.json the gate wrote; give a new path" in done.stderr
    assert mine.read_text() == '{"mine": true}\n'


def test_a_full_disk_at_gate_json_is_one_line_and_exit_1(runs, tmp_path):
    with tmpfs(tmp_path / "small", size="64k") as disk:
        if disk is None:
            pytest.skip("mounting a tmpfs is not allowed here")
        descriptor = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(descriptor, b"x" * 4096):
                pass
        except OSError:  # the disk is full
            pass
        finally:
            os.close(descriptor)
        done = gate(runs, "worse", "--output", str(disk / "gate.json"))
        assert done.returncode == 1, done.stderr
        assert (
            done.stderr.startswith("ragbench: error: No space left on device:") and len(done.stderr.splitlines()) == 1
        )
        assert not (disk / "gate.json").exists()

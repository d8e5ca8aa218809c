"""`ragbench compare`: paired differences, intervals and tests on the examples two runs share."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

import ragbench.tasks.selfrag
from ragbench._reports.compare.comparison import compare_runs, load_run
from ragbench._reports.compare.fail_if_worse import regressions
from ragbench._reports.compare.full_report import markdown
from ragbench._statistics.paired_tests import mcnemar_p, paired_bootstrap
from ragbench._view.catalog import RunCatalog
from ragbench._view.site import Site
from ragbench.api import ConfigError
from ragbench.testing import installed_registry
from support.helpers import cli_here, run, stopped_resume_after_the_data_changed

DEMO = Path(ragbench.tasks.selfrag.__file__).parent / "data" / "demo_qa.jsonl"


def demo_run(tmp_path, name: str, correct: int, **config) -> Path:
    """A demo run whose scripted model answers the first `correct` questions right, the rest wrong."""
    records = [json.loads(line) for line in DEMO.read_text().splitlines()]
    rules = [
        {"pattern": re.escape(r["question"]), "response": r["answers"][0] if i < correct else "no idea"}
        for i, r in enumerate(records)
    ]
    rules_file = tmp_path / f"{name}.json"
    rules_file.write_text(json.dumps(rules))
    run(tmp_path, name=name, tasks=["demo"], system="closed_book", model=f"scripted:{rules_file}", **config)
    return tmp_path / name


def test_mcnemar_equals_scipys_exact_binomial_test_on_the_discordant_pairs():
    from scipy.stats import binomtest

    a = np.array([1, 1, 0, 0, 0, 0, 0, 1, 0, 0], dtype=float)
    b = np.array([1, 0, 1, 1, 1, 1, 1, 1, 1, 0], dtype=float)
    expected = binomtest(1, 7, 0.5).pvalue  # 1 pair only A got right, 6 only B
    assert mcnemar_p(a, b) == pytest.approx(expected)
    assert mcnemar_p(a, a) == 1.0


def test_paired_bootstrap_interval_holds_the_difference_and_is_seeded():
    rng = np.random.default_rng(1)
    a = rng.normal(size=200)
    b = a + 0.5 + rng.normal(scale=0.1, size=200)
    (low, high), p = paired_bootstrap(a, b, 2000, seed=0)
    assert low < (b - a).mean() < high and low > 0.4 and p == 1 / 2000
    assert paired_bootstrap(a, b, 2000, seed=0) == ((low, high), p)


def test_compare_reports_the_paired_difference_and_mcnemar_on_match(tmp_path):
    from scipy.stats import binomtest

    baseline, better = demo_run(tmp_path, "a", correct=12), demo_run(tmp_path, "b", correct=20)
    report = compare_runs(load_run(baseline), load_run(better))
    row = next(r for r in report.rows if r.metric == "match" and not r.slice)
    assert (row.n, row.mean_a, row.mean_b) == (24, 0.5, 20 / 24)
    assert row.test == "mcnemar" and row.p_value == pytest.approx(binomtest(0, 8, 0.5).pvalue)
    assert row.ci95[0] > 0
    assert not report.warnings
    # the two scripted "models" are different rules files: said, nothing else
    assert [d.key for d in report.differences] == ["model"]
    assert {r.slice for r in report.rows if r.metric == "match"} >= {"", "prop=capital"}


def test_compare_warns_when_runs_differ_in_more_than_the_system(tmp_path):
    baseline = demo_run(tmp_path, "a", correct=12)
    other = demo_run(tmp_path, "b", correct=12, limit=10)
    report = compare_runs(load_run(baseline), load_run(other))
    limit, model, examples = report.differences  # model: each run's own rules file
    assert (limit.key, limit.a, limit.b) == ("limit", None, 10) and model.key == "model"
    assert (examples.key, examples.a, examples.b) == ("examples (demo, scored)", "24, 14 only here", "10, 0 only here")
    assert any("14 scored example(s) are in only one run" in w for w in report.warnings)


def test_cli_writes_markdown_and_plot_and_fails_if_worse(tmp_path):
    baseline, worse = demo_run(tmp_path, "a", correct=20), demo_run(tmp_path, "b", correct=12)
    ok = cli_here(
        "compare", str(baseline), str(baseline), "--output", str(tmp_path / "same"), "--fail-if-worse", "match:0.01"
    )
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "same" / "compare.md").is_file() and (tmp_path / "same" / "compare_1.png").is_file()
    failed = cli_here("compare", str(baseline), str(worse), "--fail-if-worse", "match:0.01")
    assert failed.returncode == 1 and "demo match: b is worse by 0.3333" in failed.stderr
    assert "| demo | match | higher | 24 | 0.8333 | 0.5000 | -0.3333 |" in failed.stdout


def test_compare_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="no results.json"):
        load_run(tmp_path)
    run_dir = demo_run(tmp_path, "a", correct=1)
    bad = cli_here("compare", str(run_dir), str(run_dir), "--fail-if-worse", "nosuch:0.1")
    assert bad.returncode == 2 and "nosuch not among the compared metrics" in bad.stderr
    assert cli_here("compare", str(run_dir)).returncode == 2


def unreadable_folders(tmp_path) -> dict[str, tuple[Path, str]]:
    """Folder arguments that are no folder a command can read, each with what the refusal says of it."""
    (tmp_path / "loop_a").symlink_to(tmp_path / "loop_b")
    (tmp_path / "loop_b").symlink_to(tmp_path / "loop_a")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    (tmp_path / "a_file").write_text("")
    return {
        "a symbolic link loop": (tmp_path / "loop_a", "a symbolic link that leads back to itself"),
        "a link to nothing": (tmp_path / "dangling", "a symbolic link to nothing"),
        "a file": (tmp_path / "a_file", "not a folder"),
    }


def test_a_folder_argument_compare_cannot_read_is_refused_in_one_line(tmp_path):
    run_dir = demo_run(tmp_path, "a", correct=1)
    for folder, problem in unreadable_folders(tmp_path).values():
        for args in ((folder, run_dir), (run_dir, folder)):
            refused = cli_here("compare", *map(str, args))
            assert refused.returncode == 2 and refused.stderr.splitlines() == [
                f"ragbench: error: compare: {folder}: {problem}; give the folder of a finished ragbench run"
            ], refused.stderr


def test_a_folder_argument_rescore_or_view_cannot_read_is_refused_in_one_line(tmp_path):
    for folder, problem in unreadable_folders(tmp_path).values():
        rescore = cli_here("rescore", str(folder))
        assert rescore.returncode == 2 and rescore.stderr.splitlines() == [
            f"ragbench: error: rescore: {folder} holds no ragbench run ({problem}); give a run folder"
        ], rescore.stderr
        view = cli_here("view", str(folder), "--export", str(tmp_path / "site"))
        assert view.returncode == 2 and view.stderr.splitlines() == [
            f"ragbench: error: view: {folder}: {problem} (give a run folder or a folder of runs, e.g. runs/)"
        ], view.stderr


def test_compare_names_its_runs_and_refuses_runs_that_share_no_example(tmp_path):
    baseline, other = demo_run(tmp_path, "cb", correct=20), demo_run(tmp_path, "van", correct=12)
    shown = cli_here("compare", str(baseline), str(other))
    assert shown.returncode == 0 and "## van vs cb (A = cb, the baseline; B = van)" in shown.stdout
    assert "| demo | match | higher | 24 | 0.8333 | 0.5000 |" in shown.stdout  # A is cb's 20/24
    lonely = tmp_path / "lonely"
    (lonely / "samples").mkdir(parents=True)
    results = json.loads((other / "results.json").read_text())
    (lonely / "results.json").write_text(json.dumps(results))
    (lonely / "samples" / "demo.jsonl").write_text(
        "".join(
            json.dumps({**json.loads(line), "id": f"other-{i}"}) + "\n"
            for i, line in enumerate((other / "samples" / "demo.jsonl").read_text().splitlines())
        )
    )
    refused = cli_here("compare", str(baseline), str(lonely))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "share no example scored in both (demo)" in refused.stderr


def test_compare_output_replaces_links_and_never_writes_through_them(tmp_path):
    """compare.md and the plots named by links to the user's files: the links are replaced by the new
    files, the user's files keep their bytes."""
    baseline = demo_run(tmp_path, "a", correct=20)
    folder, mine = tmp_path / "out", tmp_path / "mine"
    folder.mkdir(), mine.mkdir()
    for name in ("compare.md", "compare_1.png"):
        (mine / name).write_bytes(b"the user's own " + name.encode())
        (folder / name).symlink_to(mine / name)
    ok = cli_here("compare", str(baseline), str(baseline), "--output", str(folder))
    assert ok.returncode == 0, ok.stderr
    for name in ("compare.md", "compare_1.png"):
        assert (mine / name).read_bytes() == b"the user's own " + name.encode()
        assert not (folder / name).is_symlink() and (folder / name).stat().st_size > 0
    assert (folder / "compare_1.png").read_bytes().startswith(b"\x89PNG")


def test_compare_output_that_is_a_file_and_a_broken_results_json_are_one_line_errors(tmp_path):
    run_dir = demo_run(tmp_path, "a", correct=1)
    taken = tmp_path / "taken.md"
    taken.write_text("x")
    refused = cli_here("compare", str(run_dir), str(run_dir), "--output", str(taken))
    assert refused.returncode == 2 and "--output" in refused.stderr and "is a file" in refused.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    text = '{"results": {"demo": {"match": 0.5}}, "counts": {"demo": [1, 2,]}}'
    (broken / "results.json").write_text(text)
    column = text.index("]") + 1  # the error is at the "]" after a trailing comma
    bad = cli_here("compare", str(run_dir), str(broken))
    assert bad.returncode == 2 and f"{broken / 'results.json'}:1:{column}: not valid JSON" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_runs_in_folders_of_the_same_name_are_told_apart_by_their_path(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    first = demo_run(tmp_path / "x", "run", correct=20)
    second = demo_run(tmp_path / "y", "run", correct=12)
    shown = cli_here("compare", str(first), str(second))
    assert shown.returncode == 0, shown.stderr
    assert f"## {second} vs {first} (A = {first}, the baseline; B = {second})" in shown.stdout


def judged_run(tmp_path, name: str, unparsed: int) -> Path:
    """A demo run scored by llm_judge whose scripted judge answers the first `unparsed` questions with a
    reply that does not parse (`llm_judge_unparsed`: lower is better)."""
    records = [json.loads(line) for line in DEMO.read_text().splitlines()]
    rules = [
        {"pattern": re.escape(r["question"]), "response": "no idea" if i < unparsed else "correct"}
        for i, r in enumerate(records)
    ]
    judge = tmp_path / f"judge_{name}.json"
    judge.write_text(json.dumps(rules))
    run(
        tmp_path,
        name=name,
        tasks=["demo"],
        system="closed_book",
        model="scripted:echo",
        metrics=["match", "+llm_judge"],
        judges=[f"scripted:{judge}"],
    )
    return tmp_path / name


def test_a_lower_is_better_key_is_better_when_it_drops_in_compare_and_fail_if_worse(tmp_path):
    many, few = judged_run(tmp_path, "many", unparsed=12), judged_run(tmp_path, "few", unparsed=6)
    assert (
        json.loads((many / "results.json").read_text())["details"]["demo"]["llm_judge_unparsed"]["higher_is_better"]
        is False
    )
    report = compare_runs(load_run(many), load_run(few))
    row = next(r for r in report.rows if r.metric == "llm_judge_unparsed" and not r.slice)
    assert (row.mean_a, row.mean_b, row.higher_is_better) == (0.5, 0.25, False)
    # the run's own figure is the count (12), not the mean the table compares: said in a warning
    assert (
        "demo llm_judge_unparsed: many's results give 12.0000, not the mean of its per-example values (0.5000): "
        "compared here as means per example" in report.warnings
    )
    assert not [w for w in report.warnings if w.startswith("demo match")]
    assert "| demo | llm_judge_unparsed | lower | all | 24 | 0.5000 | 0.2500 | -0.2500 |" in markdown(report)
    assert regressions(report, {"llm_judge_unparsed": 0.01}) == []  # fewer unparsed replies: better, not worse
    assert regressions(compare_runs(load_run(few), load_run(many)), {"llm_judge_unparsed": 0.01}) == [
        "demo llm_judge_unparsed: many is worse by 0.2500 (allowed 0.01)"
    ]
    better = cli_here("compare", str(many), str(few), "--fail-if-worse", "llm_judge_unparsed:0.01")
    assert better.returncode == 0, better.stderr
    worse = cli_here("compare", str(few), str(many), "--fail-if-worse", "llm_judge_unparsed:0.01")
    assert worse.returncode == 1 and "ragbench: worse: demo llm_judge_unparsed: many is worse by 0.2500" in worse.stderr


def test_fail_if_worse_refuses_a_key_with_no_better_direction(tmp_path):
    a = demo_run(tmp_path, "a", correct=12, metrics=["match", "+length"])
    b = demo_run(tmp_path, "b", correct=20, metrics=["match", "+length"])
    report = compare_runs(load_run(a), load_run(b))
    assert next(r for r in report.rows if r.metric == "length").higher_is_better is None
    with pytest.raises(ConfigError, match="length has no better direction"):
        regressions(report, {"length": 1.0})


def test_compare_warns_that_an_incomplete_run_leaves_failed_metrics_out(tmp_path, monkeypatch):
    from ragbench.metrics.match import TokenF1

    a = demo_run(tmp_path, "a", correct=12)
    monkeypatch.setattr(TokenF1, "score", lambda self, e, p, ctx=None: 1 / 0)
    b = demo_run(tmp_path, "b", correct=20)
    warnings = compare_runs(load_run(a), load_run(b)).warnings
    assert any(
        w.startswith("b is incomplete (demo: 24 metric failure(s) (metric f1: ZeroDivisionError)") for w in warnings
    )


def test_compare_warns_when_shared_examples_hold_other_data_in_the_two_runs(tmp_path):
    baseline = demo_run(tmp_path, "a", correct=12)
    records = [json.loads(line) for line in DEMO.read_text().splitlines()]
    records[0]["answers"], records[3]["question"] = ["another gold"], records[3]["question"] + " (edited)"
    edited = tmp_path / "demo_edited.jsonl"
    edited.write_text("".join(json.dumps(r) + "\n" for r in records))
    other = demo_run(tmp_path, "b", correct=12, data={"demo": str(edited)})
    report = compare_runs(load_run(baseline), load_run(other))
    assert any(w.startswith("demo: 2 shared example(s) differ in their data between the runs") for w in report.warnings)
    assert not any("differ in their data" in w for w in compare_runs(load_run(baseline), load_run(baseline)).warnings)


def test_compare_says_which_keys_and_examples_it_could_not_pair(tmp_path):
    baseline = demo_run(tmp_path, "a", correct=12)
    other = demo_run(tmp_path, "b", correct=12, metrics=["+length"])
    path = other / "samples" / "demo.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records[:3]:
        record["scores"]["match"] = None  # not scorable in this run only
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = compare_runs(load_run(baseline), load_run(other))
    assert "demo: length scored in only one run: not compared" in report.warnings
    assert any(w.startswith("demo match: 3 shared example(s) have a value in one run only") for w in report.warnings)
    assert next(r for r in report.rows if r.metric == "match" and not r.slice).n == 21


def test_compare_names_a_model_whose_files_differ_under_one_name(tmp_path):
    """Two runs of `scripted:m.json` whose m.json held other rules: named (model_contents), not taken for one model."""
    (tmp_path / "m.json").write_text(json.dumps([{"response": "Paris"}]))
    run(tmp_path, name="a", tasks=["demo"], system="closed_book", model=f"scripted:{tmp_path / 'm.json'}")
    (tmp_path / "m.json").write_text(json.dumps([{"response": "London"}]))
    run(tmp_path, name="b", tasks=["demo"], system="vanilla", model=f"scripted:{tmp_path / 'm.json'}")
    report = compare_runs(load_run(tmp_path / "a"), load_run(tmp_path / "b"))
    assert not report.warnings
    assert [d.key for d in report.differences if d.key.startswith("model")] == ["model_contents.model"]


def test_a_run_whose_later_attempt_stopped_is_not_compared_from_its_earlier_results(tmp_path):
    # the run finished; its data then changed, and the --resume that runs the changed records again was stopped
    # (Ctrl-C) midway: results.json is the first attempt's, the samples hold records of both
    baseline = demo_run(tmp_path, "a", correct=12)
    folder, _ = stopped_resume_after_the_data_changed(tmp_path, DEMO)
    assert json.loads((folder / "run.json").read_text())["finished"] is False and (folder / "results.json").is_file()
    refused = cli_here("compare", str(baseline), str(folder))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert (
        f"compare: {folder} is not finished: an attempt after its results.json stopped or is running" in refused.stderr
    )
    site = Site(RunCatalog([str(tmp_path)]), registry=installed_registry())
    assert site.data("compare/demo/a~b")["error"] == (
        "compare needs two finished runs of demo; not compared, not finished (stopped or running; --resume "
        "finishes it): b"
    )
    assert next(r for r in site.runs if r.rid == "b").status()["state"] == "stopped"


@pytest.mark.parametrize("delta", ["nan", "inf", "1e999", "-inf", "-0.1", "NaN"])
def test_fail_if_worse_refuses_a_threshold_that_is_not_a_finite_number_of_at_least_0(tmp_path, delta):
    run_dir = demo_run(tmp_path, "a", correct=1)
    refused = cli_here("compare", str(run_dir), str(run_dir), "--fail-if-worse", f"match:{delta}")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines() == [
        f"ragbench: error: --fail-if-worse match:{delta}: DELTA must be a "
        "finite number of at least 0 (how much worse is allowed), e.g. "
        "match:0.01"
    ]


def test_compare_refuses_more_bootstrap_rounds_than_it_can_hold_before_reading_the_runs(tmp_path):
    refused = cli_here("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--bootstrap-iters", "100000000")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines() == [
        "ragbench: error: compare --bootstrap-iters 100000000: at most "
        "1,000,000 rounds (a p-value's resolution of 1/1,000,000); give "
        "fewer"
    ]


def older_run(run_dir: Path, name: str) -> Path:
    """A copy of `run_dir` as an older ragbench wrote it: results.json without n_none, cost, complete and
    details, and samples whose prediction is a string."""
    old = run_dir.parent / name
    (old / "samples").mkdir(parents=True)
    results = json.loads((run_dir / "results.json").read_text())
    (old / "results.json").write_text(
        json.dumps({"results": results["results"], "counts": results["counts"], "config": results["config"]})
    )
    (old / "samples" / "demo.jsonl").write_text(
        "".join(
            json.dumps({**record, "prediction": record["prediction"]["answer"]}) + "\n"
            for record in map(json.loads, (run_dir / "samples" / "demo.jsonl").read_text().splitlines())
        )
    )
    return old


def test_compare_reads_a_run_an_older_ragbench_wrote(tmp_path):
    baseline = demo_run(tmp_path, "a", correct=20)
    old = older_run(demo_run(tmp_path, "b", correct=12), "old")
    shown = cli_here("compare", str(old), str(baseline), "--fail-if-worse", "match:0.01")
    assert shown.returncode == 0 and "Traceback" not in shown.stderr
    assert "| demo | match | higher | 24 | 0.5000 | 0.8333 | +0.3333 |" in shown.stdout


def test_scores_near_the_largest_float_are_compared_where_they_can_be_and_said_where_not(tmp_path):
    from ragbench._reports.compare.comparison import Run
    from ragbench._reports.results.file import normalized_results
    from ragbench._reports.results.schema import Results

    huge = float(2**1023)
    results = Results.from_dict(normalized_results({"details": {"demo": {"x": {"value": None}, "y": {"value": None}}}}))

    def scored(name, values):
        return Run(
            tmp_path / name,
            results,
            {
                "demo": {
                    str(i): {"scores": {"x": v, "y": 0.5}, "meta": {}, "example_sha256": None}
                    for i, v in enumerate(values)
                }
            },
            {"demo": {}},
        )

    a = scored("a", [huge, huge, huge])
    [row, _] = compare_runs(a, scored("b", [huge, 0.0, huge]), iterations=50).rows
    assert (row.metric, row.mean_a, row.diff) == ("x", huge, -huge / 3) and all(np.isfinite(row.ci95))
    apart = compare_runs(a, scored("c", [-huge, -huge, -huge]), iterations=50)
    assert [r.metric for r in apart.rows] == ["y"]
    assert "demo x: values so large that their differences overflow: not compared" in apart.warnings


def test_compare_output_without_matplotlib_writes_compare_md_and_says_what_to_install(tmp_path, ragbench_zygote):
    """The README's plain install has no matplotlib: compare.md is written without its plots, and one line says
    what to install, never a traceback (a package of that name that cannot be imported stands in for none, first
    on the command's sys.path: a fork of the tests' command zygote, which has not imported matplotlib)."""
    shadow = tmp_path / "shadow" / "matplotlib"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'matplotlib'\", name='matplotlib')\n"
    )
    baseline = demo_run(tmp_path, "a", correct=20)
    done = ragbench_zygote.run(
        ["compare", str(baseline), str(baseline), "--output", str(tmp_path / "out")],
        {**os.environ, "PYTHONPATH": str(tmp_path / "shadow")},
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "compare.md").is_file() and not list((tmp_path / "out").glob("*.png"))
    assert done.stderr.strip() == (
        "ragbench: warning: compare.md is written without its plots, which need matplotlib: pip install matplotlib"
    )

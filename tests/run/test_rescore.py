"""`ragbench rescore RUN`: a finished run's saved predictions scored again (other metrics, a judge) into a
new folder, without calling the system's model; the original run is left as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import write_jsonl
from ragbench.testing import Registry, cli, run_eval
from support import scoring_plugin
from support.helpers import samples, task_counts
from support.scoring_plugin import JUDGE, SYSTEM, plugin_state  # noqa: F401 (plugin_state: an autouse fixture)


def popqa_run(
    tmp_path: Path,
    records: list,
    metrics: list[str],
    system: str = "vanilla",
    model: str = SYSTEM,
    registry: Registry | None = None,
    **config,
) -> None:
    """A run of popqa on `records` (written to tmp_path/popqa.jsonl) scored by `metrics` into tmp_path/run."""
    data = write_jsonl(tmp_path / "popqa.jsonl", records)
    run_eval("popqa", system, model, data=data, metrics=metrics, output=tmp_path / "run", registry=registry, **config)


def rescore(run: Path, *args: str, registry: Registry | None = None):
    """`ragbench rescore RUN ARGS --no-progress` in this process (its plugins: `registry`'s, else the installed)."""
    return CliRunner().invoke(cli, ["rescore", str(run), *args, "--no-progress"], obj=registry)


def rescored(run: Path, *args: str, output: Path | None = None, registry: Registry | None = None) -> dict:
    """results.json of `ragbench rescore RUN ARGS [--output OUTPUT]` (default: RUN__rescored), which wrote it (exit
    0: complete, 1: not)."""
    result = rescore(run, *args, *(["--output", str(output)] if output else []), registry=registry)
    assert result.exit_code in (0, 1) and not isinstance(result.exception, Exception), result.output
    return json.loads(((output or run.parent / f"{run.name}__rescored") / "results.json").read_text())


def refused(run: Path, *args: str) -> str:
    """What `ragbench rescore RUN ARGS` printed as it refused (exit 2)."""
    result = rescore(run, *args)
    assert result.exit_code == 2, result.output
    return result.output


@pytest.fixture
def finished(tmp_path, popqa_records):
    """A finished vanilla run on popqa (documents shown to the model), scored by match and f1."""
    popqa_run(tmp_path, popqa_records, ["match", "f1"], bootstrap_iters=50)
    assert scoring_plugin.CALLS["system"] == 6
    return tmp_path / "run"


def snapshot(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_rescore_with_another_metric_list_and_a_judge_writes_a_new_run_and_leaves_the_original(finished):
    before = snapshot(finished)
    judge_args = ["--metric-arg", "llm_judge.preset=faithfulness", "--metric-arg", "llm_judge.score_range=0-1"]
    results = rescored(finished, "--metrics", "match,+llm_judge", "--judge", JUDGE, *judge_args)
    assert snapshot(finished) == before  # the original is kept as it was
    new = finished.parent / "run__rescored"  # the default folder
    assert results["complete"]
    assert scoring_plugin.CALLS["system"] == 6 and scoring_plugin.CALLS["judge"] == 6  # the system's model: not again
    assert set(results["results"]["popqa"]) == {"match", "llm_judge", "llm_judge_unparsed"}  # f1 replaced
    assert results["rescored_from"] == str(finished) and results["config"]["judges"] == [JUDGE]
    records = samples(new, "popqa")
    original = samples(finished, "popqa")
    assert [r["trace"] for r in records] == [r["trace"] for r in original]
    assert [r["prediction"] for r in records] == [r["prediction"] for r in original]
    # the faithfulness prompt shows the documents the answer was given: rebuilt from the samples
    prompt = records[0]["judge_trace"][0]["request"]["messages"][0]["content"]
    assert "[1] Title 0\nPerson 0 is answer0." in prompt
    assert all(r["rescored"] and set(r["scores"]) == {"match", "llm_judge", "llm_judge_unparsed"} for r in records)
    assert "re-scored from" in (new / "report.md").read_text()
    # the judge's exchanges are a ready replay file of the rescored folder: a judge replaying it answers every call
    replayed = rescored(
        finished,
        "--metrics",
        "match,+llm_judge",
        "--judge",
        f"replay:{new / 'judge0_calls.jsonl'}",
        *judge_args,
        output=finished.parent / "replayed",
    )
    assert scoring_plugin.CALLS["judge"] == 6 and replayed["complete"]
    again = samples(finished.parent / "replayed", "popqa")
    assert [r["scores"] for r in again] == [r["scores"] for r in records]
    assert [step["response"]["texts"] for r in again for step in r["judge_trace"]] == [["correct"]] * 6


def test_rescore_adds_to_the_runs_metrics_and_keeps_failed_examples_as_they_were(tmp_path, popqa_records):
    popqa_run(tmp_path, popqa_records[:3] + ["{broken"], ["match"], system="closed_book", model="scripted:echo")
    results = rescored(tmp_path / "run", "--metrics", "+f1", output=tmp_path / "new")
    assert set(results["results"]["popqa"]) == {"match", "f1"}
    assert results["counts"]["popqa"] == task_counts(4, 3, bad_records=1)
    assert not results["complete"]  # the bad record stays counted


def test_rescore_with_other_metrics_drops_the_runs_options_of_a_metric_it_no_longer_asks(finished, tmp_path):
    """The run's --metric-arg of llm_judge is the run's, not the user's: rescoring with em alone is not refused
    for it; given again by the user, an option of no metric asked still is."""
    judged = rescored(
        finished,
        *("--metrics", "+llm_judge", "--judge", JUDGE, "--metric-arg", "llm_judge.preset=rubric"),
        output=tmp_path / "judged",
    )
    assert judged["config"]["metric_args"] == {"llm_judge.preset": "rubric"}
    results = rescored(tmp_path / "judged", "--metrics", "em", output=tmp_path / "em")
    assert set(results["results"]["popqa"]) == {"em"} and results["config"]["metric_args"] == {}
    said = refused(
        tmp_path / "judged",
        "--metrics",
        "em",
        "--output",
        str(tmp_path / "again"),
        "--metric-arg",
        "llm_judge.preset=rubric",
    )
    assert "--metric-arg llm_judge.preset=...: expected METRIC.KEY for a metric" in said


def test_rescore_writes_the_tasks_reading_of_the_gold_into_a_run_written_without_it(finished, tmp_path):
    path = finished / "samples" / "popqa.jsonl"
    older = [{k: v for k, v in record.items() if k != "gold_references"} for record in samples(finished, "popqa")]
    path.write_text("".join(json.dumps(record) + "\n" for record in older))
    rescored(finished, "--metrics", "match", output=tmp_path / "new")
    assert [r["gold_references"] for r in samples(tmp_path / "new", "popqa")] == [r["gold"]["answers"] for r in older]


def test_rescore_refuses_its_own_folder_an_existing_run_and_an_unfinished_run(finished, tmp_path):
    assert "is the run being re-scored; give a new folder" in refused(finished, "--output", str(finished))
    rescored(finished)
    assert "already holds a run; --overwrite replaces it" in refused(finished)
    assert rescored(finished, "--overwrite")["complete"]
    meta = json.loads((finished / "run.json").read_text())
    (finished / "run.json").write_text(json.dumps({**meta, "finished": False}))
    assert "is not finished; finish it first" in refused(finished, "--output", str(tmp_path / "other"))
    assert "holds no ragbench run" in refused(tmp_path / "nothing")


def test_rescore_cli_prints_the_summary_and_exits_1_when_a_metric_fails(finished, tmp_path):
    scoring_plugin.FAILING.add("101")
    result = CliRunner().invoke(
        cli,
        ["rescore", str(finished), "--metrics", "+scored:raise", "--output", str(tmp_path / "flaky")],
        obj=scoring_plugin.registry(),
    )
    assert result.exit_code == 1
    assert "popqa: 1 x metric scored:raise: RuntimeError: 101" in result.output
    assert "re-scored 6 examples" in result.output
    scoring_plugin.FAILING.clear()
    fixed = CliRunner().invoke(
        cli,
        ["rescore", str(finished), "--metrics", "+scored:raise", "--output", str(tmp_path / "fixed")],
        obj=scoring_plugin.registry(),
    )
    assert fixed.exit_code == 0, fixed.output
    assert scoring_plugin.CALLS["system"] == 6


def test_rescore_with_an_nli_metric_equals_a_run_that_scored_it(tmp_path):
    from support.alce_helpers import ALCE_DATA, DATA_FILES, NLI_REPLAY, write_predictions

    predictions = write_predictions(tmp_path / "predictions.jsonl", "asqa")
    config = {
        "system_args": {"path": str(predictions)},
        "data": ALCE_DATA / DATA_FILES["asqa"],
        "task_args": {"run_py_cleanup": False},
        "bootstrap_iters": 50,
    }
    run_eval("alce_asqa", "recorded", **config, metrics=["str_em"], output=tmp_path / "plain")
    both = run_eval(
        "alce_asqa",
        "recorded",
        **config,
        metrics=["str_em", "citation"],
        nli=f"replay:{NLI_REPLAY}",
        output=tmp_path / "both",
    )
    results = rescored(tmp_path / "plain", "--metrics", "+citation", "--nli", f"replay:{NLI_REPLAY}")
    assert results["complete"] and results["results"] == both.results["results"]
    assert results["cost"]["rescoring"]["nli"]["requests"] > 0
    assert (tmp_path / "plain__rescored" / "nli_calls.jsonl").stat().st_size > 0  # a replay file of its own


def test_rescore_of_a_crag_run_reproduces_its_judged_numbers(tmp_path):
    from test_crag_score_cli import score_upstream_rows

    _, results = score_upstream_rows(tmp_path, "kddcup2024")  # its judge: a replay of upstream's replies
    again = rescored(tmp_path / "out")
    assert again["results"] == results["results"] and again["counted"] == results["counted"]
    assert again["cost"]["rescoring"]["llm_calls"] == results["cost"]["llm_calls"]  # the judge's calls
    assert [r["scores"] for r in samples(tmp_path / "out__rescored", "crag_t1")] == [
        r["scores"] for r in samples(tmp_path / "out", "crag_t1")
    ]


def test_rescore_with_another_metric_list_answers_a_sampled_judge_from_the_cache(tmp_path, popqa_records):
    """A metric's sampled judge calls are seeded by the metric, not by their place among the run's judge
    calls: dropping the metric that asked first leaves the others' requests as they were (cache hits)."""
    popqa_run(
        tmp_path,
        popqa_records,
        ["scored:judged", "llm_judge"],
        registry=scoring_plugin.registry(),
        metric_args={"llm_judge.temperature": 1.0},
        judges=[scoring_plugin.COIN_JUDGE],
        bootstrap_iters=20,
    )
    assert scoring_plugin.CALLS["judge"] == 12  # each metric asked once per example
    cache = tmp_path / "cache.sqlite"
    cache.write_bytes((tmp_path / "run" / "cache.sqlite").read_bytes())
    rescored(
        tmp_path / "run",
        *("--metrics", "llm_judge", "--cache", str(cache)),
        output=tmp_path / "rescored",
        registry=scoring_plugin.registry(),
    )
    assert scoring_plugin.CALLS["judge"] == 12  # no new judge call: every one answered by the cache
    again = samples(tmp_path / "rescored", "popqa")
    assert all(step["cached"] for record in again for step in record["judge_trace"]) and len(again) == 6
    assert [r["scores"] for r in again] == [
        {"llm_judge": r["scores"]["llm_judge"], "llm_judge_unparsed": r["scores"]["llm_judge_unparsed"]}
        for r in samples(tmp_path / "run", "popqa")
    ]


def test_a_saved_line_that_is_no_sample_record_is_named_and_counted_missing_in_the_rescored_run(finished, caplog):
    path = finished / "samples" / "popqa.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    damaged = json.loads(lines[1])
    del damaged["index"]  # a line edited by hand
    path.write_text("".join([lines[0], json.dumps(damaged) + "\n", *lines[2:]]), encoding="utf-8")
    results = rescored(finished, "--metrics", "match")
    assert f"{path}:2: not a sample record" in caplog.text and "counted as missing" in caplog.text
    counts = results["counts"]["popqa"]
    assert (counts["records"], counts["missing"]) == (len(lines) - 1, 1) and not results["complete"]


def test_rescore_takes_the_run_s_display_options_and_shows_its_progress_bar(finished, tmp_path):
    runner = CliRunner()
    shown = runner.invoke(cli, ["rescore", str(finished), "--metrics", "+em", "--output", str(tmp_path / "shown")])
    assert shown.exit_code == 0, shown.output
    assert "ragbench: " in shown.stderr and "6/6 examples" in shown.stderr  # the bar, on stderr
    quiet = runner.invoke(
        cli, ["rescore", str(finished), "--metrics", "+em", "--output", str(tmp_path / "quiet"), "--no-progress"]
    )
    assert quiet.exit_code == 0, quiet.output
    assert "examples" not in quiet.stderr


def test_every_command_that_runs_examples_or_judges_takes_the_run_s_display_options():
    for command in (cli, *(cli.commands[name] for name in ("score", "reproduce", "rescore"))):
        assert "--no-progress" in [o for p in command.params for o in p.opts], command.name

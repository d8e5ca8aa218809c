"""`ragbench rescore RUN`: a finished run's saved predictions scored again (other metrics, a judge) into a
new folder, without calling the system's model; the original run is left as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import write_jsonl
from ragbench import _registry
from ragbench._replay.call_refs import resolved
from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench._run.rescore.rescore_run import rescore_run
from ragbench.api import ConfigError
from ragbench.testing import Registry, cli, installed_registry
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
    Evaluator(
        RunConfig.of(
            tasks=["popqa"],
            system=system,
            model=model,
            data={"popqa": str(data)},
            metrics=metrics,
            output=str(tmp_path / "run"),
            progress=False,
            **config,
        ),
        registry=registry if registry is not None else installed_registry(),
    ).run()


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
    outcome = rescore_run(
        finished,
        {
            "metrics": ["match", "+llm_judge"],
            "judges": [JUDGE],
            "metric_args": {"llm_judge.preset": "faithfulness", "llm_judge.score_range": "0-1"},
        },
        registry=installed_registry(),
    )
    assert snapshot(finished) == before  # the original is kept as it was
    assert outcome.run_dir == finished.parent / "run__rescored" and outcome.complete
    assert scoring_plugin.CALLS["system"] == 6 and scoring_plugin.CALLS["judge"] == 6  # the system's model: not again
    results = outcome.results
    assert set(results["results"]["popqa"]) == {"match", "llm_judge", "llm_judge_unparsed"}  # f1 replaced
    assert results["rescored_from"] == str(finished) and results["config"]["judges"] == [JUDGE]
    records = samples(outcome.run_dir, "popqa")
    original = samples(finished, "popqa")
    assert [r["trace"] for r in records] == [r["trace"] for r in original]
    assert [r["prediction"] for r in records] == [r["prediction"] for r in original]
    # the faithfulness prompt shows the documents the answer was given: rebuilt from the samples
    prompt = records[0]["judge_trace"][0]["request"]["messages"][0]["content"]
    assert "[1] Title 0\nPerson 0 is answer0." in prompt
    assert all(r["rescored"] and set(r["scores"]) == {"match", "llm_judge", "llm_judge_unparsed"} for r in records)
    # the judge's exchanges are a ready replay file of the rescored folder
    replay = [record for _, record in resolved(outcome.run_dir / "judge0_calls.jsonl")]
    assert len(replay) == 6 and all(r is not None and r["response"] == "correct" for r in replay)
    assert "re-scored from" in (outcome.run_dir / "report.md").read_text()


def test_rescore_adds_to_the_runs_metrics_and_keeps_failed_examples_as_they_were(tmp_path, popqa_records):
    popqa_run(tmp_path, popqa_records[:3] + ["{broken"], ["match"], system="closed_book", model="scripted:echo")
    outcome = rescore_run(
        tmp_path / "run", {"metrics": ["+f1"], "output": str(tmp_path / "new")}, registry=installed_registry()
    )
    assert set(outcome.results["results"]["popqa"]) == {"match", "f1"}
    assert outcome.results["counts"]["popqa"] == task_counts(4, 3, bad_records=1)
    assert not outcome.complete  # the bad record stays counted


def test_rescore_with_other_metrics_drops_the_runs_options_of_a_metric_it_no_longer_asks(finished, tmp_path):
    """The run's --metric-arg of llm_judge is the run's, not the user's: rescoring with em alone is not refused
    for it; given again by the user, an option of no metric asked still is."""
    judged = rescore_run(
        finished,
        {
            "metrics": ["+llm_judge"],
            "judges": [JUDGE],
            "output": str(tmp_path / "judged"),
            "metric_args": {"llm_judge.preset": "rubric"},
        },
        registry=installed_registry(),
    )
    assert judged.results["config"]["metric_args"] == {"llm_judge.preset": "rubric"}
    outcome = rescore_run(
        tmp_path / "judged", {"metrics": ["em"], "output": str(tmp_path / "em")}, registry=installed_registry()
    )
    assert set(outcome.results["results"]["popqa"]) == {"em"} and outcome.results["config"]["metric_args"] == {}
    with pytest.raises(ConfigError, match=r"--metric-arg llm_judge.preset=...: expected METRIC.KEY for a metric"):
        rescore_run(
            tmp_path / "judged",
            {"metrics": ["em"], "output": str(tmp_path / "again"), "metric_args": {"llm_judge.preset": "rubric"}},
            registry=installed_registry(),
        )


def test_rescore_writes_the_tasks_reading_of_the_gold_into_a_run_written_without_it(finished, tmp_path):
    path = finished / "samples" / "popqa.jsonl"
    older = [{k: v for k, v in record.items() if k != "gold_references"} for record in samples(finished, "popqa")]
    path.write_text("".join(json.dumps(record) + "\n" for record in older))
    outcome = rescore_run(
        finished, {"metrics": ["match"], "output": str(tmp_path / "new")}, registry=installed_registry()
    )
    assert [r["gold_references"] for r in samples(outcome.run_dir, "popqa")] == [r["gold"]["answers"] for r in older]


def test_rescore_refuses_its_own_folder_an_existing_run_and_an_unfinished_run(finished, tmp_path):
    with pytest.raises(ConfigError, match="is the run being re-scored; give a new folder"):
        rescore_run(finished, {"output": str(finished)}, registry=installed_registry())
    rescore_run(finished, {}, registry=installed_registry())
    with pytest.raises(ConfigError, match="already holds a run; --overwrite replaces it"):
        rescore_run(finished, {}, registry=installed_registry())
    assert rescore_run(finished, {"overwrite": True}, registry=installed_registry()).complete
    meta = json.loads((finished / "run.json").read_text())
    (finished / "run.json").write_text(json.dumps({**meta, "finished": False}))
    with pytest.raises(ConfigError, match="is not finished; finish it first"):
        rescore_run(finished, {"output": str(tmp_path / "other")}, registry=installed_registry())
    with pytest.raises(ConfigError, match="holds no ragbench run"):
        rescore_run(tmp_path / "nothing", {}, registry=installed_registry())


def test_rescore_cli_prints_the_summary_and_exits_1_when_a_metric_fails(finished, tmp_path, monkeypatch):
    monkeypatch.setattr(_registry, "installed_registry", scoring_plugin.registry)
    scoring_plugin.FAILING.add("101")
    result = CliRunner().invoke(
        cli, ["rescore", str(finished), "--metrics", "+scored:raise", "--output", str(tmp_path / "flaky")]
    )
    assert result.exit_code == 1
    assert "popqa: 1 x metric scored:raise: RuntimeError: 101" in result.output
    assert "re-scored 6 examples" in result.output
    scoring_plugin.FAILING.clear()
    fixed = CliRunner().invoke(
        cli, ["rescore", str(finished), "--metrics", "+scored:raise", "--output", str(tmp_path / "fixed")]
    )
    assert fixed.exit_code == 0, fixed.output
    assert scoring_plugin.CALLS["system"] == 6


def test_rescore_with_an_nli_metric_equals_a_run_that_scored_it(tmp_path):
    from support.alce_helpers import ALCE_DATA, DATA_FILES, NLI_REPLAY, write_predictions

    predictions = write_predictions(tmp_path / "predictions.jsonl", "asqa")
    config = {
        "tasks": ["alce_asqa"],
        "system": "recorded",
        "system_args": {"path": str(predictions)},
        "data": {"alce_asqa": str(ALCE_DATA / DATA_FILES["asqa"])},
        "task_args": {"run_py_cleanup": False},
        "progress": False,
        "bootstrap_iters": 50,
    }
    Evaluator(
        RunConfig.of(**config, metrics=["str_em"], output=str(tmp_path / "plain")), registry=installed_registry()
    ).run()
    both = Evaluator(
        RunConfig.of(
            **config, metrics=["str_em", "citation"], nli=f"replay:{NLI_REPLAY}", output=str(tmp_path / "both")
        ),
        registry=installed_registry(),
    ).run()
    rescored = rescore_run(
        tmp_path / "plain", {"metrics": ["+citation"], "nli": f"replay:{NLI_REPLAY}"}, registry=installed_registry()
    )
    assert rescored.complete and rescored.results["results"] == both.results["results"]
    assert rescored.results["cost"]["rescoring"]["nli"]["requests"] > 0
    assert (rescored.run_dir / "nli_calls.jsonl").stat().st_size > 0  # a replay file of its own


def test_rescore_of_a_crag_run_reproduces_its_judged_numbers(tmp_path):
    from test_crag_score_cli import score_upstream_rows

    _, results = score_upstream_rows(tmp_path, "kddcup2024")  # its judge: a replay of upstream's replies
    rescored = rescore_run(tmp_path / "out", {}, registry=installed_registry())
    assert rescored.results["results"] == results["results"] and rescored.results["counted"] == results["counted"]
    assert rescored.results["cost"]["rescoring"]["llm_calls"] == results["cost"]["llm_calls"]  # the judge's calls
    assert [r["scores"] for r in samples(rescored.run_dir, "crag_t1")] == [
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
    outcome = rescore_run(
        tmp_path / "run",
        {"metrics": ["llm_judge"], "cache": str(cache), "output": str(tmp_path / "rescored")},
        scoring_plugin.registry(),
    )
    assert scoring_plugin.CALLS["judge"] == 12  # no new judge call: every one answered by the cache
    rescored = samples(outcome.run_dir, "popqa")
    assert all(step["cached"] for record in rescored for step in record["judge_trace"]) and len(rescored) == 6
    assert [r["scores"] for r in rescored] == [
        {"llm_judge": r["scores"]["llm_judge"], "llm_judge_unparsed": r["scores"]["llm_judge_unparsed"]}
        for r in samples(tmp_path / "run", "popqa")
    ]


def test_a_saved_line_that_is_no_sample_record_is_named_and_counted_missing_in_the_rescored_run(finished, caplog):
    path = finished / "samples" / "popqa.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    damaged = json.loads(lines[1])
    del damaged["index"]  # a line edited by hand
    path.write_text("".join([lines[0], json.dumps(damaged) + "\n", *lines[2:]]), encoding="utf-8")
    outcome = rescore_run(finished, {"metrics": ["match"]}, registry=installed_registry())
    assert f"{path}:2: not a sample record" in caplog.text and "counted as missing" in caplog.text
    counts = json.loads((outcome.run_dir / "results.json").read_text())["counts"]["popqa"]
    assert (counts["records"], counts["missing"]) == (len(lines) - 1, 1) and not outcome.complete


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

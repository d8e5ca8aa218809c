"""Scores are typed where they are made, and a metric that fails counts like an example that fails: in
the counts, the failures, completeness and the exit code; `--resume` scores them again without running
the system."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragbench.testing import EvalResult, Registry, cli, run_eval, task_results
from support import scoring_plugin
from support.helpers import records_without_texts, samples
from support.scoring_plugin import JUDGE, SYSTEM, demo_args, plugin_state  # noqa: F401 (plugin_state: an autouse fixture)


def evaluate(
    tmp_path, metrics: list[str], resume: bool = False, registry: Registry | None = None, **config
) -> EvalResult:
    return run_eval(
        "demo",
        "closed_book",
        SYSTEM,
        metrics=metrics,
        limit=6,
        output=tmp_path / "run",
        resume=resume,
        bootstrap_iters=50,
        registry=registry or scoring_plugin.registry(),
        **config,
    )


def metric_objects(names: list[str]) -> list:
    """The metrics of these names, as a run of the scoring plugin's registry builds them (without options)."""
    registry = scoring_plugin.registry()
    return [registry.metric_class(name)() for name in names]


def saved(tmp_path) -> dict[str, dict]:
    return {record["id"]: record for record in samples(tmp_path / "run", "demo")}


@pytest.mark.parametrize(
    "kind,type_name", [("string", "str '1.0'"), ("nan", "float nan"), ("inf", "float inf"), ("list", "list [1.0]")]
)
def test_a_value_that_is_not_a_score_fails_that_metric_naming_it_the_key_and_the_type(tmp_path, kind, type_name):
    outcome = evaluate(tmp_path, ["match", f"scored:{kind}"])
    record = next(iter(saved(tmp_path).values()))
    assert record["score_errors"] == {
        f"scored:{kind}": f"InvalidScore: metric scored:{kind} returned {type_name} "
        f"for key 'scored:{kind}': a score is a "
        + ("finite number" if kind in ("nan", "inf") else "number")
        + " or None"
    }
    assert set(record["scores"]) == {"match"}  # the run went on, the other metric scored
    results = outcome.results
    assert results["counts"]["demo"]["metric_failures"] == 6 and not outcome.complete
    detail = results["details"]["demo"][f"scored:{kind}"]
    assert (detail["value"], detail["n"], detail["n_errors"]) == (None, 0, 6)
    [group] = results["failures"]["demo"]
    assert group["cause"] == f"metric scored:{kind}: InvalidScore" and group["count"] == 6 and len(group["ids"]) == 6


@pytest.mark.parametrize("kind,value", [("numpy", 0.5), ("numpy_int", 1.0), ("bool", 1.0), ("none", None)])
def test_numpy_scalars_and_bools_are_saved_as_numbers(tmp_path, kind, value):
    outcome = evaluate(tmp_path, [f"scored:{kind}"])
    line = (tmp_path / "run" / "samples" / "demo.jsonl").read_text().splitlines()[0]
    saved_value = json.loads(line)["scores"][f"scored:{kind}"]  # a JSON number: never "0.5", nor true
    assert saved_value == value and (value is None or type(saved_value) is float)
    assert outcome.complete and outcome.results["results"]["demo"][f"scored:{kind}"] == value


def test_a_value_outside_the_declared_range_or_an_undeclared_key_fails_the_metric(tmp_path):
    evaluate(tmp_path, ["scored:range", "scored:extra"])
    errors = next(iter(saved(tmp_path).values()))["score_errors"]
    assert errors["scored:range"] == (
        "InvalidScore: metric scored:range returned float 2 for key 'scored:range', outside its declared range [0, 1]"
    )
    assert errors["scored:extra"].startswith(
        "InvalidScore: metric scored:extra returned keys ['scored:extra', "
        "'surprise'], expected ['scored:extra'] (undeclared surprise"
    )


def test_metrics_that_raise_on_some_examples_are_counted_and_the_cli_exits_1(tmp_path, monkeypatch):
    scoring_plugin.FAILING.update({"9000", "9002", "9004"})
    result = CliRunner().invoke(cli, demo_args("match,scored:raise", tmp_path / "run"), obj=scoring_plugin.registry())
    assert result.exit_code == 1
    assert (
        "demo: 3 x metric scored:raise: RuntimeError: 9000, 9002, 9004 - e.g. RuntimeError: flaky metric on 9000"
        in result.output
    )
    assert (
        "incomplete run (demo: 3 metric failure(s) (metric scored:raise: RuntimeError); --resume scores the "
        "examples whose metrics failed again (the system is not run again))"
    ) in result.output
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["complete"] is False and results["counts"]["demo"]["metric_failures"] == 3
    detail = results["details"]["demo"]["scored:raise"]
    assert (detail["n"], detail["n_errors"]) == (3, 3)  # the 3 failed are errors, not a smaller n unseen
    assert "- demo: 3 x metric scored:raise: RuntimeError" in (tmp_path / "run" / "report.md").read_text()


def test_resume_scores_only_the_failed_metrics_examples_again_without_running_the_system(tmp_path, monkeypatch):
    scoring_plugin.FAILING.update({"9000", "9002", "9004"})
    first = evaluate(tmp_path, ["match", "scored:raise"])
    assert first.results["counts"]["demo"]["metric_failures"] == 3 and scoring_plugin.CALLS["system"] == 6
    traces = {i: r["trace"] for i, r in saved(tmp_path).items()}
    scoring_plugin.FAILING.clear()
    registry, loaded = scoring_plugin.registry(), []
    engine_classes = registry.load

    def load(kind, name):  # the registry's engine classes, each engine built counted
        found = engine_classes(kind, name)
        if kind != "engines":
            return found

        class Counted(found):
            def __init__(self, model, **options):
                loaded.append(model)
                super().__init__(model, **options)

        return Counted

    monkeypatch.setattr(registry, "load", load)
    resumed = evaluate(tmp_path, ["match", "scored:raise"], resume=True, registry=registry)
    assert loaded == []  # no engine of the system loaded
    assert scoring_plugin.CALLS["system"] == 6  # and the system's model never called again
    attempt = resumed.results["cost"]["this_attempt"]
    assert (attempt["llm_calls"], attempt["cache_hits"], attempt["examples"]) == (0, 0, 0)
    assert resumed.complete and resumed.results["counts"]["demo"]["metric_failures"] == 0
    assert resumed.results["details"]["demo"]["scored:raise"]["n"] == 6
    records = saved(tmp_path)
    assert sorted(i for i, r in records.items() if r.get("rescored")) == ["9000", "9002", "9004"]
    assert {i: r["trace"] for i, r in records.items()} == traces  # the system's calls as they were
    assert len(records) == 6 == len((tmp_path / "run" / "samples" / "demo.jsonl").read_text().splitlines())
    again = evaluate(tmp_path, ["match", "scored:raise"], resume=True)
    assert again.already_finished  # nothing left


def test_a_judge_whose_calls_all_fail_is_a_metric_failure_and_resume_asks_it_again(tmp_path):
    scoring_plugin.JUDGE_DOWN[0] = True
    first = evaluate(tmp_path, ["llm_judge"], judges=[JUDGE])
    assert not first.complete and first.results["counts"]["demo"]["metric_failures"] == 6
    assert first.results["details"]["demo"]["llm_judge"]["n_errors"] == 6  # not a smaller denominator unseen
    assert "every judge call failed" in first.results["failures"]["demo"][0]["example"]
    scoring_plugin.JUDGE_DOWN[0] = False
    resumed = evaluate(tmp_path, ["llm_judge"], judges=[JUDGE], resume=True)
    assert resumed.complete and resumed.results["results"]["demo"]["llm_judge"] == 1.0  # every answer is "Paris"
    assert scoring_plugin.CALLS["system"] == 6
    assert not any(r.get("infrastructure_failures") for r in saved(tmp_path).values())  # the failed calls replaced


def test_a_failed_corpus_metric_is_counted_and_resume_computes_it_again(tmp_path):
    scoring_plugin.CORPUS_FAILS[0] = True
    first = evaluate(tmp_path, ["match", "scored:corpus"])
    assert not first.complete and first.results["counts"]["demo"]["metric_failures"] == 1
    assert first.results["failures"]["demo"][0]["cause"] == "metric scored:corpus: RuntimeError"
    scoring_plugin.CORPUS_FAILS[0] = False
    resumed = evaluate(tmp_path, ["match", "scored:corpus"], resume=True)
    assert resumed.complete and resumed.results["results"]["demo"]["scored:corpus"] == 0.25


def test_a_corpus_key_of_a_metric_that_failed_on_some_examples_counts_them_as_errors_not_in_n(tmp_path):
    scoring_plugin.FAILING.update({"9000", "9002"})
    # scored:string fails on every example: another metric's failures are not this one's
    details = evaluate(tmp_path, ["scored:raise_corpus", "scored:string"]).results["details"]["demo"]
    assert (details["scored:raise_corpus"]["n"], details["scored:raise_corpus"]["n_errors"]) == (4, 2)
    corpus = details["scored:raise_corpus_mean"]  # computed from the 4 examples the metric scored
    assert (corpus["value"], corpus["n"], corpus["n_errors"]) == (1.0, 4, 2)


def test_a_saved_score_that_is_not_a_number_is_counted_not_a_crash_and_resume_scores_it_again(tmp_path):
    evaluate(tmp_path, ["match", "scored:numpy"])
    path = tmp_path / "run" / "samples" / "demo.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[1]["scores"]["scored:numpy"] = "0.5"  # what an older ragbench saved for numpy.float32(0.5)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    metrics = metric_objects(["match", "scored:numpy"])
    scores = task_results(records_without_texts(records), metrics, expected=6, iterations=10, seed=0)
    assert scores["counts"]["metric_failures"] == 1 and scores["details"]["scored:numpy"]["n_errors"] == 1
    assert scores["failures"][0]["example"].startswith("InvalidScore: saved metric scored:numpy returned str '0.5'")
    (tmp_path / "run" / "results.json").unlink()
    resumed = evaluate(tmp_path, ["match", "scored:numpy"], resume=True)
    assert resumed.complete and resumed.results["details"]["demo"]["scored:numpy"]["n"] == 6
    assert saved(tmp_path)[records[1]["id"]]["scores"]["scored:numpy"] == 0.5


def test_a_saved_sample_without_a_key_of_its_metric_is_counted_not_left_out_of_n_and_resume_scores_it(tmp_path):
    evaluate(tmp_path, ["match", "scored:numpy"])
    path = tmp_path / "run" / "samples" / "demo.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    del records[1]["scores"]["scored:numpy"]  # saved by an older version of the metric, without this key
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    metrics = metric_objects(["match", "scored:numpy"])
    scores = task_results(records_without_texts(records), metrics, expected=6, iterations=10, seed=0)
    detail = scores["details"]["scored:numpy"]
    assert (detail["n"], detail["n_errors"], scores["counts"]["metric_failures"]) == (5, 1, 1)
    assert scores["failures"][0]["example"] == "InvalidScore: the sample has no value for key 'scored:numpy'"
    (tmp_path / "run" / "results.json").unlink()
    resumed = evaluate(tmp_path, ["match", "scored:numpy"], resume=True)
    assert resumed.complete and resumed.results["details"]["demo"]["scored:numpy"]["n"] == 6


def test_a_value_that_fails_in_one_slice_only_is_counted_there(tmp_path):
    from ragbench.api import Metric

    class HalfBroken(Metric):
        name = "half"

        def aggregate(self, key, values):
            if len(values) == 1:
                raise ValueError("one value is not enough")
            return sum(values) / len(values)

    samples = [
        {"id": str(i), "index": i, "meta": {"kind": "a" if i else "b"}, "scores": {"half": 1.0}} for i in range(3)
    ]
    scores = task_results(records_without_texts(samples), [HalfBroken()], slices=["kind"], expected=3, iterations=20)
    entry = scores["details"]["half"]
    assert entry["value"] == 1.0 and entry["slices"]["kind"]["a"]["value"] == 1.0
    assert entry["slices"]["kind"]["b"]["error"] == "ValueError: one value is not enough"
    assert scores["counts"]["metric_failures"] == 1
    assert scores["failures"][0]["keys"] == ["half by kind=b"]

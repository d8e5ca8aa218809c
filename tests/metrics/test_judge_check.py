"""A judged key checked against human labels in results.json's `human_agreement` (and its PPI interval beside
the judged value in `details`, report.md and the console), and what judging cost in `judge_cost`."""

from __future__ import annotations

import json

import pytest
from test_crag_score_cli import score_upstream_rows

from conftest import write_jsonl
from ragbench._cost.prices import model_price
from ragbench._statistics.ppi import ppi_mean
from support.crag_helpers import parity_fixture
from support.helpers import cli_here, run, samples


def judge_rules(tmp_path):
    """A judge that says capitals are answered correctly and nothing else is."""
    path = tmp_path / "judge.json"
    path.write_text(json.dumps([{"pattern": "capital of", "response": "correct"}, {"response": "incorrect"}]))
    return f"scripted:{path}"


def judged_run(tmp_path, name="run", **config):
    """A closed-book demo run on the echoing scripted model, judged by `judge_rules`."""
    return run(
        tmp_path,
        name=name,
        tasks=["demo"],
        system="closed_book",
        model="scripted:echo",
        metrics=["llm_judge"],
        judges=[judge_rules(tmp_path)],
        **config,
    )


def labelled_run(tmp_path, labels):
    """`judged_run` with `labels` ({id: label}) as its labels file."""
    path = write_jsonl(
        tmp_path / "labels.jsonl", [{"id": i, "metric": "llm_judge", "label": v} for i, v in labels.items()]
    )
    return judged_run(tmp_path, human_labels=str(path))


def demo_ids_and_verdicts(tmp_path):
    """The judge's verdict of each example of a first judged run (folder `first`)."""
    first = judged_run(tmp_path, name="first")
    assert first["results"]["demo"]["llm_judge"] not in (0.0, 1.0)
    return {s["id"]: s["scores"]["llm_judge"] for s in samples(tmp_path / "first", "demo")}


def test_human_labels_give_agreement_and_the_ppi_interval_beside_the_judged_value(tmp_path):
    verdicts = demo_ids_and_verdicts(tmp_path)
    labelled = list(verdicts)[::2]
    labels = {i: verdicts[i] for i in labelled}
    labels[labelled[0]] = 1.0 - labels[labelled[0]]  # the humans disagree once
    results = labelled_run(tmp_path, {**labels, "no-such-example": 1})
    entry = results["human_agreement"]["demo"]["llm_judge"]
    assert entry["n_labelled"] == 12 and entry["n_unlabelled"] == len(verdicts) - 12
    assert entry["accuracy"] == pytest.approx(11 / 12)
    assert sum(map(sum, entry["confusion"])) == 12 and entry["labels"] == [0.0, 1.0]
    assert entry["labels_unknown"] == 1 and entry["labels_unjudged"] == 0
    expected = ppi_mean(
        [labels[i] for i in labelled],
        [verdicts[i] for i in labelled],
        [v for i, v in verdicts.items() if i not in labels],
    )
    assert entry["ppi"]["value"] == pytest.approx(expected.value)
    assert entry["ppi"]["ci95"] == pytest.approx([expected.low, expected.high])
    assert entry["ppi"]["effective_n"] == pytest.approx(expected.effective_n)
    assert results["details"]["demo"]["llm_judge"]["ppi"]["ci95"] == entry["ppi"]["ci95"]
    assert "ppi" not in results["details"]["demo"]["llm_judge_unparsed"]
    assert set(entry["slices"]["prop"]) == set(results["details"]["demo"]["llm_judge"]["slices"]["prop"])
    capital = entry["slices"]["prop"]["capital"]
    shown = results["details"]["demo"]["llm_judge"]["slices"]["prop"]["capital"]
    assert capital["n_labelled"] > 0 and capital["n_unlabelled"] > 0
    assert shown["ppi"]["ci95"] == capital["ppi"]["ci95"]
    report = (tmp_path / "run" / "report.md").read_text()
    assert "PPI with human labels |" in report and "## Judges against human labels" in report
    assert "| human \\ judge | 0.00 | 1.00 |" in report
    assert "| capital | " in report and "; PPI " in report  # the slice table's judged value with its PPI


def test_a_run_whose_every_judged_example_has_a_label_says_the_humans_mean_is_the_estimate(tmp_path):
    verdicts = demo_ids_and_verdicts(tmp_path)
    entry = labelled_run(tmp_path, verdicts)["human_agreement"]["demo"]["llm_judge"]
    assert entry["accuracy"] == 1.0 and entry["kappa"] == pytest.approx(1.0)
    assert entry["ppi"] is None and "every judged example has a human label" in entry["ppi_note"]


def test_judge_cost_counts_calls_and_tokens_per_metric_and_prices_them_from_the_price_table(tmp_path):
    judge = judge_rules(tmp_path)
    prices = tmp_path / "prices.yaml"
    prices.write_text(f"'{judge}': {{prompt: 2.0, completion: 8.0}}\n")
    results = judged_run(tmp_path, price_table=str(prices))
    cost = results["judge_cost"]["demo"]["llm_judge"]
    records = samples(tmp_path / "run", "demo")
    steps = [step for record in records for step in record["judge_trace"]]
    assert cost["calls"] == len(records) == len(steps) and cost["cached"] == 0
    assert cost["prompt_tokens"] == sum(s["prompt_tokens"] for s in steps) > 0
    assert cost["usd"] == pytest.approx((cost["prompt_tokens"] * 2.0 + cost["completion_tokens"] * 8.0) / 1e6)


def test_openai_judges_are_priced_from_the_built_in_table_unless_sent_elsewhere():
    assert model_price("openai:gpt-4o-mini", {}, {}) == {"prompt": 0.15, "completion": 0.60, "cached_prompt": 0.075}
    assert model_price("openai:gpt-4o-mini", {"base_url": "http://127.0.0.1:8000/v1"}, {}) is None
    assert model_price("vllm:gpt-4o-mini", {}, {"gpt-4o-mini": {"prompt": 1.0, "completion": 1.0}}) is not None
    assert model_price("hf:some/model", {}, {}) is None


def test_a_bad_labels_file_stops_the_run_before_it_starts(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"id": "9000", "metric": "llm_judge"}\n')
    result = cli_here(
        "--tasks",
        "demo",
        "--judge",
        "scripted:echo",
        "--human-labels",
        str(labels),
        "--output",
        str(tmp_path / "run"),
        "--no-progress",
    )
    assert result.returncode == 2 and f"{labels}:1: no label" in result.stderr
    assert not (tmp_path / "run").exists()


def test_a_bad_price_table_stops_the_run_before_it_starts(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("gpt-4o: {prompt: 1}\n")
    result = cli_here(
        "--tasks", "demo", "--price-table", str(prices), "--output", str(tmp_path / "run"), "--no-progress"
    )
    assert result.returncode == 2 and "entry 'gpt-4o' is not {prompt: USD, completion: USD}" in result.stderr


def test_rescore_with_human_labels_adds_the_check_to_the_rescored_run(tmp_path):
    verdicts = demo_ids_and_verdicts(tmp_path)
    labels = write_jsonl(
        tmp_path / "labels.jsonl", [{"id": i, "metric": "llm_judge", "label": v} for i, v in list(verdicts.items())[:6]]
    )
    result = cli_here("rescore", str(tmp_path / "first"), "--human-labels", str(labels))
    assert result.returncode == 0, result.stderr
    rescored = json.loads((tmp_path / "first__rescored" / "results.json").read_text())
    assert rescored["human_agreement"]["demo"]["llm_judge"]["n_labelled"] == 6
    assert "llm_judge against human labels" in result.stdout


def test_crag_human_labels_shipped_with_the_predictions_check_the_crag_judge(tmp_path):
    """CRAG's human-graded predictions: crag_human's label on the auto-eval scale checks the judge's accuracy
    and score; predictions without a label are the unlabelled examples of the PPI estimate."""
    n = len(parity_fixture("kddcup2024")["rows"])
    labels = (["perfect", "acceptable", "missing", "incorrect", None] * n)[:n]
    _, results = score_upstream_rows(tmp_path, "kddcup2024", labels=labels)
    checked = results["human_agreement"]["crag_t1"]
    assert set(checked) == {"accuracy", "score"}
    score = checked["score"]
    assert score["source"] == "key human_score"
    assert score["n_labelled"] + score["n_unlabelled"] == n
    assert score["n_labelled"] == sum(label is not None for label in labels)
    assert set(score["labels"]) <= {-1.0, 0.0, 1.0}
    assert score["ppi"] is not None and "domain" in score["slices"]


def test_the_viewers_run_page_shows_the_ppi_interval_and_the_judging_lines(tmp_path):
    from ragbench._view.catalog import RunCatalog
    from ragbench._view.site import Site
    from ragbench.testing import installed_registry

    verdicts = demo_ids_and_verdicts(tmp_path)
    results = labelled_run(tmp_path, dict(list(verdicts.items())[:8]))
    site = Site(RunCatalog([str(tmp_path / "run")]), registry=installed_registry())
    page = site.data(f"run/{site.runs[0].rid}")
    assert page["tasks"]["demo"]["metrics"]["llm_judge"]["ppi"] == results["details"]["demo"]["llm_judge"]["ppi"]
    lines = page["judging"]["demo"]
    assert lines[0].startswith("the system's model scripted:echo: 24 calls")  # the run's own cost first
    assert lines[1].startswith("judging llm_judge: 24 calls")
    assert lines[2].startswith("llm_judge against human labels") and "PPI " in lines[2]


def test_a_labels_file_that_cannot_be_read_at_the_runs_end_does_not_keep_it_from_its_results(tmp_path, caplog):
    """The command read the files when it started; one cut short since (here: given to the run unread) leaves
    results.json without `human_agreement`, the run warning with the file, the line and the fix."""
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"id": "9000", "metric": "llm_judge", "label": 1}\n{"id": "9001", "metr')
    prices = tmp_path / "prices.yaml"
    prices.write_text("gpt-4o: [1, 2]\n")
    results = judged_run(tmp_path, human_labels=str(labels), price_table=str(prices))
    assert "human_agreement" not in results and results["results"]["demo"]["llm_judge"] is not None
    assert f"{labels}:2: not a JSON object" in caplog.text and "ragbench rescore" in caplog.text
    assert "entry 'gpt-4o'" in results["judge_cost"]["demo"]["llm_judge"]["usd_note"]


def tally_of(labels, metrics=None):
    from ragbench._reports.judging.human_agreement import JudgeCheckTally
    from ragbench._reports.judging.human_labels import HumanLabels
    from ragbench.metrics.judge import LlmJudge

    return JudgeCheckTally("demo", metrics or [LlmJudge()], ("topic",), HumanLabels("labels.jsonl", labels))


def test_a_label_of_a_failed_example_is_counted_unjudged_not_unknown():
    from ragbench.api import SampleRecord

    tally = tally_of({(None, "llm_judge"): {"a": 1.0, "b": 0.0, "c": 1.0}})
    tally.add(SampleRecord(id="a", scores={"llm_judge": 1.0}))
    tally.add(SampleRecord(id="b", error="EngineError: the model server went away"))
    tally.add(SampleRecord(id="d", scores={"llm_judge": 0.0}))
    entry = tally.sections()["human_agreement"]["llm_judge"]
    assert (entry["n_labelled"], entry["n_unlabelled"]) == (1, 1)
    assert entry["labels_unjudged"] == 1 and entry["labels_unknown"] == 1  # b failed; c is no example


def test_labels_of_a_key_no_judge_scored_are_named_not_silently_dropped(caplog):
    tally = tally_of({(None, "em"): {"a": 1.0}, (None, "llm_judge"): {"a": 1.0}})
    assert (
        "--human-labels labels.jsonl: em is no judged key of task demo (llm_judge, llm_judge_unparsed)" in caplog.text
    )
    assert set(tally.pairs) == {"llm_judge"}

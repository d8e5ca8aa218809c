"""Money in every results.json: the system's own model calls priced by the model that answered each
(`model_cost`, a local model said to be unpriced rather than free), and judges of different prices priced
apart (`judge_cost` `by_model`), each judge call naming its judge in the samples (`Step.role`); samples written
before a call named its judge still read and priced where they can be."""

from __future__ import annotations

import json

import pytest

from ragbench._config.judging import RunJudging
from ragbench._config.models import RunModels
from ragbench._config.run_config import RunConfig
from ragbench._cost.call_cost import JudgeCostTally, ModelCostTally
from ragbench._cost.prices import ModelPrices
from ragbench._view.catalog import RunCatalog
from ragbench._view.site import Site
from ragbench.api import SampleRecord
from ragbench.testing import installed_registry
from support.helpers import cli_here, run, samples


def judge_rules(tmp_path, name):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps([{"pattern": "capital of", "response": "correct"}, {"response": "incorrect"}]))
    return f"scripted:{path}"


def priced_run(tmp_path, judges, prices, **config):
    table = tmp_path / "prices.yaml"
    table.write_text("".join(f"'{model}': {{prompt: {p}, completion: {c}}}\n" for model, (p, c) in prices.items()))
    return run(
        tmp_path,
        tasks=["demo"],
        system="closed_book",
        model="scripted:echo",
        metrics=["llm_judge"],
        judges=judges,
        price_table=str(table),
        **config,
    )


def usd(prompt, completion, price):
    return round((prompt * price[0] + completion * price[1]) / 1e6, 6)


def test_the_systems_model_calls_are_priced_next_to_judging(tmp_path):
    judge = judge_rules(tmp_path, "judge")
    results = priced_run(tmp_path, [judge], {"scripted:echo": (1.0, 3.0), judge: (2.0, 8.0)})
    cost = results["model_cost"]["demo"]
    steps = [s for r in samples(tmp_path / "run", "demo") for s in r["trace"] if s["kind"] == "llm"]
    assert cost["calls"] == len(steps) > 0 and cost["model"] == "scripted:echo"
    assert cost["prompt_tokens"] == sum(s["prompt_tokens"] for s in steps) > 0
    assert cost["usd"] == usd(cost["prompt_tokens"], cost["completion_tokens"], (1.0, 3.0)) > 0
    report = (tmp_path / "run" / "report.md").read_text()
    assert "demo: the system's model scripted:echo: " in report and f"${cost['usd']:.4f}" in report


def test_judges_of_different_prices_are_priced_apart(tmp_path):
    first, second = judge_rules(tmp_path, "first"), judge_rules(tmp_path, "second")
    results = priced_run(tmp_path, [first, second], {first: (2.0, 8.0), second: (0.5, 1.0)})
    cost = results["judge_cost"]["demo"]["llm_judge"]
    records = samples(tmp_path / "run", "demo")
    assert {s["role"] for r in records for s in r["judge_trace"]} == {"judge:0", "judge:1"}
    assert all("role" not in s for r in records for s in r["trace"])  # the --model's calls: as they were
    shares = cost["by_model"]
    assert list(shares) == ["judge 1", "judge 2"] and shares["judge 1"]["model"] == first
    for label, price in (("judge 1", (2.0, 8.0)), ("judge 2", (0.5, 1.0))):
        share = shares[label]
        assert share["usd"] == usd(share["prompt_tokens"], share["completion_tokens"], price) > 0
    assert cost["usd"] == pytest.approx(shares["judge 1"]["usd"] + shares["judge 2"]["usd"])
    assert shares["judge 1"]["usd"] != shares["judge 2"]["usd"]


def test_a_local_model_is_said_to_be_unpriced_not_free():
    config = RunConfig.of(tasks=["demo"], model="hf:Qwen/Qwen2.5-7B-Instruct", judges=["vllm:/models/judge"])
    prices = ModelPrices(config.models, config.judging, {})
    assert prices.of(None).price is None and "local model, not priced" in (prices.of(None).note or "")
    assert "vllm:/models/judge is a local model, not priced" in (prices.of("judge:0").note or "")
    tally = ModelCostTally(prices)
    tally.add(record_with(trace=[llm_step(10, 2)]))
    found = tally.sections()["model_cost"]
    assert found["usd"] is None and "hf:Qwen/Qwen2.5-7B-Instruct is a local model, not priced" in found["usd_note"]


def test_the_default_model_is_named_hf_embedded_in_the_console_results_and_report(tmp_path, monkeypatch):
    """--model left at its default: the run loads the embedded model, and every place that names the model
    that answered says `hf:embedded`, never "?". The engine loaded for the default answers as scripted:echo
    (the real model is test_demo_with_embedded_model's), so the name must come from the default itself."""
    from ragbench._run.models import run_engines
    from ragbench.testing import load_engine

    asked = []

    def default_answered_by_echo(model, **options):
        asked.append(model)
        return load_engine("scripted:echo" if model is None else model, **options)

    monkeypatch.setattr(run_engines, "load_engine", default_answered_by_echo)
    out = tmp_path / "run"
    ran = cli_here("--tasks", "demo", "--system", "vanilla", "--limit", "2", "--no-progress", "--output", str(out))
    assert ran.returncode == 0, ran.stderr
    assert asked == [None]  # the run asked for the default model: no --model reached the engine loader
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["model"] == "hf:embedded"
    cost = results["model_cost"]["demo"]
    assert cost["model"] == "hf:embedded" and "hf:embedded is a local model, not priced" in cost["usd_note"]
    line = "demo: the system's model hf:embedded: 2 calls"
    assert line in ran.stdout and line in (out / "report.md").read_text()
    assert Site(RunCatalog([str(tmp_path)]), registry=installed_registry()).data("run/run")["model"] == "hf:embedded"


def test_judge_calls_saved_before_they_named_their_judge_are_priced_where_the_judges_share_a_price():
    same = RunConfig.of(tasks=["demo"], judges=["openai:gpt-4o-mini", "openai:gpt-4o-mini"])
    apart = RunConfig.of(tasks=["demo"], judges=["openai:gpt-4o", "openai:gpt-4o-mini"])
    older = record_with(judge_trace=[llm_step(1000, 10, name="judge:llm_judge", role=None)] * 2)
    shared = JudgeCostTally(ModelPrices(same.models, same.judging, {}))
    shared.add(older)
    assert shared.sections()["judge_cost"]["llm_judge"]["usd"] == usd(2000, 20, (0.15, 0.60))
    mixed = JudgeCostTally(ModelPrices(apart.models, apart.judging, {}))
    mixed.add(older)
    entry = mixed.sections()["judge_cost"]["llm_judge"]
    assert entry["usd"] is None and "do not say which judge answered" in entry["usd_note"]


def test_results_written_before_model_cost_still_render():
    from ragbench._cost.cost_lines import model_cost_lines
    from ragbench._reports.results.schema import Results

    results = Results(results={}, details={}, counts={}, complete=True, cost={}, config={}, versions={})  # type: ignore[typeddict-item]
    assert results.model_cost is None and model_cost_lines(results) == []


def llm_step(prompt, completion, name="answer", role=None):
    """A traced LLM call as a sample line holds it."""
    return {"kind": "llm", "name": name, "request": {}, "prompt_tokens": prompt, "completion_tokens": completion} | (
        {"role": role} if role else {}
    )


def record_with(trace=(), judge_trace=()):
    """A sample record of these steps, read as the run's readers read a sample line."""
    return SampleRecord.from_dict({"index": 0, "id": "1", "trace": list(trace), "judge_trace": list(judge_trace)})


def test_a_step_a_metric_recorded_in_the_judge_trace_is_no_judge_call():
    """`ctx.record_step` in a metric (umbrela's judged qrels pairs) puts a custom step among the judge's calls:
    neither judge_cost nor the estimate's figures count it as a call."""
    from ragbench._cost.estimate_figures import example_figures

    recorded = {"kind": "custom", "name": "umbrela_qrels", "request": {}, "response": {"judged": []}}
    record = record_with(judge_trace=[llm_step(1000, 10, name="judge:umbrela", role="judge"), recorded])
    prices = ModelPrices(RunModels(), RunJudging(judges=["openai:gpt-4o-mini"]), {})
    tally = JudgeCostTally(prices)
    tally.add(record)
    assert {name: cost["calls"] for name, cost in tally.sections()["judge_cost"].items()} == {"umbrela": 1}
    figures = example_figures(record, prices)
    assert (
        {key for key in figures if key.startswith("judge:")} == {key for key in figures if "umbrela " in key} != set()
    )

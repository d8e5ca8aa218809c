"""Cost beside every number: results.json's `efficiency` (tokens and dollars per correct answer, calls and searches
per example, latency p50/p95 by call kind) is what the samples say, counted exactly; the console, report.md and
the viewer show it beside each key; `ragbench compare` puts runs side by side and marks the Pareto front of
quality and cost."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._config.judging import RunJudging
from ragbench._config.models import RunModels
from ragbench._cost.cost_table import pareto_front
from ragbench._cost.efficiency import EfficiencyTally
from ragbench._cost.prices import ModelPrices
from ragbench.api import KeySpec, Metric, MetricDeclaration, SampleRecord
from support.helpers import cli_here, samples

PRICE = {"prompt": 3.0, "completion": 7.0}


class Exact(Metric):
    name = "exact"
    declares = MetricDeclaration(value_range=(0, 1))


class Graded(Metric):  # a percentage, and a key whose lower values are better: no correct answers to count
    name = "graded"
    declares = MetricDeclaration(
        keys=("pct", "loss"), key_specs={"pct": KeySpec(True, (0, 100)), "loss": KeySpec(False, (0, 1))}
    )


def prices(priced: bool) -> ModelPrices:
    return ModelPrices(RunModels(model="scripted:echo"), RunJudging(), {"scripted:echo": PRICE} if priced else {})


step = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["llm", "retrieval", "custom"]),
        "name": st.just("s"),
        "request": st.just({}),
        "prompt_tokens": st.integers(0, 5000),
        "completion_tokens": st.integers(0, 500),
        "seconds": st.floats(0, 30, allow_nan=False),
        "cached": st.booleans(),
    }
)
record = st.fixed_dictionaries(
    {
        "trace": st.lists(step, max_size=5),
        "scores": st.fixed_dictionaries(
            {
                "exact": st.sampled_from([0.0, 1.0, None]),
                "pct": st.one_of(st.none(), st.floats(0, 100), st.sampled_from([0.0, 100.0])),
                "loss": st.floats(0, 1),
            }
        ),
        "error": st.one_of(st.none(), st.just("the system raised")),
        "score_errors": st.sampled_from([{}, {"graded": "boom"}]),
    }
)


def nearest_rank(values: list[float], q: int) -> float:
    """The smallest value with at least q% of the values at or below it, by that definition."""
    return min(v for v in values if 100 * sum(x <= v for x in values) >= q * len(values))


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(record, min_size=1, max_size=12), priced=st.booleans())
def test_every_figure_is_the_direct_computation_from_the_samples(lines, priced):
    records = [SampleRecord.from_dict({"id": str(i), "index": i, **line}) for i, line in enumerate(lines)]
    tally = EfficiencyTally([Exact(), Graded()], prices(priced))
    for one in records:
        tally.add(one)
    llm = [s for r in lines for s in r["trace"] if s["kind"] == "llm"]
    tokens = sum(s["prompt_tokens"] + s["completion_tokens"] for s in llm)  # failed examples' calls too
    if not any(r["trace"] for r in lines):  # outputs made elsewhere: their cost is not known, not 0
        assert tally.sections() == {}
        return
    figures = tally.sections()["efficiency"]
    scored = [r for r in lines if r["error"] is None]  # a failed example is not correct
    correct = {
        "exact": sum(r["scores"]["exact"] or 0.0 for r in scored),
        "pct": sum((r["scores"]["pct"] or 0.0) / 100 for r in scored if not r["score_errors"]),
    }
    usd = sum(s["prompt_tokens"] * 3.0 + s["completion_tokens"] * 7.0 for s in llm) / 1e6
    priced = (priced or not llm) and not (llm and not tokens)  # no model call: a true 0; no counts: not known
    assert figures["tokens"] == tokens and figures["examples"] == len(lines)
    assert figures["usd"] == (pytest.approx(usd) if priced else None)
    assert ("usd_note" in figures) is not priced
    # "loss": lower is better, nothing correct to count; "pct" graded (a value inside its range): "correct" means
    # nothing there, as on an F1 or nDCG row
    pcts = [r["scores"]["pct"] for r in scored if not r["score_errors"] and r["scores"]["pct"] is not None]
    graded = any(0 < value < 100 for value in pcts)
    assert set(figures["per_correct"]) == {"exact"} | (set() if graded else {"pct"})
    for key, expected in correct.items():
        if key not in figures["per_correct"]:
            continue
        entry = figures["per_correct"][key]
        assert entry["correct"] == pytest.approx(expected)
        if llm and not tokens:  # the engine reported no token counts
            assert entry["tokens_per_correct"] is None
        elif expected > 1e-9:
            assert entry["tokens_per_correct"] == pytest.approx(tokens / expected)
            assert entry.get("usd_per_correct") == (pytest.approx(usd / expected) if priced else None)
        elif expected == 0:
            assert entry["tokens_per_correct"] is None
        assert ("usd_per_correct" in entry) is priced  # no price: absent, never a made-up 0
    assert figures["llm_calls_per_example"] == pytest.approx(len(llm) / len(lines))
    searches = [s for r in lines for s in r["trace"] if s["kind"] == "retrieval"]
    assert figures["searches_per_example"] == pytest.approx(len(searches) / len(lines))
    for kind, steps in (("llm", llm), ("search", searches)):
        sent = [s["seconds"] for s in steps if not s["cached"]]
        latency = figures["latency_seconds"][kind]
        assert latency["calls"] == len(sent)
        assert latency["p50"] == (nearest_rank(sent, 50) if sent else None)
        assert latency["p95"] == (nearest_rank(sent, 95) if sent else None)


point = st.tuples(st.floats(0, 1), st.one_of(st.floats(0, 1e6), st.just(float("inf"))))


@settings(max_examples=200, deadline=None)
@given(points=st.lists(point, min_size=1, max_size=10))
def test_front_members_are_not_dominated_and_the_others_are(points):
    front = pareto_front(points)
    for point, on_front in zip(points, front):
        beaten = any(
            other[0] >= point[0] and other[1] <= point[1] and (other[0] > point[0] or other[1] < point[1])
            for other in points
        )  # higher or equal quality, lower or equal cost, one strictly
        assert on_front is not beaten
    assert any(front)  # some point is never beaten: the best quality at its least cost


def scripted_run(tmp_path, name, rules, price_table=None):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(rules))
    model = f"scripted:{path}"
    extra = ["--price-table", str(price_table)] if price_table else []
    done = cli_here(
        *["--tasks", "demo", "--system", "closed_book", "--model", model, "--limit", "6"],
        *[*extra, "--bootstrap-iters", "50", "--output", str(tmp_path / name)],
    )
    assert done.returncode == 0, done.stderr
    return done, json.loads((tmp_path / name / "results.json").read_text()), model


def test_a_run_records_and_shows_its_cost_per_correct_answer_and_compare_marks_the_front(tmp_path):
    good_rules = [{"pattern": "France", "response": "Paris"}, {"pattern": "Japan", "response": "Tokyo"}]
    good_rules.append({"response": "no idea"})
    table = tmp_path / "prices.yaml"
    table.write_text(f"'scripted:{tmp_path / 'good.json'}': {{prompt: 3.0, completion: 7.0}}\n")
    done, good, _ = scripted_run(tmp_path, "good", good_rules, table)
    figures = good["efficiency"]["demo"]
    lines = samples(tmp_path / "good", "demo")
    llm = [s for r in lines for s in r["trace"] if s["kind"] == "llm"]
    tokens = sum(s["prompt_tokens"] + s["completion_tokens"] for s in llm)
    correct = sum(r["scores"]["em"] for r in lines)
    assert correct == 2 and figures["tokens"] == tokens > 0
    assert figures["per_correct"]["em"]["tokens_per_correct"] == tokens / 2
    usd = sum(s["prompt_tokens"] * 3.0 + s["completion_tokens"] * 7.0 for s in llm) / 1e6
    assert figures["per_correct"]["em"]["usd_per_correct"] == pytest.approx(usd / 2)
    row = next(line for line in done.stdout.splitlines() if line.startswith("| demo | em |"))
    assert row.endswith(f"| {tokens / 2:,.1f} | ${usd / 2:.6f} |")  # the console's table
    assert "| tokens / correct | $ / correct |" in (tmp_path / "good" / "report.md").read_text()
    assert "LLM calls 1.00, searches 0.00" in done.stdout

    _, bad, _ = scripted_run(tmp_path, "bad", [{"pattern": "France", "response": "Paris"}, {"response": "I am unsure"}])
    assert "usd_per_correct" not in bad["efficiency"]["demo"]["per_correct"]["em"]  # unpriced: no dollars
    compared = cli_here("compare", str(tmp_path / "good"), str(tmp_path / "bad"), "--output", str(tmp_path / "cmp"))
    assert compared.returncode == 0, compared.stderr
    good_tpc = f"{tokens / 2:,.1f}"
    bad_tpc = f"{bad['efficiency']['demo']['tokens'] / 1:,.1f}"
    assert f"demo em: front good (0.3333 at {good_tpc} tokens); beaten: bad (0.1667 at {bad_tpc} tokens)" in (
        compared.stdout.splitlines()
    )
    report = (tmp_path / "cmp" / "compare.md").read_text().splitlines()
    rows = [line for line in report if line.startswith(("| good | demo | em |", "| bad | demo | em |"))]
    assert rows[0].startswith(f"| good | demo | em | 0.3333 | {good_tpc} | ${usd / 2:.6f} |")
    assert rows[0].endswith("| yes (tokens) |")  # tokens: the bad run has no price
    assert rows[1].startswith(f"| bad | demo | em | 0.1667 | {bad_tpc} | - |") and rows[1].endswith("| no |")
    pytest.importorskip("matplotlib")
    assert (tmp_path / "cmp" / "compare_cost.png").stat().st_size > 0


def test_a_graded_key_has_no_cost_per_correct_answer_in_results_the_table_or_compare(tmp_path):
    half = [{"pattern": "France", "response": "Paris, France"}, {"response": "Tokyo"}]  # F1 between 0 and 1
    done, results, _ = scripted_run(tmp_path, "half", half)
    f1 = [r["scores"]["f1"] for r in samples(tmp_path / "half", "demo")]
    assert any(0 < value < 1 for value in f1)
    figures = results["efficiency"]["demo"]
    assert set(figures["per_correct"]) == {"em", "match", "match_normalized"}  # right or wrong: "correct" means it
    assert figures["graded_keys"] == ["f1"]
    row = next(line for line in done.stdout.splitlines() if line.startswith("| demo | f1 |"))
    assert row.endswith("| - | - |")
    scripted_run(tmp_path, "other", [{"response": "Paris"}])
    compared = cli_here("compare", str(tmp_path / "half"), str(tmp_path / "other"))
    assert compared.returncode == 0, compared.stderr
    assert "demo em: front" in compared.stdout and "demo f1:" not in compared.stdout


def test_the_viewer_shows_the_cost_columns(tmp_path):
    from ragbench._view.catalog import RunCatalog
    from ragbench._view.pages import run_page
    from ragbench.testing import installed_registry

    scripted_run(tmp_path, "one", [{"pattern": "France", "response": "Paris"}, {"response": "no"}])
    [folder] = RunCatalog([str(tmp_path / "one")]).runs
    page = run_page(folder, installed_registry())
    assert page["tasks"]["demo"]["metrics"]["em"]["cost"][1] == "-"  # no price
    tokens = page["tasks"]["demo"]["metrics"]["em"]["cost"][0]
    assert (
        float(tokens.replace(",", ""))
        == json.loads((tmp_path / "one" / "results.json").read_text())["efficiency"]["demo"]["tokens"]
    )
    assert page["efficiency"]["demo"][0].startswith("per example (all 6, failed ones too) LLM calls 1.00")


def test_a_rescore_recomputes_the_cost_of_a_correct_answer_for_its_metrics(tmp_path):
    from ragbench._run.rescore.rescore_run import rescore_run
    from ragbench.testing import installed_registry

    _, first, _ = scripted_run(tmp_path, "one", [{"pattern": "France", "response": "Paris"}, {"response": "no"}])
    rescored = tmp_path / "rescored"
    rescore_run(tmp_path / "one", {"output": str(rescored), "metrics": ["em"]}, installed_registry())
    after = json.loads((rescored / "results.json").read_text())["efficiency"]["demo"]
    assert list(after["per_correct"]) == ["em"]  # the rescoring's metrics, counted again from the samples
    assert after["per_correct"]["em"] == first["efficiency"]["demo"]["per_correct"]["em"]
    assert after["tokens"] == first["efficiency"]["demo"]["tokens"]

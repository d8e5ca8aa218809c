"""A key's value that cannot be computed - the metric's `aggregate` raises or returns what is not a finite
number, or the values overflow their mean or interval - is a failure of the metric: counted, its traceback
kept, the value shown as an error, the exit code 1; results.json stays strict JSON (no NaN, no Infinity)."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.api import Prediction, System, SystemDeclaration
from ragbench.testing import cli, run_eval
from support import scoring_plugin
from support.scoring_plugin import demo_args, plugin_state  # noqa: F401 (plugin_state: an autouse fixture)


def strict(text: str):
    """json.loads that refuses NaN and the infinities, as browsers and jq do."""

    def refuse(name):
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def run(tmp_path, metrics: str, registry=None) -> tuple[object, dict]:
    """The demo run on the command line with the scoring plugin installed (`registry`: one made already)."""
    made = registry if registry is not None else scoring_plugin.registry()
    result = CliRunner().invoke(cli, demo_args(metrics, tmp_path / "run", "--bootstrap-iters", "50"), obj=made)
    return result, strict((tmp_path / "run" / "results.json").read_text())


def test_finite_values_whose_mean_overflows_are_averaged_not_lost(tmp_path):
    result, results = run(tmp_path, "match,scored:huge")
    entry = results["details"]["demo"]["scored:huge"]
    assert entry["value"] == float(2**1023 - 1) and entry["ci95"] == [entry["value"]] * 2
    assert "| demo | scored:huge | higher | 8.988466e+307 | [8.988466e+307, 8.988466e+307] |" in result.output
    assert result.exit_code == 0 and results["complete"]


@pytest.mark.parametrize(
    "kind,cause",
    [
        ("agg_raise", "ZeroDivisionError: the aggregate divided by zero"),
        (
            "agg_none",
            "InvalidScore: metric scored:agg_none's aggregate returned "
            "NoneType None for key 'scored:agg_none': a score is a number",
        ),
        ("agg_string", "InvalidScore: metric scored:agg_string's aggregate returned str '0.5'"),
        ("agg_inf", "InvalidScore: metric scored:agg_inf's aggregate returned float inf"),
    ],
)
def test_an_aggregate_that_raises_or_returns_no_finite_number_is_a_counted_metric_failure(tmp_path, kind, cause):
    result, results = run(tmp_path, f"match,scored:{kind}")
    assert result.exit_code == 1 and "Traceback" not in result.output
    entry = results["details"]["demo"][f"scored:{kind}"]
    assert entry["value"] is None and entry["ci95"] is None and entry["error"].startswith(cause)
    assert results["results"]["demo"][f"scored:{kind}"] is None
    [group] = results["failures"]["demo"]  # the key's value and its slice's (demo's slice field prop)
    assert group["metric"] == f"scored:{kind}" and group["keys"] == [f"scored:{kind}", f"scored:{kind} by prop=capital"]
    assert results["counts"]["demo"]["metric_failures"] == 2 and results["complete"] is False
    assert group["cause"] == f"metric scored:{kind}: aggregate: {cause.split(':')[0]}"
    assert ("raise ZeroDivisionError" in group.get("traceback", "")) == (kind == "agg_raise")  # where it raised
    assert f"| demo | scored:{kind} | higher | error |" in result.output  # the table says so, not a blank
    assert "a metric's aggregate failed (see its traceback in report.md): fix the metric" in result.output
    assert "--resume scores the examples whose metrics failed again" not in result.output  # none did
    assert results["results"]["demo"]["match"] is not None  # the other metric's value stands


class NotFinite(System):
    """A system whose statistics are not finite numbers."""

    name = "not_finite"
    declares = SystemDeclaration(uses_llm=False)

    async def run(self, example, ctx):
        return Prediction(example.id, answer="")

    def statistics(self, samples):
        return {"ratio": float("nan"), "top": float("inf")}


def test_results_json_is_strict_json_where_a_system_statistic_is_not_finite(tmp_path):
    run_eval("demo", NotFinite, None, limit=1, output=tmp_path / "run")
    text = (tmp_path / "run" / "results.json").read_text()
    assert strict(text)["system_stats"] == {"demo": {"ratio": "NaN", "top": "Infinity"}}


# --- any value a metric may return: counted right, and written as strict JSON ------------------------------------

IDS = [str(9000 + i) for i in range(6)]  # the first 6 examples of demo
NUMBERS = st.one_of(st.floats(), st.integers(min_value=-(2**1100), max_value=2**1100), st.booleans())
RETURNED = st.one_of(
    NUMBERS,
    st.none(),
    st.text(max_size=4),
    st.lists(st.floats(), max_size=2),
    st.dictionaries(st.text(max_size=3), NUMBERS | st.none(), max_size=2),
)


@pytest.fixture(scope="module")
def scoring_registry():
    """The plugins with the scoring plugin, discovered once for the property's examples (conftest's shared_registry)."""
    return scoring_plugin.registry()


def is_score(value) -> bool:
    """What a per-example value or an aggregate must be: a finite number (bool and int included)."""
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return abs(value) < 2**1023
    return isinstance(value, float) and math.isfinite(value)


@settings(max_examples=30)
@given(values=st.lists(RETURNED, min_size=6, max_size=6), aggregate=RETURNED)
def test_any_returned_value_or_aggregate_is_a_score_or_a_counted_failure_in_strict_json(
    tmp_path_factory, values, aggregate, scoring_registry
):
    scoring_plugin.VALUES.clear()
    scoring_plugin.VALUES.update(zip(IDS, values))
    scoring_plugin.AGGREGATE[:] = [aggregate]
    folder = tmp_path_factory.mktemp("values")
    result, results = run(folder, "scored:values,scored:aggregates", scoring_registry)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    bad_values = sum(1 for v in values if v is not None and not is_score(v))
    counts, details = results["counts"]["demo"], results["details"]["demo"]
    entry = details["scored:values"]
    assert (entry["n"], entry["n_none"], entry["n_errors"]) == (
        6 - bad_values - values.count(None),
        values.count(None),
        bad_values,
    )
    not_computed = sum(len(g.get("keys", [])) for g in results.get("failures", {}).get("demo", []))
    assert counts["metric_failures"] == bad_values + not_computed
    assert (details["scored:aggregates"].get("error") is None) == is_score(aggregate)
    for key in details.values():
        assert key.get("error") is not None or key["value"] is not None or key["n"] == 0
    assert result.exit_code == (1 if counts["metric_failures"] else 0)

"""An engine's own figures (`Engine.stats`: the hf engine's prompt tokens sent and computed) reach results.json's
`cost.engine` and the console's cost line."""

from __future__ import annotations

from ragbench._cost.run_cost import CallReports, ServiceReports, run_cost
from ragbench._engines.scripted import ScriptedEngine
from ragbench._reports.run_summary import cost_line

ATTEMPT = {"id": "a", "examples": 2, "wall_seconds": 1.0, "llm_calls": 4, "batches": 2, "cache_hits": 0}
ATTEMPT |= {"prompt_tokens": 900, "completion_tokens": 0}


def test_the_engines_figures_are_the_costs_engine_section_and_the_cost_line_says_what_was_computed():
    figures = {"prompt_tokens_sent": 900, "prompt_tokens_computed": 300, "prefix_cache_bytes": 10}
    cost = run_cost([], ATTEMPT, ServiceReports(calls=CallReports({}, engine=figures)))
    assert cost["engine"] == figures
    assert "tokens 900 in / 0 out (prompt tokens computed 300 of 900 sent)" in cost_line(cost)


def test_an_engine_without_figures_adds_nothing():
    assert ScriptedEngine("echo").stats() is None
    cost = run_cost([], ATTEMPT, ServiceReports())
    assert "engine" not in cost and "computed" not in cost_line(cost)

"""The hooks ragbench calls: this plugin's catalogue (in the schema of ragbench's registry.yaml), a
metric family (`mentions:WORD`) and a command (`ragbench trivia-stats`).

Only names and "module:attribute" strings live here. The task, system and metric modules are
imported by ragbench the first time a run uses them, so listing plugins stays fast and a
broken optional dependency only affects the component that needs it.
"""

from __future__ import annotations

from typing import Any

from ragbench.api import hookimpl

CATALOG: dict[str, Any] = {
    "tasks": {
        "trivia_tf": {
            "target": "ragbench_plugin_example.task:TriviaTF",
            "description": "8 true/false trivia statements with evidence passages (example plugin)",
            "aliases": ["tf_trivia"],
            "defaults": {"system_args": {"max_tokens": 8}},
        },
    },
    "systems": {
        "majority_vote": {
            "target": "ragbench_plugin_example.system:MajorityVote",
            "description": "Asks the LLM `votes` times (3) with different seeds and returns the majority answer",
            "aliases": ["self_consistency"],
        },
    },
    "metrics": {
        "verdict_accuracy": {
            "target": "ragbench_plugin_example.metric:VerdictAccuracy",
            "description": "Accuracy of the first true/false word of the answer against the gold truth value",
        },
    },
}


@hookimpl
def ragbench_catalog() -> dict[str, Any]:
    return CATALOG


@hookimpl
def ragbench_metric_families() -> dict[str, Any]:
    return {
        "mentions": {
            "target": "ragbench_plugin_example.metric:mentions_family",
            "description": "mentions:WORD - 1 when the answer contains WORD (any case)",
        }
    }


@hookimpl
def ragbench_cli_commands() -> list[Any]:
    from .commands import trivia_stats  # click only: light

    return [trivia_stats]

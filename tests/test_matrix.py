"""The system x task matrix: every built-in system on every built-in task, offline, with numbers.

Cells run on small upstream-format data (tests/matrix_fixtures.py) with a scripted model, judge and
NLI judge; each must end complete with a numeric value for every per-example metric of the task, or be
refused before the run by the system's `check` with one line."""
from __future__ import annotations

import math

import pytest
from matrix_fixtures import TASK_DATA, cell_config

from ragbench.errors import ConfigError
from ragbench.evaluator import Evaluator, RunConfig
from ragbench.registry import get_registry

REGISTRY = get_registry()
BUILTIN = "ragbench"
SYSTEMS = [name for name in REGISTRY.names("systems") if REGISTRY.entries["systems"][name].provider == BUILTIN]
TASKS = [name for name in REGISTRY.names("tasks") if REGISTRY.entries["tasks"][name].provider == BUILTIN]


def test_every_builtin_task_has_matrix_data():
    missing = sorted(set(TASKS) - set(TASK_DATA))
    assert not missing, f"add a data builder for {missing} to TASK_DATA in tests/matrix_fixtures.py"


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("system", SYSTEMS)
def test_system_runs_on_task_with_numeric_results(system, task, tmp_path):
    if task not in TASK_DATA:
        pytest.fail(f"no matrix data for task {task}: add it to TASK_DATA in tests/matrix_fixtures.py")
    config = RunConfig(**cell_config(task, system, tmp_path))
    try:
        outcome = Evaluator(config).run()
    except ConfigError as exc:  # a refused cell: one line, before the run
        assert "\n" not in str(exc) and not (tmp_path / "run" / "samples").exists()
        pytest.skip(f"refused: {exc}")
    results = outcome.results
    assert results["complete"], results.get("failures")
    assert results["counts"][task]["scored"] == results["counts"][task]["records"] > 0
    scored = results["counts"][task]["scored"]
    # every per-example metric has a number, except one that is by design not scorable on these records
    # (CRAG's score_h needs human labels)
    values = {key: entry["value"] for key, entry in results["details"][task].items()
              if not entry.get("corpus") and not (entry["n"] == 0 and entry["n_none"] == scored)}
    assert values and all(isinstance(v, (int, float)) and math.isfinite(v) for v in values.values()), values

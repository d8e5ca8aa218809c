"""Built-in metric plugins (installed as `ragbench.metrics`): the catalogue's metrics and the `hf:`
family (any Hugging Face `evaluate` metric, ragbench.metrics.hf_evaluate)."""
from typing import Any

from ragbench.builtin import section
from ragbench.hookspecs import hookimpl


@hookimpl
def ragbench_catalog() -> dict[str, Any]:
    return section("metrics")


@hookimpl
def ragbench_metric_families() -> dict[str, Any]:
    return section("metric_families")["metric_families"]

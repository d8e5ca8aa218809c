"""Built-in metric plugins (installed as `ragbench.metrics`): the catalogue's metrics and the `hf:`
family (any Hugging Face `evaluate` metric, ragbench.metrics.hf_evaluate). The modules here serve
several task families; a metric only one benchmark uses lives in that benchmark's task folder
(CRAG's judges in tasks/crag/metrics.py, OmniEval's in tasks/omnieval/), served by the tasks package
(registry.yaml's `task_metrics`)."""

from typing import Any

from ragbench.api import hookimpl
from ragbench.api.data import JsonObject, section


@hookimpl
def ragbench_catalog() -> JsonObject:
    return dict(section("metrics"))


@hookimpl
def ragbench_metric_families() -> dict[str, dict[str, str]]:  # {prefix: {"target", "description"}}
    return section("metric_families")["metric_families"]


@hookimpl
def ragbench_cli_commands() -> list[Any]:
    """`ragbench export umbrela-qrels` (metrics/umbrela/commands.py) and `ragbench export dragun-human-labels`
    (metrics/dragun_autojudge/commands.py)."""
    import click

    from .dragun_autojudge.commands import export_dragun_human_labels
    from .umbrela.commands import export_umbrela_qrels

    return [click.Group("export", commands=[export_umbrela_qrels, export_dragun_human_labels])]

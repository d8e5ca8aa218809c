"""Built-in task plugins (installed as `ragbench.tasks`), one folder per benchmark family, the seed
papers' reproduction manifests (`reproductions.yaml`, read by `ragbench reproduce`), the benchmarks'
own commands (`ragbench serve crag-kg`, `ragbench index omnieval-corpus`, `ragbench index kilt-corpus`,
`ragbench index multihop-rag-corpus`), OmniEval's dense query styles (`query_style=omnieval|omnieval_flashrag`)
and the Self-RAG prompt styles of YAML tasks."""
from functools import lru_cache
from importlib import resources
from typing import Any

from ragbench.api import hookimpl
from ragbench._builtin import load_yaml, section


@lru_cache(maxsize=1)
def _reproductions() -> dict[str, Any]:
    return load_yaml(resources.files(__name__).joinpath("reproductions.yaml").read_text(encoding="utf-8"))


@hookimpl
def ragbench_catalog() -> dict[str, Any]:
    return {**section("tasks", "groups"), "metrics": section("task_metrics")["task_metrics"],
            "prompt_styles": section("task_prompt_styles")["task_prompt_styles"], **_reproductions()}


@hookimpl
def ragbench_query_styles() -> dict[str, Any]:
    return section("task_query_styles")["task_query_styles"]


@hookimpl
def ragbench_cli_commands() -> list[Any]:
    from .crag.commands import serve_group
    from .kilt.commands import index_group as kilt_index_group
    from .multihop_rag.commands import index_group as multihop_rag_index_group
    from .omnieval.commands import index_group

    return [serve_group, index_group, kilt_index_group, multihop_rag_index_group]

"""Built-in task plugins (installed as `ragbench.tasks`), one folder per benchmark family, the seed
papers' reproduction manifests (`reproductions.yaml`, read by `ragbench reproduce`), the benchmarks'
own commands (`ragbench serve crag-kg`, `ragbench index omnieval-corpus`, `ragbench index kilt-corpus`,
`ragbench index multihop-rag-corpus`), OmniEval's dense query styles (`query_style=omnieval|omnieval_flashrag`),
the Self-RAG prompt styles of YAML tasks, and what a benchmark folder registers itself in its `registrations.yaml`
(the record formats of FlashRAG, WebQuestions and SQuAD files, CRAG's gold kind, CRAG-MM's search retriever
`cragmm_search`), gathered here: a folder is one
package of the one entry point, so a new one needs no packaging edit. What several folders share is in
`shared/`: the --data checks (given_data), the options (task_options), the corpus commands and builders
(corpus_command, corpus_files), a tokenizer found by its variable or folder (cut_tokenizer): what a benchmark
folder may import besides ragbench.api and its own modules."""

from importlib import resources
from typing import Any

from ragbench.api import hookimpl
from ragbench.api.data import PackagedSection, packaged_yaml, section

# What the registering hooks return: {name: {"target": "module:Class", "description": "..."}}
Registrations = dict[str, dict[str, str]]


@hookimpl
def ragbench_catalog() -> dict[str, object]:
    return {
        **section("tasks", "groups"),
        "metrics": section("task_metrics")["task_metrics"],
        "prompt_styles": section("task_prompt_styles")["task_prompt_styles"],
        # parsed when reproductions are first read (ragbench reproduce), not at every command's start
        "reproductions": PackagedSection(__name__, "reproductions.yaml", "reproductions"),
        "retrievers": _registered("retrievers"),
    }


@hookimpl
def ragbench_query_styles() -> Registrations:
    return section("task_query_styles")["task_query_styles"]


REGISTRATIONS = "registrations.yaml"  # a folder's: {kind: {name: {"target", "description"}}}


def _registered(kind: str) -> Registrations:
    """What the benchmark folders' `registrations.yaml` register as `kind` (record_formats, gold_kinds), in folder
    order; a name two folders register is refused (one would hide the other)."""
    folders = sorted(
        item.name for item in resources.files(__name__).iterdir() if item.joinpath(REGISTRATIONS).is_file()
    )
    out: Registrations = {}
    owners: dict[str, str] = {}
    for folder in folders:
        for name, spec in (packaged_yaml(f"{__name__}.{folder}", REGISTRATIONS).get(kind) or {}).items():
            if name in owners:
                raise ValueError(f"{kind}: '{name}' is registered by task folders {owners[name]} and {folder}")
            out[name], owners[name] = spec, folder
    return out


@hookimpl
def ragbench_record_formats() -> Registrations:
    """The layouts of the benchmarks' own files, for YAML tasks' `data.format`."""
    return _registered("record_formats")


@hookimpl
def ragbench_gold_kinds() -> Registrations:
    """The shapes of the benchmarks' own gold, for YAML tasks' `fields.gold`."""
    return _registered("gold_kinds")


def index_commands() -> Any:
    """The benchmarks' corpus commands, as one click `index` group merged into `ragbench index`
    (ragbench._cli.plugin_commands)."""
    import click

    from .kilt.commands import kilt_corpus_command
    from .multihop_rag.commands import multihop_rag_corpus_command
    from .omnieval.commands import omnieval_corpus_command

    group = click.Group("index")
    for command in (omnieval_corpus_command, kilt_corpus_command, multihop_rag_corpus_command):
        group.add_command(command)
    return group


@hookimpl
def ragbench_cli_commands() -> list[Any]:
    from .browsecomp_plus.commands import export_group
    from .crag.commands import serve_group
    from .dragun.commands import export_dragun
    from .trec_rag.commands import export_trec_rag
    from .trec_rag.ranking import export_trec_rag_agreement

    export_group.add_command(export_trec_rag)
    export_group.add_command(export_trec_rag_agreement)
    export_group.add_command(export_dragun)

    return [serve_group, index_commands(), export_group]

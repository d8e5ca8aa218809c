"""`ragbench index omnieval-corpus`: OmniEval's knowledge corpus from its raw documents, added to the
core's `index` group by `index_commands` (tasks/__init__.py)."""

from __future__ import annotations

import click

from ragbench.api.run import config_errors_exit, exit_if_skipped

from ..shared.corpus_command import corpus_command


@corpus_command(
    "omnieval-corpus",
    "--docs",
    'OmniEval\'s raw document folder (any depth): .jsonl files of {"text"} lines, other files as UTF-8 text',
    "corpus.jsonl to write: {id, title, contents}, for index build --corpus",
    click.option(
        "--split",
        default="tokens:2048:256",
        show_default=True,
        metavar="tokens:SIZE:OVERLAP[:ENCODING]",
        help="documents of at most SIZE characters whole, longer ones cut as llama-index TokenTextSplitter",
    ),
    click.option(
        "--path-as",
        default=None,
        metavar="FOLDER",
        help="the folder's name in upstream's build (e.g. "
        "corpus/gen_datas_all): file paths count against the chunk budget (default: --docs as given)",
    ),
)
def omnieval_corpus_command(source: str, out: str, split: str, path_as: str | None, overwrite: bool) -> None:
    """Turn OmniEval's raw documents into its knowledge corpus as corpus_builder/build_corpus.py does
    (llama-index SimpleDirectoryReader + TokenTextSplitter 2048/256, long 基金 .jsonl documents
    dropped), with deterministic ids: <relative path>[:<line>][#<chunk>] instead of upstream's random
    UUIDs, so upstream's relevant_node labels only match upstream's released corpus. PDF, Markdown,
    Word and other files llama-index reads with its own readers are reported and left out."""
    from ragbench.api.text import parse_split

    from .corpus import build_corpus

    with config_errors_exit(output_option="--out"):
        stats = build_corpus(source, out, parse_split(split), path_as=path_as, overwrite=overwrite)
    click.echo(
        f"{stats.documents} documents: {stats.whole} whole, {stats.split} split into {stats.chunks} chunks, "
        f"{stats.dropped} dropped (longer than the limit in a 基金 .jsonl file); "
        f"{stats.whole + stats.chunks} passages in {out}"
    )
    exit_if_skipped(stats.errors, "file skipped", f"{len(stats.errors)} file(s) skipped")

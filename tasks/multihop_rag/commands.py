"""`ragbench index multihop-rag-corpus`: MultiHop-RAG's news corpus as the chunks of its retrieval
experiments, added to the core's `index` group by `index_commands` (tasks/__init__.py)."""

from __future__ import annotations

import click

from ragbench.api.run import config_errors_exit, exit_if_skipped

from ..shared.corpus_command import corpus_command
from .chunking import CHUNK_OVERLAP, CHUNK_SIZE


@corpus_command(
    "multihop-rag-corpus",
    "--corpus",
    "MultiHop-RAG's dataset/corpus.json: a JSON list of {title, author, source, published_at, category, url, body}",
    "chunks JSONL to write: {id, title, url, text, metadata: {published_at, source, author, category}}, "
    "for index build --corpus",
    click.option(
        "--chunk-size",
        default=CHUNK_SIZE,
        show_default=True,
        type=int,
        help="chunk size in tiktoken cl100k_base tokens, the article's metadata lines included (simple_retrieval.py's)",
    ),
    click.option(
        "--chunk-overlap",
        default=CHUNK_OVERLAP,
        show_default=True,
        type=int,
        help="tokens of a chunk's last sentences repeated at the start of the next (llama-index 0.9's default)",
    ),
)
def multihop_rag_corpus_command(source: str, out: str, chunk_size: int, chunk_overlap: int, overwrite: bool) -> None:
    """Cut MultiHop-RAG's articles into chunks as its simple_retrieval.py does (llama-index 0.9.40's
    SentenceSplitter), each keeping its article's title, url, published_at and source."""
    from .corpus import build_corpus

    with config_errors_exit(output_option="--out"):
        stats = build_corpus(source, out, chunk_size, chunk_overlap, overwrite)
    click.echo(f"{stats.articles} articles, {stats.chunks} chunks in {out}")
    exit_if_skipped([str(e) for e in stats.errors], "bad record skipped", f"{len(stats.errors)} bad record(s) skipped")

"""`ragbench index kilt-corpus`: KILT's knowledge source as a passage corpus, added to the core's `index`
group by `index_commands` (tasks/__init__.py)."""

from __future__ import annotations

import click

from ragbench.api.run import config_errors_exit, exit_if_skipped

from ..shared.corpus_command import corpus_command


@corpus_command(
    "kilt-corpus",
    "--knowledge-source",
    "KILT's kilt_knowledgesource.json: one page a line {wikipedia_id, wikipedia_title, text: [...]}",
    "passages JSONL to write: {id, wikipedia_id, title, text}, for index build --corpus",
    click.option(
        "--chunk-size", default=100, show_default=True, type=int, help="passage size in spaCy tokens (KILT's)"
    ),
    click.option(
        "--spacy-model",
        default="en_core_web_sm",
        show_default=True,
        help="spaCy pipeline whose sentences and tokens cut the passages (KILT's); 'sentencizer': spaCy's "
        "rule-based sentence splitter, no model (other passages than KILT's)",
    ),
)
def kilt_corpus_command(source: str, out: str, chunk_size: int, spacy_model: str, overwrite: bool) -> None:
    """Cut KILT's knowledge source into passages as KILT's create_kilt_data_paragraphs.py does for its
    retrieval baselines, each carrying its page's wikipedia_id for KILT's page-level retrieval metrics."""
    from .knowledge_source import build_corpus

    with config_errors_exit(output_option="--out"):
        stats = build_corpus(source, out, spacy_model, chunk_size, overwrite)
    click.echo(f"{stats.pages} pages, {stats.passages} passages in {out}")
    exit_if_skipped([str(e) for e in stats.errors], "bad record skipped", f"{len(stats.errors)} bad line(s) skipped")

"""The retriever of a run that names none, over tasks that ship their own corpus (`OwnCorpus`): BM25 over it,
indexed on first use (ragbench._retrieval.index.cache), so that such a task runs multi-step systems with
searches of their own after nothing but the install."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..._checks import Preflight
from ..._config.run_config import RunConfig

CORPUS_RETRIEVER = "bm25"


def tasks_by_corpus(planned: list[Any]) -> dict[Path | None, list[str]]:
    """The names of the run's tasks by the corpus each ships (None: it ships none)."""
    by_corpus: dict[Path | None, list[str]] = {}
    for p in planned:
        by_corpus.setdefault(p.corpus, []).append(p.name)
    return by_corpus


def shipped_corpus(planned: list[Any]) -> Path | None:
    """The corpus every task of the run ships; None when none ships one, or they differ."""
    corpora = list(tasks_by_corpus(planned))
    return corpora[0] if len(corpora) == 1 else None


def use_task_corpus(
    config: RunConfig, planned: list[Any], check: Preflight
) -> tuple[RunConfig, Path | None, Path | None]:
    """The run's config with its retriever where it names none and its tasks ship one corpus: BM25 over that
    corpus's index in the cache; that corpus (`shipped_corpus`), and that index's folder (`build_task_index` builds it
    as the run starts); the config as given and no index otherwise. The run's identity, and so its folder, run.json,
    results.json and `--resume`, are read from the config this returns; the given one is left as it was. One
    problem when the run names no retriever and its tasks do not all search the same corpus."""
    by_corpus = tasks_by_corpus(planned)
    corpus = next(iter(by_corpus)) if len(by_corpus) == 1 else None
    if config.retrieval.retriever is not None:
        return config, corpus, None
    if len(by_corpus) > 1 and any(each is not None for each in by_corpus):
        groups = "; ".join(
            f"{', '.join(names)}: {each.name if each else 'the passages of their examples'}"
            for each, names in by_corpus.items()
        )
        check.problem(
            f"tasks search different corpora with no --retriever ({groups}); one run has one retriever: "
            "run them separately, or name one with --retriever"
        )
    if corpus is None:
        return config, None, None
    from ..._retrieval.index.cache import index_folder  # the index modules (numpy) load for such a task alone

    index = index_folder(corpus, CORPUS_RETRIEVER)  # the corpus hashed once a run
    named = config.changed(retriever=CORPUS_RETRIEVER, retriever_args={"index": str(index)}, shipped_corpus_index=True)
    return named, corpus, index


def build_task_index(index: Path | None, planned: list[Any], registry: Any) -> None:
    """Build the `index` `use_task_corpus` named (None: it named none), where the cache has none yet."""
    corpus = shipped_corpus(planned)
    if index is None or corpus is None:
        return
    from ..._retrieval.index.cache import cached_index

    cached_index(corpus, CORPUS_RETRIEVER, registry=registry, folder=index)

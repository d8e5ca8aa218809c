"""The retriever of a run that names none, over tasks that ship their own corpus (`OwnCorpus`): BM25 over it,
indexed on first use (ragbench._retrieval.index_cache), so that such a task runs multi-step systems with
searches of their own after nothing but the install."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .._checks import Preflight
from .._retrieval.index_cache import cached_index
from .._task.protocols import task_corpus

CORPUS_RETRIEVER = "bm25"


def run_corpus(config: Any, planned: list[Any]) -> Path | None:
    """The corpus every task of the run ships, when the run names no retriever; None when none ships one
    (or the run names its retriever). Tasks that ship different corpora, or some none, are a pre-flight
    problem (`check_task_corpora`): one run has one retriever."""
    if config.retriever is not None:
        return None
    corpora = {task_corpus(p.task) for p in planned}
    return corpora.pop() if len(corpora) == 1 else None


def check_task_corpora(config: Any, planned: list[Any], check: Preflight) -> None:
    """One problem when the run names no retriever and its tasks do not all search the same corpus."""
    if config.retriever is not None:
        return
    by_corpus: dict[Path | None, list[str]] = {}
    for p in planned:
        by_corpus.setdefault(task_corpus(p.task), []).append(p.name)
    if len(by_corpus) > 1 and any(corpus is not None for corpus in by_corpus):
        groups = "; ".join(f"{', '.join(names)}: {corpus.name if corpus else 'the passages of their examples'}"
                           for corpus, names in by_corpus.items())
        check.problem(f"tasks search different corpora with no --retriever ({groups}); one run has one retriever: "
                      "run them separately, or name one with --retriever")


def use_task_corpus(config: Any, planned: list[Any], registry: Any) -> None:
    """Set the run's retriever to BM25 over the corpus its tasks ship (built on first use), where it names none,
    so that results.json and run.json say what was searched."""
    corpus = run_corpus(config, planned)
    if corpus is not None:
        config.retriever = CORPUS_RETRIEVER
        config.retriever_args = {"index": str(cached_index(corpus, CORPUS_RETRIEVER, registry=registry))}

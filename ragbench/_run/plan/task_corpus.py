"""The retriever of a run that names none, over tasks that ship their own corpus (`OwnCorpus`): BM25 over it,
indexed on first use (ragbench._retrieval.index.cache), so that such a task runs multi-step systems with
searches of their own after nothing but the install."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..._checks import Preflight
from ..._storage.rundir import RunDir
from ..._task.protocols import task_corpus
from ..._values.run_config import RunConfig
from ..._values.run_groups import RunOutput, RunRetrieval

CORPUS_RETRIEVER = "bm25"


def shipped_corpus(planned: list[Any]) -> Path | None:
    """The corpus every task of the run ships; None when none ships one, or they differ (`check_task_corpora`)."""
    corpora = {task_corpus(p.task) for p in planned}
    return corpora.pop() if len(corpora) == 1 else None


def check_task_corpora(retrieval: RunRetrieval, planned: list[Any], check: Preflight) -> None:
    """One problem when the run names no retriever and its tasks do not all search the same corpus."""
    if retrieval.retriever is not None:
        return
    by_corpus: dict[Path | None, list[str]] = {}
    for p in planned:
        by_corpus.setdefault(task_corpus(p.task), []).append(p.name)
    if len(by_corpus) > 1 and any(corpus is not None for corpus in by_corpus):
        groups = "; ".join(
            f"{', '.join(names)}: {corpus.name if corpus else 'the passages of their examples'}"
            for corpus, names in by_corpus.items()
        )
        check.problem(
            f"tasks search different corpora with no --retriever ({groups}); one run has one retriever: "
            "run them separately, or name one with --retriever"
        )


def use_task_corpus(config: RunConfig, planned: list[Any]) -> tuple[RunConfig, Path | None]:
    """The run's config with its retriever where it names none and its tasks ship one corpus: BM25 over that
    corpus's index in the cache, and that index's folder (`build_task_index` builds it as the run starts); the
    config as given and None otherwise. The run's identity, and so its folder, run.json, results.json and
    `--resume`, are read from the config this returns; the given one is left as it was."""
    corpus = shipped_corpus(planned)
    if config.retrieval.retriever is not None or corpus is None:
        return config, None
    from ..._retrieval.index.cache import index_folder  # the index modules (numpy) load for such a task alone

    index = index_folder(corpus, CORPUS_RETRIEVER)  # the corpus hashed once a run
    named = config.changed(retriever=CORPUS_RETRIEVER, retriever_args={"index": str(index)}, shipped_corpus_index=True)
    return named, index


def corpus_changed_on_resume(
    output: RunOutput,
    retrieval: RunRetrieval,
    identity: dict[str, Any],
    planned: list[Any],
    run_dir: RunDir,
    check: Preflight,
) -> bool:
    """With --resume, whether the run in `run_dir` searched its tasks' shipped corpus through another index of the
    cache than `use_task_corpus` names now (in the run's `identity`): the corpus file changed since the run
    started. One problem saying so (rather than options that differ, which the user did not change)."""
    corpus = shipped_corpus(planned)
    if not output.resume or corpus is None or not retrieval.shipped_corpus_index:
        return False
    recorded = run_dir.record
    then = recorded.identity if recorded is not None else {}
    recorded_args = then.get("retriever_args")  # absent in a run.json of an older ragbench
    before = recorded_args.get("index") if isinstance(recorded_args, dict) else None
    now = identity["retriever_args"]["index"]
    if then.get("retriever") != CORPUS_RETRIEVER or not isinstance(before, str) or before == now:
        return False
    if not before.startswith(f"{CORPUS_RETRIEVER}-"):
        return False  # an index the run named itself (--retriever-arg index=DIR): the options differ
    check.problem(
        f"--resume: {run_dir.path}: {corpus} changed since the run started (its index then {before}, now "
        f"{now}); its saved samples would mix with new ones: restore the file, --overwrite runs it again, or "
        "choose a new --output"
    )
    return True


def build_task_index(index: Path | None, planned: list[Any], registry: Any) -> None:
    """Build the `index` `use_task_corpus` named (None: it named none), where the cache has none yet."""
    corpus = shipped_corpus(planned)
    if index is None or corpus is None:
        return
    from ..._retrieval.index.cache import cached_index

    cached_index(corpus, CORPUS_RETRIEVER, registry=registry, folder=index)

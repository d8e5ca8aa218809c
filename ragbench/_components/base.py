"""The two pipeline components a run may put between the retriever and the reader, as plugins any
system gets through `ctx.retriever` (the `rerankers` and `refiners` sections of the catalogue):

  Reranker   re-orders what the retriever returns for a query (`--reranker NAME`): every
             `ctx.retriever.search(query, k)` of every system returns the reranked top k.
  Refiner    turns the documents a reader shows into what the model reads (`--refiner NAME`):
             shorter documents, or one text in place of them (`ctx.retriever.refine`).

Options are keyword arguments of `__init__` (`--reranker-arg`/`--refiner-arg`). `__init__` only checks
them (a local model path that is not there is a ValueError, refused by the pre-flight); the model loads
in `load`, once, before the run's examples start. The blocking work (`score_pairs`, `refine_batch`) is
pooled across the examples in flight by the run (ragbench._components.pooling) and run off the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .._retrieval.corpus.readers import passage_text
from .._values.json_values import JsonObject

if TYPE_CHECKING:
    from .._types import Document

PairScores = Callable[[str, list[str]], Awaitable[list[float]]]


def local_model(path: str | None, option: str = "model") -> str:
    """`path` when it names a local file or folder; else the ValueError the pre-flight shows (models are
    read from local paths only, never fetched from a hub during a run)."""
    if not path:
        raise ValueError(f"{option}= is required: the local folder of the model (download it first)")
    if not Path(path).expanduser().exists():
        raise ValueError(
            f"{option}={path}: no such file or folder (models are read from local paths only; "
            "download it first and give its folder)"
        )
    return str(Path(path).expanduser())


def local_transformers(model_class: str, path: str, device: str) -> tuple[Any, Any]:
    """The tokenizer and `transformers.<model_class>` of a local folder (never fetched), the model in eval mode
    on `device`."""
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = getattr(transformers, model_class).from_pretrained(path, local_files_only=True)
    return tokenizer, model.to(device).eval()


def model_contents(component: Any) -> JsonObject:
    """What a component's answers depend on beyond its options: a digest of its local model's files
    (`model_path`), so that `--resume` refuses a run whose model was replaced since it started."""
    from .._storage.content_digest import content_digest

    path = getattr(component, "model_path", None)
    return {"model": content_digest(path)} if path else {}


class Reranker:
    """Scores (query, passage) pairs; `rerank` keeps the `k` best. Subclasses implement `score_pairs`."""

    name: ClassVar[str] = ""
    max_batch_size: int = 256  # (query, passage) pairs per `score_pairs` call
    # candidates fetched from the retriever for a search of k: max(k, retrieval_topk)
    retrieval_topk: int = 5

    def load(self) -> None:
        """Load the model (called once before the examples start)."""

    def score_pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        """A relevance score per (query, passage) pair, higher is better (blocking)."""
        raise NotImplementedError

    async def rerank(
        self, query: str, docs: list[Document], k: int, *, scores: PairScores | None = None
    ) -> list[Document]:
        """The `k` best of `docs` for `query`, best first, each with its reranker score in `score` (the
        retriever's in `metadata["retrieval_score"]`); ties keep the retriever's order. `scores` pools the
        scoring with other examples' (the run gives it); without it the pairs are scored in a thread."""
        texts = [passage_text(doc) for doc in docs]  # "title\ntext", as FlashRAG's `contents`
        values = await (scores or self._scores_in_thread)(query, texts)
        return ranked(docs, values, k)

    async def _scores_in_thread(self, query: str, texts: list[str]) -> list[float]:
        return await asyncio.to_thread(self.score_pairs, [(query, text) for text in texts])

    def metadata(self) -> JsonObject:
        """What run.json and results.json record about it (its options are recorded with the run's config)."""
        return {"reranker": self.name}

    def contents(self) -> JsonObject:
        return model_contents(self)

    def close(self) -> None:
        """Free the model."""


def ranked(docs: list[Document], scores: list[float], k: int) -> list[Document]:
    """`docs` by descending score (a stable sort: ties keep their order), the first `k`, with the scores."""
    from dataclasses import replace

    if len(scores) != len(docs):
        raise ValueError(f"the reranker gave {len(scores)} scores for {len(docs)} documents")
    order = sorted(range(len(docs)), key=lambda i: -scores[i])[:k]
    return [
        replace(
            docs[i],
            score=float(scores[i]),
            metadata={**docs[i].metadata, "retrieval_score": docs[i].score, "retrieval_rank": i + 1},
        )
        for i in order
    ]


class Refiner:
    """Turns (question, documents) into what the reader shows. Subclasses implement `refine_batch`."""

    name: ClassVar[str] = ""
    max_batch_size: int = 16  # examples per `refine_batch` call

    def load(self) -> None:
        """Load the model (called once before the examples start)."""

    def refine_batch(self, items: list[tuple[str, list[Document]]]) -> Sequence[list[Document] | str]:
        """For each (question, documents): the documents to show, or one text shown in their place (blocking)."""
        raise NotImplementedError

    async def refine(
        self,
        question: str,
        docs: list[Document],
        *,
        pooled: Callable[[str, list[Document]], Awaitable[list[Document] | str]] | None = None,
    ) -> list[Document] | str:
        """What the reader shows for `question` instead of `docs`. `pooled` batches the work with other
        examples' (the run gives it); without it the work runs in a thread."""
        if pooled is not None:
            return await pooled(question, docs)
        return (await asyncio.to_thread(self.refine_batch, [(question, docs)]))[0]

    def metadata(self) -> JsonObject:
        return {"refiner": self.name}

    def contents(self) -> JsonObject:
        return model_contents(self)

    def close(self) -> None:
        """Free the model."""

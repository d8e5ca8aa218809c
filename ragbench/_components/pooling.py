"""A run's reranker and refiner behind one pool: the scoring of every in-flight example's rerank, and
the refining of every reader's documents, are batched across examples by a `Scheduler` of their own
(their counts stay apart from the LLM's and the retriever's) and run in a worker thread while the
other examples go on."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._run.scheduler import Scheduler
from .._types import Document
from .base import Refiner, Reranker, passage


@dataclass(frozen=True)
class PairsRequest:
    """One rerank's (query, passage) pairs."""

    query: str
    texts: tuple[str, ...]
    batch_key = None  # any reranks batch together

    def text_length(self) -> int:
        return len(self.query) * len(self.texts) + sum(map(len, self.texts))

    def cache_key(self, backend_id: str) -> str:
        return "\x00".join((backend_id, self.query, *self.texts))


@dataclass(frozen=True)
class RefineRequest:
    """One reader's question and documents."""

    question: str
    docs: tuple[Document, ...]
    batch_key = None

    def text_length(self) -> int:
        return sum(len(doc.text) for doc in self.docs)

    def cache_key(self, backend_id: str) -> str:
        return "\x00".join((backend_id, self.question, *(f"{doc.id}\x01{passage(doc)}" for doc in self.docs)))


class _Backend:
    """A component as a scheduler backend (ragbench._run.scheduler): one blocking call per batch."""

    concurrent = False
    cacheable = False
    max_concurrency = 1

    def __init__(self, component: Reranker | Refiner) -> None:
        self.component = component
        self.engine_id = f"{type(component).__name__}:{id(component)}"
        self.max_batch_size = component.max_batch_size


class ScoringBackend(_Backend):
    def __init__(self, reranker: Reranker) -> None:
        super().__init__(reranker)
        self.max_batch_size = 64  # reranks per call; the reranker cuts their pairs into its own batches
        self.reranker = reranker

    def generate(self, requests: list[PairsRequest]) -> list[list[float]]:
        pairs = [(request.query, text) for request in requests for text in request.texts]
        scores = [float(score) for score in self.reranker.score_pairs(pairs)]
        if len(scores) != len(pairs):
            raise ValueError(f"reranker {self.reranker.name} gave {len(scores)} scores for {len(pairs)} pairs")
        out, start = [], 0
        for request in requests:
            out.append(scores[start:start + len(request.texts)])
            start += len(request.texts)
        return out


class RefiningBackend(_Backend):
    def __init__(self, refiner: Refiner) -> None:
        super().__init__(refiner)
        self.refiner = refiner

    def generate(self, requests: list[RefineRequest]) -> list[Any]:
        return self.refiner.refine_batch([(request.question, list(request.docs)) for request in requests])


class Components:
    """The run's reranker and refiner (either may be None), pooled across examples."""

    def __init__(self, reranker: Reranker | None = None, refiner: Refiner | None = None,
                 scheduler: Scheduler | None = None) -> None:
        self.reranker, self.refiner = reranker, refiner
        self.scheduler = scheduler or Scheduler()
        self._scoring = ScoringBackend(reranker) if reranker is not None else None
        self._refining = RefiningBackend(refiner) if refiner is not None else None

    async def rerank(self, query: str, docs: list[Document], k: int) -> list[Document]:
        assert self.reranker is not None
        return await self.reranker.rerank(query, docs, k, scores=self._scores)

    async def _scores(self, query: str, texts: list[str]) -> list[float]:
        return await self.scheduler.submit(self._scoring, PairsRequest(query, tuple(texts)))

    async def refine(self, question: str, docs: list[Document]) -> list[Document] | str:
        assert self.refiner is not None
        return await self.refiner.refine(question, docs, pooled=self._refined)

    async def _refined(self, question: str, docs: list[Document]) -> Any:
        return await self.scheduler.submit(self._refining, RefineRequest(question, tuple(docs)))

    def load(self) -> None:
        for component in (self.reranker, self.refiner):
            if component is not None:
                component.load()

    def metadata(self) -> dict[str, Any]:
        """What results.json records of them (their options are in the run's config)."""
        return {**(self.reranker.metadata() if self.reranker else {}), **(self.refiner.metadata() if self.refiner else {})}

    async def aclose(self) -> None:
        await self.scheduler.close()

    def close(self) -> None:
        for component in (self.reranker, self.refiner):
            if component is not None:
                component.close()

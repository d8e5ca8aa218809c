"""A run's reranker and refiner behind one pool: the scoring of every in-flight example's rerank, and
the refining of every reader's documents, are batched across examples by a `Scheduler` of their own
(their counts stay apart from the LLM's and the retriever's) and run in a worker thread while the
other examples go on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._config.retrieval import RunRetrieval
from .._errors import ConfigError
from .._retrieval.corpus.readers import passage_text
from .._scheduler import Scheduler
from .._shared.refined_text import REFINED_TEXT
from .._types import Document
from .._values.json_values import JsonObject
from .base import Refiner, Reranker


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
        docs = (f"{doc.id}\x01{passage_text(doc)}" for doc in self.docs)
        return "\x00".join((backend_id, self.question, *docs))


class _Backend:
    """A component as a scheduler backend (ragbench._scheduler): one blocking call per batch."""

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
            out.append(scores[start : start + len(request.texts)])
            start += len(request.texts)
        return out


class RefiningBackend(_Backend):
    def __init__(self, refiner: Refiner) -> None:
        super().__init__(refiner)
        self.refiner = refiner

    def generate(self, requests: list[RefineRequest]) -> list[Any]:
        return list(self.refiner.refine_batch([(request.question, list(request.docs)) for request in requests]))


class Components:
    """The run's reranker and refiner (either may be None), pooled across examples."""

    def __init__(
        self, reranker: Reranker | None = None, refiner: Refiner | None = None, scheduler: Scheduler | None = None
    ) -> None:
        self.reranker, self.refiner = reranker, refiner
        self.scheduler = scheduler or Scheduler()
        self._scoring = ScoringBackend(reranker) if reranker is not None else None
        self._refining = RefiningBackend(refiner) if refiner is not None else None

    @classmethod
    def configured(cls, retrieval: RunRetrieval, registry: Any) -> Components:
        """The run's `--reranker` and `--refiner` with their options (checked by the pre-flight), their models
        loaded (as a run's retriever opens its index before the run starts)."""
        from . import load_component

        components = cls(
            load_component("rerankers", retrieval.reranker, retrieval.reranker_args, registry=registry),
            load_component("refiners", retrieval.refiner, retrieval.refiner_args, registry=registry),
        )
        components.load()
        return components

    def pooled(self, scheduler: Scheduler) -> Components:
        """The same components, their work pooled by `scheduler` (a run's, which waits for its examples)."""
        return Components(self.reranker, self.refiner, scheduler)

    async def rerank(self, query: str, docs: list[Document], k: int) -> list[Document]:
        assert self.reranker is not None
        return await self.reranker.rerank(query, docs, k, scores=self._scores)

    async def _scores(self, query: str, texts: list[str]) -> list[float]:
        # Scheduler.submit is typed for LLM engines; a backend is batched as one (duck-typed), answering in kind
        return await self.scheduler.submit(self._scoring, PairsRequest(query, tuple(texts)))  # type: ignore[arg-type,return-value]

    async def refine(self, question: str, docs: list[Document]) -> list[Document]:
        """The refiner's documents, or one document holding the text it made of `docs` (marked `REFINED_TEXT`,
        `metadata["refined_from"]`: their ids)."""
        assert self.refiner is not None
        refined = await self.refiner.refine(question, docs, pooled=self._refined)
        if isinstance(refined, str):
            return [
                Document(
                    id=None,
                    title="",
                    text=refined,
                    metadata={"refined_from": [doc.id for doc in docs], REFINED_TEXT: True},
                )
            ]
        return refined

    async def _refined(self, question: str, docs: list[Document]) -> Any:
        # Scheduler.submit is typed for LLM engines; a backend is batched as one (duck-typed), answering in kind
        return await self.scheduler.submit(self._refining, RefineRequest(question, tuple(docs)))  # type: ignore[arg-type]

    def _each(self) -> list[tuple[str, Reranker | Refiner]]:
        return [
            (flag, component)
            for flag, component in (("--reranker", self.reranker), ("--refiner", self.refiner))
            if component is not None
        ]

    def load(self) -> None:
        """Load their models; one that fails to load (a damaged or partial folder) is a one-line ConfigError."""
        for flag, component in self._each():
            try:
                component.load()
            except ConfigError:
                raise
            except Exception as exc:
                first = str(exc).splitlines()[0] if str(exc) else ""
                raise ConfigError(
                    f"{flag} {component.name}: its model failed to load ({type(exc).__name__}: "
                    f"{first}); check the folder given as model="
                ) from None

    def metadata(self) -> JsonObject:
        """What run.json and results.json record of them beside their options (in `retriever_metadata`, under
        `reranker` and `refiner`)."""
        return {flag[2:]: component.metadata() for flag, component in self._each()}

    def contents(self) -> JsonObject:
        """What their answers depend on beyond their options (their models' digests), checked by `--resume`
        with the retriever's (`Retriever.contents`)."""
        return {flag[2:]: component.contents() for flag, component in self._each()}

    async def aclose(self) -> None:
        """Stop the pool and free the models (the run's examples have ended)."""
        await self.scheduler.close()
        self.close()

    def close(self) -> None:
        """Free their models."""
        for _, component in self._each():
            component.close()

"""What a system awaits: `docs = await ctx.retriever.search(query, k)`.

Like LLM calls, the queries of all in-flight examples are pooled by a `Scheduler` (its own
instance, so retrieval counts stay apart from LLM counts) into one `Retriever.search(queries, k)`
call per k, run in a worker thread while the other examples go on. Each search is traced as a
`Step(kind="retrieval")` of the example. With a run's reranker (`--reranker`), every search fetches
max(k, its `retrieval_topk`) candidates and returns the reranked top k; with a refiner (`--refiner`),
`refine` turns a reader's documents into what it shows (ragbench._components); each is a traced step.

A thread, not the worker processes (ragbench._run.lifetime.workers), on measurement (docs/performance.md,
"Figures behind the code"): bm25s's search holds the GIL most of the time, but a good part of it is
building the hit Documents from the docstore, which must happen in this process anyway; in the process
pool, with Documents pickled back, it was slower with the same loop stalls (unpickling holds the GIL too);
scoring there and building hits here was no faster than the thread, for a second copy of the index's
vocabulary in every worker. Batches are per k and in-flight examples, so a stall is one per batch, not
per example.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from numbers import Integral
from typing import TYPE_CHECKING, Any, Protocol

from .._scheduler import CallStats, Scheduler
from .._types import Document, Example, Step
from .._values.ceiling import CeilingHeld
from .._values.engine_errors import EngineError
from .._values.images import Image
from .._values.json_values import JsonObject
from .base import RetrievalError, Retriever

if TYPE_CHECKING:
    from .._components.pooling import Components
    from .._replay.recording import CallRecorder


class StepTracer(Protocol):
    """What a bound retrieval needs of the example's context (ragbench._context.Context, which imports
    this module's Retrieval): `step`, to trace each search."""

    def step(self, kind: str, name: str, request: JsonObject) -> AbstractContextManager[Step]: ...


@dataclass(frozen=True)
class SearchRequest:
    query: str  # for a search by picture, `image_query`'s name of it
    k: int
    bound: Retriever | None = None  # a `pooled` example-bound retriever: the search is among its documents
    image: Image | None = None  # the query picture of a search by picture (`Retriever.search_images`)

    @property
    def batch_key(self) -> tuple[int, bool, bool]:
        # one search call has one k, and one kind of search
        return self.k, self.bound is not None, self.image is not None

    def text_length(self) -> int:
        return len(self.query)

    def cache_key(self, backend_id: str) -> str:
        # an example-bound search is shared only by the same example's identical searches
        scope = "" if self.bound is None else f"\x00{id(self.bound)}"
        return f"{backend_id}\x00{self.k}\x00{self.query}{scope}"


class SearchBackend:
    """A retriever as a scheduler backend: a batch of requests (all with one k) is one search."""

    concurrent = False
    cacheable = False
    max_concurrency = 1

    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever
        self.engine_id = retriever.retriever_id
        self.max_batch_size = retriever.max_batch_size
        self.batch_sizes: list[int] = []  # queries per search call, for tests and benchmarks

    def generate(self, requests: list[SearchRequest]) -> list[list[Document] | RetrievalError]:
        self.batch_sizes.append(len(requests))
        queries, k = [request.query for request in requests], requests[0].k
        images = [request.image for request in requests if request.image is not None]
        if images:
            results = self.retriever.search_images(images, k)
        elif requests[0].bound is None:
            results = self.retriever.search(queries, k)
        else:
            bound = [request.bound for request in requests if request.bound is not None]  # each, as the first
            results = self.retriever.search_examples(bound, queries, k)
        if len(results) != len(requests):
            raise RetrievalError(f"retriever {self.retriever.name} answered {len(results)} of {len(requests)} queries")
        return list(results)  # a RetrievalError in a query's place fails that request alone


def image_query(image: Image) -> str:
    """A search by picture as its trace and recording name it: the picture's digest."""
    return f"image sha256:{image.digest}"


@dataclass(eq=False, repr=False)  # one handle is equal to itself only; its repr does not walk its retriever
class Retrieval(CeilingHeld):  # a bound retrieval's `ctx` counts its searches against the example's ceiling
    """A run's retriever behind the pool (`scheduler`, `backend`: by default its own); `bind` gives each example its
    own traced view."""

    retriever: Retriever
    scheduler: Scheduler = field(default_factory=Scheduler)
    backend: SearchBackend | None = None  # None: one made of `retriever`
    ctx: StepTracer | None = None
    local: Retriever | None = None  # an example-bound retriever: its provided docs (searched directly), or `pooled`
    recorder: CallRecorder | None = None  # every search to the run's calls/retrieval.jsonl (replayable)
    # recorded with an example-bound search: two examples' identical queries have different answers
    example_id: str | None = None
    components: Components | None = None  # the run's reranker and refiner (ragbench._components), if any

    def __post_init__(self) -> None:
        if self.backend is None:
            self.backend = SearchBackend(self.retriever)

    def bind(self, ctx: StepTracer, example: Example) -> Retrieval:
        local = self.retriever.for_example(example)
        return replace(self, ctx=ctx, local=local, example_id=example.id if local is not None else None)

    @property
    def fixed_documents(self) -> bool:
        """Every query gets the example's own documents in their given order (`Retriever.fixed_documents`,
        and no reranker reorders them by query)."""
        return self.retriever.fixed_documents and self._reranker is None

    @property
    def _reranker(self) -> Any:
        return self.components.reranker if self.components is not None else None

    @property
    def stats(self) -> CallStats:
        return self.scheduler.stats

    async def search(self, query: str, k: int, *, step: str = "retrieve") -> list[Document]:
        """The top `k` documents for `query`, best first (copies: a system may annotate them); reranked
        when the run has a reranker."""
        self._check_query(query)
        reranker = self._reranker
        if reranker is None:
            return await self._search(query, k, step)
        self._check_k(k)
        docs = await self._search(query, max(int(k), reranker.retrieval_topk), step)
        request: JsonObject = {
            "reranker": reranker.name,
            "query": query,
            "k": int(k),
            "candidates": [doc.id for doc in docs],
        }
        with self._step("custom", "rerank", request) as record:
            assert self.components is not None  # a reranker comes with the components pooling it
            try:
                kept = await self.components.rerank(query, docs, int(k))
            except EngineError as exc:
                raise RetrievalError(f"reranker {reranker.name}: {exc}") from None
            record.response = {"ids": [doc.id for doc in kept], "scores": [doc.score for doc in kept]}
            record.docs = [doc.to_dict() for doc in kept]
        return kept

    async def search_image(self, image: Image, k: int, *, step: str = "retrieve image") -> list[Document]:
        """The top `k` documents for a query picture, best first, from a retriever that searches by picture
        (`Retriever.image_queries`; a reranker, which reads a query's text, is not applied). The run's retriever
        answers it (`search_images`), also where its text searches are bound to the example (`pooled`, e.g.
        cragmm_search's image search by the example's picture). The search is traced and recorded with
        `image_query`'s name of the picture as its query."""
        if not self.retriever.image_queries or (self.local is not None and not self.local.pooled):
            raise RetrievalError(
                f"retriever {self.retriever.name} does not search by picture; use one that does, or search by text only"
            )
        return await self._search(image_query(image), k, step, image)

    async def refine(self, question: str, docs: list[Document]) -> list[Document]:
        """What a reader shows for `question` in place of `docs`: the run's refiner's documents, or one
        document holding the text it made of them (`metadata["refined_from"]`: their ids); `docs` as they
        are without a refiner."""
        refiner = self.components.refiner if self.components is not None else None
        if refiner is None or not docs:
            return docs
        request: JsonObject = {"refiner": refiner.name, "question": question, "docs": [doc.id for doc in docs]}
        with self._step("custom", "refine", request) as record:
            assert self.components is not None  # a refiner comes with the components pooling it
            try:
                refined = await self.components.refine(question, docs)
            except EngineError as exc:
                raise RetrievalError(f"refiner {refiner.name}: {exc}") from None
            record.response = {"docs": len(refined)}
            record.docs = [doc.to_dict() for doc in refined]
        return refined

    def _step(self, kind: str, name: str, request: JsonObject) -> AbstractContextManager[Step]:
        return self.ctx.step(kind, name, request) if self.ctx is not None else nullcontext(Step(kind, name, request))

    @staticmethod
    def _check_query(query: Any) -> None:
        if not isinstance(query, str):  # a model's tool call {"query": 5}, a plugin's list of queries
            raise RetrievalError(f"search query {query!r:.80}: expected a text (str), not {type(query).__name__}")

    @staticmethod
    def _check_k(k: Any) -> None:
        if isinstance(k, bool) or not isinstance(k, Integral) or k < 0:  # `provided` sliced docs[:-1]: all but one
            raise RetrievalError(f"search k={k!r}: expected a whole number >= 0 (how many documents to return)")

    async def _search(self, query: str, k: int, step: str, image: Image | None = None) -> list[Document]:
        """The retriever's top `k` for `query` (or for the picture `image`, which `query` names), traced and
        recorded."""
        request: JsonObject = {"retriever": self.retriever.name, "query": query, "k": k}
        with self._step("retrieval", step, request) as record:
            self._check_k(k)
            k = request["k"] = int(k)  # a numpy integer is traced as JSON's
            if self.local is not None and not self.local.pooled:
                found = self.local.search([query], k)[0]
                if isinstance(found, RetrievalError):
                    raise found
                docs = found
            else:
                try:
                    # Scheduler.submit is typed for LLM engines; the search backend is batched as one (duck-typed)
                    docs = await self.scheduler.submit(self.backend, SearchRequest(query, k, self.local, image))  # type: ignore[arg-type,assignment]
                except EngineError as exc:
                    raise RetrievalError(str(exc)) from None
            record.response = {"ids": [doc.id for doc in docs], "scores": [doc.score for doc in docs]}
        if self.recorder is not None:  # the example's own documents need not be carried: a replay has them
            self.recorder.retrieval(
                self.retriever.name,
                query,
                k,
                docs,
                carry_docs=not self.retriever.fixed_documents,
                example=self.example_id,
            )
        return [doc.annotatable() for doc in docs]

    async def close(self) -> None:
        await self.scheduler.close()
        if self.components is not None:
            await self.components.aclose()

"""CRAG's prompting (`CragTask.prompting`): the CRAG repo's baselines as generic systems send them, and the web
pages as passages for systems that read documents themselves. Both work on the run's resources through the
task's `PageWork`, which the task binds to the run (UsesRunResources) and closes."""

from __future__ import annotations

import asyncio
from typing import Any

from ragbench.api import Document, Example, Prompt, TaskPrompting
from ragbench.api.trace import group

from . import baselines
from .embedder import BatchingEmbedder, ModelSpec
from .metrics import cut_to_tokens
from .pages import WORKER_MODULES, Offload, PageProcessor


class PageWork:
    """Pages parsed in the run's workers (warm with the parsers) and cached in its page cache; the embedding
    model loaded once per run. `bind` is the task's (a run's resources); `close` its teardown's."""

    def __init__(
        self,
        task: str,
        executor: str,
        workers: int | None,
        cache_path: str | None,
        model: ModelSpec,
    ) -> None:
        self.task, self.executor, self.workers = task, executor, workers
        self.cache_path, self.model = cache_path, model
        self.resources: Any = None  # the run's (`bind`)
        self.offload: Offload | None = None
        self.pages: PageProcessor | None = None
        self.embedder: BatchingEmbedder | None = None

    def bind(self, resources: Any) -> None:
        self.resources = resources
        resources.workers.warm(*WORKER_MODULES)
        self.offload = Offload(resources.workers, self.executor, self.workers)
        self.pages = PageProcessor(self.offload)
        self.embedder = BatchingEmbedder(self.model, resources=resources)

    def bound_offload(self) -> Offload:
        if self.offload is None:
            raise RuntimeError(
                f"task {self.task} works on a run's resources: the evaluator binds it (UsesRunResources"
                ".bind); outside a run, bind it to a ragbench._run.lifetime.resources.RunResources"
            )
        return self.offload

    async def ready(self) -> tuple[PageProcessor, BatchingEmbedder]:
        """The page processor and embedder, on the run's page cache (which the run closes)."""
        self.bound_offload()
        pages, embedder = self.pages, self.embedder
        assert pages is not None and embedder is not None  # made by `bind`, with the offload
        pages.cache = embedder.cache = await self.resources.page_cache(self.cache_path)
        return pages, embedder

    def close(self) -> None:
        if self.offload is not None:
            self.offload.close()


class CragPrompting(TaskPrompting):
    """The CRAG repo's baselines (`baseline`: crag_repo's RAG over the top page sentences, or straightforward RAG's
    windows of `web_tokens` and `kg_tokens` Llama-2 tokens), with the mock KG API's results when `uses_kg`."""

    def __init__(self, work: PageWork, baseline: str, uses_kg: bool, web_tokens: int, kg_tokens: int) -> None:
        self.work, self.baseline, self.uses_kg = work, baseline, uses_kg
        self.web_tokens, self.kg_tokens = web_tokens, kg_tokens
        self.tokenizer_path: str | None = None  # the task's Llama-2 tokenizer, once found (`CragTask.prepare`)

    def build_prompt(self, example: Example, docs: list[Document] | None = None, **options: Any) -> Prompt:
        """The closed-book (vanilla) baseline's chat; retrieval prompts need `reader_prompt`."""
        return baselines.closed_book_messages(example)

    async def passages(self, docs: list[Document]) -> list[Document]:
        """Web pages as passages for systems that read documents themselves (LLatrieval, Self-RAG,
        SMART): each page's text (the baselines' HTML parsing and sentence split) in passages of about
        100 words, the unit of DPR/ALCE corpora, in page order; a page without text keeps its snippet."""
        pages, _ = await self.work.ready()
        return await pages.passages(docs)

    async def reader_prompt(
        self, example: Example, ctx: Any, docs: list[Document] | None
    ) -> tuple[Prompt, list[Document]]:
        if docs is None:
            if self.baseline == "straightforward":
                return baselines.straightforward_messages(example, "", None), []
            return baselines.closed_book_messages(example), []
        if self.baseline == "straightforward":
            return await self.straightforward_prompt(example, ctx, docs)
        if not self.uses_kg:
            sentences = await self.top_sentences(example, ctx, docs)
            return baselines.rag_messages(example, sentences), sentences
        sentences, kg_text = await asyncio.gather(self.top_sentences(example, ctx, docs), self.kg_context(example, ctx))
        return baselines.rag_kg_messages(example, sentences, kg_text), sentences

    async def top_sentences(self, example: Example, ctx: Any, docs: list[Document]) -> list[Document]:
        """Pages -> sentences (worker processes) -> one embedding batch with other examples -> top 20."""
        with ctx.step("retrieval", "crag_sentences", {"pages": len(docs)}) as step:  # traced before any await
            pages, embedder = await self.work.ready()
            per_page = await pages.sentences([doc.metadata.get("page_result", "") for doc in docs])
            if not any(per_page):
                step.response = {"sentences": 0}
                return []
            # one embedding group per page (each a page-cache entry), batched with other examples'
            *page_vectors, query = await asyncio.gather(
                *(embedder.embed(page) for page in per_page), embedder.embed([example.question])
            )
            sentences, origins, order = await asyncio.to_thread(
                baselines.rank_page_sentences, docs, per_page, page_vectors, query[0]
            )
            step.response = {"sentences": len(sentences), "top": order}
        return [
            Document(id=origins[i].id, title=origins[i].title, text=sentences[i], url=origins[i].url) for i in order
        ]

    async def kg_context(self, example: Example, ctx: Any) -> str:
        response = await ctx.llm.chat(
            baselines.entity_messages(example), step="entity_extraction", **baselines.ENTITY_SAMPLING
        )
        entity = baselines.parse_entities(response.text)
        with group("KG calls"):  # the viewer's timeline: the KG API calls together
            return await baselines.kg_text(entity, baselines.traced_kg_call(ctx, ctx.tools["crag_kg"]))

    async def straightforward_prompt(
        self, example: Example, ctx: Any, docs: list[Document]
    ) -> tuple[Prompt, list[Document]]:
        offload = self.work.bound_offload()
        web = await offload.run(cut_to_tokens, baselines.snippet_lines(docs), self.web_tokens, self.tokenizer_path)
        kg = (
            await offload.run(cut_to_tokens, await self.kg_context(example, ctx), self.kg_tokens, self.tokenizer_path)
            if self.uses_kg
            else None
        )
        return baselines.straightforward_messages(example, web, kg), docs

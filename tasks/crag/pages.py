"""Web pages to sentences, as the CRAG repo's RAG baselines do it, off the event loop.

models/rag_llama_baseline.py ChunkExtractor._extract_chunks: BeautifulSoup(html, "lxml")
.get_text(" ", strip=True), blingfire sentence offsets, each sentence cut to 1,000 characters;
a page without text gives one empty sentence. Pages are parsed in a process pool (one task per
page) so that parsing runs beside the LLM calls of other examples instead of before them.
"""
from __future__ import annotations

import asyncio
import multiprocessing
import os
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor

from ragbench.types import Document

MAX_SENTENCE_CHARS = 1000


def html_to_sentences(html: str) -> list[str]:
    from blingfire import text_to_sentences_and_offsets
    from bs4 import BeautifulSoup

    text = BeautifulSoup(html, "lxml").get_text(" ", strip=True)
    if not text:
        return [""]
    _, offsets = text_to_sentences_and_offsets(text)
    return [text[start:end][:MAX_SENTENCE_CHARS] for start, end in offsets]


PASSAGE_WORDS = 100


def page_passages(page: Document) -> list[Document]:
    """One page's text in passages of about PASSAGE_WORDS words (whole sentences), ids `<page>#<n>`."""
    sentences = [s for s in html_to_sentences(page.metadata.get("page_result") or "") if s.strip()]
    if not sentences:
        return [page] if page.text.strip() else []
    passages, current, words = [], [], 0
    for sentence in sentences:
        current.append(sentence)
        words += len(sentence.split())
        if words >= PASSAGE_WORDS:
            passages.append(" ".join(current))
            current, words = [], 0
    if current:
        passages.append(" ".join(current))
    return [Document(id=f"{page.id}#{n}", title=page.title, text=text, url=page.url)
            for n, text in enumerate(passages, 1)]


class PageProcessor:
    """`await processor.sentences(pages)` -> sentences per page. `kind` "process" (default; real
    parallelism, BeautifulSoup holds the GIL) or "thread"; `workers` defaults to the core count."""

    def __init__(self, kind: str = "process", workers: int | None = None) -> None:
        if kind not in ("process", "thread"):
            raise ValueError(f"page processing kind must be 'process' or 'thread', not {kind!r}")
        self.kind = kind
        self.workers = int(workers or os.cpu_count() or 1)
        self._executor: Executor | None = None

    def executor(self) -> Executor:
        if self._executor is None:
            self._executor = (ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))
                              if self.kind == "process" else ThreadPoolExecutor(self.workers))
        return self._executor

    async def sentences(self, pages: list[str]) -> list[list[str]]:
        loop = asyncio.get_running_loop()
        executor = self.executor()
        return list(await asyncio.gather(*(loop.run_in_executor(executor, html_to_sentences, html) for html in pages)))

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

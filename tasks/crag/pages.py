"""Web pages to sentences and passages, as the CRAG repo's RAG baselines do it: off the event loop,
and once per page across systems, tasks and runs.

models/rag_llama_baseline.py ChunkExtractor._extract_chunks: BeautifulSoup(html, "lxml")
.get_text(" ", strip=True), blingfire sentence offsets, each sentence cut to 1,000 characters;
a page without text gives one empty sentence. Systems that read pages themselves get the same
sentences joined into passages of about 100 words. Pages are parsed in the run's worker processes
(`RunResources.workers`, ragbench._run.lifetime.workers: a share of an example's pages per worker), so parsing
runs beside the LLM calls of other examples and never on the loop; results go to the run's page
cache (ragbench._storage.page_cache) under a hash of the page and of the processing (parser and
splitter versions included).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar

from ragbench.api import Document
from ragbench.api.run import PageCache, Workers, content_key, ready_threads, usable_cores

MAX_SENTENCE_CHARS = 1000
PASSAGE_WORDS = 100
KIND = "crag-page"
WORKER_MODULES = ("bs4", "lxml", "blingfire", "ragbench.tasks.crag.pages")  # imported once by each worker


def html_to_sentences(html: str) -> list[str]:
    from blingfire import text_to_sentences_and_offsets
    from bs4 import BeautifulSoup

    text = BeautifulSoup(html, "lxml").get_text(" ", strip=True)
    if not text:
        return [""]
    _, offsets = text_to_sentences_and_offsets(text)
    return [text[start:end][:MAX_SENTENCE_CHARS] for start, end in offsets]


def sentences_to_passages(sentences: list[str]) -> list[str]:
    """Whole non-empty sentences joined until a passage has PASSAGE_WORDS words or more."""
    passages, current, words = [], [], 0
    for sentence in sentences:
        if not sentence.strip():
            continue
        current.append(sentence)
        words += len(sentence.split())
        if words >= PASSAGE_WORDS:
            passages.append(" ".join(current))
            current, words = [], 0
    if current:
        passages.append(" ".join(current))
    return passages


def process_page(html: str) -> dict[str, list[str]]:
    """One page's sentences and passages (runs in a worker process)."""
    sentences = html_to_sentences(html)
    return {"sentences": sentences, "passages": sentences_to_passages(sentences)}


def process_pages(pages: list[str]) -> list[dict[str, list[str]]]:
    """`process_page` for several pages in one worker call (fewer round trips)."""
    return [process_page(html) for html in pages]


def page_documents(page: Document, passages: list[str]) -> list[Document]:
    """A page's passages as documents with ids `<page>#<n>`; a page without text keeps its snippet."""
    if not passages:
        return [page] if page.text.strip() else []
    return [
        Document(id=f"{page.id}#{n}", title=page.title, text=text, url=page.url) for n, text in enumerate(passages, 1)
    ]


def _versions() -> str:
    found = []
    for package in ("beautifulsoup4", "lxml", "blingfire"):
        try:
            found.append(f"{package}=={version(package)}")
        except PackageNotFoundError:
            found.append(f"{package}==?")
    return ",".join(found)


PROCESSING = f"lxml get_text(' ', strip) | blingfire | cut {MAX_SENTENCE_CHARS} | {PASSAGE_WORDS} words | {_versions()}"


T = TypeVar("T")


class Offload:
    """Where CPU-bound calls run: the run's worker processes (`"process"`, the default) or threads
    of this process (`"thread"`: for tests, where starting processes costs more than the work;
    these calls then hold the GIL beside the loop)."""

    def __init__(self, workers: Workers, kind: str = "process", threads: int | None = None) -> None:
        if kind not in ("process", "thread"):
            raise ValueError(f"page processing kind must be 'process' or 'thread', not {kind!r}")
        self.workers, self.kind, self.threads = workers, kind, threads
        self._threads: ThreadPoolExecutor | None = None

    async def start(self) -> None:
        """Start the threads (in a thread: starting them blocks); the workers start on their first call."""
        if self.kind == "thread" and self._threads is None:
            self._threads = await asyncio.to_thread(ready_threads, self.threads or usable_cores())

    @property
    def width(self) -> int:
        """How many calls run at once."""
        return (self.workers.size or 1) if self.kind == "process" else (self.threads or usable_cores())

    def submit(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """`fn(*args)` on the started executor, as a future of the running loop (in the workers: through
        `Workers.run`, which replaces a pool a killed worker broke)."""
        if self.kind == "process":
            in_worker: asyncio.Future[T] = asyncio.ensure_future(self.workers.run(fn, *args))
            return in_worker
        return asyncio.get_running_loop().run_in_executor(self._threads, fn, *args)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        await self.start()
        return await self.submit(fn, *args)

    def close(self) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=True, cancel_futures=True)
            self._threads = None


def _keys(pages: list[str]) -> list[str]:
    return [content_key(KIND, PROCESSING, html) for html in pages]


class PageProcessor:
    """`await processor.process(pages)` -> {"sentences", "passages"} per page: from the page cache,
    else parsed by `offload` (a few pages per call). Pages being parsed for one example are not
    parsed again for another that asks meanwhile."""

    def __init__(self, offload: Offload, cache: PageCache | None = None) -> None:
        self.offload = offload
        self.cache = cache
        self.parsed = 0  # pages parsed here (not from the cache), for tests and benchmarks
        self._in_flight: dict[str, tuple[asyncio.Future[Any], int]] = {}  # page key -> (call, position in it)

    async def process(self, pages: list[str]) -> list[dict[str, list[str]]]:
        keys = await asyncio.to_thread(_keys, pages)  # hashing megabytes of HTML: not on the loop
        found: list[Any] = await self.cache.get_many(keys) if self.cache is not None else [None] * len(pages)
        missing = [i for i, value in enumerate(found) if value is None]
        if not missing:
            return found
        await self.offload.start()
        new, seen = [], set()
        for i in missing:
            if keys[i] not in self._in_flight and keys[i] not in seen:
                new.append(i)
                seen.add(keys[i])
        started = []
        # one worker call per share of the new pages (not one per page: each call is a few handles on
        # the loop), dealt round-robin so that large pages spread over the workers
        for share in (new[n :: self.offload.width] for n in range(min(len(new), self.offload.width))):
            share_keys = [keys[i] for i in share]
            future = self.offload.submit(process_pages, [pages[i] for i in share])
            future.add_done_callback(partial(self._forget, share_keys))
            for at, key in enumerate(share_keys):
                self._in_flight[key] = (future, at)
            started.append((future, share_keys))
        self.parsed += len(new)
        # pages another example is parsing already are waited for, not parsed again
        waiting = {i: self._in_flight[keys[i]] for i in missing}
        await asyncio.gather(*{id(future): future for future, _ in waiting.values()}.values())
        for i, (future, at) in waiting.items():
            found[i] = future.result()[at]
        if self.cache is not None:
            self.cache.put_many(
                [(key, result) for future, share_keys in started for key, result in zip(share_keys, future.result())]
            )
        return found

    def _forget(self, keys: list[str], _: asyncio.Future[Any]) -> None:
        """A call has ended: its pages are no longer in flight."""
        for key in keys:
            self._in_flight.pop(key, None)

    async def sentences(self, pages: list[str]) -> list[list[str]]:
        return [page["sentences"] for page in await self.process(pages)]

    async def passages(self, docs: list[Document]) -> list[Document]:
        processed = await self.process([doc.metadata.get("page_result") or "" for doc in docs])
        return [passage for doc, page in zip(docs, processed) for passage in page_documents(doc, page["passages"])]

"""The text of judged segments by docid, for the metrics that judge a topic's qrels rather than what a system
showed (umbrela's qrel evaluation, nuggetizer's pooled nuggets), from any corpus ragbench reads (the TREC RAG
segmented shards among them).

The corpus is read in one pass keeping only the texts wanted: the pre-flight tells every topic's docids
(`want_topics`), so a run reads its corpus once (the 113,520,750 segments of TREC RAG's shards: every shard
unpacked once); a docid asked that no pass has looked for yet costs another pass (a metric scored without the
run's pre-flight, in a test). Where several segments share a docid the last one is kept, as a dict over the
corpus would keep it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, Document, Example
from ragbench.api.retrieval import read_corpus


def existing_corpus(metric: str, corpus: str) -> Path:
    path = Path(corpus)
    if not path.exists():
        raise ConfigError(f"metric {metric}: corpus {corpus} not found; name the corpus of the qrels' segments")
    return path


def segment_text(doc: Document) -> str:
    return doc.text


def scan(corpus: Path, wanted: set[str], render: Callable[[Document], str] = segment_text) -> dict[str, str]:
    return {str(doc.id): render(doc) for doc in read_corpus(corpus) if isinstance(doc, Document) and doc.id in wanted}


class SegmentTexts:
    """`render`: what a segment's text is (its text; the support judge's "TITLE: SEGMENT")."""

    def __init__(self, corpus: Path, render: Callable[[Document], str] = segment_text) -> None:
        self.corpus, self.render = corpus, render
        self.found: dict[str, str] = {}
        self.looked_for: set[str] = set()  # every docid a pass has looked for (found or not)
        self.wanted: set[str] = set()
        self.loading = asyncio.Lock()

    def want_topics(self, task: Any, docids: Callable[[Example], Iterable[str]]) -> None:
        """Every topic's docids (`docids` of each example of `task`), read in one pass when the first is asked.
        A task whose data cannot be read adds none: its own pre-flight says why."""
        try:
            examples = [example for example in task.examples() if isinstance(example, Example)]
        except (ConfigError, OSError, ValueError):
            return
        for example in examples:
            try:
                self.wanted.update(docids(example))
            except ValueError:  # no qrels: the example fails when scored, saying so
                continue

    async def lookup(self, docids: list[str]) -> list[str | None]:
        """Each docid's text, in order; None where the corpus lacks it."""
        async with self.loading:
            unread = set(docids) - self.looked_for
            if unread:
                wanted = (self.wanted | unread) - self.looked_for
                self.found.update(await asyncio.to_thread(scan, self.corpus, wanted, self.render))
                self.looked_for |= wanted
        return [self.found.get(docid) for docid in docids]

    async def texts(self, docids: list[str]) -> list[str]:
        """Each docid's text, in order; a docid the corpus lacks is a ValueError naming it (the example fails)."""
        found = await self.lookup(docids)
        missing = [docid for docid, text in zip(docids, found, strict=True) if text is None]
        if missing:
            raise ValueError(f"segment {missing[0]} is not in the corpus {self.corpus} ({len(missing)} missing)")
        return [text for text in found if text is not None]

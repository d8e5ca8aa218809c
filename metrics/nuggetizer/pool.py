"""TREC RAG's AutoNuggetizer per topic, as nuggetizer 0.0.5's scripts run it: `create_nuggets.py` creates a topic's
nuggets once from its pool (the candidates whose `judgment` is above 0: the topic's qrels segments graded 1-3, in
the qrels' order, each its corpus `segment`), and `assign_nuggets.py` assigns them against every run's answer, the
text of its submission's sentences joined by a space.

`Pool` finds the pool's texts in the corpus (read once, by docid) and keeps each topic's nuggets, made once per
metric: in a nugget file (`nuggets=FILE`, nugget_file.py) they are shared by every run scored with it, each topic
created once among them. A file ragbench did not write (the track's, say), or a symbolic link, is only read;
ragbench appends the topics it creates to a file it made (each of its lines says so)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from ragbench.api import Example
from ragbench.api.text import remove_citations, sent_tokenize

from ..segment_texts import SegmentTexts
from .nugget_file import NuggetFile
from .steps import Nugget


def submitted_text(answer: str) -> str:
    """The answer as assign_nuggets.py reads a submission: its sentences (as `ragbench export trec-rag` writes
    them, citations taken out) joined by a space."""
    texts = (" ".join(remove_citations(sentence).split()) for sentence in sent_tokenize(answer))
    return " ".join(text for text in texts if text)


def pooled_docids(example: Example) -> list[str]:
    """The topic's qrels segments graded above 0, in the qrels' order (create_nuggets.py's `judgment > 0`)."""
    qrels = example.gold.get("qrels")
    if not isinstance(qrels, dict):
        raise ValueError("passages=pool creates nuggets from the topic's qrels: this task's examples have none")
    return [str(docid) for docid, grade in qrels.items() if float(grade) > 0]


class Pool:
    """The pooled segments' texts (`corpus`) and each topic's nuggets, made at most once (`nuggets`)."""

    def __init__(self, corpus: Path, nugget_file: Path | None) -> None:
        self.segments = SegmentTexts(corpus)
        self.file = None if nugget_file is None else NuggetFile(nugget_file)
        self.topics: dict[str, list[Nugget]] = {} if self.file is None else dict(self.file.topics)
        self.locks: dict[str, asyncio.Lock] = {}

    async def nuggets(
        self, example: Example, create: Callable[[list[str]], Awaitable[list[Nugget]]], made_by: dict[str, str]
    ) -> list[Nugget]:
        """The topic's nuggets: from the nugget file or made earlier in this run, else created from its pool
        (and written to the nugget file, unless another run wrote them there meanwhile)."""
        topic = str(example.id)
        async with self.locks.setdefault(topic, asyncio.Lock()):
            if topic in self.topics:
                return self.topics[topic]
            if self.file is None:
                self.topics[topic] = await create(await self.segments.texts(pooled_docids(example)))
                return self.topics[topic]
            if self.file.read_only:
                raise ValueError(
                    f"topic {topic} has no nuggets in {self.file.path}, {self.file.read_only} (ragbench only reads "
                    "it): add the topic's line, or name a new nugget file"
                )
            async with self.file.claimed(topic) as written:
                if topic not in written:
                    created = await create(await self.segments.texts(pooled_docids(example)))
                    self.file.append(topic, example.question, created, made_by)
                    written[topic] = created
                self.topics[topic] = written[topic]
            return self.topics[topic]

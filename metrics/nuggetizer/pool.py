"""TREC RAG's AutoNuggetizer per topic, as nuggetizer 0.0.5's scripts run it: `create_nuggets.py` creates a topic's
nuggets once from its pool (the candidates whose `judgment` is above 0: the topic's qrels segments graded 1-3, in
the qrels' order, each its corpus `segment`), and `assign_nuggets.py` assigns them against every run's answer, the
text of its submission's sentences joined by a space.

`Pool` finds the pool's texts in the corpus (read once, by docid) and keeps each topic's nuggets, made once per
metric: in a nugget file (`nuggets=FILE`, create_nuggets.py's output lines `{"query", "qid", "nuggets": [{"text",
"importance"}]}`) they are shared by every run scored with it. A file ragbench did not write (the track's, say) is
only read; ragbench appends the topics it creates to a file it made (each of its lines says so)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, Example
from ragbench.api.text import remove_citations, sent_tokenize

from ..segment_texts import SegmentTexts
from .steps import Nugget

MADE_BY = "ragbench"  # the key of every line ragbench writes (its value: the judges that made the nuggets)


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


def read_nugget_file(path: Path) -> tuple[dict[str, list[Nugget]], bool]:
    """A nugget file's topics (qid -> nuggets, an importance absent read as vital as assign_nuggets.py reads it),
    and whether ragbench wrote every line of it."""
    topics: dict[str, list[Nugget]] = {}
    ours = True
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"metric nuggetizer: nugget file {path} cannot be read ({exc}); name a readable file"
        ) from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            nuggets = [Nugget(n["text"], n.get("importance", "vital")) for n in record["nuggets"]]
            topics[str(record["qid"])] = nuggets
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(
                f"{path}:{number}: not a nugget line {{'qid', 'nuggets': [{{'text', 'importance'}}]}} ({exc!r}); "
                "fix or remove the line"
            ) from None
        ours = ours and MADE_BY in record
    return topics, ours


class Pool:
    """The pooled segments' texts (`corpus`) and each topic's nuggets, made at most once (`nuggets`)."""

    def __init__(self, corpus: Path, nugget_file: Path | None) -> None:
        self.segments, self.nugget_file = SegmentTexts(corpus), nugget_file
        self.topics: dict[str, list[Nugget]] = {}
        self.writable = True
        if nugget_file is not None and (nugget_file.exists() or nugget_file.is_symlink()):
            if not nugget_file.is_file():
                raise ConfigError(f"metric nuggetizer: nugget file {nugget_file} is not a regular file; name a file")
            self.topics, self.writable = read_nugget_file(nugget_file)
        elif nugget_file is not None and not nugget_file.parent.is_dir():
            raise ConfigError(f"metric nuggetizer: the folder of nugget file {nugget_file} does not exist; create it")
        self.locks: dict[str, asyncio.Lock] = {}

    async def nuggets(
        self, example: Example, create: Callable[[list[str]], Awaitable[list[Nugget]]], made_by: dict[str, Any]
    ) -> list[Nugget]:
        """The topic's nuggets: from the nugget file or made earlier in this run, else created from its pool
        (and written to the nugget file)."""
        topic = str(example.id)
        async with self.locks.setdefault(topic, asyncio.Lock()):
            if topic not in self.topics:
                if self.nugget_file is not None and not self.writable:
                    raise ValueError(
                        f"topic {topic} has no nuggets in {self.nugget_file}, a file ragbench did not write "
                        "(it only reads it): add the topic's line, or name a new nugget file"
                    )
                created = await create(await self.segments.texts(pooled_docids(example)))
                self.topics[topic] = created
                if self.nugget_file is not None:
                    self.append(topic, example.question, created, made_by)
            return self.topics[topic]

    def append(self, topic: str, query: str, nuggets: list[Nugget], made_by: dict[str, Any]) -> None:
        line = {
            "query": query,
            "qid": topic,
            "nuggets": [{"text": n.text, "importance": n.importance} for n in nuggets],
            MADE_BY: made_by,
        }
        assert self.nugget_file is not None
        with open(self.nugget_file, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")

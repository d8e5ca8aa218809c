"""The text of judged segments by docid, for the metrics that judge a topic's qrels rather than what a system
showed (umbrela's qrel evaluation, nuggetizer's pooled nuggets): one pass over the corpus (any corpus ragbench
reads, the TREC RAG segmented shards among them) the first time a text is asked, then each read from disk."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ragbench.api import ConfigError
from ragbench.api.retrieval import CorpusLookup


def existing_corpus(metric: str, corpus: str) -> Path:
    path = Path(corpus)
    if not path.exists():
        raise ConfigError(f"metric {metric}: corpus {corpus} not found; name the corpus of the qrels' segments")
    return path


class SegmentTexts:
    def __init__(self, corpus: Path) -> None:
        self.corpus = corpus
        self.lookup: CorpusLookup | None = None
        self.loading = asyncio.Lock()

    async def texts(self, docids: list[str]) -> list[str]:
        """Each docid's text, in order; a docid the corpus lacks is a ValueError naming it (the example fails)."""
        async with self.loading:
            if self.lookup is None:
                self.lookup = await asyncio.to_thread(CorpusLookup, self.corpus)
        lookup = self.lookup
        docs = await asyncio.to_thread(lambda: [lookup.get(docid) for docid in docids])
        missing = [docid for docid, doc in zip(docids, docs, strict=True) if doc is None]
        if missing:
            raise ValueError(f"segment {missing[0]} is not in the corpus {self.corpus} ({len(missing)} missing)")
        return [doc.text for doc in docs if doc is not None]

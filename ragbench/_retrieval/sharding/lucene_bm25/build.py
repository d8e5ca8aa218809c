"""lucene_bm25 built in shards: each shard's files are those `split` cuts from the one index
(`lucene_bm25/`: its postings renumbered from 0, freqs, offsets and norms; the whole vocabulary, terms.json, with
each term's document frequency in the whole corpus, doc_freqs.npy; the whole corpus's docs_with_terms and
total_terms, stats.json), so a shard scores a passage bit for bit as the one index does, except its id_ranks.npy:
the order of its own passages' ids (ties across shards are broken by the id strings in the merge, `front`).

Step 1 (`LucenePartBuilder`) analyses the part as `LuceneBM25Builder` does, spilling its postings into the shard's
folder; its vocabulary with each term's document frequency in the part goes to a file merged by term, a bucket of
terms a task (`sharding.build.terms`), and the driver gets only its passages' and terms' counts (`merge`: N and total
terms); step 2 (`finish`) reads the merged buckets in sorted order (the vocabulary numbered as the one index
numbers it, global document frequencies) and writes the shard's postings in those term numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ...._storage.json_list import write_json_list
from ...lucene.retriever import LuceneBM25Builder
from ..build.kind import Stats

WORDS, LENGTHS = "words.json", "lengths.npy"  # step 1's vocabulary (first-sight order) and lengths, in the spill


class LucenePartBuilder(LuceneBM25Builder):
    """A part's analysis (module docstring), left in its folder for step 2 (`reopened`)."""

    def analysed(self) -> Stats:
        words = list(self.vocabulary)
        write_json_list(self.spill / WORDS, words)
        lengths = self.all_lengths()
        np.save(self.spill / LENGTHS, lengths)
        doc_freqs = np.zeros(len(words), dtype=np.int64)
        for path in self.chunk_files:
            with np.load(path) as chunk:
                doc_freqs += np.bincount(chunk["term"], minlength=len(words))
        return {
            "terms": {"words": words, "doc_freqs": doc_freqs},  # merged by term, not by the driver
            "docs_with_terms": int(np.count_nonzero(lengths)),
            "total_terms": int(lengths.sum()),
        }

    @classmethod
    def reopened(cls, folder: Path) -> LucenePartBuilder:
        """The builder step 1 left in `folder`."""
        builder = cls.__new__(cls)
        builder.folder, builder.spill = folder, folder / "lucene_bm25.spill"
        words = json.loads((builder.spill / WORDS).read_text(encoding="utf-8"))
        builder.vocabulary = {word: number for number, word in enumerate(words)}
        builder.chunk_files = sorted(builder.spill.glob("chunk*.npz"))
        builder.lengths = [np.load(builder.spill / LENGTHS)]
        builder.n_docs = len(builder.lengths[0])
        return builder

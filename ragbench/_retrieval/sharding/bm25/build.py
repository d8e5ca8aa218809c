"""bm25 built in shards: each shard's `bm25/` holds bm25s's files for its passages, scored with the whole corpus's
statistics, as `sharding.split` cuts them from the one index (its score matrix's columns for those passages, numbered
from 0; the whole vocabulary, numbered as the one index numbers it; params with the shard's num_docs).

Step 1 (`Bm25PartBuilder`) tokenizes the part as `BM25Builder` does, with a vocabulary of its own (terms numbered
in the part's order of first sight), spills its postings and tokenizer's dictionaries into the shard's folder, and
sends the driver its passages and their total length; its terms, each with its document frequency in the part, are
merged by term (`sharding.build.terms`, in the corpus's order of first sight: the first part holding a term, at that
part's number for it, the one-process build's numbering), never on the driver. Step 2 reads the merged buckets (the
whole vocabulary, numbered, and its document frequencies) and scores the shard's postings with those statistics
(bm25s's average length: the total over the passages, in float64).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ...bm25.retriever import BM25Builder
from ..build.kind import Stats
from .blocks import TOKENIZER_DICTS

PART = "part.json"  # step 1's tokenizer dictionaries, in the spill
LENGTHS, DOC_FREQS = "lengths.npy", "doc_freqs.npy"  # its passages' lengths, its terms' document frequencies


class Bm25PartBuilder(BM25Builder):
    """A part's tokenization (module docstring), left in its folder for step 2 (`reopened`)."""

    def analysed(self) -> Stats:
        dicts = {name: getattr(self.tokenizer, name) for name in TOKENIZER_DICTS}
        (self.spill / PART).write_text(json.dumps(dicts), encoding="utf-8")
        lengths = np.concatenate(self.lengths) if self.lengths else np.zeros(0, dtype=np.int32)
        np.save(self.spill / LENGTHS, lengths)
        np.save(self.spill / DOC_FREQS, self.doc_freqs)
        numbered = self.tokenizer.get_vocab_dict()
        words = [""] * len(numbered)
        for word, number in numbered.items():
            words[number] = word
        return {
            "terms": {"words": words, "doc_freqs": self.doc_freqs.tolist()},  # merged by term, not by the driver
            "n_docs": self.n_docs,
            "total_length": int(lengths.sum(dtype=np.int64)),
            "options": self.options(0, 0),  # the manifest's options but the counts
        }

    @classmethod
    def reopened(cls, folder: Path, options: dict[str, Any]) -> Bm25PartBuilder:
        """The builder step 1 left in `folder` (built with `options`)."""
        spill = folder / "bm25.spill"
        spill.rename(folder / "bm25.spill.kept")  # the constructor makes a new spill folder
        builder = cls(folder, **options)
        builder.spill.rmdir()
        (folder / "bm25.spill.kept").rename(spill)
        dicts = json.loads((spill / PART).read_text(encoding="utf-8"))
        for name in TOKENIZER_DICTS:
            getattr(builder.tokenizer, name).update(dicts[name])
        builder.chunk_files = sorted(spill.glob("chunk*.npz"))
        builder.lengths = [np.load(spill / LENGTHS)]
        builder.n_docs = len(builder.lengths[0])
        builder.doc_freqs = np.load(spill / DOC_FREQS)
        return builder

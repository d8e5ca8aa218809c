"""bm25's blocks in a merged parallel build (`sharding.merged_build.analysis`): bm25s's tokenizer with the build's
settings makes (passage, term, frequency) triples, the passages' lengths and the tokenizer's three dictionaries
(word -> stem, stem -> term, word -> term).

On the driver (`absorb`), a block's terms are numbered in the order the block first shows them; the builder's
vocabulary grows in the corpus's order of first sight. Taking the blocks in order and each block's terms in its
own order, a term new to the builder gets the next number, as it does when the corpus is tokenised in one pass: the
same vocabulary, the same numbers, hence the same global statistics (document frequencies, passage count, average
length, total terms) and files. The tokenizer dictionaries are merged the same way: each keeps its first sight's
entry.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...bm25.retriever import id_triples, make_tokenizer, token_ids
from ..merged_build.analysis import WorkerSettings, json_array

TOKENIZER_DICTS = ("word_to_stem", "stem_to_sid", "word_to_id")


class Bm25BlockWorker:
    def __init__(self, settings: WorkerSettings) -> None:
        self.settings = settings

    def arrays(self, texts: list[str]) -> dict[str, np.ndarray]:
        settings = self.settings
        tokenizer = make_tokenizer(settings["stopwords"], settings["stemmer"], settings["tokenizer"])
        triples, lengths = id_triples(token_ids(tokenizer, texts))
        dicts = {name: getattr(tokenizer, name) for name in TOKENIZER_DICTS}
        return {**triples, "lengths": lengths, "vocabulary": json_array(dicts)}


def merge_tokenizer(tokenizer: Any, block: dict[str, dict[str, Any]]) -> np.ndarray:
    """Merge a block's bm25s tokenizer dictionaries into `tokenizer`'s (module docstring); the block's term numbers
    as `tokenizer` numbers them. The term dictionary is the stems' with a stemmer, the words' without one."""
    stemmed = tokenizer.stemmer is not None
    terms_name = "stem_to_sid" if stemmed else "word_to_id"
    terms, local = getattr(tokenizer, terms_name), block[terms_name]
    remap = np.empty(len(local), dtype=np.int32)
    for term, number in local.items():
        remap[number] = terms.setdefault(term, len(terms))
    if stemmed:
        for word, stem in block["word_to_stem"].items():
            tokenizer.word_to_stem.setdefault(word, stem)
        for word, number in block["word_to_id"].items():
            tokenizer.word_to_id.setdefault(word, int(remap[number]))
    return remap

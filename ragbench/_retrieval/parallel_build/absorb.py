"""The driver's side of a parallel index build: what the workers need of the build's builder (`worker_settings`),
and each block's arrays given to that builder in corpus order (`absorb`), so its `finish` writes the very files of
a one-process build.

A block's terms are numbered in the order the block first shows them; the builder's vocabulary grows in the
corpus's order of first sight. Taking the blocks in order and each block's terms in its own order, a term new to
the builder gets the next number, as it does when the corpus is tokenised in one pass: the same vocabulary, the
same numbers, hence the same global statistics (document frequencies, passage count, average length, total terms)
and files. bm25s's tokenizer dictionaries are merged the same way: each keeps its first sight's entry.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..bm25.flashrag import FlashRagBM25Builder
from ..bm25.retriever import BM25Builder
from ..dense.retriever import DenseBuilder
from ..lucene.retriever import LuceneBM25Builder
from .analysis import EncoderSettings, WorkerSettings, from_json_array


def worker_settings(builder: Any, first: str, registry: Any) -> WorkerSettings:
    """What a worker needs to analyse a block as `builder` would; `first` is the corpus's first indexed text
    (FlashRAG's BM25 picks its language by it)."""
    if isinstance(builder, FlashRagBM25Builder):
        builder.choose_language(first)
    if isinstance(builder, BM25Builder):
        return {"stopwords": builder.stopwords, "stemmer": builder.stemmer_name, "tokenizer": builder.tokenizer_name}
    if isinstance(builder, DenseBuilder):
        encoder = builder.encoder
        options: EncoderSettings = {
            "model": encoder.name,
            "query_instruction": encoder.query_instruction,
            "normalize": encoder.normalize,
            "batch_size": encoder.batch_size,
            "device": encoder.device,
            "query_style": encoder.query_style,
            "encoder_dtype": encoder.dtype,
        }
        return {"encoder": options, "registry": registry}
    return {}


def absorb(builder: Any, arrays: dict[str, np.ndarray]) -> None:
    """Give `builder` the next block's arrays (`analysis`), renumbered into its vocabulary."""
    if isinstance(builder, BM25Builder):
        remap = merge_tokenizer(builder.tokenizer, from_json_array(arrays["vocabulary"]))
        triples = {"doc": arrays["doc"], "term": remap[arrays["term"]], "tf": arrays["tf"]}
        builder.add_postings(triples, arrays["lengths"])
    elif isinstance(builder, LuceneBM25Builder):
        words = from_json_array(arrays["words"])
        builder.add_postings(arrays["doc"], arrays["term"], arrays["tf"], arrays["lengths"], words)
    elif isinstance(builder, DenseBuilder):
        builder.embeddings.append(arrays["embeddings"])
    else:  # parallel.check_kind refuses other kinds before the build starts
        raise TypeError(f"no parallel build for {type(builder).__name__}")


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

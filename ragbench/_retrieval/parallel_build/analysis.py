"""What a worker of a parallel index build makes of one block of passages (its texts, in corpus order), as arrays:
the same steps as the one-process build's `add`, with a vocabulary of the block's own (terms numbered in order of
first sight in the block), which the driver renumbers into the corpus's (`absorb`).

- bm25, flashrag_bm25: bm25s's tokenizer with the build's settings: (passage, term, frequency) triples, the
  passages' lengths and the tokenizer's three dictionaries (word -> stem, stem -> term, word -> term);
- lucene_bm25: the Lucene-analysed postings, the passages' lengths and the block's words;
- dense: the passages' embeddings, by the encoder an actor holds (one model load per actor).
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

import numpy as np

from ..bm25.retriever import id_triples, make_tokenizer, token_ids
from ..dense.retriever import Encoder
from ..lucene.postings import analysed_postings
from .state import npz_bytes

BM25_KINDS = ("bm25", "flashrag_bm25")
KINDS = (*BM25_KINDS, "lucene_bm25", "dense")
TOKENIZER_DICTS = ("word_to_stem", "stem_to_sid", "word_to_id")
FIELDS: dict[str, tuple[str, ...]] = {  # what a block file holds, by kind
    "bm25": ("doc", "term", "tf", "lengths", "vocabulary"),
    "flashrag_bm25": ("doc", "term", "tf", "lengths", "vocabulary"),
    "lucene_bm25": ("doc", "term", "tf", "lengths", "words"),
    "dense": ("embeddings",),
}


def json_array(value: Any) -> np.ndarray:
    """A JSON value as a uint8 array (npz without pickles; lone surrogates kept as JSON escapes)."""
    return np.frombuffer(json.dumps(value).encode("ascii"), dtype=np.uint8)


def from_json_array(array: np.ndarray) -> Any:
    return json.loads(array.tobytes().decode("ascii"))


class EncoderSettings(TypedDict):
    """A dense build's encoder, as `Encoder` takes it (its registry aside)."""

    model: str
    query_instruction: str | None
    normalize: bool
    batch_size: int
    device: str | None
    query_style: str
    encoder_dtype: str


class WorkerSettings(TypedDict, total=False):
    """What a worker needs to analyse a block as the driver's builder would (`absorb.worker_settings`): a bm25
    build's tokenizer, a dense build's encoder and the run's registry (which finds its query style)."""

    stopwords: str
    stemmer: str
    tokenizer: str
    encoder: EncoderSettings
    registry: Any  # ragbench._registry.Registry, carried to the Ray worker


def bm25_block(texts: list[str], settings: WorkerSettings) -> dict[str, np.ndarray]:
    tokenizer = make_tokenizer(settings["stopwords"], settings["stemmer"], settings["tokenizer"])
    triples, lengths = id_triples(token_ids(tokenizer, texts))
    dicts = {name: getattr(tokenizer, name) for name in TOKENIZER_DICTS}
    return {**triples, "lengths": lengths, "vocabulary": json_array(dicts)}


def lucene_block(texts: list[str]) -> dict[str, np.ndarray]:
    docs, terms, freqs, lengths, words = analysed_postings(texts)
    return {"doc": docs, "term": terms, "tf": freqs, "lengths": lengths, "words": json_array(words)}


class BlockAnalyser:
    """The body of a Ray actor of the build's pool (`feeder`): `analyse` makes a block's file bytes
    (`state.npz_bytes`) from its texts. `settings` are the driver's builder's (`absorb.worker_settings`); a dense
    actor loads its encoder once, for every block it is given."""

    def __init__(self, kind: str, settings: WorkerSettings) -> None:
        self.kind, self.settings = kind, settings
        self.encoder: Encoder | None = None
        if kind == "dense":
            self.encoder = Encoder(**settings["encoder"], registry=settings["registry"])

    def arrays(self, texts: list[str]) -> dict[str, np.ndarray]:
        if self.encoder is not None:
            return {"embeddings": self.encoder.encode_passages(texts)}
        if self.kind == "lucene_bm25":
            return lucene_block(texts)
        return bm25_block(texts, self.settings)

    def analyse(self, number: int, digest: str, texts: list[str]) -> tuple[int, bytes]:
        return number, npz_bytes(self.arrays(texts), digest)

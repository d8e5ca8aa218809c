"""A chunk of texts' postings, the build's hot path: each text cut into tokens, each token numbered by its term
(`TermNumbers`: a token is analysed once), the (passage, term) pairs counted in numpy, not a Counter a passage."""

from __future__ import annotations

from itertools import chain

import numpy as np

from .analyzer import term
from .tokenizer import standard_tokens

STOP_WORD = -1  # the number of a token whose term is a stop word: no term


class TermNumbers(dict[str, int]):
    """Token -> the number of its term (`analyzer.term`) among `words`, the terms in order of first sight, or
    `STOP_WORD`. Exact: a token's term depends on the token alone, so each distinct token is analysed once, at its
    first sight (`__missing__`), and a term is numbered at the first sight of any token of it, as numbering each
    text's terms in order would."""

    def __init__(self) -> None:
        super().__init__()
        self.words: list[str] = []
        self.numbers: dict[str, int] = {}

    def __missing__(self, token: str) -> int:
        word = term(token)
        if word is None:
            number = STOP_WORD
        elif (number := self.numbers.setdefault(word, len(self.words))) == len(self.words):
            self.words.append(word)
        self[token] = number
        return number


def analysed_postings(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """The texts' postings: (passage from 0, term, frequency), by passage then term number, the passages'
    lengths (terms, stop words not counted), and the words the terms number, in order of first sight."""
    numbers = TermNumbers()
    tokens = [standard_tokens(text) for text in texts]
    sizes = np.fromiter(map(len, tokens), dtype=np.int64, count=len(texts))
    # the chunk's tokens numbered in one pass (not a list a text: half the time)
    terms = np.fromiter(map(numbers.__getitem__, chain.from_iterable(tokens)), dtype=np.int64, count=int(sizes.sum()))
    docs = np.repeat(np.arange(len(texts), dtype=np.int64), sizes)
    kept = terms != STOP_WORD
    docs, terms = docs[kept], terms[kept]
    lengths = np.bincount(docs, minlength=len(texts)).astype(np.int64)
    width = max(len(numbers.words), 1)
    pairs, freqs = np.unique(docs * width + terms, return_counts=True)
    return (
        (pairs // width).astype(np.int32),
        (pairs % width).astype(np.int32),
        freqs.astype(np.int32),
        lengths,
        numbers.words,
    )

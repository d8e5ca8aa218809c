"""A chunk of texts' postings, the build's hot path: each text cut into tokens, each token numbered by its term
(`TermNumbers`: a token is analysed once), the (passage, term) pairs counted in numpy, not a Counter a passage."""

from __future__ import annotations

from itertools import chain

import numpy as np

from .analyzer import term
from .tokenizer import MAX_TOKEN_UNITS, standard_tokens, unchecked_tokens

STOP_WORD = -1  # the number of a token whose term is a stop word: no term
TOO_LONG = -2  # the number of a token of `unchecked_tokens` longer than the scanner's buffer: its text is rescanned


class TermNumbers(dict[str, int]):
    """Token -> the number of its term (`analyzer.term`) among `words`, the terms in order of first sight, or
    `STOP_WORD`, or `TOO_LONG`. Exact: a token's term depends on the token alone, so each distinct token is
    analysed once, at its first sight (`__missing__`); its length is checked there too, once, not once a token."""

    def __init__(self) -> None:
        super().__init__()
        self.words: list[str] = []
        self.numbers: dict[str, int] = {}

    def __missing__(self, token: str) -> int:
        if len(token) > MAX_TOKEN_UNITS:  # only `unchecked_tokens`' (the scanner's fit in its buffer)
            number = TOO_LONG
        elif (word := term(token)) is None:
            number = STOP_WORD
        elif (number := self.numbers.setdefault(word, len(self.words))) == len(self.words):
            self.words.append(word)
        self[token] = number
        return number


Postings = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]]


def analysed_postings(texts: list[str]) -> Postings:
    """The texts' postings: (passage from 0, term, frequency), by passage then term number, the passages'
    lengths (terms, stop words not counted), and the words the terms number (each once). Each text is cut by
    `unchecked_tokens`; a text with a token longer than the scanner's buffer (`TOO_LONG`) is cut again by
    `standard_tokens`, its terms numbered after the others'."""
    numbers = TermNumbers()
    tokens = [unchecked_tokens(text) for text in texts]
    sizes = np.fromiter(map(len, tokens), dtype=np.int64, count=len(texts))
    # the chunk's tokens numbered in one pass (not a list a text: half the time)
    terms = np.fromiter(map(numbers.__getitem__, chain.from_iterable(tokens)), dtype=np.int64, count=int(sizes.sum()))
    docs = np.repeat(np.arange(len(texts), dtype=np.int64), sizes)
    if (too_long := terms == TOO_LONG).any():
        docs, terms = rescanned(texts, docs, terms, np.unique(docs[too_long]), numbers)
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


def rescanned(
    texts: list[str], docs: np.ndarray, terms: np.ndarray, cut_again: np.ndarray, numbers: TermNumbers
) -> tuple[np.ndarray, np.ndarray]:
    """`docs` and `terms` with the tokens of the texts numbered `cut_again` those of `standard_tokens`."""
    again = [np.fromiter(map(numbers.__getitem__, standard_tokens(texts[doc])), dtype=np.int64) for doc in cut_again]
    others = ~np.isin(docs, cut_again)
    sizes = np.fromiter(map(len, again), dtype=np.int64, count=len(again))
    return (
        np.concatenate([docs[others], np.repeat(cut_again, sizes)]),
        np.concatenate([terms[others], *again]),
    )

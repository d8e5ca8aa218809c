"""A chunk of texts' postings, the build's hot path: the chunk cut into one stream of tokens (`token_stream`), each
token numbered by its term (`TermNumbers`: a token is analysed once), the (passage, term) pairs counted in numpy,
not a Counter a passage."""

from __future__ import annotations

import re

import numpy as np

from .analyzer import term
from .tokenizer import MAX_TOKEN_UNITS, standard_tokens, unchecked_tokens

STOP_WORD = -1  # the number of a token whose term is a stop word, or of a run of "_" alone (no token): no term
TOO_LONG = -2  # the number of a token of `unchecked_tokens` longer than the scanner's buffer: its text is rescanned
TEXT_END = -3  # the number of `END`, the token after each text's in a chunk's stream

# A chunk's ASCII texts are cut as one string, each followed by " \x01 ": a character in no token (WB=Other), kept
# by the cut as a token of its own, that no text's own token can be (a text holding one is cut alone)
END = "\x01"
JOINED = f" {END} "
# The ASCII pattern's tokens (`tokenizer.ASCII_TOKEN`) are the runs of letters, digits, "_" and the middle
# characters that join them (":" "." "'" between letters, "," ";" "." "'" between digits) that hold a letter or a
# digit: the text split where neither is (every other character made a space, `RUN_SEPARATORS`, and each middle
# character that joins nothing, `NOT_JOINING`). In C: a third of the time of the pattern's search.
RUN_SEPARATORS = {point: " " for point in range(0x80) if not chr(point).isalnum() and chr(point) not in "_:.',;" + END}
NOT_JOINING = re.compile(r"[:.',;](?!(?<=[A-Za-z][:.'])(?=[A-Za-z])|(?<=[0-9][,;.'])(?=[0-9]))")


class TermNumbers(dict[str, int]):
    """Token -> the number of its term (`analyzer.term`) among `words`, the terms in order of first sight, or
    `STOP_WORD`, or `TOO_LONG` (or `TEXT_END`, for `END`). Exact: a token's term depends on the token alone, so
    each distinct token is analysed once, at its first sight (`__missing__`); its length is checked there too,
    once, not once a token."""

    def __init__(self) -> None:
        super().__init__({END: TEXT_END})
        self.words: list[str] = []
        self.numbers: dict[str, int] = {}

    def __missing__(self, token: str) -> int:
        if len(token) > MAX_TOKEN_UNITS:  # only `unchecked_tokens`' (the scanner's fit in its buffer)
            number = TOO_LONG
        elif not token.strip("_") or (word := term(token)) is None:  # a run of "_" alone: `token_stream`'s
            number = STOP_WORD
        elif (number := self.numbers.setdefault(word, len(self.words))) == len(self.words):
            self.words.append(word)
        self[token] = number
        return number


def token_stream(texts: list[str]) -> tuple[list[int], list[str]]:
    """The texts' `unchecked_tokens` (and their runs of "_" alone), each text's followed by `END`, and the order of
    the texts in that stream. The ASCII texts are cut together, in one string (`JOINED` between them: a str method
    a chunk, not a text), as the ASCII pattern cuts each (`NOT_JOINING`); the other texts one by one after them."""
    plain: list[int] = []
    others: list[int] = []
    for number, text in enumerate(texts):
        (plain if text.isascii() and END not in text else others).append(number)
    joined = JOINED.join([texts[number] for number in plain]) + JOINED if plain else ""
    stream: list[str] = NOT_JOINING.sub(" ", joined.translate(RUN_SEPARATORS)).split()
    for number in others:
        stream += unchecked_tokens(texts[number])
        stream.append(END)
    return plain + others, stream


Postings = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]]


def analysed_postings(texts: list[str]) -> Postings:
    """The texts' postings: (passage from 0, term, frequency), by term number then passage, the passages'
    lengths (terms, stop words not counted), and the words the terms number (each once). The texts are cut by
    `token_stream`; a text with a token longer than the scanner's buffer (`TOO_LONG`) is cut again by
    `standard_tokens`, its terms numbered after the others'."""
    numbers = TermNumbers()
    order, stream = token_stream(texts)
    # the chunk's tokens numbered in one pass (not a list a text: half the time)
    terms = np.fromiter(map(numbers.__getitem__, stream), dtype=np.int64, count=len(stream))
    ends = np.flatnonzero(terms == TEXT_END)
    docs = np.repeat(np.array(order, dtype=np.int64), np.diff(ends, prepend=-1) - 1)
    terms = terms[terms != TEXT_END]
    if (too_long := terms == TOO_LONG).any():
        docs, terms = rescanned(texts, docs, terms, np.unique(docs[too_long]), numbers)
    kept = terms != STOP_WORD
    docs, terms = docs[kept], terms[kept]
    lengths = np.bincount(docs, minlength=len(texts)).astype(np.int64)
    width, count = max(len(numbers.words), 1), max(len(texts), 1)
    # by term, then passage (each term's passages one run, in order: `write_postings` places them without a sort);
    # int32 keys where they fit: numpy sorts them in half the time of int64's
    key_type = np.int32 if count * width < 2**31 else np.int64
    pairs, freqs = np.unique(terms.astype(key_type) * key_type(count) + docs.astype(key_type), return_counts=True)
    return (
        (pairs % count).astype(np.int32),
        (pairs // count).astype(np.int32),
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

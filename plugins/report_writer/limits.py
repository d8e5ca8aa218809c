"""A report's word limit. Words are counted as TREC RAG's rag24_validation counts an answer's (its
`compute_rag24_response_length`: NFKC-normalised, citation markers left out, split at whitespace); a report over
the limit keeps its whole sentences within it (a first sentence longer than the limit, its first words), and
what it wrote and what it kept are both counted."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from ragbench.api.text import remove_citations, sent_tokenize


def words(text: str) -> int:
    return len(unicodedata.normalize("NFKC", remove_citations(text)).split())


@dataclass(frozen=True)
class Kept:
    """A report within its limit: the text kept, the words the model wrote and the words kept."""

    text: str
    words_written: int
    words_kept: int


def first_words(text: str, limit: int) -> str:
    """The leading tokens of `text` that hold at most `limit` words (citation markers count none)."""
    tokens = text.split()
    end = 0
    while end < len(tokens) and words(" ".join(tokens[: end + 1])) <= limit:
        end += 1
    return " ".join(tokens[:end])


def within(report: str, limit: int | None) -> Kept:
    """`report` cut to `limit` words (None: no limit) at the end of its last whole sentence within it."""
    written = words(report)
    if limit is None or written <= limit:
        return Kept(report, written, written)
    end = count = 0
    for sentence in sent_tokenize(report):
        count += words(sentence)
        if count > limit:
            break
        end = report.index(sentence, end) + len(sentence)  # Punkt's sentences are spans of the text
    text = report[:end] if end else first_words(report, limit)
    return Kept(text, written, words(text))

"""TREC run files, trec_eval's input: one line `qid Q0 docid rank score tag` per document retrieved, written from
the documents a run showed and read back (a query's documents by docid, with their scores).

trec_eval reads the score, not the rank: it orders a query's documents by score, highest first, and ties by
docid, the later in byte order first. `trec_ranking` gives each shown document the score that makes trec_eval
read the ranking as the run meant it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..._storage.given_files import given_text_lines
from ..._types import Document

_BLANK = re.compile(r"\s")


def trec_ranking(docs: Sequence[Document]) -> list[tuple[str, float]]:
    """(docid, score) for each document shown, once, at its first rank. The score is the retriever's where every
    document has one and they never rise down the list (one search's ranking: trec_eval then breaks its ties by
    docid, as it would in the retriever's own run file); else n - rank + 1 for the n documents (an agent's
    searches one after another, documents without scores), which trec_eval reads in the order shown. A
    document without a docid is a ValueError."""
    first: dict[str, Document] = {}
    for doc in docs:
        if doc.id is None:
            raise ValueError("a document shown has no docid: retrieve from an index whose documents have ids")
        first.setdefault(str(doc.id), doc)
    scores = [doc.score for doc in first.values() if doc.score is not None]
    if len(scores) == len(first) and all(a >= b for a, b in zip(scores, scores[1:])):
        return [(docid, float(score)) for docid, score in zip(first, scores)]
    return [(docid, float(len(first) - rank)) for rank, docid in enumerate(first)]


def run_tag(name: str) -> str:
    """A run's name as a run file's tag: white space (the format's separator) as "_"."""
    return _BLANK.sub("_", name) or "ragbench"


def trec_lines(qid: str, ranking: Sequence[tuple[str, float]], tag: str) -> list[str]:
    """A query's lines, ranks from 1; the score written so that trec_eval reads back the same number (repr).
    An id holding white space (the format's separator) or empty is a ValueError naming it."""
    for what, value in (("query id", qid), ("tag", tag), *(("docid", docid) for docid, _ in ranking)):
        if not value or _BLANK.search(value):
            raise ValueError(f"{what} {value!r} cannot be written in a TREC run file (empty, or holds white space)")
    return [f"{qid} Q0 {docid} {rank} {score!r} {tag}" for rank, (docid, score) in enumerate(ranking, 1)]


def trec_run_text(rankings: Iterable[tuple[str, Sequence[tuple[str, float]]]], tag: str) -> str:
    """(query id, ranking) pairs as a run file's text."""
    return "".join(line + "\n" for qid, ranking in rankings for line in trec_lines(qid, ranking, tag))


def read_trec_run(path: Path) -> dict[str, dict[str, float]]:
    """A run file as trec_eval reads it: query id -> docid -> score; a line not of six fields, or whose score
    is no number, is a ValueError naming the file and line; a file that cannot be read (missing, not UTF-8, a FIFO,
    a device or a folder, refused before it is opened) a ConfigError naming it (`given_text_lines`)."""
    run: dict[str, dict[str, float]] = {}
    for number, line in given_text_lines(path, "a TREC run file (lines of qid Q0 docid rank score tag)"):
        fields = line.split()
        try:
            if len(fields) != 6:
                raise ValueError(f"expected 6 fields (qid Q0 docid rank score tag), got {len(fields)}")
            run.setdefault(fields[0], {})[fields[2]] = float(fields[4])
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
    return run

"""Citation markers in answers, shared by tasks that cite (`TaskPrompting.cites`) and citation metrics.

An answer cites the documents it was shown by number, "[1]", "[2][3]", as ALCE's prompts ask. The
rules are ALCE's (princeton-nlp/ALCE eval.py and utils.py, commit 246c476), kept exactly: a citation
is every `[digits` match, so only the first number of "[1, 2]" is seen."""

from __future__ import annotations

import re

from .sentences import sent_tokenize

CITATION = re.compile(r"\[\d+")


def remove_citations(text: str) -> str:
    """ALCE utils.py: drop " [digits" then "[digits", then every " |" and every "]"."""
    return re.sub(r"\[\d+", "", re.sub(r" \[\d+", "", text)).replace(" |", "").replace("]", "")


def cited_numbers(statement: str) -> list[int]:
    """The citation numbers of a statement as written (1-based), as eval.py finds them."""
    return [int(match[1:]) for match in CITATION.findall(statement)]


def list_items(output: str) -> list[str]:
    """The comma-separated pieces of a list answer, unstripped, after eval.py's
    `output.rstrip().rstrip(".").rstrip(",")` (a trailing full stop or comma ends no piece)."""
    return output.rstrip().rstrip(".").rstrip(",").split(",")


def cited_sentences(answer: str, shown: int) -> tuple[list[tuple[str, list[int]]], int]:
    """The answer's sentences (punkt's) as a TREC RAG submission holds them: each its text with the markers taken
    out and its cited numbers, each once, in order, as 0-based indices into the `shown` documents; and how many
    citations named no document shown (left out). A sentence of nothing but markers is left out."""
    out: list[tuple[str, list[int]]] = []
    dropped = 0
    for statement in sent_tokenize(answer):
        numbers = list(dict.fromkeys(cited_numbers(statement)))
        kept = [number - 1 for number in numbers if 1 <= number <= shown]
        dropped += len(numbers) - len(kept)
        text = " ".join(remove_citations(statement).split())
        if text:
            out.append((text, kept))
    return out, dropped

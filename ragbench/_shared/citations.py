"""Citation markers in answers, shared by tasks that cite (`TaskPrompting.cites`) and citation metrics.

An answer cites the documents it was shown by number, "[1]", "[2][3]", as ALCE's prompts ask. The
rules are ALCE's (princeton-nlp/ALCE eval.py and utils.py, commit 246c476), kept exactly: a citation
is every `[digits` match, so only the first number of "[1, 2]" is seen."""

from __future__ import annotations

import re

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

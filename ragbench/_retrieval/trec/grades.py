"""Relevance grades as trec_eval holds them. pytrec_eval keeps each judgment's relevance in a C `int`, a signed 32-bit
integer, and does not check the Python int it is given: 2^32 is read as 0 (a relevant document counted as not),
10^30 fails the evaluator with SystemError. Below that range's top, trec_eval reads -1 as "in the pool, not judged"
and indexes its per-grade counts by the grade: a grade under -1 writes outside them (pytrec_eval crashes with a
segmentation fault once two queries are judged). So a grade is a whole number from -1 to 2^31-1, else refused where
the qrels are read, naming the line, never handed on. (trec_eval's counts take 8 bytes a grade up to the highest:
a grade of 10^8 costs 800 MB when evaluated; TREC's are 0-3.)"""

from __future__ import annotations

from collections.abc import Mapping

GRADES = range(-1, 2**31)  # -1 (trec_eval's "in the pool, not judged") to a C int's largest


def relevance(text: str) -> int:
    """The grade written `text`; ValueError saying what is wrong when it is not a whole number in `GRADES`."""
    try:
        grade = int(text)
    except ValueError:
        raise ValueError(f"relevance {text!r} is not a whole number") from None
    if grade not in GRADES:
        raise ValueError(f"relevance {text[:30]!r} is outside trec_eval's grades ({GRADES.start} to {GRADES.stop - 1})")
    return grade


def checked_grades(qrels: Mapping[str, int]) -> dict[str, int]:
    """`qrels` (docid -> grade) as pytrec_eval is given them, each grade an int in `GRADES`, else ValueError."""
    grades = {doc: int(grade) for doc, grade in qrels.items()}
    wrong = next((doc for doc, grade in grades.items() if grade not in GRADES), None)
    if wrong is not None:
        raise ValueError(
            f"document {wrong}: relevance {grades[wrong]} is outside trec_eval's grades ({GRADES.start} to "
            f"{GRADES.stop - 1})"
        )
    return grades

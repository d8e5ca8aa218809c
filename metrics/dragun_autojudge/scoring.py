"""utils/score.py's report generation scoring (trec-dragun/resources 4b60fb6) of one topic's assessments: each
label a score (LABEL_SCORES), and per rubric question with any assessed answer its importance weight times the sum
of its positive (supportive) or negated negative (contradictory) scores over its number of assessed answers; each
total over the topic's greatest score, the sum of its questions' weights. An answer the judge left out is not
counted in its question's number; a question none of whose answers were assessed adds nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

IMPORTANCE = {"A: Have to Know": 4, "B: Good to Know": 2, "C: Nice to Know": 1}  # score.py's IMPORTANCE_MAP
LABEL_SCORES = {"supports": 1.0, "partial": 0.5, "contradicts": -1.0, "none": 0.0}


def topic_scores(rubric: Sequence[Mapping[str, Any]], judged: Sequence[tuple[str, str]]) -> dict[str, float]:
    """`supportive` and `contradictory` of one topic's (answer_id, label) assessments against its rubric questions.
    An answer id the rubric does not hold, a label not in LABEL_SCORES or an importance not in IMPORTANCE is a ValueError (score.py stops at it:
    "Missing values detected")."""
    question_of: dict[str, int] = {}
    weight: dict[int, int] = {}
    for question in rubric:
        rank = int(str(question["question_id"]).split("-")[-1])
        if question["importance"] not in IMPORTANCE:
            raise ValueError(f"question {question['question_id']!r}: importance {question['importance']!r}")
        weight.setdefault(rank, IMPORTANCE[question["importance"]])  # score.py: a rank's first question's weight
        for answer in question["short_answers"]:
            question_of[str(answer["answer_id"])] = rank
    scores: dict[int, list[float]] = {}
    for answer_id, label in judged:
        if answer_id not in question_of or label not in LABEL_SCORES:
            raise ValueError(f"answer {answer_id!r} judged {label!r}: no answer of the rubric, or no label")
        scores.setdefault(question_of[answer_id], []).append(LABEL_SCORES[label])
    supportive = contradictory = 0.0
    for rank, found in sorted(scores.items()):  # summed in score.py's order, rank by rank
        supportive += sum(s for s in found if s > 0) / len(found) * weight[rank]
        contradictory += -sum(s for s in found if s < 0) / len(found) * weight[rank]
    greatest = sum(weight.values())
    return {"supportive": supportive / greatest, "contradictory": contradictory / greatest}

"""utils/score.py's report generation scoring (trec-dragun/resources 4b60fb6) of one topic's assessments: each
label a score (LABEL_SCORES), and per rubric question with any assessed answer its importance weight times the sum
of its positive (supportive) or negated negative (contradictory) scores over its number of assessed answers; each
total over the topic's greatest score, the sum of its questions' weights (of those with short answers: score.py
reads the rubric answer by answer). An answer the judge left out is not counted in its question's number; a
question none of whose answers were assessed adds nothing. The question generation score (question_score) and
the mean over several judges (judges_mean) follow."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
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
        if question["short_answers"]:  # score.py weighs the rubric's answers: a question without any is not there
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


SIMILARITY_SCORES = {"very-similar": 1.0, "similar": 0.5, "different": 0.0, "very-different": 0.0}
COMPOUND_FACTORS = {"compound": 0.0, "not-compound": 1.0}  # score.py: a compound question earns nothing
# what pandas' read_csv reads as missing: a rationale written as one of these stops score.py ("Missing values")
PANDAS_MISSING = frozenset(
    ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA")
    + ("NULL", "NaN", "None", "n/a", "nan", "null")
)


def question_score(
    rubric: Sequence[Mapping[str, Any]],
    compound: Mapping[int, Sequence[str]],
    judged: Sequence[tuple[int, int, str]],
    assessed: Collection[int] | None = None,
) -> float:
    """score.py's question generation score of one topic: each (rubric question rank, candidate rank, label)
    scored by its label, times its candidate's compound factor and its rubric question's weight; per rubric
    question the best candidate; their sum over the sum of the weights of the rubric questions `assessed` on the
    topic (AutoJudge assesses all, the default; the assessors some). `compound`: a candidate rank's compound
    decisions (score.py merges them by rank: two questions of one rank each get both). A rank or candidate with no
    weight or no check is a KeyError (score.py stops: "Missing values detected")."""
    weights: dict[int, list[int]] = {}
    for question in rubric:
        if question["short_answers"]:  # score.py weighs the rubric's answers: a question without any is not there
            found = weights.setdefault(int(str(question["question_id"]).split("-")[-1]), [])
            if IMPORTANCE[question["importance"]] not in found:
                found.append(IMPORTANCE[question["importance"]])
    best: dict[int, float] = {}
    for rank, candidate, label in judged:
        scores = [
            SIMILARITY_SCORES[label] * COMPOUND_FACTORS[decision] * weight
            for decision in compound[candidate]
            for weight in weights[rank]
        ]
        best[rank] = max([best.get(rank, -1.0), *scores])
    ranks = weights if assessed is None else assessed
    return sum(best.values()) / sum(weights[rank][0] for rank in ranks)


def judges_mean(found: Sequence[Mapping[str, float] | None], keys: Sequence[str]) -> dict[str, float | None]:
    """Each key's mean over the judges whose replies were read (None: a judge's was not); None where none was."""
    read = [scores for scores in found if scores is not None]
    return {key: sum(scores[key] for scores in read) / len(read) if read else None for key in keys}

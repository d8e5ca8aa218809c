"""The paper's scores of one report from its judgments' counts (Auto-ARGUE's names, as argue-viz shows them):
sentence support (the paper's sentence precision), nugget coverage (nugget recall) plain and importance-weighted,
their F1s, and the shares of citations that attest their sentence and that point to a relevant document; with
several judges, each key's mean over them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Nugget = dict[str, Any]  # {"question", "answers": [{"answer", "docs"}], "aggregator": OR|AND, "importance"}
WEIGHTS = {"vital": 2.0, "okay": 1.0}  # the paper's importance weights; an unlabelled nugget weighs 1


@dataclass
class JudgedCounts:
    judged: int = 0  # sentences rewarded or penalised: with citations, negative assertions, first uncited claims
    supported: int = 0  # rewarded: with citations each attesting it, or a negative assertion a nugget confirms
    citations: int = 0
    relevant: int = 0
    supporting: int = 0
    given: set[tuple[int, int]] = field(default_factory=set)  # (nugget, answer) a sentence gave


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def _f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def answered(nugget: Nugget, index: int, given: set[tuple[int, int]]) -> bool:
    found = [(index, n) in given for n in range(len(nugget["answers"]))]
    return all(found) if nugget["aggregator"] == "AND" else any(found)


def report_scores(counts: JudgedCounts, nuggets: list[Nugget]) -> dict[str, float | None]:
    weights = [WEIGHTS.get(n["importance"] or "", 1.0) for n in nuggets]
    correct = [answered(nugget, i, counts.given) for i, nugget in enumerate(nuggets)]
    coverage = _share(sum(correct), len(nuggets))
    weighted = _share(sum(w for w, ok in zip(weights, correct) if ok), sum(weights))
    support = _share(counts.supported, counts.judged)
    return {
        "argue_sentence_support": support,
        "argue_nugget_coverage": coverage,
        "argue_nugget_coverage_weighted": weighted,
        "argue_f1": _f1(support, coverage),
        "argue_f1_weighted": _f1(support, weighted),
        "argue_citation_support": _share(counts.supporting, counts.citations),
        "argue_citation_relevance": _share(counts.relevant, counts.citations),
    }


def judges_mean(found: Sequence[dict[str, float | None]]) -> dict[str, float | None]:
    """Each key's mean over the judges that gave it a value (None where none did)."""
    means: dict[str, float | None] = {}
    for key in found[0]:
        values = [value for scores in found if (value := scores[key]) is not None]
        means[key] = sum(values) / len(values) if values else None
    return means

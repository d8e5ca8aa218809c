"""UMBRELA's evaluation against human qrels (umbrela 0.0.7's `evaluate_judge_results`, `num_samples` 1): every
pair the qrels grade 0-3 (`judge_cat`: which grades) is judged - a "hole" - and the judge's grades are compared with
the qrels': Cohen's kappa on the four grades and binarised (above 1: relevant), over every pair ("overall") and over
the pairs whose reply held a grade ("valid"), and the confusion matrix.

Here each example is a topic: `passages=qrels` judges its pairs (grade by grade in `judge_cat`'s order, each in the
qrels' order, as umbrela orders its holes), and counts each pair in its cell (`umbrela_qrels_H_judged_J`: the qrels
grade H, the judge's J) and, where the reply held no grade, `umbrela_qrels_H_invalid`; the run's kappas are corpus
keys computed from those counts (`kappas`)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ragbench.api import Example, KeySpec, MetricDeclaration, SampleRecord, cohen_kappa
from ragbench.api.data import JsonObject, JsonValue

GRADES = (0, 1, 2, 3)
JUDGED_STEP = "umbrela_qrels"  # the judge trace's record of a topic's judged pairs (`judged_pairs`)
KAPPAS = {
    "umbrela_qrels_kappa": "overall",
    "umbrela_qrels_kappa_binary": "overall",
    "umbrela_qrels_valid_kappa": "valid",
    "umbrela_qrels_valid_kappa_binary": "valid",
}


def cell(human: int, judged: int) -> str:
    return f"umbrela_qrels_{human}_judged_{judged}"


def invalid(human: int) -> str:
    return f"umbrela_qrels_{human}_invalid"


def declaration(declares: MetricDeclaration) -> MetricDeclaration:
    """The metric's declaration with the qrel evaluation's corpus keys and counters."""
    counters = {cell(h, j): f"pairs the qrels grade {h} that the judge graded {j}" for h in GRADES for j in GRADES}
    counters |= {invalid(h): f"pairs the qrels grade {h} whose reply held no grade (graded 0)" for h in GRADES}
    return dataclasses.replace(
        declares,
        corpus_keys=tuple(KAPPAS),
        gold_needs=("qrels",),
        key_specs={**declares.key_specs, **{key: KeySpec(True, (-1, 1)) for key in KAPPAS}},
        counters={**declares.counters, **counters},
    )


def judge_cat(value: Any) -> tuple[int, ...]:
    """`judge_cat` as umbrela takes it (e.g. 0123: every grade), each grade once."""
    grades = tuple(int(c) for c in str(value))
    if not grades or any(g not in GRADES for g in grades) or len(set(grades)) != len(grades):
        raise ValueError(f"judge_cat={value}: each of the grades 0-3 at most once, e.g. 0123")
    return grades


def holes(example: Example, grades: Iterable[int]) -> list[tuple[str, int]]:
    """The topic's (docid, qrels grade) to judge: grade by grade, each in the qrels' order."""
    qrels = example.gold.get("qrels")
    if not isinstance(qrels, dict):
        raise ValueError("passages=qrels judges the topic's qrels: this task's examples have none")
    return [(str(docid), g) for g in grades for docid, grade in qrels.items() if int(grade) == g]


def count_pairs(count: Any, humans: list[int], graded: list[tuple[int, bool]]) -> None:
    for human, (judged, valid) in zip(humans, graded, strict=True):
        count(cell(human, judged))
        if not valid:
            count(invalid(human))


def judged_pairs(cat: tuple[int, ...], judged: list[tuple[str, int]], graded: list[tuple[int, bool]]) -> JsonObject:
    """What the sample's judge trace keeps of a topic's judged pairs (step JUDGED_STEP), from which `ragbench export
    umbrela-qrels` writes umbrela's modified qrels: `judge_cat`, and each pair's [docid, qrels grade, judge's grade]."""
    pairs: list[JsonValue] = [
        [docid, human, judged] for (docid, human), (judged, _) in zip(judged, graded, strict=True)
    ]
    return {"judge_cat": "".join(map(str, cat)), "judged": pairs}


def kappas(samples: list[SampleRecord], metric: str) -> Mapping[str, float | None]:
    """The kappas of every counted pair (overall) and of those whose reply held a grade (valid)."""
    counts: Counter[str] = Counter()
    for sample in samples:
        counts.update(sample.counted.get(metric, {}))
    tables = {"overall": Counter({(h, j): counts[cell(h, j)] for h in GRADES for j in GRADES})}
    valid = tables["overall"].copy()
    for h in GRADES:
        valid[h, 0] -= counts[invalid(h)]
    tables["valid"] = valid
    values: dict[str, float | None] = {}
    for key, which in KAPPAS.items():
        pairs = [pair for pair, n in tables[which].items() for _ in range(n)]
        if key.endswith("binary"):
            pairs = [(int(h > 1), int(j > 1)) for h, j in pairs]
        humans, judged = [float(h) for h, _ in pairs], [float(j) for _, j in pairs]
        values[key] = cohen_kappa(humans, judged)
    return values

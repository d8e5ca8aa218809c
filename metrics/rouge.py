"""ROUGE-Lsum as ALCE eval.py `compute_rouge` computes it (rouge-score, Porter stemmer).

Texts are lowercased and split into Punkt sentences joined by "\\n"; the citation-free output is
scored against two references (ASQA: the two annotations' long answers; otherwise the `answer`
twice) and the better F is kept (a tie keeps the second, as upstream).

Two aggregates:
  rougeLsum                 the plain mean of per-item F x 100 (deterministic; use this to compare)
  rougeLsum_bootstrap_mid   upstream's number: rouge-score's BootstrapAggregator mid (the median
                            of 1000 bootstrap means), drawn from numpy's legacy RNG seeded with
                            the run seed instead of upstream's unseeded global RNG.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ragbench.api import (
    ConfigError,
    CorpusValue,
    Example,
    Metric,
    MetricDeclaration,
    Prediction,
    SampleRecord,
    Scores,
    ScoringContext,
    resampled,
)
from ragbench.api.text import remove_citations, sent_tokenize

BOOTSTRAP_SAMPLES = 1000  # rouge_score.scoring.BootstrapAggregator default


@lru_cache(maxsize=1)
def rouge_lsum_scorer() -> Any:
    try:
        from rouge_score import rouge_scorer
    except ImportError as exc:
        raise ConfigError(f"ROUGE needs rouge-score ({exc}); run `pip install ragbench[alce]`") from exc
    return rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True)


def sentence_lines(text: str) -> str:
    return "\n".join(sent_tokenize(text.lower()))


def references(example: Example) -> tuple[str, str]:
    long_answers = example.gold.get("long_answers")
    if long_answers:
        return long_answers[0], long_answers[1] if len(long_answers) > 1 else long_answers[0]
    return example.gold["answer"], example.gold["answer"]


def bootstrap_mid(values: list[float], seed: int, samples: int = BOOTSTRAP_SAMPLES) -> float:
    """rouge-score `BootstrapAggregator._bootstrap_resample`'s 50th percentile: each round draws
    `np.random.choice(n, size=n)`; a seeded RandomState's randint((samples, n)) is that stream."""
    return float(np.percentile(resampled(values, samples, seed, legacy=True), 50))


class RougeLsum(Metric):
    name = "rouge_lsum"
    declares = MetricDeclaration(
        gold_needs=("long_answer",),
        keys=("rougeLsum",),
        corpus_keys=("rougeLsum_bootstrap_mid",),
        value_range=(0, 100),
    )

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        scorer = rouge_lsum_scorer()
        hypothesis = sentence_lines(remove_citations(prediction.answer))
        first, second = (
            scorer.score(sentence_lines(ref), hypothesis)["rougeLsum"].fmeasure for ref in references(example)
        )
        return {"rougeLsum": 100 * (first if first > second else second)}

    def corpus(self, samples: list[SampleRecord], seed: int) -> dict[str, CorpusValue]:
        values = [value / 100 for s in samples if (value := s.scores.get("rougeLsum")) is not None]
        mid = 100 * bootstrap_mid(values, seed) if values else None
        return {"rougeLsum_bootstrap_mid": CorpusValue(mid, len(values))}

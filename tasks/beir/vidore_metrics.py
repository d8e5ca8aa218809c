"""`vidore_retrieval`: vidore-benchmark's `compute_retrieval_scores` (mteb 1.16's RetrievalEvaluator.evaluate, its
`mrr` and `evaluate_abstention`), over the pages the system showed.

nDCG, MAP, Recall and P at each cut-off are `beir_retrieval`'s (pytrec_eval over the shown ranking, which the page
retrievers order as trec_eval orders upstream's scores: a tie by page id descending). MRR is mteb's own: it sorts
every page's score itself, Python's stable sort keeping tied pages in the order upstream's results hold them (the
corpus order), so under a tie its rank of the first relevant page is not trec_eval's; the page retrievers also show,
after trec_eval's first k, the pages mteb ranks within k that trec_eval does not (`ragbench.api.retrieval`'s page
retrievers: `PAGE_INDEX`, a hit's corpus position; a page without one keeps its shown place).

`naucs_at_K_FCT` are the 21 figures vidore-benchmark outputs under that name: mteb's normalised area under the
abstention curve (Feng et al. 2024, arXiv 2402.12997), for FCT each confidence mteb reads of a query's scores
(`max`, `std`, `diff1`: the first hit's `RANKING`, reported per query as `confidence_FCT`), at each cut-off K.
vidore-benchmark names the nAUC of every measure at K `naucs_at_K_FCT`, so each later one replaces the earlier
(its dict comprehension): what it outputs is the nAUC of P@K, and so is this. The queries are taken in upstream's
order (the examples' order), which orders confidence ties. A nAUC whose oracle curve is flat is NaN upstream;
here it is none (not scorable).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ragbench.api import (
    CorpusValue,
    Example,
    KeySpec,
    Prediction,
    SampleRecord,
    Scores,
    ScoringContext,
)
from ragbench.api.retrieval import PAGE_INDEX, RANKING

from .metrics import BeirRetrieval

CONFIDENCES = ("max", "std", "diff1")  # mteb's confidence_scores, in its order
ABSTENTION_RATES = 10  # mteb's np.linspace(0, 1, 11)[:-1]


class ViDoReRetrieval(BeirRetrieval):
    """`beir_retrieval`'s measures, MRR ranked as mteb ranks tied scores, each query's confidence and the
    figures' nAUCs over the run; ViDoRe's cut-offs by default."""

    name = "vidore_retrieval"

    def __init__(self, k: str | int = "1,3,5,10,20,50,100", ignore_identical_ids: bool = False) -> None:
        super().__init__(k, ignore_identical_ids)
        confidence = tuple(f"confidence_{name}" for name in CONFIDENCES)
        naucs = tuple(naucs_key(k, name) for k in self.ks for name in CONFIDENCES)
        self.declares = dataclasses.replace(
            self.declares,
            keys=(*self.declares.keys, *confidence),
            corpus_keys=naucs,
            key_specs={
                **{key: KeySpec(None, None) for key in confidence},  # a score's spread: no better direction
                **{key: KeySpec(True, (None, 1)) for key in naucs},
            },
        )

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        scores = super().score(example, prediction, ctx)
        qrels: dict[str, int] = example.gold["qrels"]
        shown: dict[str, tuple[float, int]] = {}  # each page once, at its first place: (score, mteb's position)
        ranking: Mapping[str, Any] = {}
        for place, doc in enumerate(prediction.docs):
            score = doc.score if doc.score is not None else float("-inf")
            shown.setdefault(str(doc.id), (score, mteb_position(doc, place)))
            ranking = ranking or doc.metadata.get(RANKING) or {}
        order = sorted(shown, key=lambda page: shown[page][1])
        order.sort(key=lambda page: shown[page][0], reverse=True)  # stable: ties keep upstream's order
        first = next((rank for rank, page in enumerate(order, 1) if qrels.get(page, 0) > 0), None)
        return {
            **scores,
            **{f"mrr_at_{k}": 1 / first if first is not None and first <= k else 0.0 for k in self.ks},
            **{f"confidence_{name}": ranking.get(name) for name in CONFIDENCES},
        }

    def corpus(self, samples: list[SampleRecord], seed: int) -> Mapping[str, float | CorpusValue | None]:
        """Each cut-off's P@K nAUC for each confidence, over the queries holding both, in upstream's order."""
        ordered = sorted(samples, key=lambda sample: sample.index)
        out: dict[str, float | CorpusValue | None] = {}
        for k in self.ks:
            for name in CONFIDENCES:
                pairs = [pair for sample in ordered if (pair := paired(sample, f"confidence_{name}", f"p_at_{k}"))]
                value = nauc([c for c, _ in pairs], [m for _, m in pairs]) if pairs else None
                out[naucs_key(k, name)] = CorpusValue(value, len(pairs))
        return out


def paired(sample: SampleRecord, first: str, second: str) -> tuple[float, float] | None:
    """The sample's values of two keys, where it holds both."""
    one, other = sample.scores.get(first), sample.scores.get(second)
    return (one, other) if one is not None and other is not None else None


def naucs_key(k: int, confidence: str) -> str:
    return f"naucs_at_{k}_{confidence}"


def mteb_position(doc: Any, shown_at: int) -> int:
    position = doc.metadata.get(PAGE_INDEX)
    return position if isinstance(position, int) else shown_at


def nauc(confidences: Sequence[float], metrics: Sequence[float]) -> float | None:
    """mteb 1.16's `nAUC`: the area under the abstention curve (the mean metric over the queries kept as the least
    confident are set aside, at rates 0, 0.1 ... 0.9; numpy's stable argsort orders ties), scaled between the flat
    curve's (0) and the oracle's (1, the metric's own order); None where the two are one (upstream's NaN). The area
    is the trapezoid rule's, as sklearn's `auc` computes it over increasing rates."""
    import numpy as np

    rates = np.linspace(0, 1, ABSTENTION_RATES + 1)[:-1]
    values = np.asarray(metrics, dtype=float)

    def curve(keys: Any) -> Any:
        order = np.argsort(np.asarray(keys), stable=True)
        kept = [min(round(rate * len(order)), len(order) - 1) for rate in rates]
        return np.array([values[order[start:]].mean() for start in kept])

    oracle = curve(values)
    area, oracle_area = np.trapezoid(curve(confidences), rates), np.trapezoid(oracle, rates)
    flat_area = oracle[0] * (rates[-1] - rates[0])
    if oracle_area == flat_area:
        return None
    return float((area - flat_area) / (oracle_area - flat_area))

"""`beir_retrieval`: BEIR's EvaluateRetrieval.evaluate (beir-cellar/beir beir/retrieval/evaluation.py) and
its custom `mrr` (custom_metrics.py) for one query, over the documents the system showed, in order;
tests/tasks/beir/test_beir_metrics.py pins it to values from running those files.

nDCG@k, MAP@k, Recall@k and P@k are pytrec_eval's `ndcg_cut`, `map_cut`, `recall` and `P`, computed by
pytrec_eval itself (pytrec-eval-terrier, the package BEIR depends on; ragbench[beir]): trec_eval's
measures have corner cases (graded gains, the ideal ranking from every judged document, P@k over k when
fewer were shown) that a copy would have to track, and the wheel is small (a 1.1 MB extension over numpy
and scipy, which ragbench[all] already installs; one query, 100 documents, cut-offs 1-100, takes 0.3 ms on a
2-core machine, an evaluator built per query). The ranking reaches pytrec_eval through
`ragbench.api.retrieval.trec_measures`: in the order shown, no two documents tied, a document shown twice counted at
its first rank.

MRR@k is BEIR's own: 1 / the rank of the first document with a grade above 0 within the first k, else 0.
BEIR's evaluate drops a document whose id is the query's (`ignore_identical_ids`, default true, which
matters where queries are also documents: ArguAna, Quora); so does this. BEIR rounds each mean to 5
decimals; ragbench reports the mean unrounded. Every query of the split is scored (a query that shows no
document scores 0, as pytrec_eval scores a query with an empty run).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ragbench.api import ConfigError, Example, Metric, MetricDeclaration, Prediction, Preflight, Scores, ScoringContext
from ragbench.api.data import JsonObject
from ragbench.api.retrieval import check_pytrec_eval, shown_short, trec_measures

DEFAULT_CUTOFFS = "1,3,5,10"
MEASURES = {"ndcg": "ndcg_cut", "map": "map_cut", "recall": "recall", "p": "P"}  # ragbench key -> pytrec_eval
SHOWN_SHORT = "shown_short"


def cutoffs(k: str | int) -> tuple[int, ...]:
    """The cut-offs of a `k` option ("1,3,5,10" or one number), ascending."""
    try:
        values = sorted({int(part) for part in str(k).split(",")})
    except ValueError:
        values = []
    if not values or values[0] < 1:
        raise ConfigError(f"k={k!r}: expected cut-offs >= 1 separated by commas, e.g. k=1,3,5,10,100")
    return tuple(values)


def ranked_ids(prediction: Prediction, query_id: str, ignore_identical_ids: bool) -> list[str]:
    """The shown documents' ids in order, each once; without the query's own id when `ignore_identical_ids`."""
    ids = []
    for doc in prediction.docs:
        if doc.id is None:
            raise ValueError(
                "a shown document has no id: retrieve from an index of the collection's corpus.jsonl "
                "(docs/benchmarks/beir.md), whose documents carry their _id"
            )
        ids.append(str(doc.id))
    return [doc_id for doc_id in dict.fromkeys(ids) if not (ignore_identical_ids and doc_id == query_id)]


def query_scores(qrels: dict[str, int], ranking: list[str], ks: tuple[int, ...]) -> Scores:
    """Every measure at every cut-off for one query, as EvaluateRetrieval.evaluate and `mrr` compute them."""
    values = trec_measures(qrels, ranking, [f"{measure}.{','.join(map(str, ks))}" for measure in MEASURES.values()])
    first = next((rank for rank, doc in enumerate(ranking, start=1) if qrels.get(doc, 0) > 0), None)
    return {
        **{f"{key}_at_{k}": values[f"{measure}_{k}"] for key, measure in MEASURES.items() for k in ks},
        **{f"mrr_at_{k}": 1 / first if first is not None and first <= k else 0.0 for k in ks},
    }


class BeirRetrieval(Metric):
    """nDCG, MAP, Recall, P and MRR at each cut-off of `k` (default 1,3,5,10: BEIR's headline nDCG@10 and
    the cuts below it; BEIR's 100 and 1000 need as many documents shown), over the shown documents against
    the graded qrels. Where a system showed fewer documents than the deepest cut-off while the corpus had
    more, the example is counted (`shown_short`): its deeper values take the missing ranks as non-relevant."""

    name = "beir_retrieval"
    declares = MetricDeclaration(
        gold_needs=("qrels",),
        value_range=(0, 1),
        counters={
            SHOWN_SHORT: "examples that showed fewer documents than the deepest cut-off while the corpus had "
            "more (raise the system's top_n): their deeper values count the missing ranks as misses"
        },
    )

    def __init__(self, k: str | int = DEFAULT_CUTOFFS, ignore_identical_ids: bool = True) -> None:
        self.ks = cutoffs(k)
        self.ignore_identical_ids = ignore_identical_ids
        keys = tuple(f"{key}_at_{k}" for key in (*MEASURES, "mrr") for k in self.ks)
        self.declares = dataclasses.replace(self.declares, keys=keys)

    def preflight(self, check: Preflight, task: Any) -> None:
        check_pytrec_eval(check, self.name)

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        prediction.shown_docs("BEIR's retrieval (each document with its corpus id)")
        if ctx is not None and shown_short(prediction, self.ks[-1]):
            ctx.count(SHOWN_SHORT)
        ranking = ranked_ids(prediction, example.id, self.ignore_identical_ids)
        return query_scores(example.gold["qrels"], ranking, self.ks)

    def config(self) -> JsonObject:
        return {"name": self.name, "k": ",".join(map(str, self.ks)), "ignore_identical_ids": self.ignore_identical_ids}

"""`browsecomp_plus_retrieval`: BrowseComp-Plus's retrieval-only evaluation (its README, "Evaluating
Retrieval"): `trec_eval -c -m recall.5,100,1000 -m ndcg_cut.10` of a retriever's ranking against
topics-qrels/qrel_evidence.txt and against qrel_golds.txt, per query, over the documents a system showed, in
order (`ragbench.api.retrieval.trec_measures`: pytrec_eval, trec_eval's own code).

As `trec_eval -c`: a query of the qrels that shows nothing scores 0; a query that has no docid in one qrels
file is not one of that file's queries (its values against it are None). Recall@1000 needs 1000 documents
shown: an example that showed fewer while its searches had more is counted (`shown_short`).
"""

from __future__ import annotations

from typing import Any

from ragbench.api import Example, Metric, MetricDeclaration, Prediction, Preflight, Scores
from ragbench.api.retrieval import check_pytrec_eval, shown_short, trec_measures

MEASURES = ("ndcg_cut.10", "recall.5,100,1000")  # the README's trec_eval command
KEYS = {
    "ndcg_cut_10": "ndcg_at_10",
    "recall_5": "recall_at_5",
    "recall_100": "recall_at_100",
    "recall_1000": "recall_at_1000",
}
QRELS = {"evidence": "evidence_docids", "gold": "gold_docids"}  # key prefix -> gold field
DEPTH = 1000
SHOWN_SHORT = "shown_short"


class BrowseCompPlusRetrieval(Metric):
    """nDCG@10 and Recall@5, @100, @1000 of the shown documents against the evidence and the gold qrels."""

    name = "browsecomp_plus_retrieval"
    declares = MetricDeclaration(
        gold_needs=tuple(QRELS.values()),
        value_range=(0, 1),
        keys=tuple(f"{prefix}_{key}" for prefix in QRELS for key in KEYS.values()),
        counters={
            SHOWN_SHORT: f"examples that showed fewer than {DEPTH} documents while their searches had more (raise "
            "the system's top_n): their recall@1000 counts the missing ranks as misses"
        },
    )

    def preflight(self, check: Preflight, task: Any) -> None:
        check_pytrec_eval(check, self.name)

    def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        shown = prediction.shown_docs("BrowseComp-Plus's retrieval evaluation (each document with its docid)")
        if any(doc.id is None for doc in shown):
            raise ValueError("a shown document has no docid: retrieve from an index of BrowseComp-Plus's corpus")
        if ctx is not None and shown_short(prediction, DEPTH):
            ctx.count(SHOWN_SHORT)
        ranking = [str(doc.id) for doc in shown]
        scores: dict[str, float | None] = {}
        for prefix, field in QRELS.items():
            relevant = example.gold[field]
            values = trec_measures(dict.fromkeys(relevant, 1), ranking, MEASURES) if relevant else {}
            scores.update({f"{prefix}_{key}": values.get(measure) for measure, key in KEYS.items()})
        return scores

"""`vidore_retrieval`: vidore-benchmark's `compute_retrieval_scores` (mteb 1.16's RetrievalEvaluator.evaluate and its
`mrr`) for one query, over the pages the system showed.

nDCG, MAP, Recall and P at each cut-off are `beir_retrieval`'s (pytrec_eval over the shown ranking, which the
`colpali` retriever orders as trec_eval orders upstream's scores: a tie by page id descending). MRR is mteb's own:
it sorts the query's scores itself, Python's stable sort keeping tied pages in the order upstream's results hold
them (the corpus order), so under a tie its rank of the first relevant page is not trec_eval's. Ties are common:
ColPali's bfloat16 scores (about 10 to 30) step by 1/16 or 1/8. The shown pages carry their corpus position
(`page_index` in their metadata, set by `colpali`); a page without one keeps its shown place.
"""

from __future__ import annotations

from typing import Any

from ragbench.api import Example, Prediction, Scores, ScoringContext

from .metrics import BeirRetrieval

PAGE_INDEX = "page_index"


class ViDoReRetrieval(BeirRetrieval):
    """`beir_retrieval`'s measures, MRR ranked as mteb ranks tied scores; ViDoRe's cut-offs by default."""

    name = "vidore_retrieval"

    def __init__(self, k: str | int = "1,3,5,10,20,50,100", ignore_identical_ids: bool = False) -> None:
        super().__init__(k, ignore_identical_ids)

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        scores = super().score(example, prediction, ctx)
        qrels: dict[str, int] = example.gold["qrels"]
        shown: dict[str, tuple[float, int]] = {}  # each page once, at its first place: (score, mteb's position)
        for place, doc in enumerate(prediction.docs):
            score = doc.score if doc.score is not None else float("-inf")
            shown.setdefault(str(doc.id), (score, mteb_position(doc, place)))
        order = sorted(shown, key=lambda page: shown[page][1])
        order.sort(key=lambda page: shown[page][0], reverse=True)  # stable: ties keep upstream's order
        first = next((rank for rank, page in enumerate(order, 1) if qrels.get(page, 0) > 0), None)
        return {**scores, **{f"mrr_at_{k}": 1 / first if first is not None and first <= k else 0.0 for k in self.ks}}


def mteb_position(doc: Any, shown_at: int) -> int:
    position = doc.metadata.get(PAGE_INDEX)
    return position if isinstance(position, int) else shown_at

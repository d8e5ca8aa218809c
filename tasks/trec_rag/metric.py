"""`trec_rag_retrieval`: the TREC RAG retrieval measures of the segments a system showed, nDCG@20, nDCG@100 and
recall@100, as the track and Anserini's rag24 regressions report them (`trec_eval -c -m ndcg_cut.20 -m
ndcg_cut.100 -m recall.100 QRELS RUN`), computed by pytrec_eval (trec_eval's C code) through `trec_measures`: graded gains
(UMBRELA's and NIST's 0-3) for nDCG, a segment relevant for recall where its grade is at least 1 (trec_eval's
default, no -l). The mean over the examples is trec_eval -c's "all" value: every judged topic is an example, a
topic that showed nothing scores 0, and one that failed is counted by the run. The answers ragnarok's
rag24_validation warns of are counted too: over 400 words, a sentence citing one segment twice.
"""

from __future__ import annotations

from typing import Any

from ragbench.api import Example, Metric, MetricDeclaration, Prediction, Preflight, Scores, ScoringContext
from ragbench.api.retrieval import check_pytrec_eval, shown_short, trec_measures

from .ag_output import citing_twice, response_length, sentences
from .submitted_topics import MOST_WORDS

DEPTH = 100
MEASURES = ("ndcg_cut.20", "ndcg_cut.100", "recall.100")
KEYS = ("ndcg_cut_20", "ndcg_cut_100", "recall_100")
SHOWN_SHORT, OVER_WORDS, CITING_TWICE = "shown_short", "over_400_words", "citing_twice"


def ranking(prediction: Prediction) -> list[str]:
    """The shown segments' docids in order; a segment without one is a ValueError (the example fails, counted)."""
    ids = []
    for doc in prediction.shown_docs("TREC RAG's retrieval measures (each segment with its docid)"):
        if doc.id is None:
            raise ValueError("a shown segment has no docid: retrieve from an index of the segmented corpus")
        ids.append(str(doc.id))
    return ids


class TrecRagRetrieval(Metric):
    """nDCG@20, nDCG@100 and recall@100 of the shown segments against the topic's qrels, as trec_eval computes them."""

    name = "trec_rag_retrieval"
    declares = MetricDeclaration(
        gold_needs=("qrels",),
        keys=KEYS,
        value_range=(0, 1),
        counters={
            SHOWN_SHORT: f"examples that showed fewer than {DEPTH} segments while the search had more (raise the "
            "system's top_n): recall@100 counts the missing ranks as misses",
            OVER_WORDS: f"answers over {MOST_WORDS} words (the NFKC words of their sentences), which ragnarok's "
            "rag24_validation warns of and cuts from the end",
            CITING_TWICE: "answers with a sentence citing one segment twice, which rag24_validation warns of "
            "(`ragbench export trec-rag` writes the citation once)",
        },
    )

    def preflight(self, check: Preflight, task: Any) -> None:
        check_pytrec_eval(check, self.name, extra="trec")

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        ranked = ranking(prediction)
        if ctx is not None:
            answer = prediction.answer or ""
            warned = {
                SHOWN_SHORT: shown_short(prediction, DEPTH),
                OVER_WORDS: response_length(sentences(answer, len(ranked))[0]) > MOST_WORDS,
                CITING_TWICE: citing_twice(answer) > 0,
            }
            for name in (name for name, counted in warned.items() if counted):
                ctx.count(name)
        values = trec_measures(example.gold["qrels"], ranked, MEASURES)
        return {key: values[key] for key in KEYS}

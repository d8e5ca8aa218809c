"""trec_eval's measures of one query's ranking, and of a run file's rankings as `trec_eval -c` averages them
(`trec_eval_all`), computed by pytrec_eval (pytrec-eval-terrier, trec_eval's own C
code; `ragbench[beir]`), for the metrics that score the documents a system showed against qrels (BEIR's
EvaluateRetrieval, BrowseComp-Plus's `trec_eval -c -m recall.5,100,1000 -m ndcg_cut.10`).

ragbench has a rank order, not scores: the run handed to pytrec_eval scores the document at rank r (from 1)
with n - r + 1, so no two tie (trec_eval orders ties by document id, descending, not by the order given). A
document shown twice counts at its first rank. A query whose ranking is empty scores 0 on every measure, as
`trec_eval -c` scores a query of the qrels that the run lacks. A grade pytrec_eval cannot hold is a ValueError
(`grades`), never a wrong value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

from ..._imports import import_extra
from ..._types import Prediction
from ..._values.json_values import json_list
from .grades import checked_grades

if TYPE_CHECKING:
    from ..._checks import Preflight


def import_pytrec_eval(user: str, extra: str = "beir") -> ModuleType:
    """pytrec_eval, or a ConfigError naming what computes with it (`user`: "metric NAME") and how to install it
    (`extra`: the ragbench extra of the task that uses it, all holding pytrec-eval-terrier)."""
    return import_extra(
        "pytrec_eval", f"{user} computes trec_eval's measures with pytrec_eval: pip install 'ragbench[{extra}]'"
    )


def check_pytrec_eval(check: Preflight, metric: str, extra: str = "beir") -> None:
    """The pre-flight step of a metric that computes with pytrec_eval (`metric`: its name): pytrec_eval installed,
    else `import_pytrec_eval`'s error as the step's problem."""
    with check.step(f"metric {metric}: pytrec_eval installed"):
        import_pytrec_eval(f"metric {metric}", extra)


def trec_measures(qrels: Mapping[str, int], ranking: Sequence[str], measures: Iterable[str]) -> dict[str, float]:
    """trec_eval's values of `measures` (its names with cut-offs, e.g. "ndcg_cut.10", "recall.5,100") for one
    query's `ranking` (document ids, best first) against its graded `qrels`; keys as trec_eval prints them
    ("ndcg_cut_10", "recall_5"). Every requested value is there: 0 for an empty ranking."""
    measures = list(measures)
    pytrec_eval = import_pytrec_eval("trec_measures")
    evaluator = pytrec_eval.RelevanceEvaluator({"q": checked_grades(qrels)}, set(measures))
    ranked = list(dict.fromkeys(ranking))
    run = {"q": {doc: float(len(ranked) - rank) for rank, doc in enumerate(ranked)}}
    values: dict[str, dict[str, float]] = evaluator.evaluate(run)
    return dict(values["q"]) if values.get("q") else dict.fromkeys(measure_keys(measures), 0.0)


def trec_eval_all(
    qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]], measures: Iterable[str]
) -> dict[str, float]:
    """The "all" values `trec_eval -c -m MEASURE ... QRELS RUN` prints: every query of `qrels` (query id ->
    docid -> relevance) scored on its documents' scores in `run` (query id -> docid -> score, ordered as
    trec_eval orders them: highest score first, ties by docid, the later first), a query the run lacks
    counting 0, averaged over the queries of the qrels; the run's other queries are not read."""
    measures = list(measures)
    pytrec_eval = import_pytrec_eval("trec_eval_all")
    evaluator = pytrec_eval.RelevanceEvaluator({q: checked_grades(docs) for q, docs in qrels.items()}, set(measures))
    values: dict[str, dict[str, float]] = evaluator.evaluate({q: dict(run[q]) for q in qrels if run.get(q)})
    count = len(qrels)
    return {
        key: sum(values.get(q, {}).get(key, 0.0) for q in qrels) / count if count else 0.0
        for key in measure_keys(measures)
    }


def measure_keys(measures: Iterable[str]) -> list[str]:
    """The keys trec_eval prints for measure names with cut-offs: "recall.5,100" -> recall_5, recall_100."""
    keys = []
    for measure in measures:
        name, _, cuts = measure.partition(".")
        keys += [f"{name}_{cut}" for cut in cuts.split(",")] if cuts else [name]
    return keys


def shown_short(prediction: Prediction, depth: int) -> bool:
    """Fewer documents shown than the deepest cut-off, other than because the search ran out (it returned fewer
    than it asked for: a small corpus, or few passages holding a word of a BM25 query; every one returned shown)."""
    shown = {doc.id for doc in prediction.docs}
    if len(shown) >= depth:
        return False
    searches = [
        (step.request, step.response) for step in prediction.trace if step.kind == "retrieval" and step.response
    ]
    returned = {doc_id for _, response in searches for doc_id in json_list(response.get("ids"))}
    exhausted = any(
        isinstance(k := request.get("k", 0), int) and len(json_list(response.get("ids"))) < k
        for request, response in searches
    )
    return not (exhausted and returned <= shown)

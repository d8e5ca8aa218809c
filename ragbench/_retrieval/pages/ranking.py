"""The pages a page retriever shows for one query, from every page's score, so that vidore-benchmark's figures
can be computed from them: pytrec_eval's ranking cut at k, the pages mteb's MRR would rank within k, and what
mteb's confidence scores read of every page's score.

vidore-benchmark hands its evaluators every page's score (`results`); ragbench's figures read the pages shown.
pytrec_eval ranks by score, a tie by page id descending (trec_eval's `strcmp`), so its first k pages are every
figure of it at a cut-off up to k. mteb's MRR sorts the pages itself, a tie in `results` order (the corpus
order): where a tie crosses the k-th place, its first k holds pages trec_eval's does not, shown after those k
(they take ranks past k there, so no pytrec_eval figure moves). mteb's nAUC reads each query's confidence (the
best score, the standard deviation of all of them, the gap between the best two) over every page, which no
cut keeps: the first page shown carries it (`RANKING`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._values.json_values import JsonObject

PAGE_INDEX = "page_index"  # Document.metadata of a hit: the page's place in the corpus (mteb orders ties by it)
RANKING = "ranking"  # Document.metadata of a query's first hit: `confidence` of every page's score


def trec_order(scores: Sequence[float], ids: Sequence[str], k: int) -> list[int]:
    """The indexes of the `k` best pages as trec_eval (pytrec_eval, which vidore-benchmark's evaluator calls) ranks a
    run: by score descending, a tie by document id descending (its `strcmp` of the ids' bytes)."""
    order = sorted(range(len(ids)), key=lambda i: ids[i].encode("utf-8"), reverse=True)
    order.sort(key=lambda i: scores[i], reverse=True)  # stable: ties keep the id order
    return order[:k]


def mteb_order(scores: Sequence[float], k: int) -> list[int]:
    """The indexes of the `k` best pages as mteb's `mrr` sorts `results`: by score descending, a tie in corpus
    order (Python's stable sort)."""
    return sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)[:k]


def shown_order(scores: Sequence[float], ids: Sequence[str], k: int) -> list[int]:
    """trec_eval's first `k` pages, then those of mteb's first `k` it lacks, in trec_eval's order (module
    docstring)."""
    first = trec_order(scores, ids, k)
    beyond = set(mteb_order(scores, k)) - set(first)
    if not beyond:
        return first
    return first + [page for page in trec_order(scores, ids, len(ids)) if page in beyond]


def confidence(scores: Sequence[float]) -> JsonObject:
    """mteb 1.16's `confidence_scores` of one query's page scores (in corpus order): `max`, `std` (numpy's, of
    every score) and `diff1` (the best less the second best; 0 for one page), with the pages' count."""
    import numpy as np

    ranked = sorted(scores, reverse=True)
    return {
        "pages": len(scores),
        "max": float(ranked[0]),
        "std": float(np.std(list(scores))),
        "diff1": float(ranked[0] - ranked[1]) if len(ranked) > 1 else 0.0,
    }

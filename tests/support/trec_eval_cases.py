"""Qrels and TREC run files made from a seed, for comparing ragbench's reading of a run file with trec_eval's own
(tests/data/trec_eval/record_trec_eval.py ran trec_eval over them; tests/reports/test_trec_run.py compares).

Each case has queries judged only in the qrels (missing from the run: 0 under -c), queries only in the run (not
read), a query whose judgements are all 0, graded relevance (0 to 2) and runs of up to 1100 documents whose scores
are drawn from a few values, so that ties are many and straddle the cut-offs 5, 10, 100 and 1000.
"""

from __future__ import annotations

import random

MEASURES = ("recall.5,100,1000", "ndcg_cut.10")  # BrowseComp-Plus's README command
SEEDS = (1, 2, 3, 4)


def case(seed: int) -> tuple[str, str]:
    """(qrels text, run text) of one case."""
    rng = random.Random(seed)
    qrels, run = [], []
    for q in range(12):
        qid = f"{seed}{q:02d}"
        docs = [f"d{rng.randrange(3000)}" for _ in range(rng.choice((3, 40, 600, 1100)))]
        docs = list(dict.fromkeys(docs))
        judged = rng.sample(docs, min(len(docs), rng.randrange(1, 8))) + [f"u{i}" for i in range(rng.randrange(3))]
        for docid in judged:
            grade = 0 if q == 3 else rng.choice((0, 1, 1, 2))
            qrels.append(f"{qid} 0 {docid} {grade}")
        if q == 5:
            continue  # judged, never retrieved
        scores = [round(rng.choice((1.0, 2.0, 2.5, 3.0, rng.random() * 4)), 3) for _ in docs]
        for rank, (docid, score) in enumerate(zip(docs, scores), 1):
            run.append(f"{qid} Q0 {docid} {rank} {score!r} seed{seed}")
    run += [f"9{seed}99 Q0 d1 1 1.0 seed{seed}"]  # a query the qrels do not judge
    return "".join(line + "\n" for line in qrels), "".join(line + "\n" for line in run)

"""Records castorini's umbrela's evaluation against qrels (`GPTJudge.evalute_results_with_qrel`, umbrela's
`evaluation.evaluate_judge_results`), umbrela run unmodified, into umbrela_qrels.json: every HTTP request its judge
sent for the qrels' pairs (the holes), the judgments, the modified qrels it wrote and what it printed (Cohen's
kappa of the valid and of all judgments, on the grades and binarised, the confusion matrix, the correct counts per
grade). tests/metrics/test_umbrela_qrels.py judges the same topics with ragbench's `umbrela` metric (passages=qrels)
and compares.

The qrels, topics and passages are record_umbrela_fewshot.py's (its stand-in pyserini answers for them; the pair
it judges twice left out: ragbench's TREC RAG tasks refuse such a qrels file). The fake judge is record_umbrela.py's,
its reply picked by the passage: `judged` gives each passage a reply, malformed and refused ones included.
Runs: judge_cat 0123 (every pair) and 23. matplotlib draws the confusion matrix to a file (Agg), in a temporary
folder that the modified qrels are written to as well.

    MPLBACKEND=Agg /work/scratch/umbrela_venv/bin/python tests/data/umbrela/record_umbrela_qrels.py
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

from record_umbrela import BAD_REQUEST, REPLIES
from record_umbrela_fewshot import PASSAGES, QRELS, TOPICS, fake_judge, fake_pyserini

HERE = Path(__file__).resolve().parent
EVAL_QRELS = [line for n, line in enumerate(QRELS) if n != 20]  # without the pair judged twice
GRADE = {docid: grade for _, docid, grade in EVAL_QRELS}


def judged(n: int, grade: int) -> str:
    """Mostly the qrels' grade, some one grade off, some with no grade 0-3 (graded 0), one refused (HTTP 400)."""
    ways = ["##final score: {g}", "score of {g}", "##final score: {up}", "I cannot tell.", '{{"O": {g}}}',
            "##final score: {down}", "##final score: 9"]  # fmt: skip
    return BAD_REQUEST if n == 5 else ways[n % len(ways)].format(g=grade, up=min(grade + 1, 3), down=max(grade - 1, 0))


REPLIES.update({text: judged(n, GRADE[docid]) for n, (docid, text) in enumerate(PASSAGES.items())})
CATEGORIES = [[0, 1, 2, 3], [2, 3]]


def main() -> None:
    folder = fake_pyserini(EVAL_QRELS)
    httpd, fake = fake_judge()
    os.chdir(folder)  # umbrela writes modified_qrels/ and conf_matrix/ into the working folder
    from umbrela.gpt_judge import GPTJudge

    runs = []
    for judge_cat in CATEGORIES:
        judge = GPTJudge("dl19-passage", "gpt-4o-mini", prompt_type="bing", max_concurrency=1)
        start = len(fake.log)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            path = judge.evalute_results_with_qrel(None, judge_cat=judge_cat, return_results_path=True)
        assert path is not None
        runs.append(
            {
                "judge_cat": judge_cat,
                "calls": fake.log[start:],
                "printed": printed.getvalue(),
                "modified_qrels": Path(path).read_text(encoding="utf-8"),
            }
        )
    httpd.shutdown()
    fixture = {
        "umbrela_commit": "e2c4e4126bf7b568d9230008b465a58445cabc30",
        "versions": {p: version(p) for p in ("umbrela", "openai", "scikit-learn")} | {"python": sys.version.split()[0]},
        "topics": TOPICS,
        "passages": PASSAGES,
        "qrels": EVAL_QRELS,
        "bad_request": BAD_REQUEST,
        "runs": runs,
    }
    (HERE / "umbrela_qrels.json").write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    main()

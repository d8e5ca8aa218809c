"""Records castorini's umbrela's modified qrels and the nDCG@10 it prints for a run file on the original and the
modified qrels (`GPTJudge.evalute_results_with_qrel(RUN_FILE, ...)`, umbrela's `evaluation.evaluate_judge_results`
with a `result_file`), umbrela run unmodified, into umbrela_modified_qrels.json. tests/metrics/test_umbrela_modified_qrels.py
runs trec_rag24 with ragbench's `umbrela` metric (passages=qrels) on the same qrels and replies, then
`ragbench export umbrela-qrels` with the same run file, and compares.

The qrels, topics, passages and the fake judge's replies are record_umbrela_qrels.py's, and two pairs no judge_cat
judges (grade 4), one of them a docid of digits with a leading zero (umbrela keys it by its integer, so its modified
qrels write it without the zero). umbrela's `fetch_ndcg_score` runs `python -m pyserini.eval.trec_eval -c -l 2 -m
ndcg_cut.10 QRELS RUN`: the stand-in pyserini (record_umbrela_fewshot.py's, run from its folder) gets an
`eval/trec_eval.py` that runs trec_eval itself (usnistgov/trec_eval built with `make`, its path in $TREC_EVAL), the
qrels name `dl19-passage` read as the stand-in's qrels file, as pyserini's wrapper reads a qrels name.

    PATH=/work/scratch/umbrela_venv/bin:$PATH TREC_EVAL=/path/to/trec_eval MPLBACKEND=Agg \
        python tests/data/umbrela/record_umbrela_modified_qrels.py
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from record_umbrela import REPLIES
from record_umbrela_fewshot import TOPICS, fake_judge, fake_pyserini
from record_umbrela_qrels import BAD_REQUEST, CATEGORIES, EVAL_QRELS, PASSAGES

HERE = Path(__file__).resolve().parent
TOPIC = list(TOPICS)
QRELS = [*EVAL_QRELS[:3], (TOPIC[0], "0800", 4), *EVAL_QRELS[3:], (TOPIC[2], "9999", 4)]
RUN = [  # the third topic retrieved nothing (trec_eval -c: 0); ties of score broken by docid; a topic no qrels hold
    (TOPIC[0], "7003", 9.0), (TOPIC[0], "0800", 8.5), (TOPIC[0], "7002", 8.0), (TOPIC[0], "7000", 8.0),
    (TOPIC[0], "7001", 7.0), (TOPIC[0], "7777", 6.0), (TOPIC[0], "7005", 5.5), (TOPIC[0], "7004", 5.0),
    (TOPIC[1], "7010", 3.0), (TOPIC[1], "7015", 2.0), (TOPIC[1], "7008", 1.0), (TOPIC[1], "7012", 0.5),
    (TOPIC[1], "7009", 0.5), (TOPIC[1], "7014", 0.25), ("42", "7000", 1.0),
]  # fmt: skip
TREC_EVAL_SHIM = """import os, subprocess, sys
from pyserini.search import get_qrels_file
args = sys.argv[1:]
if not os.path.exists(args[-2]):  # a qrels name, as pyserini's wrapper takes one
    args[-2] = get_qrels_file(args[-2])
sys.stdout.write(subprocess.run([os.environ["TREC_EVAL"], *args], capture_output=True, text=True, check=True).stdout)
"""


def main() -> None:
    folder = fake_pyserini(QRELS)
    (folder / "pyserini" / "eval").mkdir()
    (folder / "pyserini" / "eval" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "pyserini" / "eval" / "trec_eval.py").write_text(TREC_EVAL_SHIM, encoding="utf-8")
    run_file = folder / "run.txt"
    run_file.write_text("".join(f"{q} Q0 {d} {n} {s} fake\n" for n, (q, d, s) in enumerate(RUN, 1)), encoding="utf-8")
    httpd, fake = fake_judge()
    os.chdir(folder)  # umbrela writes modified_qrels/ and conf_matrix/ here; `python -m pyserini...` finds it here
    from umbrela.gpt_judge import GPTJudge

    runs = []
    for judge_cat in CATEGORIES:
        judge = GPTJudge("dl19-passage", "gpt-4o-mini", prompt_type="bing", max_concurrency=1)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            path = judge.evalute_results_with_qrel(
                str(run_file), judge_cat=judge_cat, regenerate=True, return_results_path=True
            )
        assert path is not None
        ndcg = ast.literal_eval(
            printed.getvalue().strip().splitlines()[-1]
        )  # the dict umbrela prints last: {'original': ...}
        runs.append({"judge_cat": judge_cat, "ndcg_cut_10": ndcg, "modified_qrels": Path(path).read_text("utf-8")})
    httpd.shutdown()
    trec_eval = subprocess.run([os.environ["TREC_EVAL"], "-v"], capture_output=True, text=True).stderr.strip()
    fixture = {
        "versions": {p: version(p) for p in ("umbrela", "openai")}
        | {"python": sys.version.split()[0], "trec_eval": trec_eval},
        "topics": TOPICS,
        "passages": PASSAGES,
        "bad_request": BAD_REQUEST,
        "replies": {text: REPLIES[text] for text in PASSAGES.values()},  # the fake judge's, by the passage judged
        "requests": len(fake.log),
        "qrels": QRELS,
        "run_file": run_file.read_text(encoding="utf-8"),
        "runs": runs,
    }
    (HERE / "umbrela_modified_qrels.json").write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    main()

"""The TREC 2025 RAG overview's agreement between evaluations: Kendall's tau-b of the rankings two evaluations give
the same runs (`ragbench export trec-rag-agreement`), and `kendall_tau` against scipy's `kendalltau`."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import TEST_DATA
from ragbench.api import kendall_tau
from support.helpers import cli_here

SAMPLE = TEST_DATA / "parity" / "trec_support"
B = [
    "msmarco_v2.1_doc_90_1#0_10",
    "msmarco_v2.1_doc_90_1#1_20",
    "msmarco_v2.1_doc_90_2#0_30",
    "msmarco_v2.1_doc_90_3#0_40",
]
OTHER = "msmarco_v2.1_doc_90_9#0_99"
# b1's references in three runs: the judged segment first, third, absent (nDCG@20 1, 0.5, 0; recall@100 1, 1, 0)
REFERENCES = {"first": B, "third": [B[1], B[2], B[0], B[3]], "absent": [B[1], B[2], B[3], OTHER]}


def scored_run(tmp_path, name: str, references: list[str]) -> str:
    folder = tmp_path / f"{name}_submission"
    folder.mkdir()
    lines = [
        json.loads(line) for line in (SAMPLE / "submission" / "fake.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    lines[0]["references"] = references + [lines[0]["references"][-1]]  # the fifth reference, which b1 cites
    (folder / "run.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    run = tmp_path / name
    done = cli_here(
        "score",
        "--task",
        "trec_rag25",
        "--data",
        str(SAMPLE / "trec_rag_2025_queries.jsonl"),
        "--task-arg",
        f"trec_rag25.qrels={SAMPLE / 'qrels.rag25.txt'}",
        "--predictions",
        str(folder),
        "--output",
        str(run),
    )
    assert done.returncode == 0, done.stderr
    return str(run)


def test_the_tau_of_runs_ranked_by_two_keys_and_from_other_runs(tmp_path):
    runs = [scored_run(tmp_path, name, refs) for name, refs in REFERENCES.items()]
    out = tmp_path / "agreement.tsv"
    done = cli_here(
        "export",
        "trec-rag-agreement",
        *runs,
        "--metric",
        "ndcg_cut_20",
        "--against",
        "recall_100",
        "--output",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    # (first, third) tie on recall; the other two pairs concordant: 2 / sqrt(3 * 2)
    assert f"Kendall's tau-b of 3 runs ranked by ndcg_cut_20 and by recall_100: {2 / math.sqrt(6):.4f}" in done.stdout
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == ["run", "ndcg_cut_20", "recall_100"]
    assert [name for name, _, _ in rows[1:]] == ["first", "third", "absent"]
    assert [(float(a), float(b)) for _, a, b in rows[1:]] == [
        pytest.approx((2 / 3, 2 / 3)),
        pytest.approx((1.5 / 3, 2 / 3)),
        pytest.approx((1 / 3, 1 / 3)),
    ]
    reversed_runs = [arg for run in reversed(runs) for arg in ("--against-run", run)]
    done = cli_here(
        "export", "trec-rag-agreement", *runs, "--metric", "ndcg_cut_20", "--against", "ndcg_cut_20", *reversed_runs
    )
    assert "ranked by ndcg_cut_20 and by ndcg_cut_20: -1.0000" in done.stdout
    done = cli_here(
        "export", "trec-rag-agreement", *runs, "--metric", "ndcg_cut_20", "--against", "nuggetizer_vital_score"
    )
    assert done.returncode != 0 and "has no value of nuggetizer_vital_score for trec_rag25" in done.stderr
    done = cli_here(
        "export",
        "trec-rag-agreement",
        *runs,
        "--metric",
        "ndcg_cut_20",
        "--against",
        "recall_100",
        "--output",
        str(out),
    )
    assert done.returncode != 0 and "--overwrite" in done.stderr


@given(st.lists(st.tuples(st.integers(0, 4), st.floats(-1, 1, allow_nan=False)), min_size=0, max_size=12))
def test_kendall_tau_is_scipys_tau_b(pairs):
    scipy_stats = pytest.importorskip("scipy.stats")
    first, second = [float(a) for a, _ in pairs], [b for _, b in pairs]
    ours = kendall_tau(first, second)
    if len(pairs) < 2:
        assert ours is None
        return
    theirs = scipy_stats.kendalltau(first, second).statistic
    assert (ours is None and math.isnan(theirs)) or ours == pytest.approx(theirs, abs=1e-12)

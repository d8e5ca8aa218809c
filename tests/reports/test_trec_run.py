"""TREC run files: what ragbench writes is what trec_eval reads back in the order meant, and `trec_eval_all` scores
a run file as `trec_eval -c -m recall.5,100,1000 -m ndcg_cut.10` does (tests/data/trec_eval/expected.json: what
trec_eval 10.0-rc3 and 9.0.7, built from usnistgov/trec_eval's source, printed for tests/support/trec_eval_cases.py's
files: ties across the cut-offs, graded and all-zero judgements, queries missing from the run or the qrels)."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragbench.api import ConfigError, Document
from ragbench.api.retrieval import read_trec_run, trec_ranking, trec_run_text
from support import paths
from support.trec_eval_cases import MEASURES, SEEDS, case

EXPECTED = json.loads((paths.DATA / "trec_eval" / "expected.json").read_text(encoding="utf-8"))


def graded_qrels(text: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        qid, _, docid, grade = line.split()
        qrels.setdefault(qid, {})[docid] = int(grade)
    return qrels


@pytest.mark.parametrize("seed", SEEDS)
def test_a_run_file_scores_as_trec_eval_c_prints_it(tmp_path, seed):
    from ragbench.api.retrieval import trec_eval_all

    pytest.importorskip("pytrec_eval")
    qrels_text, run_text = case(seed)
    (tmp_path / "run.txt").write_text(run_text)
    values = trec_eval_all(graded_qrels(qrels_text), read_trec_run(tmp_path / "run.txt"), MEASURES)
    assert {key: f"{value:.4f}" for key, value in values.items()} == EXPECTED["cases"][str(seed)]


def trec_order(scores: dict[str, float]) -> list[str]:
    """trec_eval's order of a query's documents: score, highest first; ties by docid, the later first."""
    return [docid for docid, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)]


shown = st.lists(
    st.builds(
        Document,
        id=st.sampled_from([f"d{i}" for i in range(12)]),
        title=st.just(""),
        text=st.just(""),
        score=st.none() | st.sampled_from([0.5, 1.0, 1.0 / 3, 2.0, 7.25]),
    ),
    max_size=15,
)


@given(shown)
def test_trec_eval_reads_back_the_ranking_meant(docs):
    ranking = trec_ranking(docs)
    first: dict[str, Document] = {}  # each docid's first document, in the order shown
    for doc in docs:
        first.setdefault(str(doc.id), doc)
    assert [docid for docid, _ in ranking] == list(first)  # each document once, at its first rank
    read = {line.split()[2]: float(line.split()[4]) for line in trec_run_text([("q1", ranking)], "t").splitlines()}
    assert read == dict(ranking)  # the scores written are the numbers read back
    real = [doc.score for doc in first.values()]
    scored = [score for score in real if score is not None]
    if len(scored) == len(real) and all(a >= b for a, b in zip(scored, scored[1:])):
        assert read == {docid: doc.score for docid, doc in first.items()}  # one search's: its scores kept
    else:
        assert trec_order(read) == list(first)  # trec_eval reads the order shown


def test_an_id_the_format_cannot_hold_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match="docid 'a b'"):
        trec_run_text([("1", [("a b", 1.0)])], "tag")
    with pytest.raises(ValueError, match="query id ''"):
        trec_run_text([("", [("a", 1.0)])], "tag")
    with pytest.raises(ValueError, match="has no docid"):
        trec_ranking([Document(id=None, title="", text="")])
    bad = tmp_path / "run.txt"
    bad.write_text("1 Q0 a 1 1.0 t\n1 Q0 b 2 high t\n")
    with pytest.raises(ValueError, match=r"run.txt:2: could not convert"):
        read_trec_run(bad)


def test_a_run_file_that_is_a_fifo_or_a_folder_is_refused_in_one_line_unopened(tmp_path):
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)  # opening it would wait for a writer that never comes
    for path in (fifo, tmp_path):
        with pytest.raises(ConfigError) as refused:
            read_trec_run(path)
        assert str(path) in str(refused.value) and "\n" not in str(refused.value)

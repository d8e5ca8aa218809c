"""TREC RAG's inputs read as trec_eval holds them, never a silent wrong number: a relevance grade outside pytrec_eval's
C int (which it would read as another grade, or fail on with SystemError) refused naming its line in every qrels
reader (TREC RAG's, BEIR's, umbrela's), and a topic given twice with other texts refused naming both lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragbench.api import ConfigError, RecordError
from ragbench.api.retrieval import trec_eval_all, trec_measures
from ragbench.metrics.umbrela.modified_qrels import read_pairs
from ragbench.tasks.trec_rag.data import read_qrels, read_topics

LOW, HIGH = -1, 2**31 - 1  # trec_eval's "in the pool, not judged" to a C int's largest: pytrec_eval's grades
grades = st.one_of(
    st.integers(-(2**31) - 3, 3),
    st.integers(HIGH - 3, HIGH + 3),
    st.sampled_from([2**32, 2**32 + 1, 2**63, 10**30, -(10**30)]),
    st.integers(-(2**80), 2**80),
)
FILES = [HealthCheck.function_scoped_fixture]


@settings(max_examples=60, deadline=None, suppress_health_check=FILES)
@given(grades)
def test_a_qrels_grade_is_read_as_trec_eval_holds_it_or_refused_naming_its_line(tmp_path, grade):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"1 0 d0 1\n2 0 d1 {grade}\n", encoding="utf-8")
    if LOW <= grade <= HIGH:
        read, _ = read_qrels(qrels)
        assert read["2"] == {"d1": grade}
        if grade <= 10**6:  # trec_eval's counts take 8 bytes a grade up to the highest
            ndcg = trec_eval_all(read, {"1": {"d0": 1.0}, "2": {"d1": 1.0}}, ["ndcg_cut.10"])["ndcg_cut_10"]
            assert ndcg == (1.0 + (1.0 if grade > 0 else 0.0)) / 2  # the one document, relevant iff its grade is > 0
    else:
        with pytest.raises(ConfigError, match=re.escape(f"{qrels}:2: relevance")) as caught:
            read_qrels(qrels)
        assert "outside trec_eval's grades" in str(caught.value) and "\n" not in str(caught.value)
        with pytest.raises(ValueError, match="outside trec_eval's grades"):
            trec_measures({"d1": grade}, ["d1"], ["ndcg_cut.10"])  # never handed on to pytrec_eval


@settings(max_examples=30, deadline=None, suppress_health_check=FILES)
@given(st.one_of(st.integers(HIGH + 1, 2**80), st.integers(-(2**80), LOW - 1)))  # e.g. -2, 2^31
def test_umbrela_and_beir_refuse_the_same_grades_naming_the_line(tmp_path, grade):
    qrels = tmp_path / "umbrela.txt"
    qrels.write_text(f"1 0 d0 1\n2 0 d1 {grade}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(f"{qrels}:2: not a qrels line")):
        read_pairs(qrels)
    from ragbench.tasks.beir.task import read_qrels as read_beir_qrels

    beir = tmp_path / "test.tsv"
    beir.write_text(f"query-id\tcorpus-id\tscore\nq1\td1\t{grade}\n", encoding="utf-8")
    qrels_read, _, bad = read_beir_qrels(beir)
    assert isinstance(bad["q1"], RecordError) and bad["q1"].line == 2
    assert "outside trec_eval's grades" in str(bad["q1"])


texts = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=12).filter(
    lambda t: t.strip() == t and t
)  # a topic's text as read: no tab, no line break, no blank at either end


@settings(max_examples=40, deadline=None, suppress_health_check=FILES)
@given(first=texts, second=texts, jsonl=st.booleans())
def test_a_topic_given_twice_is_read_once_with_one_text_and_refused_with_two(tmp_path, first, second, jsonl):
    import json

    topics = tmp_path / "topics.txt"
    lines = [("7", first), ("8", "other"), ("7", second)]
    if jsonl:
        topics.write_text("".join(json.dumps({"id": i, "narrative": t}) + "\n" for i, t in lines), encoding="utf-8")
    else:
        topics.write_text("".join(f"{i}\t{t}\n" for i, t in lines), encoding="utf-8")
    if first == second:
        read, bad = read_topics(topics)
        assert read == {"7": first, "8": "other"} and not bad
    else:
        with pytest.raises(ConfigError) as caught:
            read_topics(topics)
        assert str(caught.value) == (
            f"{topics}:3: topic 7 again, with other text than on line 1: keep one line per topic"
        )


def test_the_same_topic_twice_with_other_text_fails_the_task_before_any_example(tmp_path: Path):
    from ragbench.tasks.trec_rag.task import TrecRagTask

    topics, qrels = tmp_path / "topics.tsv", tmp_path / "qrels.txt"
    topics.write_text("1\twhat is a river\n1\twho was a king\n", encoding="utf-8")
    qrels.write_text("1 0 d0 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(f"{topics}:2: topic 1 again")):
        list(TrecRagTask(topics, qrels=str(qrels)).examples())


def test_a_topic_line_nested_too_deeply_is_a_counted_record_naming_it(tmp_path: Path):
    topics = tmp_path / "topics.jsonl"
    topics.write_text('{"id": "7", "narrative": "a river"}\n{"id": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    read, bad = read_topics(topics)
    assert read == {"7": "a river"}
    assert [(error.line, "nested too deeply to parse" in str(error)) for error in bad] == [(2, True)]

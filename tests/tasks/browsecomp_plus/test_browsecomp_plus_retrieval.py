"""browsecomp_plus_retrieval: BrowseComp-Plus's retrieval-only evaluation (`trec_eval -c -m recall.5,100,1000 -m
ndcg_cut.10` against qrel_evidence.txt and qrel_golds.txt, texttron/BrowseComp-Plus 97c637c README), checked
against trec_eval's definitions for binary judgements (nDCG@10: the gain 1/log2(rank + 1) of each relevant
document in the first 10, over the ideal, every relevant document first; Recall@k: the share of the relevant
documents in the first k) on any ranking, and in a run over the sample's corpus."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA
from ragbench.api import Document, Example, Prediction
from ragbench.tasks.browsecomp_plus.retrieval import BrowseCompPlusRetrieval
from ragbench.testing import build_index, installed_registry
from support.helpers import run

SAMPLE = TEST_DATA / "browsecomp_plus" / "sample"
DOCIDS = st.sampled_from([str(n) for n in range(40)])


def dcg(ranking: list[str], relevant: set[str]) -> float:
    return sum(1 / math.log2(rank + 1) for rank, doc in enumerate(ranking[:10], start=1) if doc in relevant)


def by_definition(ranking: list[str], relevant: set[str]) -> dict[str, float]:
    ranking = list(dict.fromkeys(ranking))  # a document shown again counts at its first rank
    ideal = dcg(sorted(relevant), relevant)
    return {
        "ndcg_at_10": dcg(ranking, relevant) / ideal,
        **{f"recall_at_{k}": len(relevant & set(ranking[:k])) / len(relevant) for k in (5, 100, 1000)},
    }


def scores(ranking: list[str], evidence: list[str], gold: list[str]) -> dict:
    example = Example(id="q", question="?", gold={"answers": ["a"], "evidence_docids": evidence, "gold_docids": gold})
    shown = Prediction("q", docs=[Document(id=doc, title="", text="") for doc in ranking])
    return BrowseCompPlusRetrieval().score(example, shown)


@settings(max_examples=200, deadline=None)
@given(
    ranking=st.lists(DOCIDS, max_size=30),
    evidence=st.lists(DOCIDS, min_size=1, max_size=8, unique=True),
    gold=st.lists(DOCIDS, min_size=1, max_size=3, unique=True),
)
def test_any_ranking_scores_as_trec_eval_defines_its_measures(ranking, evidence, gold):
    got = scores(ranking, evidence, gold)
    for prefix, relevant in (("evidence", evidence), ("gold", gold)):
        want = by_definition(ranking, set(relevant))
        assert {key: got[f"{prefix}_{key}"] for key in want} == pytest.approx(want, abs=1e-12)


def test_a_query_without_gold_docids_is_not_one_of_the_gold_qrels_queries():
    got = scores([], ["1"], [])
    assert got["evidence_ndcg_at_10"] == got["evidence_recall_at_1000"] == 0.0  # trec_eval -c: a query the run lacks
    assert {key: value for key, value in got.items() if key.startswith("gold_")} == dict.fromkeys(
        ("gold_ndcg_at_10", "gold_recall_at_5", "gold_recall_at_100", "gold_recall_at_1000"), None
    )


@pytest.fixture(scope="module")
def corpus_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("browsecomp_plus") / "bm25"
    build_index(SAMPLE / "corpus.jsonl", folder, "bm25", progress=False, registry=installed_registry())
    return folder


def retrieval_run(tmp_path, corpus_index, **options) -> dict:
    return run(
        tmp_path,
        tasks=["browsecomp_plus"],
        data={"browsecomp_plus": str(SAMPLE)},
        system="vanilla",
        model="scripted:echo",
        metrics=["browsecomp_plus_retrieval"],
        retriever="bm25",
        retriever_args={"index": str(corpus_index)},
        **options,
    )


def test_a_retrieval_only_run_scores_the_index_ranking_and_counts_a_short_list(tmp_path, corpus_index):
    # bm25 ranks the evidence documents first (11: 102, 101, 103; 12: 204, 205; 13: 307, 308), then the rest of
    # the 8 documents: every evidence nDCG and recall is 1; the gold document (103, 205, 308) is at rank 3, 2, 2
    deep = retrieval_run(tmp_path, corpus_index, system_args={"top_n": 1000})
    values = {key: entry["value"] for key, entry in deep["details"]["browsecomp_plus"].items()}
    assert values == pytest.approx(
        {
            **{f"evidence_{key}": 1.0 for key in ("ndcg_at_10", "recall_at_5", "recall_at_100", "recall_at_1000")},
            "gold_ndcg_at_10": (1 / math.log2(4) + 2 / math.log2(3)) / 3,
            **{f"gold_recall_at_{k}": 1.0 for k in (5, 100, 1000)},
        }
    )
    assert "counted" not in deep  # the whole corpus was shown
    # the top document alone (102, 204, 307): one evidence document of 3, 2, 2 at rank 1; no gold document
    short = retrieval_run(tmp_path, corpus_index, name="short")
    values = {key: entry["value"] for key, entry in short["details"]["browsecomp_plus"].items()}
    assert values["evidence_recall_at_1000"] == pytest.approx((1 / 3 + 1 / 2 + 1 / 2) / 3)
    assert values["gold_recall_at_5"] == 0.0
    assert short["counted"]["browsecomp_plus"]["browsecomp_plus_retrieval"]["shown_short"]["count"] == 3

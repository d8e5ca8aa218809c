"""beir_retrieval against values from running BEIR's EvaluateRetrieval.evaluate and its custom mrr, unmodified
(tests/data/parity/beir.json records the version and how), and the rules it adds for ragbench's rankings."""

from __future__ import annotations

import json
import sys
from statistics import mean

import pytest

from conftest import TEST_DATA
from ragbench.api import ConfigError, Document, Example, Prediction, Preflight, Step
from ragbench.tasks.beir.metrics import BeirRetrieval
from ragbench.tasks.browsecomp_plus.retrieval import BrowseCompPlusRetrieval
from ragbench.tasks.trec_rag.metric import TrecRagRetrieval

PARITY = json.loads((TEST_DATA / "parity" / "beir.json").read_text(encoding="utf-8"))
K = ",".join(map(str, PARITY["k_values"]))
UPSTREAM_NAMES = {"ndcg": "NDCG", "map": "MAP", "recall": "Recall", "p": "P", "mrr": "MRR"}


def shown(ids: list[str], trace: list[Step] | None = None) -> Prediction:
    docs = [Document(id=doc_id, title="", text="") for doc_id in ids]
    return Prediction(example_id="x", docs=docs, trace=trace or [])


def ours(query_id: str) -> dict[str, float]:
    example = Example(id=query_id, question="?", gold={"qrels": PARITY["qrels"][query_id]})
    values = BeirRetrieval(k=K).score(example, shown(PARITY["rankings"][query_id]))
    return {f"{UPSTREAM_NAMES[key.split('_at_')[0]]}@{key.split('_at_')[1]}": value for key, value in values.items()}


@pytest.mark.parametrize("query_id", sorted(PARITY["per_query"]))
def test_each_query_equals_evaluate_retrieval(query_id):
    assert ours(query_id) == pytest.approx(PARITY["per_query"][query_id], abs=5e-6)  # BEIR rounds to 5 decimals


def test_means_equal_evaluate_retrieval():
    per_query = [ours(query_id) for query_id in PARITY["qrels"]]
    assert {name: round(mean(q[name] for q in per_query), 5) for name in per_query[0]} == PARITY["means"]


def test_a_document_shown_twice_counts_at_its_first_rank():
    example = Example(id="q", question="?", gold={"qrels": {"d2": 1}})
    assert BeirRetrieval(k=3).score(example, shown(["d2", "d1", "d2"])) == BeirRetrieval(k=3).score(
        example, shown(["d2", "d1"])
    )


def test_identical_ids_are_kept_when_asked():
    example = Example(id="q", question="?", gold={"qrels": {"q": 1}})
    assert BeirRetrieval(k=1).score(example, shown(["q"]))["ndcg_at_1"] == 0.0
    assert BeirRetrieval(k=1, ignore_identical_ids=False).score(example, shown(["q"]))["ndcg_at_1"] == 1.0


def test_cutoffs_option():
    assert BeirRetrieval(k="10, 1,3").declares.keys[:3] == ("ndcg_at_1", "ndcg_at_3", "ndcg_at_10")
    assert BeirRetrieval(k=5).declares.keys == ("ndcg_at_5", "map_at_5", "recall_at_5", "p_at_5", "mrr_at_5")
    for bad in ("0,5", "ten", ""):
        with pytest.raises(ConfigError, match="expected cut-offs"):
            BeirRetrieval(k=bad)


def test_outputs_without_docs_fail_rather_than_score_zero():
    prediction = shown([])
    prediction.extras["docs_unknown"] = True
    with pytest.raises(ValueError, match='no "docs"'):
        BeirRetrieval().score(Example(id="q", question="?", gold={"qrels": {"d": 1}}), prediction)


class Counting:
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def count(self, event: str, n: int = 1) -> None:
        self.counts[event] = self.counts.get(event, 0) + n


def search(asked: int, ids: list[str]) -> Step:
    return Step("retrieval", "retrieve", {"k": asked}, {"ids": ids})


@pytest.mark.parametrize(
    "depth_shown, trace, counted",
    [
        (10, [search(10, [f"d{i}" for i in range(10)])], False),  # as deep as the deepest cut-off
        (3, [search(10, ["d0", "d1", "d2"])], False),  # the corpus had no more
        (3, [search(3, ["d0", "d1", "d2"])], True),  # asked for fewer than the cut-off
        (1, [search(10, ["d0", "d1", "d2"])], True),  # had three, showed one
        (3, [], True),  # no search recorded (scored from a file)
    ],
)
def test_fewer_documents_than_the_deepest_cutoff_is_counted(depth_shown, trace, counted):
    ctx = Counting()
    BeirRetrieval(k="1,10").score(
        Example(id="q", question="?", gold={"qrels": {"d0": 1}}),
        shown([f"d{i}" for i in range(depth_shown)], trace),
        ctx,
    )
    assert ctx.counts == ({"shown_short": 1} if counted else {})


@pytest.mark.parametrize("metric", [BeirRetrieval, BrowseCompPlusRetrieval, TrecRagRetrieval])
def test_without_pytrec_eval_the_preflight_says_what_to_install(monkeypatch, metric):
    """Every metric that computes with pytrec_eval checks it in one step (ragbench.api.retrieval.check_pytrec_eval),
    naming its task's extra (TREC RAG's the light `trec`)."""
    monkeypatch.setitem(sys.modules, "pytrec_eval", None)  # import fails as when it is not installed
    check = Preflight()
    metric().preflight(check, None)
    assert check.problems == [
        f"metric {metric.name} computes trec_eval's measures with pytrec_eval: pip install "
        f"'ragbench[{'trec' if metric is TrecRagRetrieval else 'beir'}]'"
    ]

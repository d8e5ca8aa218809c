"""Rerankers (`--reranker NAME --reranker-arg k=v`): every search of every system returns the reranked top
k of max(k, retrieval_topk) retrieved passages, in the order of the model's scores (CrossEncoder.predict
called directly), traced as a step; bad options and a missing model path are refused in one line before
the run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import needs
from ragbench.api import ConfigError, Document
from ragbench.api.retrieval import Reranker, passage_text
from ragbench.testing import build_index, cli, installed_registry, load_retriever
from support.component_helpers import TASK, bm25_args, bm25_vanilla_run
from support.component_models import tiny_cross_encoder
from support.helpers import cli_here, samples, viewed
from support.retrieval_samples import WORDS, passages, write_dpr_tsv

pytestmark = needs("bm25s", "sentence_transformers")

QUESTIONS = ["king queen castle", "running river song", "Moses the prophet"]


def cross_encoder() -> type[Reranker]:
    """The class of `--reranker cross_encoder`."""
    found: type[Reranker] = installed_registry().load("rerankers", "cross_encoder")
    return found


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return tiny_cross_encoder(tmp_path_factory.mktemp("cross_encoder"), list(WORDS))


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("bm25")
    corpus = write_dpr_tsv(folder / "psgs.tsv", passages(60))
    build_index(corpus, folder / "index", "bm25", {}, progress=False, registry=installed_registry())
    return folder / "index"


@pytest.fixture
def data(tmp_path) -> Path:
    path = tmp_path / "nq.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": str(i), "question": q, "golden_answers": ["castle"]}) + "\n"
            for i, q in enumerate(QUESTIONS)
        ),
        encoding="utf-8",
    )
    return path


def predicted_order(model: Path, query: str, docs: list[Document], k: int) -> list[tuple[str, float]]:
    """The top k of `docs` as CrossEncoder.predict, called directly, scores them (ties in the given order)."""
    from sentence_transformers import CrossEncoder

    scores = CrossEncoder(str(model)).predict([(query, passage_text(doc)) for doc in docs])
    order = sorted(range(len(docs)), key=lambda i: -scores[i])[:k]
    return [(docs[i].id, float(scores[i])) for i in order]


def test_cross_encoder_orders_documents_by_the_models_own_scores(model):
    docs = passages(30)
    reranker = cross_encoder()(model=str(model))  # type: ignore[call-arg]
    reranker.load()
    for query in QUESTIONS:
        kept = asyncio.run(reranker.rerank(query, docs, 7))
        assert [(doc.id, doc.score) for doc in kept] == predicted_order(model, query, docs, 7)
        original = {doc.id: (rank, doc.score) for rank, doc in enumerate(docs, 1)}
        assert all(
            (doc.metadata["retrieval_rank"], doc.metadata["retrieval_score"]) == original[doc.id] for doc in kept
        )


def test_vanilla_shows_the_reranked_top_k_of_the_bm25_candidates_end_to_end(tmp_path, model, index, data):
    results = bm25_vanilla_run(
        tmp_path, data, index, reranker="cross_encoder", reranker_args={"model": str(model), "retrieval_topk": 12}
    )
    assert results["counts"][TASK]["scored"] == 3 and results["counts"][TASK]["failed"] == 0
    assert results["config"]["reranker"] == "cross_encoder"
    assert results["config"]["reranker_args"] == {"model": str(model), "retrieval_topk": 12}
    assert results["config"]["retriever_metadata"]["reranker"]["model"] == str(model)
    bm25 = load_retriever("bm25", {"index": str(index)})
    pages = viewed(tmp_path / "run", out=tmp_path / "site")  # the viewer's pages, as `ragbench view --export` has them
    [rid] = [key.removeprefix("run/") for key in pages if key.startswith("run/")]
    for sample in samples(tmp_path / "run", TASK):
        candidates = bm25.search([sample["question"]], 12)[0]
        expected = predicted_order(model, sample["question"], candidates, 5)  # the task's top_n: 5
        # exactly: scoring the three examples' pairs in one call changes no score
        assert [(doc["id"], doc["score"]) for doc in sample["prediction"]["docs"]] == expected
        steps = [(step["kind"], step["name"]) for step in sample["trace"]]
        assert steps == [("retrieval", "retrieve"), ("custom", "rerank"), ("llm", "answer")]
        search, rerank = sample["trace"][0], sample["trace"][1]
        assert search["request"]["k"] == 12 and rerank["request"]["k"] == 5
        assert rerank["request"]["candidates"] == [doc.id for doc in candidates]
        assert [doc["id"] for doc in rerank["docs"]] == [doc_id for doc_id, _ in expected]
        page = pages[f"example/{rid}/{TASK}/{sample['index']}"]  # the viewer's example page
        [shown] = [step for step in page["steps"] if step["name"] == "rerank"]
        assert shown["kind"] == "custom" and [doc["id"] for doc in shown["docs"]] == [i for i, _ in expected]
        prompt = sample["trace"][2]["request"]["prompt"]
        titles = [next(d for d in candidates if d.id == doc_id).text for doc_id, _ in expected]
        assert [prompt.index(text) for text in titles] == sorted(prompt.index(text) for text in titles)
    # a replay answers the searches from the recording and reranks them again: the same documents shown
    done = CliRunner().invoke(
        cli, ["--replay", str(tmp_path / "run"), "--output", str(tmp_path / "replayed"), "--no-progress"]
    )
    assert done.exit_code == 0, done.output
    replayed = json.loads((tmp_path / "replayed" / "results.json").read_text(encoding="utf-8"))
    assert replayed["config"]["retriever"] == "replay" and replayed["config"]["reranker"] == "cross_encoder"
    assert [s["prediction"] for s in samples(tmp_path / "replayed", TASK)] == [
        s["prediction"] for s in samples(tmp_path / "run", TASK)
    ]


def test_a_bad_reranker_option_is_one_line_before_anything_is_written(tmp_path, model, index, data):
    for args, expected in (
        (["retrieval_topk=0"], "--reranker-arg retrieval_topk=0: reranker cross_encoder takes an integer >= 1"),
        (["topk=3"], "--reranker-arg topk=3: reranker cross_encoder has no option 'topk'"),
        ([], "model= is required"),
    ):
        out = tmp_path / "out"
        result = cli_here(
            *bm25_args(data, index),
            "--model",
            "scripted:x",
            "--reranker",
            "cross_encoder",
            "--output",
            str(out),
            *[part for arg in args for part in ("--reranker-arg", arg)],
            *(["--reranker-arg", f"model={model}"] if args else []),
            "--no-progress",
        )
        assert result.returncode == 2, result.stderr
        assert expected in result.stderr and "Traceback" not in result.stderr
        assert not out.exists()


def test_a_missing_model_path_is_refused_by_the_preflight_before_anything_loads(tmp_path, index, data, monkeypatch):
    loaded = []
    monkeypatch.setattr(cross_encoder(), "load", lambda self: loaded.append(self))
    missing = tmp_path / "no-such-model"
    with pytest.raises(ConfigError) as caught:
        bm25_vanilla_run(
            tmp_path, data, index, "scripted:x", reranker="cross_encoder", reranker_args={"model": str(missing)}
        )
    message = str(caught.value)
    assert f"reranker cross_encoder: model={missing}: no such file or folder" in message
    assert f"given --reranker-arg model={missing}" in message and "\n" not in message
    assert loaded == [] and not (tmp_path / "run").exists()


def test_reranker_options_without_a_reranker_are_refused_not_dropped(tmp_path, data):
    result = cli_here("check", "--tasks", TASK, "--data", f"{TASK}={data}", "--reranker-arg", "model=x", "--no-model")
    assert result.returncode == 2
    assert "--reranker-arg model: there is no --reranker; name one (ragbench list rerankers)" in result.stderr


def test_an_unknown_reranker_is_named_with_the_listing(tmp_path, data):
    result = cli_here("check", "--tasks", TASK, "--data", f"{TASK}={data}", "--reranker", "cross_encodr", "--no-model")
    assert result.returncode == 2
    assert "unknown reranker 'cross_encodr'; did you mean 'cross_encoder'?" in result.stderr


def test_ragbench_list_shows_rerankers_and_refiners():
    result = cli_here("list", "rerankers")
    assert result.returncode == 0 and "cross_encoder" in result.stdout and "bge_reranker" in result.stdout
    listed = cli_here("list", "refiners").stdout
    assert all(
        name in listed for name in ("longllmlingua", "selective_context", "recomp_extractive", "recomp_abstractive")
    )


class Given(Reranker):
    """Scores the passages in order with `scores`."""

    name = "given"

    def __init__(self, scores: list[float]) -> None:
        self.scores = scores

    def score_pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        return self.scores[: len(pairs)]


@settings(max_examples=60)
@given(scores=st.lists(st.sampled_from([0.0, 1.0, -2.5, 3.25, 1e-9]), max_size=12), k=st.integers(0, 14))
def test_a_rerank_is_a_stable_descending_cut_of_k_that_keeps_the_retrievers_scores(scores, k):
    docs = [Document(id=str(i), title="", text=f"t{i}", score=float(i)) for i in range(len(scores))]
    kept = asyncio.run(Given(scores).rerank("q", docs, k))
    assert len(kept) == min(k, len(docs))
    assert [doc.score for doc in kept] == sorted((doc.score for doc in kept), reverse=True)
    expected = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
    assert [doc.id for doc in kept] == [str(i) for i in expected]
    assert [doc.metadata["retrieval_score"] for doc in kept] == [float(i) for i in expected]
    assert [doc.metadata["retrieval_rank"] for doc in kept] == [i + 1 for i in expected]


def test_a_damaged_model_folder_is_one_line_and_nothing_is_written(tmp_path, model, index, data):
    import shutil

    damaged = Path(shutil.copytree(model, tmp_path / "damaged"))
    weights = damaged / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])  # a download cut short
    out = tmp_path / "out"
    result = cli_here(
        *bm25_args(data, index),
        "--model",
        "scripted:echo",
        "--reranker",
        "cross_encoder",
        "--reranker-arg",
        f"model={damaged}",
        "--output",
        str(out),
        "--no-progress",
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("ragbench")]
    assert "--reranker cross_encoder: its model failed to load" in line and "model=" in line
    assert not out.exists()


def test_resume_refuses_a_run_whose_reranker_model_was_replaced_since_it_started(tmp_path, index, data):
    import shutil

    model = Path(shutil.copytree(tiny_cross_encoder(tmp_path / "first", list(WORDS)), tmp_path / "model"))
    reranker = dict(reranker="cross_encoder", reranker_args={"model": str(model)})
    first = bm25_vanilla_run(tmp_path, data, index, **reranker)
    assert first["config"]["retriever_contents"]["reranker"]["model"]
    # the same model: nothing to do
    assert bm25_vanilla_run(tmp_path, data, index, resume=True, **reranker)["results"] == first["results"]
    tiny_cross_encoder(tmp_path / "second", list(WORDS), seed=1)
    shutil.copy(tmp_path / "second" / "model.safetensors", model / "model.safetensors")  # retrained in place
    with pytest.raises(ConfigError) as caught:
        bm25_vanilla_run(tmp_path, data, index, resume=True, **reranker)
    assert "retriever" in str(caught.value) and "\n" not in str(caught.value)

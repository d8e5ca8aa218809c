"""A RAG run over ViDoRe pages: the `siglip` retriever's pages go to the reader as images, in rank order, each after
its number and id; a model that takes no images is refused at pre-flight; `images=0` names them by id."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import TEST_DATA, needs
from ragbench.api import RecordError
from ragbench.tasks.beir.vidore import ViDoReTask
from support.tiny_vlm import build_tiny_vlm

pytestmark = needs("torch", "transformers")

V2 = TEST_DATA / "vidore" / "v2"
SIGLIP = TEST_DATA / "vidore" / "tiny-siglip"


def siglip_args(tmp_path: Path) -> dict[str, str]:
    return {"pages": str(V2), "index": str(tmp_path / "index"), "model": str(SIGLIP)}


def retrieved(tmp_path: Path, questions: list[str], k: int) -> dict[str, list[tuple[str, str]]]:
    """Each question's top `k` pages, (id, image digest), as the siglip retriever ranks them."""
    from ragbench.testing import load_retriever

    hits = load_retriever("siglip", siglip_args(tmp_path)).search(questions, k)
    return {q: [(doc.id, doc.image.digest) for doc in row if doc.image] for q, row in zip(questions, hits)}


def questions() -> list[str]:
    return [e.question for e in ViDoReTask(V2).examples() if not isinstance(e, RecordError)]


def test_the_reader_gets_the_top_retrieved_pages_images_in_rank_order(tmp_path):
    from ragbench.testing import ScriptedLLM, run_eval

    model = ScriptedLLM("-")
    result = run_eval(
        "vidore",
        "vanilla",
        model,
        data=str(V2),
        retriever="siglip",
        retriever_args=siglip_args(tmp_path),
        system_args={"top_n": 4},
        task_args={"images": 2},
    )
    expected = retrieved(tmp_path, questions(), 4)
    assert len(model.requests) == len(expected) == 4
    for request in model.requests:
        (turn,) = request.messages
        question = turn.parts[-1].removeprefix("Question: ").removesuffix("\nAnswer:")
        read = expected[question][:2]  # the top 2 pages as images
        assert [image.digest for image in request.sent_images] == [digest for _, digest in read]
        shown = [f"[{n}] page {page}" for n, (page, _) in enumerate(read, start=1)]
        assert [p if isinstance(p, str) else p.digest for p in turn.parts[:-1]] == [
            part for pair in zip(shown, (digest for _, digest in read)) for part in pair
        ]  # each page's number and id, then its image
    answered = [sample for sample in result.samples["vidore"] if sample.question]  # not qrels' unknown query 9
    assert len(answered) == 4
    for sample in answered:  # the figures score every page retrieved
        assert [doc.id for doc in sample.docs] == [page for page, _ in expected[sample.question]]
        assert sample.extras == {"docs_read": 2}  # the reader was sent the top 2
    # the summary counts what was sent: 2 pages a question (it said 4, the pages the sample keeps for the figures)
    assert result.results["budget"]["vidore"]["passages_shown"] == 2.0


def test_a_text_model_is_refused_before_the_run_unless_the_pages_are_named_by_id(tmp_path):
    from ragbench.testing import PreflightError, ScriptedLLM, preflight, run_eval

    args = {"data": str(V2), "retriever": "siglip", "retriever_args": siglip_args(tmp_path)}
    with pytest.raises(PreflightError) as caught:
        preflight("vidore", "vanilla", "hf:embedded", **args)
    (problem,) = caught.value.problems
    assert problem.startswith("--model hf:embedded: vanilla on vidore sends the model images: embedded takes no images")
    assert problem.endswith("; or --task-arg vidore.images=0 (the pages named by id as text: the figures are the same)")
    preflight("vidore", "vanilla", "hf:embedded", task_args={"images": 0}, **args)
    model = ScriptedLLM("-")
    result = run_eval("vidore", "vanilla", model, task_args={"images": 0}, system_args={"top_n": 2}, **args)
    assert all(not r.sent_images and r.prompt.startswith("[1] page ") for r in model.requests)
    assert result.results["budget"]["vidore"]["passages_shown"] == 2.0  # every page named, by id


def test_a_tiny_vlm_reads_the_retrieved_pages_end_to_end(tmp_path):
    from ragbench.testing import run_eval

    vlm = build_tiny_vlm(tmp_path / "tiny-llava")
    result = run_eval(
        "vidore",
        "vanilla",
        f"hf:{vlm}",
        data=str(V2),
        limit=3,
        retriever="siglip",
        retriever_args=siglip_args(tmp_path),
        system_args={"top_n": 2, "max_tokens": 3},
        model_args={"device": "cpu"},
    )
    samples = result.samples["vidore"]
    expected = retrieved(tmp_path, [s.question for s in samples], 2)
    assert len(samples) == 3 and all(s.error is None and s.answer for s in samples)
    for sample in samples:
        (answer,) = [step for step in sample.trace if step.kind == "llm"]
        parts = answer.request["messages"][0]["content"]
        sent = [part["image"]["sha256"] for part in parts if part["type"] == "image"]
        assert sent == [digest for _, digest in expected[sample.question]] and [d.id for d in sample.docs] == [
            page for page, _ in expected[sample.question]
        ]
        assert answer.prompt_tokens > 2 * 5  # the processor's image tokens: 2x2 patches and CLS a page
    assert "ndcg_at_5" in result.results["details"]["vidore"]


@pytest.mark.parametrize("retriever", ["bm25", "provided", None])
def test_a_retriever_of_text_passages_is_refused_with_the_retrievers_that_search_pages(retriever):
    """bm25's advice (build a text index from a corpus file) cannot work on ViDoRe: its passages are page images."""
    from ragbench.testing import PreflightError, preflight

    with pytest.raises(PreflightError) as caught:
        preflight("vidore", "vanilla", "hf:embedded", data=str(V2), retriever=retriever, task_args={"images": 0})
    (problem,) = caught.value.problems
    assert problem == (
        f"task vidore: its corpus is the dataset's pages (images), which retriever {retriever or 'provided'} does not "
        "search: none of its passages is a page, so system vanilla would retrieve no page the gold names; retrieve "
        "pages with --retriever colpali (or siglip) --retriever-arg pages=FOLDER --retriever-arg model=MODEL_FOLDER "
        "--retriever-arg index=INDEX_FOLDER (docs/benchmarks/vidore.md)"
    )

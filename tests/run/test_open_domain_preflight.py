"""A system that retrieves, on a task whose examples carry no documents of their own, with a retriever that
can only return an example's own documents, would answer closed book under its own name: the pre-flight
refuses the run in one line naming the task, the system and the fix; `--retriever none` asks for it."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragbench.tasks.flashrag
from conftest import TEST_DATA
from ragbench.testing import PreflightError, Registry, installed_registry, preflight
from support.helpers import cli_here

REGISTRY = Registry.discover()
NQ = str(TEST_DATA / "open_qa" / "NQ-open.dev.jsonl")
WITHOUT_DOCUMENTS = {
    "nq_open",
    "trec_rag24",  # its corpus is the MS MARCO v2.1 segments, searched through an index
    "trec_rag25",
    "nq_open_flashrag",
    "triviaqa",
    "triviaqa_flashrag",
    "webquestions",
    "webquestions_flashrag",
    "hotpotqa_fullwiki",
    "musique_flashrag",
    "squad",
    "omnieval_auto",
    "omnieval_human",
    *(
        f"kilt_{name}"
        for name in ("nq", "hotpotqa", "triviaqa", "zsre", "trex", "fever", "aidayago2", "wned", "cweb", "eli5", "wow")
    ),
    "multihop_rag",
    *(f"mirage_{name}" for name in ("mmlu", "medqa", "medmcqa", "pubmedqa", "bioasq")),
    "beir",
    "vidore",
    "crag_mm_single",  # its web search is the mock search API's (not a retriever of ragbench's yet)
    "crag_mm_multi",
    "browsecomp_plus",
    "frames",
    "freshqa",
    "ragchecker",
    "fictional_multihop",
    "deep_research_bench",
    "dragun_report",
    "dragun_questions",
    "argue_report",
    *(path.stem for path in Path(ragbench.tasks.flashrag.__file__).parent.glob("*.yaml")),
}


def check(tmp_path, **options):
    options = {"system": "vanilla", **options}
    return preflight("nq_open", data=NQ, model="scripted:echo", output=tmp_path / "run", registry=REGISTRY, **options)


def test_every_builtin_task_says_whether_its_examples_carry_documents():
    builtin = [name for name in REGISTRY.names("tasks") if REGISTRY.entries["tasks"][name].provider == "ragbench"]
    declared = {name: REGISTRY.load("tasks", name)().own_documents for name in builtin}
    assert None not in declared.values()
    assert {name for name, own in declared.items() if not own} == WITHOUT_DOCUMENTS


@pytest.mark.parametrize("retriever", [None, "provided", "example_bm25", "example_dense"])
@pytest.mark.parametrize("system", ["vanilla", "llatrieval", "selfrag", "smart"])
def test_a_retrieving_system_without_documents_to_find_is_refused_before_the_run(tmp_path, system, retriever):
    with pytest.raises(PreflightError) as refused:
        check(tmp_path, system=system, retriever=retriever)
    (problem,) = refused.value.problems
    assert problem.startswith("task nq_open: its examples carry no documents") and "\n" not in problem
    assert f"retriever {retriever or 'provided'} returns only an example's own" in problem
    assert f"system {system} would answer closed book" in problem
    for fix in (
        "--retriever bm25|dense --retriever-arg index=DIR",
        "--system closed_book",
        f"--retriever none to run {system} without documents",
    ):
        assert fix in problem


@pytest.mark.parametrize("retriever", ["provided", "example_bm25"])
def test_a_task_that_ships_its_corpus_names_leaving_the_retriever_out_as_the_first_fix(tmp_path, retriever):
    with pytest.raises(PreflightError) as refused:
        preflight(
            "fictional_multihop", "vanilla", "scripted:echo", retriever=retriever, output=tmp_path, registry=REGISTRY
        )
    (problem,) = refused.value.problems
    assert "would answer closed book; leave --retriever out to search the corpus it ships (corpus.jsonl, BM25)" in (
        problem
    )
    with pytest.raises(PreflightError) as no_corpus:  # nq_open ships none: the fix is not offered
        check(tmp_path, system="vanilla", retriever=retriever)
    assert "leave --retriever out" not in no_corpus.value.problems[0]


def test_tasks_of_different_corpora_with_no_retriever_get_one_problem_that_says_so(tmp_path):
    with pytest.raises(PreflightError) as refused:
        preflight(["fictional_multihop", "demo"], "vanilla", "scripted:echo", output=tmp_path, registry=REGISTRY)
    (problem,) = refused.value.problems
    assert problem.startswith("tasks search different corpora with no --retriever")


@pytest.mark.parametrize(
    "options",
    [
        {"system": "closed_book"},  # shows no documents by design
        {"system": "vanilla", "retriever": "none"},  # asked for: no documents, on purpose
        {"system": "selfrag", "system_args": {"mode": "no_retrieval"}},  # the system's own option turns retrieval off
        {"system": "smart", "system_args": {"agents": "generator_only"}},
        {"system": "recorded", "system_args": {"path": NQ}},  # outputs made elsewhere
    ],
    ids=["closed_book", "retriever_none", "selfrag_no_retrieval", "smart_generator_only", "recorded"],
)
def test_a_run_that_asks_for_no_documents_passes(tmp_path, options):
    check(tmp_path, **options)


def test_a_corpus_retriever_passes(tmp_path):
    from ragbench.testing import build_index

    build_index(
        TEST_DATA / "open_qa" / "varn_corpus.jsonl",
        tmp_path / "index",
        "bm25",
        progress=False,
        registry=installed_registry(),
    )
    check(tmp_path, system="vanilla", retriever="bm25", retriever_args={"index": str(tmp_path / "index")})


def test_squad_is_open_domain_unless_it_shows_its_own_paragraph(tmp_path):
    dev = tmp_path / "dev-v1.1.json"
    dev.write_text(
        '{"data": [{"title": "T", "paragraphs": [{"context": "c", "qas": [{"id": "1", "question": "q?", '
        '"answers": [{"text": "c"}]}]}]}]}'
    )
    options = {"data": dev, "system": "smart", "model": "scripted:echo", "registry": REGISTRY}
    with pytest.raises(PreflightError, match="task squad: its examples carry no documents"):
        preflight("squad", output=tmp_path / "a", **options)
    preflight("squad", output=tmp_path / "b", task_args={"passages": "context"}, **options)


def test_ragbench_check_names_the_problem_in_one_line(tmp_path):
    done = cli_here(
        "check",
        "--tasks",
        "nq_open",
        "--data",
        f"nq_open={NQ}",
        "--model",
        "scripted:echo",
        "--no-model",
        "--output",
        str(tmp_path / "run"),
    )
    assert done.returncode == 2 and not (tmp_path / "run").exists()
    assert done.stderr.startswith("ragbench: error: task nq_open: its examples carry no documents")
    assert len(done.stderr.strip().splitlines()) == 1

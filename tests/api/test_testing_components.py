"""ragbench.testing's components by name: an engine from its `engine:model`, an index built and a retriever made by
the name of its kind, each from the installed plugins unless a test gives its own registry; the `ragbench` command
run in this process; `run_eval` in a test's own registry, and the pre-flight's refusal it raises; a task's scores
aggregated from sample records (`task_results`) as a run aggregates them."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragbench.api import ConfigError, CorpusValue, Metric, MetricDeclaration, Prediction, SampleRecord, System
from ragbench.api.engines import Request
from ragbench.api.retrieval import Retriever
from ragbench.api.run import finished_run
from ragbench.testing import (
    PreflightError,
    Registry,
    build_index,
    cli,
    installed_registry,
    load_engine,
    load_retriever,
    run_eval,
    task_results,
)

PASSAGES = [
    {"id": "1", "title": "Madrid", "text": "Madrid is the capital of Spain."},
    {"id": "2", "title": "Paris", "text": "Paris is the capital of France."},
    {"id": "3", "title": "Lima", "text": "Lima is the capital of Peru."},
]


class FirstPassage(Retriever):
    """A retriever kind of the test's own (it finds nothing)."""

    name = "first_passage"

    def search(self, queries, k):
        return [[] for _ in queries]


class Shout(System):
    """A system of the test's own: the question in capitals."""

    name = "shout"

    async def run(self, example, ctx):
        return Prediction(example_id=example.id, answer=example.question.upper())


def own_registry() -> Registry:
    registry = installed_registry()
    registry.add_catalog(
        {
            "retrievers": {"first_passage": {"target": f"{__name__}:FirstPassage"}},
            "systems": {"shout": {"target": f"{__name__}:Shout"}},
        },
        "tests",
    )
    return registry


def test_an_index_is_built_and_searched_by_the_name_of_its_kind(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(passage) + "\n" for passage in PASSAGES), encoding="utf-8")
    manifest = build_index(corpus, tmp_path / "index", "bm25", progress=False)
    assert (manifest.retriever, manifest.doc_count, manifest.bad_records) == ("bm25", 3, 0)
    [hits] = load_retriever("bm25", {"index": str(tmp_path / "index")}).search(["capital of France"], k=1)
    assert [document.id for document in hits] == ["2"]


def test_a_kind_of_the_tests_own_registry_is_found_there_only():
    assert isinstance(load_retriever("first_passage", registry=own_registry()), FirstPassage)
    with pytest.raises(ConfigError, match="first_passage"):
        load_retriever("first_passage")


def test_an_engine_is_made_from_its_engine_and_model():
    [response] = load_engine("scripted:echo").generate([Request(prompt="Question: where?\nAnswer: here")])
    assert response.texts == ["Answer: here"]
    with pytest.raises(ConfigError, match="engine:model"):
        load_engine("echo")


def test_the_ragbench_command_runs_in_this_process():
    listed = CliRunner().invoke(cli, ["list", "systems"])
    assert listed.exit_code == 0 and "vanilla" in listed.output
    refused = CliRunner().invoke(cli, ["--tasks", "no_such_task", "--model", "scripted:echo"])
    assert refused.exit_code == 2 and "no_such_task" in refused.output


def test_the_ragbench_command_runs_with_the_tests_own_registry_given_as_its_obj(tmp_path):
    assert "shout" in CliRunner().invoke(cli, ["list", "systems"], obj=own_registry()).output
    assert "shout" not in CliRunner().invoke(cli, ["list", "systems"]).output
    args = ["--tasks", "demo", "--system", "shout", "--model", "scripted:echo", "--limit", "2", "--no-progress"]
    ran = CliRunner().invoke(cli, [*args, "--output", str(tmp_path / "run")], obj=own_registry())
    assert ran.exit_code == 0, ran.output
    samples = list(finished_run(tmp_path / "run", "test").records("demo"))
    assert [sample.answer for sample in samples] == [sample.question.upper() for sample in samples] and samples


def test_run_eval_runs_in_the_tests_own_registry_and_raises_the_preflights_refusal(tmp_path):
    run = run_eval("demo", "shout", limit=2, registry=own_registry())
    assert run.complete and [sample.answer for sample in run.samples["demo"]] == [
        sample.question.upper() for sample in run.samples["demo"]
    ]
    with pytest.raises(PreflightError) as refused:
        run_eval("demo", data=tmp_path / "missing.jsonl")
    assert isinstance(refused.value, ConfigError) and len(refused.value.problems) == 1
    assert "missing.jsonl" in refused.value.problems[0]


class Longest(Metric):
    """A corpus key beside the per-example one: the longest answer's length."""

    name = "longest"
    declares = MetricDeclaration(keys=("chars",), corpus_keys=("longest",))

    def score(self, example, prediction, ctx=None):
        return {"chars": float(len(prediction.answer))}

    def corpus(self, samples, seed):
        return {"longest": CorpusValue(max(s.scores["chars"] for s in samples), len(samples))}


def test_task_results_aggregates_sample_records_as_a_run_does():
    lines = [{"id": str(i), "error": None, "scores": {"chars": float(n)}} for i, n in enumerate([2, 4, 9])]
    lines.append({"id": "3", "error": "EngineError: down", "scores": {}})
    sections = task_results([SampleRecord.from_dict(line) for line in lines], [Longest()], expected=5, iterations=50)
    assert sections["results"] == {"chars": 5.0, "longest": 9.0}
    assert sections["details"]["chars"]["n"] == 3 and len(sections["details"]["chars"]["ci95"]) == 2
    counts = sections["counts"]
    assert (counts["records"], counts["scored"], counts["failed"], counts["missing"]) == (4, 3, 1, 1)

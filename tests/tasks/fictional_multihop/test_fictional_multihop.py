"""fictional_multihop: the shipped multi-hop task over its own corpus (tasks/fictional_multihop), searched with a
BM25 index ragbench builds on first use when a run names no retriever (ragbench._run.plan.task_corpus)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import needs
from ragbench.api.engines import Request
from ragbench.testing import PreflightError
from support import paths
from support.helpers import cli_here, run, samples

pytestmark = needs("bm25s")  # not imported while the tests are collected

ROOT = paths.REPO
DATA = ROOT / "tasks" / "fictional_multihop" / "data"
TASK = "fictional_multihop"
INDEX_CACHE_ENV = "RAGBENCH_INDEX_CACHE"  # where the index of a shipped corpus is built (docs/running.md)


def passage_fact(request: Request) -> str:
    """A model that answers IRCoT's thought from the prompt: the last sentence of the first passage shown for
    the question asked (after the worked examples), e.g. "Rufea works for Viodrou Institute", the bridge."""
    asked = (request.prompt or request.messages[-1][1]).rsplit("\n\n\n\n", 1)[-1]
    first = re.search(r"Wikipedia Title: [^\n]*\n([^\n]*)", asked)
    return first.group(1).rstrip(".").rsplit(". ", 1)[-1] if first else "So the answer is: none"


@pytest.fixture
def index_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "indexes"
    monkeypatch.setenv(INDEX_CACHE_ENV, str(folder))
    return folder


def test_the_generator_writes_the_committed_files_byte_for_byte(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_fictional_multihop.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    for name in ("corpus.jsonl", "questions.jsonl"):
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name


def test_every_supporting_passage_is_in_the_corpus_and_names_are_unique() -> None:
    corpus = [json.loads(line) for line in (DATA / "corpus.jsonl").read_text().splitlines()]
    ids = {row["id"] for row in corpus}
    assert len(ids) == len(corpus) and len({row["title"] for row in corpus}) == len(corpus)
    questions = [json.loads(line) for line in (DATA / "questions.jsonl").read_text().splitlines()]
    assert all(set(q["supporting_ids"]) <= ids for q in questions)
    assert [q["type"] for q in questions[:5]] == [
        "bridge_2hop",
        "founder_2hop",
        "bridge_3hop",
        "compare_people",
        "compare_orgs",
    ]  # any --limit of 5 or more holds every type


def test_ircot_searches_results_that_differ_from_the_first_with_no_retriever_named(
    tmp_path: Path, index_cache: Path
) -> None:
    results = run(tmp_path, tasks=[TASK], system="ircot", model=f"scripted:{__name__}:passage_fact", limit=5)
    assert results["config"]["retriever"] == "bm25"
    for record in samples(tmp_path / "run", TASK):
        searches = [step["response"]["ids"] for step in record["trace"] if step["kind"] == "retrieval"]
        assert len(searches) > 1 and any(ids != searches[0] for ids in searches[1:]), record["id"]
    recall = results["results"][TASK]["support_recall"]
    assert recall > 0.5  # the bridge passage is found by the second search


def test_vanilla_runs_on_the_same_index_and_is_scored_on_em_f1_and_support(tmp_path: Path, index_cache: Path) -> None:
    run(tmp_path, name="ircot", tasks=[TASK], system="ircot", model="scripted:echo", limit=2)
    built = sorted(index_cache.iterdir())
    results = run(tmp_path, name="vanilla", tasks=[TASK], system="vanilla", model="scripted:echo", limit=2)
    assert sorted(index_cache.iterdir()) == built  # built once, found again by the corpus's content
    assert set(results["results"][TASK]) >= {"em", "f1", "support_recall"}
    assert results["complete"]


def test_the_index_is_keyed_by_the_corpus_bytes_and_the_corpus_is_only_read(tmp_path: Path, index_cache: Path) -> None:
    before = hashlib.sha256((DATA / "corpus.jsonl").read_bytes()).hexdigest()
    run(tmp_path, tasks=[TASK], system="vanilla", model="scripted:echo", limit=1)
    assert [p.name for p in index_cache.iterdir()] == [f"bm25-{before}"]
    assert hashlib.sha256((DATA / "corpus.jsonl").read_bytes()).hexdigest() == before


def test_tasks_with_different_corpora_and_no_retriever_are_a_preflight_problem(
    tmp_path: Path, index_cache: Path
) -> None:
    with pytest.raises(PreflightError, match="tasks search different corpora with no --retriever"):
        run(tmp_path, tasks=[TASK, "demo"], system="vanilla", model="scripted:echo", limit=1)
    assert not index_cache.exists()


def test_a_named_retriever_is_used_instead_of_the_task_corpus(tmp_path: Path, index_cache: Path) -> None:
    with pytest.raises(PreflightError, match="carry no documents"):
        run(tmp_path, tasks=[TASK], system="vanilla", model="scripted:echo", limit=1, retriever="provided")


def test_a_run_over_the_task_corpus_resumes_as_the_same_run(tmp_path: Path, index_cache: Path) -> None:
    first = run(tmp_path, tasks=[TASK], system="vanilla", model="scripted:echo", limit=1)
    resumed = run(tmp_path, tasks=[TASK], system="vanilla", model="scripted:echo", limit=1, resume=True)
    assert resumed["config"]["retriever_args"] == first["config"]["retriever_args"]
    assert [record["id"] for record in samples(tmp_path / "run", TASK)] == ["q0000"]


def test_a_resume_after_the_shipped_corpus_changed_names_the_corpus_not_options(
    tmp_path: Path, index_cache: Path
) -> None:
    options, corpus = own_corpus_task(tmp_path)
    run(tmp_path, **options)
    with corpus.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "new", "title": "New", "text": "A passage added."}) + "\n")
    with pytest.raises(PreflightError) as refused:
        run(tmp_path, resume=True, **options)
    (problem,) = refused.value.problems
    assert problem.startswith(f"--resume: {tmp_path / 'run'}: ") and "corpus.jsonl changed since the run started" in (
        problem
    )
    assert "restore the file, --overwrite runs it again, or choose a new --output" in problem


def test_a_run_resumes_and_keeps_its_folder_name_when_the_index_cache_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = {"tasks": [TASK], "system": "vanilla", "model": "scripted:echo", "limit": 1}
    monkeypatch.setenv(INDEX_CACHE_ENV, str(tmp_path / "first"))
    run(tmp_path, **options)
    monkeypatch.setenv(INDEX_CACHE_ENV, str(tmp_path / "moved"))  # another machine's, or $RAGBENCH_INDEX_CACHE set
    run(tmp_path, resume=True, **options)
    assert [record["id"] for record in samples(tmp_path / "run", TASK)] == ["q0000"]
    key = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["identity"]["retriever_args"]
    assert key == {"index": f"bm25-{hashlib.sha256((DATA / 'corpus.jsonl').read_bytes()).hexdigest()}"}


def test_compare_names_no_difference_between_runs_over_one_index_in_caches_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b"):
        monkeypatch.setenv(INDEX_CACHE_ENV, str(tmp_path / f"cache_{name}"))
        run(tmp_path, name=name, tasks=[TASK], system="vanilla", model="scripted:echo", limit=1)
    shown = cli_here("compare", str(tmp_path / "a"), str(tmp_path / "b"))
    assert shown.returncode == 0, shown.stderr
    assert "settings that differ: none" in shown.stdout and "decoding as sent that differs" not in shown.stdout


def test_ircot_whose_thoughts_come_out_empty_gets_no_passages_for_them_and_they_are_counted(
    tmp_path: Path, index_cache: Path
) -> None:
    """A model whose every thought is empty (or stopwords alone) searches with it: the BM25 index returns nothing,
    not the corpus's first five passages at score 0 shown to the reader, and results.json counts those searches."""
    rules = tmp_path / "thoughts.json"
    rules.write_text(json.dumps([{"pattern": "Wikipedia Title", "response": "the of and"}]))
    results = run(tmp_path, tasks=[TASK], system="ircot", model=f"scripted:{rules}", limit=2)
    work, budget = results["repeated_work"][TASK], results["budget"][TASK]
    assert work["searches"] == 2 * 6 and work["empty_results"] == 2 * 5  # the question's search finds passages
    assert budget["passages_retrieved"] == budget["passages_shown"] == 5.0  # the question's five alone
    lines = samples(tmp_path / "run", TASK)
    searches = [step for step in lines[0]["trace"] if step["kind"] == "retrieval"]
    assert [step["request"]["query"] for step in searches[1:]] == ["the of and"] * 5
    assert [len(step["response"]["ids"]) for step in searches] == [5, 0, 0, 0, 0, 0]


def test_an_estimate_over_the_task_corpus_continues_its_pilot_in_the_folder_the_corpus_names(
    tmp_path: Path, index_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no --output the folder's name hashes the retriever the task's corpus gives: the second estimate finds the
    first one's pilot there and continues it (it was once looked for under the name without that retriever, then
    refused as a folder that already holds a run)."""
    monkeypatch.chdir(tmp_path)
    options = ("--tasks", TASK, "--system", "vanilla", "--model", "scripted:echo", "--limit", "2", "--no-progress")
    for _ in range(2):
        done = cli_here("--estimate", *options)
        assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "runs").iterdir()
    assert json.loads((folder / "run.json").read_text(encoding="utf-8"))["identity"]["retriever"] == "bm25"


def test_the_run_s_config_names_the_corpus_and_the_given_config_is_left_as_it_was(
    tmp_path: Path, index_cache: Path
) -> None:
    from dataclasses import replace

    from ragbench._run.evaluator import Evaluator, RunConfig
    from ragbench._run.plan.planning import run_registry

    given = RunConfig.of(tasks=[TASK], system="vanilla", model="scripted:echo", limit=1)
    before = replace(given)
    plan = Evaluator(given, run_registry(given.what)).plan
    assert (
        given == before
    )  # a value: what the pre-flight settled is the run's own config, not written into the caller's
    assert (plan.config.retrieval.retriever, plan.config.retrieval.shipped_corpus_index) == ("bm25", True)
    assert plan.run_dir.path == plan.config.run_dir() != given.run_dir()


def test_a_fault_of_the_disk_names_how_to_go_on_in_the_folder_the_corpus_names(
    tmp_path: Path, index_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command line's line for a fault during the run reads the run's folder from the run (with no --output,
    named by the retriever the task's corpus gives), not from the options it was given: where that folder holds the
    run, `--resume` is the way on."""
    import errno

    from ragbench._run.evaluator import Evaluator

    monkeypatch.chdir(tmp_path)
    options = ("--tasks", TASK, "--system", "vanilla", "--model", "scripted:echo", "--limit", "1", "--no-progress")
    assert cli_here(*options).returncode == 0

    def full_disk(self: Evaluator) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(self.run_dir.path / "samples"))

    monkeypatch.setattr(Evaluator, "run", full_disk)
    done = cli_here(*options, "--resume")
    assert done.returncode == 1
    assert done.stderr.strip().endswith("then run the same command with --resume (what finished is saved)")


def own_corpus_task(tmp_path: Path) -> tuple[dict, Path]:
    """A YAML task of two questions over a copy of fictional_multihop's corpus (`corpus:`): the run's options and
    the corpus file."""
    lines = (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "questions.jsonl").write_text("".join(lines[:2]), encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes((DATA / "corpus.jsonl").read_bytes())
    (tmp_path / "mine.yaml").write_text(
        "task: mine\ndata: {path: questions.jsonl}\ncorpus: corpus.jsonl\nfields: {gold: {answers: answers}}\n"
        "prompt: {style: flashrag}\nmetrics: [em]\n",
        encoding="utf-8",
    )
    return {"tasks": [str(tmp_path / "mine.yaml")], "system": "vanilla", "model": "scripted:echo"}, corpus


def test_a_run_reads_its_corpus_once_to_name_its_index(
    tmp_path: Path, index_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pre-flight names the index by the corpus's sha256 and the run builds or opens that folder: the corpus
    (gigabytes, for a task that ships wiki-18) is hashed once, and once more by a build for its manifest."""
    import ragbench._retrieval.corpus.identity as identity

    options, corpus = own_corpus_task(tmp_path)
    hashed: list[Path] = []
    real_sha256 = identity.file_sha256
    monkeypatch.setattr(identity, "file_sha256", lambda path: hashed.append(Path(path)) or real_sha256(path))
    run(tmp_path, name="first", **options)
    assert hashed == [corpus, corpus]  # was 4: the pre-flight, the build's check of it, the cache, the manifest
    hashed.clear()
    run(tmp_path, name="second", **options)
    assert hashed == [corpus]  # was 3


def test_a_corpus_changed_after_the_pre_flight_named_its_index_is_not_built_under_that_name(
    tmp_path: Path, index_cache: Path
) -> None:
    from ragbench._errors import ConfigError
    from ragbench._run.evaluator import Evaluator, RunConfig
    from ragbench._run.plan.planning import run_registry

    options, corpus = own_corpus_task(tmp_path)
    config = RunConfig.of(output=str(tmp_path / "run"), progress=False, **options)
    evaluator = Evaluator(config, run_registry(config.what))
    with corpus.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "new", "title": "New", "text": "A passage added."}) + "\n")
    with pytest.raises(ConfigError, match=r"corpus .*corpus.jsonl changed since the run named its index \(by sha256"):
        evaluator.run()
    assert not list(index_cache.glob("*/manifest.json"))  # no index named by bytes it does not hold

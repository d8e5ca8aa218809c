"""Runs that never lose or silently mis-score an example: checkpoint keys, cut lines, completeness,
resume of failures, no silent overwrite, dispatcher failures, shared caches, seeds, folded failures."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import signal
from pathlib import Path

import pytest

from conftest import write_jsonl
from ragbench._records import saved_lines
from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench._run.lifetime.interrupted import RunInterrupted
from ragbench._run.models import run_engines
from ragbench._scheduler import Scheduler
from ragbench._stop_signals import raise_stop
from ragbench._storage.cache import ResponseCache
from ragbench._storage.jsonl import open_append
from ragbench._storage.rundir import RunDir
from ragbench._storage.sample_files import iter_samples
from ragbench.api import (
    ConfigError,
    EngineError,
    Example,
    Metric,
    MetricDeclaration,
    Prediction,
    System,
    SystemDeclaration,
    Task,
    TaskPrompting,
    TaskScoring,
)
from ragbench.api.engines import Engine, Request, Response, Sampling
from ragbench.testing import installed_registry
from support.helpers import cli, cli_here, run, samples, task_counts, task_run_args


def popqa_run(tmp_path: Path, data: Path, system: str = "vanilla", model: str = "scripted:echo", **config) -> dict:
    """A run of the popqa task on `data`: a vanilla system on the echoing scripted model unless told otherwise."""
    return run(tmp_path, tasks=["popqa"], system=system, model=model, data={"popqa": str(data)}, **config)


def popqa(tmp_path, n=4, ids=None):
    ids = ids or [f"q{i}" for i in range(n)]
    return write_jsonl(
        tmp_path / "popqa.jsonl",
        [
            {
                "id": i,
                "question": f"Who is {i}?",
                "answers": [f"ans {i}"],
                "ctxs": [{"id": "d", "title": "T", "text": "x"}],
            }
            for i in ids
        ],
    )


# --- checkpoint files -----------------------------------------------------------------------------


def test_a_line_cut_at_any_byte_never_glues_onto_the_next_append(tmp_path):
    whole = json.dumps({"id": "a", "index": 0}) + "\n"
    for cut in range(1, len(whole)):
        path = tmp_path / f"cut{cut}.jsonl"
        path.write_text(whole[:cut])
        with open_append(path) as handle:
            handle.write({"id": "b", "index": 1})
        lines = path.read_text().splitlines()
        assert json.loads(lines[-1]) == {"id": "b", "index": 1}, cut
        if cut < len(whole) - 1:
            assert len(lines) == 2  # the cut line alone, unreadable, then the new whole one


def test_a_killed_run_cut_mid_line_is_resumed_to_every_example(tmp_path):
    data = popqa(tmp_path, n=6)
    popqa_run(tmp_path, data)
    sample_file = tmp_path / "run" / "samples" / "popqa.jsonl"
    text = sample_file.read_text()
    lines = text.splitlines(keepends=True)
    cut_at = len("".join(lines[:3])) + len(lines[3]) // 2  # the kill: three records, the fourth cut mid-line
    sample_file.write_text(text[:cut_at])
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    meta["finished"] = False
    (tmp_path / "run" / "run.json").write_text(json.dumps(meta))
    results = popqa_run(tmp_path, data, resume=True)
    assert results["complete"] and results["counts"]["popqa"]["records"] == 6
    assert [r["id"] for r in samples(tmp_path / "run", "popqa")] == [f"q{i}" for i in range(6)]
    [repair] = results["checkpoint_repairs"]["popqa"]
    assert repair.startswith(f"{sample_file}:4: line cut short at column")


class QuestionPrompting(TaskPrompting):
    def build_prompt(self, example, docs=None, **options):
        return example.question


class NoIndexTask(Task):
    """A third-party task that leaves Example.index at its default."""

    name = "no_index"
    scoring = TaskScoring(metrics=("match",))
    prompting = QuestionPrompting()

    def examples(self):
        for i in range(5):
            yield Example(id=f"e{i}", question=f"q{i}", gold={"answers": [f"q{i}"]})


def test_examples_are_keyed_by_id_so_a_task_need_not_number_them(tmp_path):

    registry = installed_registry()
    registry.entries["tasks"]["no_index"] = registry.entries["tasks"]["demo"].__class__(
        kind="tasks", name="no_index", target="test_run_integrity:NoIndexTask"
    )
    results = run(tmp_path, registry=registry, tasks=["no_index"], system="closed_book", model="scripted:echo")
    assert results["counts"]["no_index"] == task_counts(5, 5)
    assert [r["index"] for r in samples(tmp_path / "run", "no_index")] == [0, 1, 2, 3, 4]


def test_a_repeated_example_id_is_a_bad_record_not_a_lost_one(tmp_path):
    data = popqa(tmp_path, ids=["a", "b", "a"])
    results = popqa_run(tmp_path, data)
    assert results["counts"]["popqa"]["bad_records"] == 1 and not results["complete"]
    assert "repeats an earlier record" in samples(tmp_path / "run", "popqa")[2]["error"]


# --- resume and overwrite --------------------------------------------------------------------------


class FlakyOnce(Engine):
    """Fails every request of its first batch; answers like echo afterwards."""

    kind = "flaky"
    failed = False

    def generate(self, requests):
        if not FlakyOnce.failed:
            FlakyOnce.failed = True
            return [EngineError("connection failed (7 attempts)")] * len(requests)
        return [Response(texts=[r.prompt.rsplit("\n", 1)[-1]]) for r in requests]


def test_resume_retries_failed_examples_and_adds_up_the_cost(tmp_path, monkeypatch):
    data = popqa(tmp_path, n=3)
    monkeypatch.setattr(run_engines, "load_engine", lambda model, **options: FlakyOnce(model))
    FlakyOnce.failed = False
    first = popqa_run(tmp_path, data, "closed_book", "scripted:flaky")
    assert first["counts"]["popqa"]["failed"] == 3
    [cause] = first["failures"]["popqa"]
    assert cause.pop("traceback").rstrip().endswith("EngineError: connection failed (7 attempts)")
    assert cause == {
        "cause": "EngineError",
        "count": 3,
        "ids": ["q0", "q1", "q2"],
        "example": "EngineError: connection failed (7 attempts)",
    }
    second = popqa_run(tmp_path, data, "closed_book", "scripted:flaky", resume=True)
    assert second["complete"] and second["counts"]["popqa"]["scored"] == 3
    assert second["cost"]["attempts"] == 2 and second["cost"]["examples"] == 6
    assert second["cost"]["this_attempt"]["examples"] == 3


def test_resuming_a_finished_run_loads_nothing_and_keeps_its_results(tmp_path, monkeypatch):
    data = popqa(tmp_path, n=2)
    popqa_run(tmp_path, data)
    before = (tmp_path / "run" / "results.json").read_text()
    monkeypatch.setattr(run_engines, "load_engine", lambda *a, **k: pytest.fail("a model was loaded"))
    outcome = Evaluator(
        RunConfig.of(
            tasks=["popqa"],
            system="vanilla",
            model="scripted:echo",
            data={"popqa": str(data)},
            output=str(tmp_path / "run"),
            resume=True,
            progress=False,
            bootstrap_iters=200,
        ),
        registry=installed_registry(),
    ).run()
    assert outcome.already_finished and (tmp_path / "run" / "results.json").read_text() == before


def test_an_existing_run_is_never_overwritten_without_resume_or_overwrite(tmp_path):
    data = popqa(tmp_path, n=2)
    popqa_run(tmp_path, data)
    with pytest.raises(ConfigError, match="already holds a run: --resume continues it, --overwrite replaces it"):
        popqa_run(tmp_path, data)
    again = popqa_run(tmp_path, data, overwrite=True)
    assert again["cost"]["cache_hits"] == 0  # the earlier run's cache went with it


def test_a_resume_with_other_options_names_what_differs(tmp_path):
    data = popqa(tmp_path, n=2)
    popqa_run(tmp_path, data)
    with pytest.raises(ConfigError, match=r"different configuration \(limit: null -> 1\)"):
        popqa_run(tmp_path, data, limit=1, resume=True)


def test_limit_zero_is_a_configuration_error(tmp_path):
    result = cli_here("--tasks", "demo", "--limit", "0", "--output", str(tmp_path / "r"))
    assert result.returncode == 2 and "--limit 0: give at least 1" in result.stderr


def test_the_console_names_the_most_common_failure_causes(tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text("not json")
    data = popqa(tmp_path, n=2)
    script = tmp_path / "fail.py"
    script.write_text(
        "from ragbench._values.llm_calls import EngineError\n"
        "def answer(request):\n    raise EngineError('connection failed (7 attempts)')\n"
    )
    result = cli(
        *task_run_args("popqa", data, "closed_book", "scripted:fail:answer"),
        "--output",
        str(tmp_path / "r"),
        "--no-progress",
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert result.returncode == 1
    assert "popqa: 2 x EngineError: q0, q1 - e.g. EngineError: connection failed (7 attempts)" in result.stderr


# --- the dispatcher never hangs ------------------------------------------------------------------------


class ShortAnswers(Engine):
    kind = "short"

    def generate(self, requests):
        return [Response(texts=["only one"])]  # fewer results than requests


class BrokenCache(ResponseCache):
    def put_many(self, entries):
        raise RuntimeError("database is locked")


def run_requests(engine, n, cache=None):
    async def go():
        scheduler = Scheduler(cache)
        try:
            return await asyncio.wait_for(
                asyncio.gather(
                    *(scheduler.submit(engine, Request(prompt=f"p{i}", sampling=Sampling())) for i in range(n)),
                    return_exceptions=True,
                ),
                timeout=10,
            )
        finally:
            await scheduler.close()

    return asyncio.run(go())


def test_an_engine_answering_fewer_results_fails_the_batch_instead_of_hanging():
    results = run_requests(ShortAnswers("m"), 3)
    assert all(isinstance(r, EngineError) and "answered 1 results for 3 requests" in str(r) for r in results)


def test_a_failing_cache_does_not_stop_the_answers(tmp_path):
    from ragbench._engines.scripted import ScriptedEngine

    cache = BrokenCache(tmp_path / "c.sqlite")
    results = run_requests(ScriptedEngine("echo"), 3, cache)
    assert [r.text for r in results] == ["p0", "p1", "p2"]
    cache.close()


def _write_many(path: str, offset: int) -> None:
    cache = ResponseCache(path)
    for i in range(200):
        request = Request(prompt=f"{offset}-{i}")
        cache.put_many([(request.cache_key("e"), "e", Response(texts=["x"]))])
    cache.close()


def test_two_processes_share_one_cache_file(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    ResponseCache(path).close()
    workers = [multiprocessing.get_context("spawn").Process(target=_write_many, args=(path, n)) for n in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0]
    assert len(ResponseCache(path)) == 400


# --- seeds and folded failures ------------------------------------------------------------------------


class SeedProbe(System):
    name = "seed_probe"

    def __init__(self, max_tokens: int = 8) -> None:
        self.max_tokens = max_tokens

    async def run(self, example, ctx):
        first = await ctx.llm.generate(example.question, temperature=0.7)
        await ctx.llm.generate(example.question, temperature=0.0)
        own = await ctx.llm.generate(example.question, temperature=0.7, seed=5)
        return Prediction(example_id=example.id, answer=first.text, extras={"own": own.text})


def test_every_sampled_call_gets_a_seed_from_the_run_seed_example_and_call(tmp_path):
    data = popqa(tmp_path, n=3)
    seeds = {}
    for name, inflight in (("a", 1), ("b", 3)):
        popqa_run(tmp_path, data, "closed_book", name=name, seed=7, max_inflight=inflight)
    registry = installed_registry()
    registry.entries["systems"]["seed_probe"] = registry.entries["systems"]["closed_book"].__class__(
        kind="systems", name="seed_probe", target="test_run_integrity:SeedProbe"
    )
    for name, inflight, seed in (("c", 1, 7), ("d", 3, 7), ("e", 1, 8)):
        popqa_run(tmp_path, data, "seed_probe", name=name, registry=registry, seed=seed, max_inflight=inflight)
        seeds[name] = [
            [s["request"]["sampling"]["seed"] for s in r["trace"]] for r in samples(tmp_path / name, "popqa")
        ]
    assert seeds["c"] == seeds["d"]  # independent of how many examples ran together
    assert seeds["c"] != seeds["e"]  # the run seed reaches them
    first, greedy, own = seeds["c"][0]
    assert isinstance(first, int) and greedy is None and own == 5
    assert len({row[0] for row in seeds["c"]}) == 3  # per example


class KgDown(System):
    name = "kg_down"
    declares = SystemDeclaration(uses_llm=False)

    def __init__(self, max_tokens: int = 8) -> None:
        self.max_tokens = max_tokens

    async def run(self, example, ctx):
        try:
            with ctx.step("tool", "kg.lookup", {"entity": example.question}):
                raise ConnectionError("KG unreachable")
        except ConnectionError:
            pass  # the baseline goes on without KG results, as upstream does
        return Prediction(example_id=example.id, answer="x")


class CountsAnEvent(Metric):
    """Folds an event into every score it gives, counted (as CRAG's unparsed judge replies)."""

    name = "counts_an_event"
    declares = MetricDeclaration(counters={"folded": "events folded into the score"})

    def score(self, example, prediction, ctx=None):
        ctx.count("folded")
        return 1.0


def test_failed_calls_folded_into_results_are_counted_or_fail_the_example_when_strict(tmp_path):
    registry = installed_registry()
    entry = registry.entries["systems"]["closed_book"].__class__
    registry.entries["systems"]["kg_down"] = entry(kind="systems", name="kg_down", target="test_run_integrity:KgDown")
    registry.entries["metrics"]["counts_an_event"] = entry(
        kind="metrics", name="counts_an_event", target="test_run_integrity:CountsAnEvent"
    )
    data = popqa(tmp_path, n=2)
    lenient = run(
        tmp_path,
        name="a",
        registry=registry,
        tasks=["popqa"],
        system="kg_down",
        data={"popqa": str(data)},
        metrics=["+counts_an_event"],
    )
    strict = run(
        tmp_path,
        name="b",
        registry=registry,
        tasks=["popqa"],
        system="kg_down",
        data={"popqa": str(data)},
        strict_infra=True,
        metrics=["+counts_an_event"],
    )
    assert lenient["complete"] and lenient["infrastructure_failures"]["popqa"]["calls"] == 2
    assert lenient["infrastructure_failures"]["popqa"]["causes"][0]["cause"].startswith("kg.lookup: ConnectionError")
    assert lenient["counted"]["popqa"]["counts_an_event"]["folded"]["examples"] == 2
    assert strict["counts"]["popqa"]["failed"] == 2 and not strict["complete"]
    assert "counted" not in strict  # the events of examples that failed were folded into no score shown


class InterruptedAfterThree(Engine):
    """Answers like echo three times, then the user presses Ctrl-C (raised as the run's handler raises it:
    an engine's own `raise KeyboardInterrupt` is its fault, counted, ragbench._plugin_calls)."""

    kind = "interrupted"
    answered = 0

    def generate(self, requests):
        if InterruptedAfterThree.answered >= 3:
            raise_stop(signal.SIGINT)
        InterruptedAfterThree.answered += len(requests)
        return [Response(texts=[r.prompt.rsplit("\n", 1)[-1]], prompt_tokens=10, completion_tokens=2) for r in requests]


def test_an_interrupted_attempts_calls_count_in_the_cost_after_resume(tmp_path, monkeypatch):
    data = popqa(tmp_path, n=6)
    InterruptedAfterThree.answered = 0
    monkeypatch.setattr(run_engines, "load_engine", lambda model, **options: InterruptedAfterThree(model))
    with pytest.raises(RunInterrupted):
        popqa_run(tmp_path, data, "closed_book", "scripted:interrupted", max_inflight=1)
    interrupted = json.loads((tmp_path / "run" / "run.json").read_text())["attempts"]
    assert len(interrupted) == 1 and interrupted[0]["interrupted"] and interrupted[0]["llm_calls"] == 3
    monkeypatch.setattr(run_engines, "load_engine", lambda model, **options: FlakyOnce(model))
    FlakyOnce.failed = True  # answers every call
    results = popqa_run(tmp_path, data, "closed_book", "scripted:interrupted", max_inflight=1, resume=True)
    assert results["complete"] and results["cost"]["attempts"] == 2 and results["cost"]["interrupted_attempts"] == 1
    assert results["cost"]["this_attempt"]["llm_calls"] == 3 and results["cost"]["llm_calls"] == 6
    assert results["cost"]["prompt_tokens"] >= 30  # the interrupted attempt's tokens are kept


def test_finalizing_keeps_the_latest_attempt_of_each_record_in_data_order_line_for_line(tmp_path):
    run_dir = RunDir(tmp_path)
    path = run_dir.sample_path("t")
    path.parent.mkdir(parents=True)
    lines = [
        {"id": "b", "index": 1, "error": "x"},
        {"id": "c", "index": 2},
        {"id": "a", "index": 0, "text": "é"},
        {"id": "b", "index": 1, "scores": {"m": 1}},
    ]
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines)
        + '{"id": "d", "ind\n'
        + json.dumps({"id": None, "index": 3, "bad_record": True}),
        encoding="utf-8",
    )  # no final newline
    run_dir.finalize_samples("t", saved_lines)
    assert [r.get("id") for r in iter_samples(path)] == ["a", "b", "c", None]
    assert list(iter_samples(path))[1] == {"id": "b", "index": 1, "scores": {"m": 1}}
    assert path.read_text(encoding="utf-8").splitlines()[0] == json.dumps(lines[2], ensure_ascii=False)
    assert path.read_text(encoding="utf-8").endswith("}\n")

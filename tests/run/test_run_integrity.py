"""Runs that never lose or silently mis-score an example: checkpoint keys, cut lines, completeness,
resume of failures, no silent overwrite, seeds, folded failures. The units below a run (a cut line's next
append, the dispatcher, a shared cache file, an interrupted attempt's cost, the samples finalized):
tests/run/test_run_integrity_units.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import write_jsonl
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
    hookimpl,
)
from ragbench.api.engines import Engine, Response
from ragbench.testing import Registry, installed_registry, run_eval
from support.helpers import cli_here, samples, task_counts, task_run_args
from support.run_builders import LoadCounted, counting_registry


def popqa_run(
    tmp_path: Path, data: Path, system: str = "vanilla", model: str = "scripted:echo", name: str = "run", **config
) -> dict:
    """results.json of a run of the popqa task on `data` into tmp_path/name: a vanilla system on the echoing scripted
    model unless told otherwise."""
    return run_eval("popqa", system, model, data=data, output=tmp_path / name, bootstrap_iters=200, **config).results


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
    results = run_eval(
        "no_index", "closed_book", "scripted:echo", registry=registry, output=tmp_path / "run", bootstrap_iters=200
    ).results
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


class FlakyPlugin:
    @hookimpl
    def ragbench_catalog(self):
        return {"engines": {"flaky": {"target": f"{__name__}:FlakyOnce"}}}


def test_resume_retries_failed_examples_and_adds_up_the_cost(tmp_path):
    data = popqa(tmp_path, n=3)
    registry = Registry.discover(plugins=[("flaky_plugin", "ragbench-tests", FlakyPlugin())])
    FlakyOnce.failed = False
    first = popqa_run(tmp_path, data, "closed_book", "flaky:echo", registry=registry)
    assert first["counts"]["popqa"]["failed"] == 3
    [cause] = first["failures"]["popqa"]
    assert cause.pop("traceback").rstrip().endswith("EngineError: connection failed (7 attempts)")
    assert cause == {
        "cause": "EngineError",
        "count": 3,
        "ids": ["q0", "q1", "q2"],
        "example": "EngineError: connection failed (7 attempts)",
    }
    second = popqa_run(tmp_path, data, "closed_book", "flaky:echo", resume=True, registry=registry)
    assert second["complete"] and second["counts"]["popqa"]["scored"] == 3
    assert second["cost"]["attempts"] == 2 and second["cost"]["examples"] == 6
    assert second["cost"]["this_attempt"]["examples"] == 3


def test_resuming_a_finished_run_loads_nothing_and_keeps_its_results(tmp_path):
    data = popqa(tmp_path, n=2)
    registry = counting_registry()
    popqa_run(tmp_path, data, model="counted:echo", registry=registry)
    before = (tmp_path / "run" / "results.json").read_text()
    outcome = run_eval(
        "popqa",
        "vanilla",
        "counted:echo",
        data=data,
        output=tmp_path / "run",
        resume=True,
        bootstrap_iters=200,
        registry=registry,
    )
    assert LoadCounted.loads == 1  # the first run's: the resume loaded no model
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


def test_the_console_names_the_most_common_failure_causes(tmp_path, ragbench_zygote):
    rules = tmp_path / "rules.json"
    rules.write_text("not json")
    data = popqa(tmp_path, n=2)
    script = tmp_path / "fail.py"
    script.write_text(
        "from ragbench.api import EngineError\n"
        "def answer(request):\n    raise EngineError('connection failed (7 attempts)')\n"
    )
    args = [*task_run_args("popqa", data, "closed_book", "scripted:fail:answer"), "--no-progress"]
    # a command whose PYTHONPATH has the script: a fork of the tests' command zygote
    result = ragbench_zygote.run([*args, "--output", str(tmp_path / "r")], {**os.environ, "PYTHONPATH": str(tmp_path)})
    assert result.returncode == 1
    assert "popqa: 2 x EngineError: q0, q1 - e.g. EngineError: connection failed (7 attempts)" in result.stderr


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
    lenient = popqa_run(tmp_path, data, "kg_down", name="a", registry=registry, metrics=["+counts_an_event"])
    strict = popqa_run(
        tmp_path, data, "kg_down", name="b", registry=registry, strict_infra=True, metrics=["+counts_an_event"]
    )
    assert lenient["complete"] and lenient["infrastructure_failures"]["popqa"]["calls"] == 2
    assert lenient["infrastructure_failures"]["popqa"]["causes"][0]["cause"].startswith("kg.lookup: ConnectionError")
    assert lenient["counted"]["popqa"]["counts_an_event"]["folded"]["examples"] == 2
    assert strict["counts"]["popqa"]["failed"] == 2 and not strict["complete"]
    assert "counted" not in strict  # the events of examples that failed were folded into no score shown

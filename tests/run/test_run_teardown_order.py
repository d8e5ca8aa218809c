"""A run's examples end before its teardown begins (ragbench._run.lifetime.lifecycle.run_together, units with no
public face): the first error cancels the other tasks and waits for them, as does a cancel from outside, and a
sample that fails to save (a write made to fail) stops the run with no sample saved once the teardown has begun.
tests/run/test_run_lifetimes.py tests the workers and page caches a run owns."""

from __future__ import annotations

import asyncio
import errno
import json
import time

import pytest

from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench._run.lifetime.lifecycle import run_together
from ragbench._storage.rundir import RunDir
from ragbench.testing import installed_registry


async def test_the_first_error_cancels_the_others_and_waits_for_them():
    ended = []

    async def fails():
        await asyncio.sleep(0.01)
        raise OSError(errno.ENOSPC, "No space left on device")

    async def runs_long(name):
        try:
            await asyncio.sleep(30)
        finally:
            await asyncio.sleep(0.05)  # its clean-up takes a while, and is waited for
            ended.append(name)

    with pytest.raises(OSError, match="No space"):
        await run_together([fails(), runs_long("a"), runs_long("b")])
    assert sorted(ended) == ["a", "b"]


async def test_cancelled_from_outside_it_waits_for_every_task_to_end():
    ended = []

    async def runs_long(name):
        try:
            await asyncio.sleep(30)
        finally:
            await asyncio.sleep(0.05)
            ended.append(name)

    group = asyncio.ensure_future(run_together([runs_long("a"), runs_long("b")]))
    await asyncio.sleep(0.01)
    group.cancel()
    with pytest.raises(asyncio.CancelledError):
        await group
    assert sorted(ended) == ["a", "b"]


def test_teardown_begins_only_when_every_example_has_ended(tmp_path, monkeypatch):
    """A sample that fails to save stops the run; the examples still running are cancelled and awaited
    first: none of them saves a sample once the teardown has begun."""
    appended, teardown_began = [], []
    real_append = RunDir.append_sample

    def append(self, task, text, attempt_cost=None):
        if len(appended) == 2:
            appended.append(("failed", time.monotonic()))
            raise OSError(errno.ENOSPC, "No space left on device")
        appended.append((json.loads(text)["id"], time.monotonic()))
        real_append(self, task, text, attempt_cost)

    async def slow_teardown():
        teardown_began.append(time.monotonic())
        await asyncio.sleep(1.0)  # the examples in flight would finish meanwhile

    monkeypatch.setattr(RunDir, "append_sample", append)
    config = RunConfig.of(
        tasks=["demo"],
        system="vanilla",
        model="scripted:echo",
        output=str(tmp_path / "run"),
        model_args={"overhead": 0.2, "batch_size": 1},
        max_inflight=6,
        progress=False,
        bootstrap_iters=0,
    )
    evaluator = Evaluator(config, registry=installed_registry())

    async def setup():
        return {}

    # the demo task made a task that uses tools (ragbench._task.protocols.UsesTools): its teardown is the run's to call
    monkeypatch.setattr(evaluator.planned[0].task, "setup", setup, raising=False)
    monkeypatch.setattr(evaluator.planned[0].task, "teardown", slow_teardown, raising=False)
    with pytest.raises(OSError, match="No space"):
        evaluator.run()
    assert teardown_began and len(appended) >= 3
    late = [entry for entry, at in appended if at >= teardown_began[0]]
    assert late == [], f"saved after the teardown began: {late}"

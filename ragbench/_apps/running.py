"""A system that starts something for a run (`StartsForRun`: an application system's capture or receiver), started
and stopped around a block outside a run, as a run does around its examples: a plugin's tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from .._system import StartsForRun, System, SystemRun


@asynccontextmanager
async def running(system: System, task: str = "examples", folder: Path | None = None) -> AsyncIterator[None]:
    """`async with running(system, "task"):` the system started for a run of `task` (its record in `folder`'s
    calls/ where given), and stopped when the block ends, however it ends."""
    if not isinstance(system, StartsForRun):
        yield
        return
    await system.start(SystemRun(task=task, folder=folder))
    try:
        yield
    finally:
        await system.stop()

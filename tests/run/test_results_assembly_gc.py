"""A run's results are assembled with CPython's cycle collector paused (ragbench._run.assemble.cyclic_gc_paused):
reading a run's samples back and aggregating them allocates objects that all stay alive, which every full
collection would walk again. The collector runs again afterwards, and one the caller had paused stays paused."""

import gc

from ragbench._storage.rundir import RunDir
from support.helpers import run


def watch_collector(monkeypatch) -> list[bool]:
    """Whether the collector was running each time a task's samples were read back."""
    seen: list[bool] = []
    finalize = RunDir.finalize_samples

    def watched(self, *args, **kwargs):
        seen.append(gc.isenabled())
        return finalize(self, *args, **kwargs)

    monkeypatch.setattr(RunDir, "finalize_samples", watched)
    return seen


def test_the_samples_are_read_back_with_the_cycle_collector_paused_and_it_runs_again_after(tmp_path, monkeypatch):
    seen = watch_collector(monkeypatch)
    results = run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo")
    assert results["counts"]["demo"]["scored"] == 24
    assert seen == [False]
    assert gc.isenabled()


def test_a_collector_the_caller_paused_stays_paused(tmp_path, monkeypatch):
    seen = watch_collector(monkeypatch)
    gc.disable()
    try:
        run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo")
        assert seen == [False] and not gc.isenabled()
    finally:
        gc.enable()

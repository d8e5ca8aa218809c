"""A run's results are assembled with CPython's cycle collector paused (ragbench._run.assemble.cyclic_gc_paused):
reading a run's samples back and aggregating them allocates objects that all stay alive, which every full
collection would walk again. The collector runs again afterwards, and one the caller had paused stays paused."""

import gc

from ragbench.api import Metric, MetricDeclaration
from ragbench.testing import run_eval


class WatchesTheCollector(Metric):
    """Scores 1; its corpus value is computed from the task's samples read back as results.json is assembled, and
    notes whether the collector was running then."""

    name = "watches_the_collector"
    declares = MetricDeclaration(corpus_keys=("collector_running",))
    seen: list[bool] = []

    def score(self, example, prediction, ctx=None):
        return 1.0

    def corpus(self, samples, seed):
        WatchesTheCollector.seen.append(gc.isenabled())
        return {"collector_running": float(gc.isenabled())}


def run(tmp_path) -> dict:
    WatchesTheCollector.seen = []
    return run_eval(
        "demo",
        "closed_book",
        "scripted:echo",
        metrics=[WatchesTheCollector],
        output=tmp_path / "run",
        bootstrap_iters=200,
    ).results


def test_the_samples_are_read_back_with_the_cycle_collector_paused_and_it_runs_again_after(tmp_path):
    results = run(tmp_path)
    assert results["counts"]["demo"]["scored"] == 24
    assert WatchesTheCollector.seen == [False] and results["results"]["demo"]["collector_running"] == 0.0
    assert gc.isenabled()


def test_a_collector_the_caller_paused_stays_paused(tmp_path):
    gc.disable()
    try:
        run(tmp_path)
        assert WatchesTheCollector.seen == [False] and not gc.isenabled()
    finally:
        gc.enable()

"""The dependency-aware lower bound (d'') of benchmarks/scheduler_vs_baselines.py: no way of batching its
workload makes fewer batches, and it counts what ceil(calls / B) per sampling setting (d') misses, the
batches an example's dependent calls need one after another."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from support import paths

SCRIPT = paths.REPO / "benchmarks" / "scheduler_vs_baselines.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("scheduler_vs_baselines", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def batches_made(bench, items, tokens, batch: int) -> dict[str, int]:
    """Batches of ragbench's scheduler (with and without ageing) and of stage-by-stage batching, at no cost."""
    made = {}
    for name, run in (
        ("scheduler", lambda e: bench.run_scheduler(items, e, tokens)),
        ("largest group only", lambda e: bench.run_scheduler(items, e, tokens, age_limit=10**9)),
        ("stage by stage", lambda e: bench.run_stage_by_stage(items, e, tokens, batch)),
    ):
        engine = bench.ScriptedEngine("bound-test", script=bench.script, batch_size=batch)
        run(engine)
        made[name] = len(engine.batch_sizes)
    return made


def test_one_long_example_needs_a_batch_per_call_which_only_the_chain_bound_counts(bench):
    items = [bench.Item(0, 4, "who wrote it?")]  # 4 select and 4 verify calls, then the answer: 9 in a chain
    tokens = bench.Tokens(64, 8, 128)
    assert bench.sampling_bound_batches(items, tokens, 32) == 3
    assert bench.chain_bound_batches(items, tokens, 32) == 9
    assert set(batches_made(bench, items, tokens, 32).values()) == {9}


@pytest.mark.parametrize("seed,minority,batch", [(0, 0.0, 8), (1, 0.1, 8), (2, 0.3, 4), (3, 0.05, 16)])
def test_no_way_of_batching_makes_fewer_batches_than_the_chain_bound(bench, seed, minority, batch):
    items = bench.make_workload(48, seed, [0.4, 0.3, 0.2, 0.1], minority)
    tokens = bench.Tokens(64, 8, 128)
    bound = bench.chain_bound_batches(items, tokens, batch)
    assert bound >= bench.sampling_bound_batches(items, tokens, batch)
    made = batches_made(bench, items, tokens, batch)
    assert min(made.values()) >= bound, made

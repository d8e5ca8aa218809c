"""Each stage of a run is given the groups of the run's RunConfig it reads (planning: what to run and how to
judge; the engines: the models and the judges) and leaves the config as it was; a changed run is a new config."""

from __future__ import annotations

import copy
import dataclasses
import hashlib

import pytest

from ragbench._config.run_config import RunConfig
from ragbench._run.plan.planning import plan_scoring
from ragbench.api import Preflight
from ragbench.testing import installed_registry
from support import paths


def test_a_run_config_is_frozen_a_changed_run_is_a_new_config():
    config = RunConfig.of(tasks=["demo"], model="scripted:echo")
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.models = config.models  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.models.model = "scripted:other"  # type: ignore[misc]
    changed = config.changed(model="scripted:other")
    assert (config.models.model, changed.models.model, changed.what.tasks) == (
        "scripted:echo",
        "scripted:other",
        ["demo"],
    )


def test_planning_a_rescoring_leaves_the_config_as_it_was_and_returns_the_rescorings_metric_options():
    """The run's option of a metric the rescoring no longer asks is left out of what planning returns; the config
    planned from keeps it (rescore puts the returned options in its own config)."""
    config = RunConfig.of(
        tasks=["demo"], metrics=["match"], metric_args={"em.key_prefix": "e_", "match.key_prefix": "m_"}
    )
    before = copy.deepcopy(dataclasses.asdict(config))
    check = Preflight()
    planned, metric_args = plan_scoring(
        config.what, config.judging, installed_registry(), check, frozenset({"em.key_prefix"})
    )
    check.raise_if_failed()
    assert dataclasses.asdict(config) == before
    assert metric_args == {"match.key_prefix": "m_"}
    assert [metric.key_prefix for metric in planned[0].metrics] == ["m_"]


def test_default_run_folder_is_named_by_config_hash(tmp_path):
    a = RunConfig.of(tasks=["demo"], model="scripted:echo")
    b = RunConfig.of(tasks=["demo"], model="scripted:echo", max_inflight=3, output=None)
    c = RunConfig.of(tasks=["demo"], model="scripted:echo", seed=1)
    assert a.run_dir() == b.run_dir() != c.run_dir()
    assert a.run_dir().name.startswith("vanilla__scripted-echo__")


def test_a_run_over_the_index_cache_of_a_shipped_corpus_is_named_alike_wherever_the_cache_is(tmp_path):
    """A run over the cached index of a task's shipped corpus keeps its folder name when $RAGBENCH_INDEX_CACHE moves
    (its resume: tests/tasks/fictional_multihop/test_fictional_multihop.py); an index named on the command line is an option of the run."""
    corpus = paths.REPO / "tasks" / "fictional_multihop" / "data" / "corpus.jsonl"
    key = f"bm25-{hashlib.sha256(corpus.read_bytes()).hexdigest()}"  # the index's name in the cache (run.json)
    named = [
        RunConfig.of(tasks=["fictional_multihop"], retriever="bm25", retriever_args={"index": str(cache / key)}, **flag)
        for cache in (tmp_path / "first", tmp_path / "moved")
        for flag in ({"shipped_corpus_index": True}, {})
    ]
    assert named[0].run_dir() == named[2].run_dir()  # the cache's index: one run wherever the cache is
    assert named[1].run_dir() != named[3].run_dir()  # an index named on the command line: its path is an option

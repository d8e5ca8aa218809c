"""Each stage of a run is given what it reads of the run's RunConfig as a frozen value the config makes
(`PlanRequest`, `EngineRequest`), carrying the config's values unchanged, and leaves the config as it was."""

from __future__ import annotations

import copy
import dataclasses
import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragbench._run.plan.planning import plan_scoring
from ragbench._values.run_config import RunConfig
from ragbench.api import Preflight
from ragbench.testing import installed_registry
from support import paths

names = st.text(st.characters(codec="ascii", categories=("L", "N")), min_size=1, max_size=8)
scalars = st.none() | st.booleans() | st.integers() | names
options = st.dictionaries(names, scalars, max_size=3)


@given(
    tasks=st.lists(names, max_size=3),
    metrics=st.lists(names, max_size=3),
    metric_args=options,
    system_args=options,
    role_models=st.dictionaries(names, names, max_size=2),
    judges=st.lists(names, max_size=3),
    judge_args=st.dictionaries(st.sampled_from(["0", "1"]), options, max_size=2),
    nli=st.none() | names,
    top_k=st.none() | st.integers(1, 50),
    replay_tools=st.none() | names,
)
def test_a_stage_request_carries_the_values_of_the_config_it_is_made_from(**given_options):
    config = RunConfig.of(model="scripted:echo", **given_options)
    for request in (config.plan_request(), config.engine_request()):
        flat = config.flat()
        for field in dataclasses.fields(request):
            if field.name in flat:
                value = flat[field.name]
                assert getattr(request, field.name) == (tuple(value) if isinstance(value, list) else value)
    assert config.plan_request().roles == tuple(config.models.role_models)
    assert config.plan_request().tools_replayed == (config.what.replay_tools is not None)


def test_a_stage_request_is_frozen_and_a_later_change_to_the_config_does_not_reach_it():
    config = RunConfig.of(tasks=["demo"], system_args={"top_n": 1}, judges=["scripted:echo"])
    request = config.plan_request()
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.system = "closed_book"  # type: ignore[misc]
    config.what.system_args["top_n"] = 2
    config.judging.judges.append("scripted:other")
    assert request.system_args == {"top_n": 1} and request.judges == ("scripted:echo",)


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
        config.plan_request(), installed_registry(), check, frozenset({"em.key_prefix"})
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

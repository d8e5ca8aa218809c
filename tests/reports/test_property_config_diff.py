"""Property: `ragbench compare`'s "what differs" (ragbench._reports.results.config_diff) names every setting of two
runs' configs whose value differs, by its path, and no other; the settings that measure nothing
(`NOT_MEASURED`, e.g. worker counts and folders) are never named."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._reports.results.config_diff import (
    NOT_MEASURED,
    NOT_SET,
    config_differences,
    described,
    flattened,
    measured,
)

KEYS = st.sampled_from(
    [
        "model",
        "seed",
        "limit",
        "top_n",
        "topk",
        "retriever",
        "index",
        "temperature",
        "demo",
        "popqa",
        "system_config",
        "retriever_args",
        "like_for_like",
        "sampling",
        "max_tokens",
        *[key for key in NOT_MEASURED if "*" not in key],
    ]
)
LEAVES = st.one_of(
    st.integers(-3, 3),
    st.booleans(),
    st.sampled_from(["bm25", "provided", "hf:m", "flashrag", ""]),
    st.floats(0, 1, allow_nan=False),
    st.lists(st.integers(0, 2), max_size=3),
)
CONFIGS = st.recursive(LEAVES, lambda inner: st.dictionaries(KEYS, inner, max_size=4), max_leaves=12).filter(
    lambda value: isinstance(value, dict)
)


def leaf_paths(config: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The path of every setting (a value that is not an object)."""
    paths = []
    for key, value in config.items():
        paths += leaf_paths(value, (*prefix, key)) if isinstance(value, dict) else [(*prefix, key)]
    return paths


def set_path(config: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        config = config[key]
    config[path[-1]] = value


@settings(max_examples=300, deadline=None)
@given(CONFIGS, st.data())
def test_what_differs_names_exactly_the_settings_whose_values_changed(config, data):
    other = copy.deepcopy(config)
    paths = leaf_paths(config)
    changed = data.draw(st.lists(st.sampled_from(paths), unique=True, max_size=len(paths))) if paths else []
    for path in changed:
        set_path(other, path, data.draw(LEAVES))
    named = {difference.key for difference in config_differences(config, other)}
    really_changed = {
        ".".join(path)
        for path in changed
        if flattened(config).get(".".join(path)) != flattened(other).get(".".join(path))
    }
    assert named == {key for key in really_changed if measured(key)}
    assert not any(key.split(".")[0] in NOT_MEASURED for key in named)


@settings(max_examples=200, deadline=None)
@given(CONFIGS, KEYS, LEAVES)
def test_a_setting_only_one_run_has_is_named_with_the_other_not_set(config, key, value):
    other = {**config, f"new_{key}": value}
    differences = config_differences(config, other)
    assert [(d.key, d.a, d.b) for d in differences] == [(f"new_{key}", None, value)]


@settings(max_examples=200, deadline=None)
@given(CONFIGS)
def test_a_config_differs_from_itself_in_nothing(config):
    assert config_differences(config, copy.deepcopy(config)) == []


def test_settings_that_measure_nothing_are_not_named_and_nested_data_paths_neither():
    a = {
        "output": "runs/a",
        "max_inflight": 8,
        "cache": "x",
        "task_configs": {"demo": {"data_path": "a.jsonl"}},
        "system_config": {"demo": {"top_n": 1}},
    }
    b = {
        "output": "runs/b",
        "max_inflight": 64,
        "cache": None,
        "task_configs": {"demo": {"data_path": "b.jsonl"}},
        "system_config": {"demo": {"top_n": 5}},
    }
    assert [d.line() for d in config_differences(a, b)] == ["system_config.demo.top_n: 1 vs 5"]


def test_the_default_model_is_named_as_the_run_loaded_it():
    assert described({"system": "vanilla", "model": "hf:embedded"}) == "system vanilla, engine hf, model embedded"
    assert described({"system": "recorded", "model": None}) == "system recorded, no model"
    assert described({"system": "smart", "model": "vllm:m", "role_models": {"locator": "openai:x"}}) == (
        "system smart, engine vllm, model m; role locator: openai:x"
    )


OPTION_NAMES = st.text("abcdefgh_", min_size=1, max_size=6)


@settings(max_examples=100, deadline=None)
@given(
    OPTION_NAMES,
    OPTION_NAMES,
    OPTION_NAMES,
    st.dictionaries(OPTION_NAMES, st.integers(0, 3), max_size=3),
    st.integers(0, 3),
)
def test_an_option_is_unset_only_where_the_systems_config_has_it_as_null(system_a, system_b, option, shared, value):
    """For any systems and options: an option the other run's system has and this one's config lacks reads "not an
    option of SYSTEM"; one this config holds as null reads "(not set)"; the values themselves are as before."""
    options_b = {**shared, option: value}
    a = {"system": system_a, "system_config": {"t": {k: v for k, v in shared.items() if k != option}}}
    b = {"system": system_b, "system_config": {"t": options_b}}
    (difference,) = config_differences(a, b)[-1:]
    assert difference.key == f"system_config.t.{option}" and (difference.a, difference.b) == (None, value)
    assert difference.line() == f"system_config.t.{option}: not an option of {system_a} vs {value}"
    a["system_config"]["t"][option] = None  # the option is the system's, left unset
    (difference,) = [d for d in config_differences(a, b) if d.key == f"system_config.t.{option}"]
    assert difference.line() == f"system_config.t.{option}: {NOT_SET} vs {value}"

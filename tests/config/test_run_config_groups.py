"""A RunConfig is a composition of frozen groups made from the flat options (`RunConfig.of`); what names the run
(`identity`, `config_hash`) and what run.json records (`flat`) are as they were when RunConfig was flat: the same
keys in the same order, the same folder hash (the hashes below were recorded from the flat RunConfig)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragbench._config.judging import RunJudging
from ragbench._config.limits import RunLimits
from ragbench._config.models import RunModels
from ragbench._config.output import RunOutput
from ragbench._config.retrieval import RunRetrieval
from ragbench._config.run_config import RUN_OPTIONS, RunConfig
from ragbench._config.what import RunWhat
from ragbench._run.plan.preflight import check_run_options
from ragbench.api import Preflight
from ragbench.testing import installed_registry

_ALL_OPTIONS: dict[str, Any] = {
    "tasks": ["demo"],
    "task_args": {"demo.template": "alpaca"},
    "data": {"demo": "d.jsonl"},
    "system_args": {"top_n": 2},
    "output": "o",
    "resume": True,
    "overwrite": True,
    "strict_infra": True,
    "fail_fast": True,
    "max_inflight": 3,
    "max_steps_per_example": 9,
    "max_prompt_chars_per_example": 99,
    "cache": "c.sqlite",
    "progress": False,
    "replay_tools": "calls",
    "human_labels": "h.jsonl",
    "price_table": "p.yaml",
    "max_cost": 1.5,
}
# (options, config_hash, sha256 of json.dumps(identity()), of json.dumps(asdict(flat RunConfig))), from the flat one
RECORDED = [
    ({"tasks": ["demo"]}, "66b809fa2e", "b853ccf2ef99", "c23e38f8a60c"),
    (
        {
            "tasks": ["demo"],
            "system": "closed_book",
            "model": "scripted:echo",
            "seed": 3,
            "limit": 4,
            "bootstrap_iters": 50,
        },
        "bef23a7401",
        "bb0b3a0d7053",
        "9542b154d9fc",
    ),
    (
        {
            "tasks": ["demo", "popqa"],
            "model": "openai:gpt-4o-mini",
            "model_args": {"base_url": "http://user:secret@127.0.0.1:8000/v1"},
            "role_models": {"locator": "hf:x"},
            "role_model_args": {"locator": {"dtype": "bf16"}},
        },
        "da3044f96d",
        "f11eb04647b5",
        "7695fd1689a9",
    ),
    (
        {
            "tasks": ["demo"],
            "judges": ["scripted:echo", "openai:gpt-4o"],
            "judge_args": {"1": {"temperature": 0}},
            "judge_repeats": 3,
            "nli": "hf:t5",
            "nli_format": "prompt",
            "nli_args": {"batch_size": 8},
            "metrics": ["+llm_judge"],
            "metric_args": {"em.key_prefix": "x"},
        },
        "e30532c948",
        "c14d94035ca3",
        "cc05a1deb4b1",
    ),
    (
        {
            "tasks": ["fictional_multihop"],
            "retriever": "bm25",
            "retriever_args": {"index": "/cache/bm25-abc"},
            "shipped_corpus_index": True,
            "reranker": "cross",
            "reranker_args": {"model": "m"},
            "refiner": "r",
            "refiner_args": {"k": 1},
            "top_k": 5,
            "page_cache": "off",
        },
        "c8553e5ceb",
        "2d216c7e8b3e",
        "d4ff50ef938f",
    ),
    (_ALL_OPTIONS, "abf30716f8", "7c82eb95066f", "55d3b10077b2"),
]


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:12]


@pytest.mark.parametrize(("options", "config_hash", "identity", "flat"), RECORDED)
def test_a_grouped_config_names_and_records_the_run_as_the_flat_one_did(options, config_hash, identity, flat):
    config = RunConfig.of(**options)
    assert (config.config_hash(), _sha(config.identity()), _sha(config.flat())) == (config_hash, identity, flat)


names = st.text(st.characters(codec="ascii", categories=("L", "N")), min_size=1, max_size=8)
scalars = st.none() | st.booleans() | st.integers() | names
dicts = st.dictionaries(names, scalars, max_size=3)


@given(
    tasks=st.lists(names, max_size=3),
    model=st.none() | names,
    model_args=dicts,
    judges=st.lists(names, max_size=2),
    retriever_args=dicts,
    limit=st.none() | st.integers(0, 9),
    output=st.none() | names,
    max_cost=st.none() | st.floats(0, 10),
)
def test_every_option_lands_in_one_group_and_comes_back_by_its_flat_name(**options):
    config = RunConfig.of(**options)
    assert tuple(config.flat()) == RUN_OPTIONS
    assert {name: config.flat()[name] for name in options} == options
    assert RunConfig.of(**config.flat()) == config
    assert config.changed() == config


def test_each_group_holds_the_options_its_reader_reads():
    config = RunConfig.of(tasks=["demo"], model="m", judges=["j"], retriever="bm25", cache="c", max_cost=1.0)
    assert [type(getattr(config, f.name)) for f in dataclasses.fields(RunConfig)] == [
        RunWhat,
        RunModels,
        RunRetrieval,
        RunJudging,
        RunOutput,
        RunLimits,
    ]
    assert (config.what.tasks, config.models.model, config.judging.judges) == (["demo"], "m", ["j"])
    assert (config.retrieval.retriever, config.output.cache, config.limits.max_cost) == ("bm25", "c", 1.0)


def test_an_unknown_option_is_refused_as_a_dataclass_refuses_an_unknown_keyword():
    with pytest.raises(TypeError, match="no option colour"):
        RunConfig.of(tasks=["demo"], colour="red")


@pytest.mark.parametrize(
    ("group", "problems"),
    [
        (
            RunWhat(tasks=["demo"], seed=-1, limit=0),
            ["--seed -1: give at least 0", "--limit 0: give at least 1, or leave it out for all records"],
        ),
        (RunWhat(tasks=["demo"], limit=None), []),
        (RunJudging(bootstrap_iters=-1), ["--bootstrap-iters -1: give at least 0 (0: no intervals)"]),
        (
            RunJudging(bootstrap_iters=2_000_000, judge_repeats=101),
            [
                "--bootstrap-iters 2000000: at most 1,000,000 rounds (a p-value's resolution of 1/1,000,000); give fewer",
                "--judge-repeats 101: at most 100 scorings per judge (each is one more judge call per judged example; a "
                "judge's agreement with itself is measured with a few, 3 to 10); give fewer",
            ],
        ),
        (
            RunLimits(max_inflight=0, max_steps_per_example=0),
            [
                "--max-inflight 0: give at least 1",
                "--max-steps-per-example 0: give at least 1, or leave it out for the default ceiling",
            ],
        ),
        (
            RunLimits(max_prompt_chars_per_example="9"),
            [
                "--max-prompt-chars-per-example 9: give an integer of at least 1, or leave it out for the default ceiling"
            ],
        ),
    ],
)
def test_a_group_finds_what_is_wrong_with_its_own_options(group, problems):
    assert group.problems() == problems


def test_a_group_without_checks_of_its_own_has_no_problems_to_ask():
    """The models and the retrieval components are checked with the registry (the engines', the components'),
    not by their groups: a run of them is asked nothing of them."""
    assert not hasattr(RunModels, "problems") and not hasattr(RunRetrieval, "problems")
    assert RunConfig.of(tasks=["demo"], model="no-engine", retriever="none").problems() == []


def test_the_cache_group_refuses_a_folder_for_its_cache_file(tmp_path):
    assert RunOutput(cache=str(tmp_path)).problems() == [
        f"--cache {tmp_path}: a folder is there; give a file path for the SQLite cache"
    ]
    assert RunOutput(cache=str(tmp_path / "cache.sqlite")).problems() == []


@given(
    seed=st.integers(-3, 3),
    limit=st.none() | st.integers(-2, 2),
    bootstrap_iters=st.integers(-2, 2) | st.just(1_000_001),
    judge_repeats=st.none() | st.integers(1, 2) | st.just(101),
    max_inflight=st.none() | st.integers(-1, 1) | st.just(10_001),
)
def test_the_preflight_refuses_a_run_for_what_its_groups_find_and_nothing_else_of_its_options(**options):
    """The pre-flight asks each group, in the order of the run's groups; a run whose groups find nothing is not
    refused for its options (the demo task, the scripted engine: nothing else is wrong)."""
    config = RunConfig.of(tasks=["demo"], model="scripted:echo", **options)
    expected = [problem for group in (config.what, config.judging, config.limits) for problem in group.problems()]
    check = Preflight()
    check_run_options(config, check, installed_registry())
    assert check.problems == expected == config.problems()

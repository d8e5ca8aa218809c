"""`ragbench compare` as the README's multi-step example runs it: each run named by its system, engine and model;
vanilla on a task in FlashRAG's prompt style (fictional_multihop) sends FlashRAG's prompts, as the FlashRAG methods
do, so the prompt style keeps no pair from like for like; a system option only one run's system has reads as no
option of the other system, not as one left unset; and the README's like-for-like command is like for like."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import cli_here
from ragbench._reports.results.config_diff import NOT_SET, config_differences, described


def fictional_run(tmp_path: Path, name: str, system: str, *extra: str) -> Path:
    out = tmp_path / name
    ran = cli_here(
        "--tasks", "fictional_multihop", "--system", system, "--limit", "3", "--model", "scripted:echo",
        "--bootstrap-iters", "0", "--no-progress", "--output", str(out), *extra,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("fictional")
    return {
        "vanilla": fictional_run(folder, "fm3_vanilla", "vanilla"),
        "iter_retgen": fictional_run(folder, "fm3_iter_retgen", "iter_retgen"),
        "one_round": fictional_run(folder, "fm3_iter_retgen_1", "iter_retgen", "--system-arg", "iter_num=1"),
    }


def test_compare_names_each_runs_system_engine_and_model(runs):
    shown = cli_here("compare", str(runs["vanilla"]), str(runs["iter_retgen"]))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[1] == (
        "A = fm3_vanilla: system vanilla, engine scripted, model echo; "
        "B = fm3_iter_retgen: system iter_retgen, engine scripted, model echo"
    )
    full = cli_here("compare", str(runs["vanilla"]), str(runs["iter_retgen"]), "--full").stdout
    assert lines[1] in full.splitlines()


def test_vanilla_on_a_flashrag_styled_task_shares_the_methods_prompt_style(runs):
    configs = {name: json.loads((path / "results.json").read_text())["config"] for name, path in runs.items()}
    styles = {name: config["like_for_like"]["fictional_multihop"]["prompt_style"] for name, config in configs.items()}
    assert styles == {"vanilla": "flashrag", "iter_retgen": "flashrag", "one_round": "flashrag"}
    shown = cli_here("compare", str(runs["vanilla"]), str(runs["iter_retgen"])).stdout
    verdict = shown.splitlines()[2]
    assert verdict == "not like for like: fictional_multihop: searches 1.00 vs 3.00 per example"  # the method's own


def test_an_option_only_one_system_has_reads_as_no_option_of_the_other(runs):
    full = cli_here("compare", str(runs["vanilla"]), str(runs["iter_retgen"]), "--full").stdout
    assert "- system_config.fictional_multihop.flashrag_generator: not an option of vanilla vs vllm" in full
    assert "- system_config.fictional_multihop.top_n: 5 vs not an option of iter_retgen" in full
    assert "- like_for_like.fictional_multihop.searches: not declared by vanilla vs 3" in full
    assert "(not set)" not in full


def test_the_readmes_like_for_like_command_is_like_for_like(runs):
    shown = cli_here("compare", str(runs["vanilla"]), str(runs["one_round"]))
    assert shown.returncode == 0 and shown.stdout.splitlines()[2] == "like for like: yes"


def test_the_default_model_is_named_as_the_run_loaded_it():
    assert described({"system": "vanilla", "model": "hf:embedded"}) == "system vanilla, engine hf, model embedded"
    assert described({"system": "recorded", "model": None}) == "system recorded, no model"
    assert described({"system": "smart", "model": "vllm:m", "role_models": {"locator": "openai:x"}}) == (
        "system smart, engine vllm, model m; role locator: openai:x"
    )


NAMES = st.text("abcdefgh_", min_size=1, max_size=6)


@settings(max_examples=100, deadline=None)
@given(NAMES, NAMES, NAMES, st.dictionaries(NAMES, st.integers(0, 3), max_size=3), st.integers(0, 3))
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

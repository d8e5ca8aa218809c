"""`ragbench compare` as the README's multi-step example runs it: each run named by its system, engine and model;
vanilla on a task in FlashRAG's prompt style (fictional_multihop) sends FlashRAG's prompts, as the FlashRAG methods
do, so the prompt style keeps no pair from like for like; a system option only one run's system has reads as no
option of the other system, not as one left unset (for any options: tests/reports/test_property_config_diff.py); and the
README's like-for-like command is like for like."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.helpers import cli_here


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
    assert shown.returncode == 0
    verdict, settings = shown.stdout.splitlines()[2:4]
    assert verdict == "like for like: yes (as measured; the systems declare searches otherwise)"
    # the settings' line does not then say like_for_like differs, as if the verdict above were wrong
    assert settings.startswith("settings that differ (11): system; ") and "like_for_like" not in settings

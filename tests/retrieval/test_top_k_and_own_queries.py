"""`--top-k N` sets the passages shown per reader call through the option each system declares for it
(`declares.budget_options`), recorded in run.json (`like_for_like`); a system that declares none refuses it. A system
that searches with queries of its own (`declares.searches_own_queries`) over the example's provided passages is
warned about in the pre-flight, naming retrievers that answer such queries."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ragbench.api import ConfigError, System, SystemDeclaration
from ragbench.testing import PreflightError, preflight, run_eval
from support.helpers import cli, cli_here, cli_run_args, run


def test_top_k_goes_to_the_option_each_system_declares_and_run_json_records_it(tmp_path):
    run(tmp_path, "vanilla", tasks=["demo"], system="vanilla", model="scripted:echo", limit=2, top_k=3)
    run(tmp_path, "iter_retgen", tasks=["demo"], system="iter_retgen", model="scripted:echo", limit=2, top_k=3)
    vanilla = json.loads((tmp_path / "vanilla" / "run.json").read_text())["config"]
    assert vanilla["system_config"]["demo"]["top_n"] == 3 and vanilla["top_k"] == 3
    assert vanilla["like_for_like"]["demo"] == {"passages": 3, "prompt_style": "selfrag"}  # the demo task's own style
    iter_retgen = json.loads((tmp_path / "iter_retgen" / "run.json").read_text())["config"]
    assert iter_retgen["system_config"]["demo"]["topk"] == 3
    assert iter_retgen["like_for_like"]["demo"] == {"passages": 3, "searches": 3, "prompt_style": "flashrag"}


def test_a_system_that_declares_no_passages_option_refuses_top_k(tmp_path):
    with pytest.raises(PreflightError, match=r"--top-k 5: system closed_book declares no option for the passages"):
        run_eval("demo", "closed_book", "scripted:echo", top_k=5, output=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_top_k_and_a_system_arg_setting_the_same_option_otherwise_are_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"--top-k 5 and --system-arg top_n=2 both set system vanilla's top_n"):
        preflight("demo", "vanilla", top_k=5, system_args={"top_n": 2})
    same = run_eval("demo", "vanilla", limit=1, top_k=5, system_args={"top_n": 5}, output=tmp_path / "same")
    alone = run_eval("demo", "vanilla", limit=1, output=tmp_path / "alone")
    configs = [json.loads((run.run_dir / "run.json").read_text())["config"] for run in (same, alone)]
    assert configs[0]["system_args"] == {"top_n": 5} and configs[0]["system_config"]["demo"]["top_n"] == 5
    from ragbench.plugins.vanilla.system import Vanilla

    assert configs[1]["system_args"] == {} and configs[1]["top_k"] is None  # no --top-k: no option set by it
    assert configs[1]["system_config"]["demo"]["top_n"] == Vanilla().config()["top_n"]


def test_top_k_on_the_command_line_is_refused_in_one_line_by_a_system_without_the_option(tmp_path):
    done = cli_here(
        *cli_run_args("scripted:echo"),
        "--top-k",
        "5",
        "--output",
        str(tmp_path / "run"),
        "--no-progress",
    )
    assert done.returncode == 2 and "--top-k 5: system closed_book declares no option" in done.stderr


def test_a_budget_no_core_reads_is_refused_when_it_is_declared():
    with pytest.raises(TypeError, match="budget_options names rounds"):
        type("Odd", (System,), {"declares": SystemDeclaration(budget_options={"rounds": "max_iter"})})
    declared: Any = SystemDeclaration(budget_options={"passages": "topk"}).budget_options
    with pytest.raises(TypeError):
        declared["searches"] = "max_iter"  # read-only: shared by the class and its instances


@pytest.mark.parametrize("system", ["ircot", "iter_retgen", "self_ask", "smart"])
def test_a_system_searching_its_own_queries_over_provided_passages_is_warned_about(tmp_path, system):
    [warning] = preflight("demo", system, "scripted:echo", output=tmp_path / "run").warnings
    assert warning.startswith(f"task demo: system {system} searches with queries of its own, but retriever provided ")
    assert "--retriever example_bm25" in warning and "--retriever bm25 --retriever-arg index=DIR" in warning


@pytest.mark.parametrize("system, retriever", [("vanilla", None), ("ircot", "example_bm25"), ("ircot", "none")])
def test_no_warning_where_the_searches_can_differ_or_only_the_question_is_searched(tmp_path, system, retriever):
    assert preflight("demo", system, "scripted:echo", retriever=retriever, output=tmp_path / "run").warnings == []


def test_a_run_prints_the_warning_before_it_starts(tmp_path):
    done = cli(
        *cli_run_args("scripted:echo", system="ircot"),
        "--limit",
        "1",
        "--output",
        str(tmp_path / "run"),
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("ragbench: warning: task demo: system ircot searches with queries of its own")

"""Metrics chosen per run (--metrics NAME / +NAME) and the fit check of a metric to a task, as runs and the command
line have them. How the names combine, the fit of a class and of its instance, `ragbench list`'s counting by
group, units: test_metric_names.py."""

from __future__ import annotations

import json

import pytest
from test_crag_task import EMBEDDER

from conftest import TEST_DATA, write_jsonl
from ragbench.api import ConfigError
from support.crag_helpers import crag_record, tokenizer_dir
from support.helpers import cli_here, cli_run_args, run

PUBHEALTH = TEST_DATA / "selfrag" / "health_claims_processed.sample.jsonl"


def test_a_scoped_metric_runs_on_its_task_only(tmp_path):
    results = run(
        tmp_path,
        tasks=["demo", "pubhealth"],
        system="closed_book",
        model="scripted:echo",
        limit=2,
        data={"pubhealth": str(PUBHEALTH)},
        metrics=["em", "pubhealth:+label_accuracy"],
    )
    assert set(results["results"]["demo"]) == {"em"}
    assert set(results["results"]["pubhealth"]) == {"em", "label_accuracy"}


def test_a_scope_must_be_a_task_of_the_run(tmp_path):
    with pytest.raises(ConfigError, match=r"--metrics popqa:\+em: task 'popqa' is not among --tasks \(demo\)"):
        run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo", metrics=["popqa:+em"])
    with pytest.raises(ConfigError, match="write the task's name, popqa:"):
        run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo", metrics=["popqa_longtail:+em"])


def test_a_run_uses_the_chosen_metrics(tmp_path):
    results = run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo", limit=2, metrics=["+length"])
    assert set(results["results"]["demo"]) == {"match", "match_normalized", "em", "f1", "length"}
    only = run(tmp_path, name="b", tasks=["demo"], system="closed_book", model="scripted:echo", limit=2, metrics=["em"])
    assert set(only["results"]["demo"]) == {"em"}


def test_a_metric_that_cannot_score_the_task_is_refused_before_the_run(tmp_path):
    with pytest.raises(ConfigError, match="metric choice_accuracy cannot score task demo: it needs choices gold"):
        run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo", metrics=["+choice_accuracy"])
    assert not (tmp_path / "run").exists()


def test_list_metrics_says_which_tasks_each_fits():
    listed = cli_here("list", "metrics").stdout
    assert (
        "fits: arc_challenge, mirage_bioasq, mirage_medmcqa, mirage_medqa, mirage_mmlu, mirage_pubmedqa\n" in listed
    )  # choice_accuracy: the tasks with choices
    assert "fits: alce_asqa, asqa\n" in listed  # str_em
    # citation: the tasks whose prompts cite, which ALCE's tasks declare through the prompting their instances make
    lines = listed.splitlines()
    citation = next(i for i, line in enumerate(lines) if line.startswith("  citation "))
    assert lines[citation + 1].split() == ["fits:", "alce_asqa,", "alce_eli5,", "alce_qampari,", "asqa"]


def test_list_metrics_counts_many_tasks_by_group_and_names_them_with_verbose():
    lines = cli_here("list", "metrics").stdout.splitlines()
    em = next(i for i, line in enumerate(lines) if line.startswith("  em "))
    counted = lines[em + 1].strip()
    total = int(counted.split()[1])
    assert counted.startswith(f"fits: {total} tasks (flashrag ") and counted.endswith("; --verbose names them)")
    by_group = counted.split("(")[1].split(";")[0].split(", ")
    assert sum(int(part.split()[1]) for part in by_group) == total  # every task counted once
    verbose = cli_here("list", "metrics", "--verbose").stdout.splitlines()
    named = verbose[next(i for i, line in enumerate(verbose) if line.startswith("  em ")) + 1].strip()
    assert len(named.removeprefix("fits: ").split(", ")) == total and "fictional_multihop" in named


def test_the_chosen_metrics_are_recorded_in_the_run_config(tmp_path):
    run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo", limit=1, metrics=["em", "+length"])
    written = json.loads((tmp_path / "run" / "results.json").read_text())["config"]
    assert written["metrics"] == ["em", "+length"]
    assert [m["name"] for m in written["metric_configs"]["demo"]] == ["em", "length"]


def test_metrics_option_mixes_replacing_and_adding_names():
    result = cli_here("--tasks", "demo", "--metrics", "+nope_metric,+em")
    assert result.returncode == 2 and "unknown metric 'nope_metric'" in result.stderr


def test_crag_metrics_without_a_judge_stop_before_the_run(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [crag_record(1)])
    with pytest.raises(ConfigError, match=r"metric\(s\) crag \(crag_t1\) need a judge model; pass --judge"):
        run(
            tmp_path,
            tasks=["crag_t1"],
            system="closed_book",
            model="scripted:echo",
            data={"crag_t1": str(data)},
            task_args={"tokenizer": tokenizer_dir(), "embedder": EMBEDDER},
        )
    assert not (tmp_path / "run").exists()


def test_a_metric_alias_is_the_same_metric(tmp_path):
    results = run(
        tmp_path,
        tasks=["demo"],
        system="closed_book",
        model="scripted:echo",
        limit=1,
        metrics=["em", "+judge", "+llm_judge"],
        judges=["scripted:echo"],
        metric_args={"llm_judge.preset": "rubric"},
    )
    assert set(results["results"]["demo"]) == {"em", "llm_judge", "llm_judge_unparsed"}
    assert results["config"]["metric_configs"]["demo"][1]["preset"] == "rubric"


@pytest.mark.parametrize(
    "metric, roles",
    [("ragchecker", "extractor, checker"), ("omnieval_judge", "ModelEvaluator, HallucinationEvaluator")],
)
def test_more_judges_than_a_metric_has_roles_for_stop_before_the_run(tmp_path, metric, roles):
    """A judge past a metric's roles would be left unasked (omnieval_judge) or fail every example (ragchecker)."""
    with pytest.raises(
        ConfigError,
        match=rf"metric {metric} \(demo\) asks at most 2 judge\(s\), one per role "
        rf"\({roles}\), and 3 --judge are given; give at most 2",
    ):
        run(
            tmp_path,
            tasks=["demo"],
            system="closed_book",
            model="scripted:echo",
            metrics=[f"+{metric}"],
            judges=["scripted:echo"] * 3,
        )
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "given, said",
    [
        (
            ["--judge", "scripted:echo", "--judge", "openai:nobody"],
            "ragbench: --judge scripted:echo --judge openai:nobody is not used: no metric of this run asks a judge (add "
            "one, e.g. --metrics +llm_judge)",
        ),
        (
            ["--nli", "openai:nobody"],
            "ragbench: --nli openai:nobody is not used: no metric of this run asks an NLI model (e.g. citation, on a task "
            "whose answers cite)",
        ),
        (
            ["--judge-repeats", "3"],
            "ragbench: --judge-repeats 3 compares nothing: no metric of this run asks a judge",
        ),
    ],
    ids=["judge", "nli", "judge-repeats"],
)
def test_a_judge_or_nli_model_no_metric_asks_is_said_and_not_loaded(tmp_path, given, said):
    """A judged number the user expected is not silently missing; an engine nothing calls is neither
    checked nor loaded (openai:nobody has no API key here: checking it would stop the run)."""
    done = cli_here(
        *cli_run_args("scripted:echo"),
        "--limit",
        "1",
        *given,
        "--output",
        str(tmp_path / "run"),
        "--no-progress",
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [said]

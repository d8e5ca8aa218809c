"""The smart system: the trajectory prompts of every agent byte for byte, intent parsing and
retrieval per intent, the no-facts path, the ablations, one model per agent (--role-model, recorded
per role and replayed), the prompted mode, and SMART's answer clean-up."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import TEST_DATA
from ragbench.api import ConfigError, Document, Example
from ragbench.api.retrieval import Retriever
from ragbench.plugins.smart.prompts import (
    parse_intents,
    parse_locator,
    parse_rating,
    postprocess_answers_closed,
    split_citations,
)
from ragbench.plugins.smart.system import Smart
from ragbench.testing import cli, installed_registry, make_context
from support.helpers import run, samples

PUBHEALTH = str(TEST_DATA / "selfrag" / "health_claims_processed.sample.jsonl")
X = (
    "<|Instruction|>:\nIs the following statement correct or not? Say true if it's correct; otherwise say false."
    "\n\n<|Input|>:\nDrinking a glass of warm water with lemon each morning cures type 2 diabetes.</eoi>\n\n"
)


def llm_steps(record: dict) -> list[dict]:
    return [s for s in record["trace"] if s["kind"] == "llm"]


def pubhealth_run(tmp_path: Path, model: str = "scripted:support.smart_scripts:trajectory", **config) -> dict:
    config.setdefault("limit", 1)
    results = run(tmp_path, tasks=["pubhealth"], data={"pubhealth": PUBHEALTH}, system="smart", model=model, **config)
    return results


def test_long_trajectory_prompts_are_smart_format_byte_for_byte(tmp_path):
    results = pubhealth_run(tmp_path, system_args={"top_k": 1})
    record = samples(tmp_path / "run", "pubhealth")[0]
    reconstructor, locator, generator = llm_steps(record)
    assert reconstructor["request"]["prompt"] == X + "<|Reconstructor|>:\n"
    assert reconstructor["request"]["sampling"]["stop"] == ["</eor>"]
    assert reconstructor["request"]["sampling"]["skip_special_tokens"] is False
    # two intents, top_k=1 each: the example's own passages (ranked for the claim) give the first two
    docs = json.loads(Path(PUBHEALTH).read_text().splitlines()[0])["ctxs"][:2]
    retrieval = "".join(f"[{i}] {d['title']}\n{d['text']}" + ("\n" if i == 1 else "") for i, d in enumerate(docs, 1))
    trajectory = (
        X
        + "<|Reconstructor|>:\nSearch(first intent; second intent)</eor>\n\n<retrieval>"
        + retrieval
        + "</retrieval>\n\n<|Locator|>:\n"
    )
    assert locator["request"]["prompt"] == trajectory and locator["request"]["sampling"]["stop"] == ["</eol>"]
    assert generator["request"]["prompt"] == (
        trajectory + "[Relevant]: [1] Title one\n A located fact.\n"
        "[Irrelevant]: [2] Lacking Supporting Facts</eol>\n\n<|Generator|>:\n"
    )
    assert generator["request"]["sampling"] == {
        **generator["request"]["sampling"],
        "stop": ["</eog>"],
        "max_tokens": 50,
        "temperature": 0.0,
    }
    prediction = record["prediction"]
    trace = prediction["extras"]["smart"]
    assert trace["intents"] == ["first intent", "second intent"] and trace["trajectory"] == "long"
    assert trace["cited"] == [1] and not trace["no_facts"]  # [9] is past the passages: dropped
    # "True" before "[Cite]", lowercased by SMART's postprocess_answers_closed -> matches gold "true"
    assert prediction["answer"] == "true" and prediction["raw_output"] == "True"
    assert results["results"]["pubhealth"]["match"] == 0.0  # gold of claim 1 is "false"
    assert results["system_stats"]["pubhealth"]["mean_intents"] == 2.0


def test_without_relevant_facts_the_generator_sees_the_question_alone(tmp_path):
    pubhealth_run(tmp_path, model="scripted:support.smart_scripts:nothing_relevant")
    record = samples(tmp_path / "run", "pubhealth")[0]
    generator = llm_steps(record)[-1]
    assert generator["request"]["prompt"] == X + "<|Generator|>:\n"
    assert record["prediction"]["extras"]["smart"]["no_facts"] is True
    pubhealth_run(
        tmp_path,
        name="kept",
        model="scripted:support.smart_scripts:nothing_relevant",
        system_args={"no_facts": "trajectory"},
    )
    generator = llm_steps(samples(tmp_path / "kept", "pubhealth")[0])[-1]
    assert generator["request"]["prompt"].endswith("Lacking Supporting Facts</eol>\n\n<|Generator|>:\n")


@pytest.mark.parametrize(
    "agents, steps, generator_end",
    [
        ("no_locator", ["reconstructor", "generator"], "</retrieval>\n\n<|Generator|>:\n"),
        ("no_reconstructor", ["locator", "generator"], "</eol>\n\n<|Generator|>:\n"),
        ("generator_only", ["generator"], "</eoi>\n\n<|Generator|>:\n"),
    ],
)
def test_table_3_ablations_drop_their_agent(tmp_path, agents, steps, generator_end):
    pubhealth_run(tmp_path, system_args={"agents": agents})
    record = samples(tmp_path / "run", "pubhealth")[0]
    called = llm_steps(record)
    assert [s["name"] for s in called] == [f"smart:{name}" for name in steps]
    assert called[-1]["request"]["prompt"].endswith(generator_end)
    if agents == "no_reconstructor":  # the claim itself is the one query: top_k passages
        assert called[0]["request"]["prompt"].startswith(X + "<retrieval>[1] ")
        assert record["prediction"]["extras"]["smart"]["intents"] == [record["question"]]
    if agents == "generator_only":
        assert called[0]["request"]["prompt"] == X + "<|Generator|>:\n" and not record["prediction"].get("docs")


def test_one_model_per_agent_uses_short_trajectories_recorded_per_role_and_replayable(tmp_path):
    script = "scripted:support.smart_scripts:trajectory"
    first = pubhealth_run(
        tmp_path,
        limit=2,
        role_models={"locator": script, "generator": script},
        role_model_args={"generator": {"batch_size": 4}},
    )
    record = samples(tmp_path / "run", "pubhealth")[0]
    _, locator, generator = llm_steps(record)
    assert locator["request"]["prompt"].startswith(X + "<|retrieval|>[1] ")
    assert locator["request"]["prompt"].endswith("</retrieval>\n\n<|Locator|>\n")
    assert generator["request"]["prompt"] == (
        X + "<|Locator|>\n[Relevant]: [1] Title one\n A located fact.\n"
        "[Irrelevant]: [2] Lacking Supporting Facts</eol>\n\n<|Generator|>:\n"
    )
    calls = [json.loads(line) for line in (tmp_path / "run" / "calls" / "llm.jsonl").read_text().splitlines()]
    assert sorted({c["role"] for c in calls}) == ["generator", "locator", "model"]
    assert [s.get("role") for s in llm_steps(record)] == [None, "locator", "generator"]  # each priced by its model
    assert list(first["model_cost"]["pubhealth"]["by_model"]) == ["model", "locator", "generator"]
    assert first["config"]["role_models"] == {"locator": script, "generator": script}
    replaying = ["--replay", str(tmp_path / "run"), "--output", str(tmp_path / "replay"), "--no-progress"]
    assert CliRunner().invoke(cli, replaying).exit_code == 0
    replayed = json.loads((tmp_path / "replay" / "results.json").read_text())
    assert replayed["results"] == first["results"] and replayed["complete"]


def test_role_models_are_checked_before_the_run(tmp_path):
    with pytest.raises(ConfigError, match="no role 'judge'"):
        pubhealth_run(tmp_path, role_models={"judge": "scripted:echo"})
    with pytest.raises(ConfigError, match="has a single model"):
        run(
            tmp_path,
            tasks=["pubhealth"],
            data={"pubhealth": PUBHEALTH},
            system="vanilla",
            model="scripted:echo",
            role_models={"generator": "scripted:echo"},
        )


def test_role_model_command_line_options(tmp_path):
    from support.helpers import cli_here

    bad = cli_here("--tasks", "pubhealth", "--system", "smart", "--role-model", "locator", "--no-progress")
    assert bad.returncode == 2 and "expected ROLE=ENGINE:MODEL" in bad.stderr
    bad = cli_here(
        "--tasks",
        "pubhealth",
        "--system",
        "smart",
        "--role-model",
        "locator=scripted:echo",
        "--role-model-arg",
        "generator.batch_size=2",
        "--no-progress",
    )
    assert bad.returncode == 2 and "ROLE one of the --role-model roles (locator)" in bad.stderr


def test_prompted_mode_locates_per_passage_and_answers_with_the_task_prompt(tmp_path):
    results = pubhealth_run(tmp_path, model="scripted:support.smart_scripts:prompted", system_args={"mode": "prompted"})
    record = samples(tmp_path / "run", "pubhealth")[0]
    steps = llm_steps(record)
    assert [s["name"] for s in steps] == ["smart:reconstructor"] + ["smart:locator"] * 3 + ["smart:generator"]
    assert all(s["request"]["messages"][0]["role"] == "user" for s in steps)  # chat, for instruct models
    trace = record["prediction"]["extras"]["smart"]
    assert trace["intents"] == ["lemon water diabetes", "diabetes cure"]
    assert [f["relevant"] for f in trace["located"]] == [True, False, False]
    # the generator reads the located fact through the task's own (Self-RAG baseline) prompt
    generator = steps[-1]["request"]["messages"][0]["content"]
    assert "[1] Type 2 diabetes\nNo single food or drink has been shown to reverse the condition." in generator
    assert record["prediction"]["docs"][0]["text"].startswith("No single food")
    assert results["results"]["pubhealth"]["match"] == 1.0


class IntentCorpus(Retriever):
    """A corpus retriever (not the example's own documents): each query finds "shared", then its own."""

    name = "intent_corpus"

    def search(self, queries, k):
        return [
            [Document(id=f"{query}-{i}" if i else "shared", title="t", text=query) for i in range(k)]
            for query in queries
        ]


def searches(ctx) -> list[tuple[str, int]]:
    return [(step.request["query"], step.request["k"]) for step in ctx.trace if step.kind == "retrieval"]


def test_knowledge_retriever_searches_each_intent_and_drops_repeats():
    from ragbench.tasks.selfrag.demo import Demo

    ctx = make_context(Demo, retriever=IntentCorpus())
    example = Example(id="1", question="q", gold={})
    docs = asyncio.run(Smart(top_k=2).retrieve(example, ctx, ["a", "b"]))
    assert searches(ctx) == [("a", 2), ("b", 2)] and [d.id for d in docs] == ["shared", "a-1", "b-1"]
    ctx = make_context(Demo, retriever=IntentCorpus())
    asyncio.run(Smart(intent_retrieval="joined").retrieve(example, ctx, ["a", "b"]))
    assert searches(ctx) == [("a; b", 3)]


def test_trajectory_parsers():
    assert parse_intents("Search(Time and shadow positioning\n How to tell the time)") == [
        "Time and shadow positioning",
        "How to tell the time",
    ]
    assert parse_intents("no search call here") == ["no search call here"] and parse_intents("Search()") == []
    facts = parse_locator(
        "[Relevant]: [1] Bitopertin\nIn January 2014, Roche reported.\nMore.\n"
        "[Irrelevant]: [2] Lacking Supporting Facts\n[Relevant] [3] T3\nfact three"
    )
    assert [(f.number, f.relevant, f.title, f.fact) for f in facts] == [
        (1, True, "Bitopertin", "In January 2014, Roche reported.\nMore."),
        (2, False, "Lacking Supporting Facts", ""),
        (3, True, "T3", "fact three"),
    ]
    assert split_citations("B: transportation\n[Cite]: [1] [2] [3]</eog>") == ("B: transportation", [1, 2, 3])
    assert split_citations("The answer.\n[Cite] : [2] [3]") == ("The answer.", [2, 3])
    assert split_citations("Answer without citations\n[Cite]: ") == ("Answer without citations", [])
    assert parse_rating(" [Relevant]\n\nExtracted span: A sentence.\n\n###\nQuestion") == (True, "A sentence.")
    assert parse_rating("[Irrelevant]\nExtracted span: None.") == (False, "")


@pytest.mark.parametrize(
    "task, rules", [("pubhealth", "fever"), ("arc_challenge", "arc_c"), ("kilt_fever", None), ("popqa", None)]
)
def test_smart_closed_postprocess_only_on_the_labels_it_was_written_for(task, rules):
    """Its fever rules make "SUPPORTS" PubHealth's "true": on KILT FEVER, whose gold is "SUPPORTS", they
    would turn every right answer wrong."""
    task_object = installed_registry().load("tasks", task)()
    assert Smart().closed_rules(task_object) == rules
    assert Smart(closed_postprocess="none").closed_rules(task_object) is None


def test_smart_closed_postprocess_keeps_its_bugs():
    assert postprocess_answers_closed("True", "fever") == "true"
    assert postprocess_answers_closed("REFUTES", "fever") == "REFUTES"
    assert postprocess_answers_closed("no", "fever") == "no" and postprocess_answers_closed("yes", "fever") == "true"
    assert postprocess_answers_closed("incorrect", "fever") == "no"
    assert postprocess_answers_closed("A: DNA", "arc_c", "A B C D") == "D"  # the last listed letter found wins
    assert postprocess_answers_closed("A: DNA", "arc_c") == "A: DNA"


def test_options_are_checked():
    for bad in ({"mode": "agents"}, {"agents": "two"}, {"top_k": 0}, {"closed_postprocess": "x"}):
        with pytest.raises(ConfigError, match="system smart"):
            Smart(**bad)


def test_outputs_that_ignore_smarts_format_are_counted_and_warned_with_the_fix(tmp_path):
    def smart_run(name: str, model: str) -> tuple[dict, list[str]]:
        """The run's results.json and the lines the command line says of it on stderr."""
        out = tmp_path / name
        args = ["--tasks", "pubhealth", "--data", f"pubhealth={PUBHEALTH}", "--system", "smart", "--model", model]
        said = CliRunner().invoke(cli, [*args, "--limit", "3", "--output", str(out), "--no-progress"])
        assert said.exit_code == 0, said.output
        return json.loads((out / "results.json").read_text()), said.stderr.splitlines()

    trained, said = smart_run("trained", "scripted:support.smart_scripts:trajectory")
    assert trained["format_adherence"]["pubhealth"][0]["followed"] == 3
    assert not [line for line in said if "warning" in line]
    results, said = smart_run("untrained", "scripted:support.smart_scripts:untrained")
    check = results["format_adherence"]["pubhealth"][0]
    assert (check["followed"], check["of"]) == (0, 3)
    warning = next(line for line in said if "warning" in line)
    assert "3 of 3 outputs (100%) did not follow smart's format (Reconstructor intents as Search(" in warning
    assert "--system-arg mode=prompted" in warning
    assert "did not follow smart's format" in (tmp_path / "untrained" / "report.md").read_text()

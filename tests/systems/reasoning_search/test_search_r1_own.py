"""`search_r1_own`'s rules one by one: the question as Search-R1's scripts normalise it, the query read from the
whole text, the answer as Search-R1's scorer reads it (values recorded from verl/utils/reward_score/qa_em.py at
commit a14dc3a, tests/data/search_r1_own/infer.json), the loop's ends (the model's end, the rounds), and a failed
search (infer.py fails, BrowseComp-Plus's client goes on with "Search failed"). The call-for-call comparison with
both scripts is tests/systems/reasoning_search/test_search_r1_own_parity.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragbench.api import ConfigError
from ragbench.plugins.reasoning_search.search_r1_own import last_query, normalised_question, qa_em_answer
from support import paths
from support.helpers import closed_port, preflight_problems, run, samples

DATA = paths.DATA / "search_r1_own"


@given(st.text())
def test_a_question_is_stripped_and_ends_with_a_question_mark(question):
    normalised = normalised_question(question)
    assert normalised.endswith("?")
    assert normalised in (question.strip(), question.strip() + "?")
    assert normalised_question(normalised) == normalised


@given(st.text(), st.text().filter(lambda q: "</search>" not in q), st.text().filter(lambda t: "<search>" not in t))
def test_the_query_is_the_last_search_tag_of_the_whole_text_unstripped(before, query, after):
    assert last_query(f"{before}<search>{query}</search>{after}") == query


def test_no_search_tag_is_no_query():
    assert last_query("no tags <search> open") is None


def test_the_answer_is_read_as_search_r1s_scorer_reads_it():
    recorded = json.loads((DATA / "infer.json").read_text(encoding="utf-8"))["qa_em"]
    assert len(recorded) == 6
    for text, answer in recorded.items():
        assert qa_em_answer(text) == (answer or ""), text


def write_task(folder: Path) -> Path:
    (folder / "qa.jsonl").write_text(json.dumps({"id": "q1", "question": "who founded Olm", "golden_answers": ["Ann"]}))
    return folder / "qa.jsonl"


def one_run(
    tmp_path: Path, rules: list[dict], searches: list[dict], model: str = "", base_url: str = "", **system_args
) -> dict:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "rules.json").write_text(json.dumps(rules))
    (tmp_path / "searches.jsonl").write_text("".join(json.dumps(s) + "\n" for s in searches))
    (tmp_path / "corpus.jsonl").write_text(json.dumps({"id": "1", "contents": '"Olm"\nOlm was founded by Ann.'}))
    run(
        tmp_path,
        tasks=["nq_open_flashrag"],
        data={"nq_open_flashrag": str(write_task(tmp_path))},
        system="search_r1_own",
        system_args=system_args,
        model=model or f"scripted:{tmp_path / 'rules.json'}",
        model_args={"base_url": base_url} if base_url else {},
        retriever="replay",
        retriever_args={"file": str(tmp_path / "searches.jsonl"), "corpus": str(tmp_path / "corpus.jsonl")},
        metrics=["em"],
    )
    (line,) = samples(tmp_path / "run", "nq_open_flashrag")
    return line


SEARCHES = [{"query": " Olm founder ", "ids": ["1"], "scores": [1.0]}]


def test_the_rounds_end_at_the_model_s_end_and_the_question_gets_its_question_mark(tmp_path):
    rules = [
        {"pattern": "</information>\n\n$", "response": "<think> found </think> <answer> Ann </answer>"},
        {"pattern": r"Question: who founded Olm\?\n", "response": "<search> Olm founder </search> and on"},
    ]
    line = one_run(tmp_path, rules, SEARCHES)
    assert line["prediction"]["answer"] == "Ann"
    assert line["prediction"]["extras"]["reasoning_search"] == {"rounds": 2, "searches": 1, "finish": "answer"}
    assert (
        '\n\n<search> Olm founder </search><information>Doc 1(Title: "Olm") Olm was founded by Ann.\n'
        in (line["prediction"]["raw_output"])
    )


def test_a_model_that_never_ends_runs_out_of_the_rounds_given_and_is_read_as_the_scorer_reads_it(tmp_path):
    rules = [{"response": "<search> Olm founder </search>"}]
    line = one_run(tmp_path, rules, SEARCHES, max_retrieval_num=3)
    assert line["prediction"]["extras"]["reasoning_search"] == {"rounds": 3, "searches": 3, "finish": "rounds_out"}
    assert line["prediction"]["answer"] == "Beijing"  # the prompt's example answer, as qa_em.py reads it


def test_a_model_that_ends_without_an_answer_is_counted_so_and_read_as_the_scorer_reads_it(tmp_path):
    line = one_run(tmp_path, [{"response": "<think> no idea </think>"}], SEARCHES)
    assert line["prediction"]["extras"]["reasoning_search"] == {"rounds": 1, "searches": 0, "finish": "no_answer"}
    assert line["prediction"]["answer"] == "Beijing"


@pytest.mark.parametrize(
    ("response", "answer"),
    [("<think> no idea </think>", ""), ("<answer> Ann </answer> or <answer> Olm </answer>", "Olm")],
)
def test_answer_from_response_reads_only_what_the_model_wrote(tmp_path, response, answer):
    line = one_run(tmp_path, [{"response": response}], SEARCHES, answer_from="response")
    assert line["prediction"]["answer"] == answer


def test_a_failed_search_fails_the_example_under_infer_and_goes_on_under_browsecomp_plus(tmp_path):
    rules = [
        {"pattern": "</information>\n\n$", "response": "<answer> Ann </answer>"},
        {"response": "<search> unrecorded </search>"},
    ]
    failed = one_run(tmp_path / "infer", rules, SEARCHES)
    assert failed["error"] is not None
    client = one_run(tmp_path / "client", rules, SEARCHES, client="browsecomp_plus", snippet_max_tokens=0)
    assert client["error"] is None
    extras = client["prediction"]["extras"]
    assert extras["status"] == "completed" and extras["tool_call_counts"] == {"search": 1}
    assert extras["result"][0] == {
        "type": "tool_call",
        "tool_name": "search",
        "arguments": {"query": " unrecorded "},
        "output": "Search failed",
    }


def test_an_engine_that_cannot_tell_a_stop_string_from_the_model_s_end_is_refused_before_the_run(tmp_path):
    with (
        closed_port() as port,
        pytest.raises(
            ConfigError,
            match="search_r1_own on nq_open_flashrag reads whether each output ended at a stop string or at the "
            "model's own end, which the openai engine cannot tell",
        ),
    ):
        one_run(tmp_path, [], SEARCHES, model="openai:m", base_url=f"http://127.0.0.1:{port}/v1")


def test_a_snippet_tokenizer_not_on_disk_is_a_preflight_problem_beside_the_others(tmp_path):
    """Not an error at construction, which would hide the run's other problems: the pre-flight says it with them."""
    problems = preflight_problems(
        tmp_path,
        tasks=["fictional_multihop"],
        system="search_r1_own",
        model="scripted:echo",
        limit=1,
        metrics=["+choice_accuracy"],  # a second problem, found once the task's system is built
        system_args={"client": "browsecomp_plus", "snippet_tokenizer": str(tmp_path / "absent")},
    )
    assert any("search_r1_own: snippets are cut in tokens of" in line for line in problems)
    assert any("metric choice_accuracy cannot score task fictional_multihop" in line for line in problems)

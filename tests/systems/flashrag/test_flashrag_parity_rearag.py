"""FlashRAG's ReaRAG pipeline against `rearag`, call for call. FlashRAG's run_exp sets `is_reasoning`, so every
conversation is rendered with the chat template (its `chat` form is `same_as` its `plain` one): compared with a
chat model, and on the openai engine with its `openai` form (where FlashRAG appends the first stop string to an
answer that ends with none, as the engine does for `keep_stop`). Its long-answer calls sample at vLLM's default
temperature (FlashRAG sets none) with its config's seed, as `rearag` does by default."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragbench.plugins.rearag.actions import extract_code, first_action, next_move, reasoning_steps
from ragbench.plugins.rearag.system import FLASHRAG_SEED
from support.flashrag_parity import assert_parity, fixture, run_parity


@pytest.mark.parametrize("form", ["chat", "openai"])
def test_rearag_makes_flashrags_calls(tmp_path, form):
    assert_parity(tmp_path, "rearag", form, "rearag")


def test_a_greedy_long_answer_is_an_option(tmp_path):
    calls, _ = run_parity(tmp_path, "rearag", "chat", "rearag", system_args={"long_answer_temperature": 0})
    assert {call[2]["temperature"] for example in calls.values() for call in example if call[0] == "llm"} == {0}


def test_without_flashrags_seed_each_long_answer_is_seeded_from_the_run(tmp_path):
    calls, _ = run_parity(tmp_path, "rearag", "chat", "rearag", system_args={"long_answer_seed": None})
    seeds = [call[2]["seed"] for made in calls.values() for call in made if call[0] == "llm" and "seed" in call[2]]
    assert len(seeds) == len(set(seeds)) == 8 and FLASHRAG_SEED not in seeds


def _outputs():
    doc = fixture("rearag")
    return [
        event["output"]
        for form in ("plain", "openai")
        for example in doc["forms"][form]["examples"]
        for event in example["events"]
        if event["type"] == "llm" and "Action" in event["output"]
    ]


def test_literal_eval_reads_every_recorded_action_as_eval_did():
    outputs = _outputs()
    assert len(outputs) > 20
    for output in outputs:
        (_, step), *_ = reasoning_steps(output)
        assert first_action(output) == eval(extract_code(step["Action"]))  # FlashRAG's own reading


def test_actions_that_are_not_literals_are_not_run():
    assert first_action("Thought 1: x\nAction 1: ```\n__import__('os').getcwd()\n```") is None
    assert first_action("Thought 1: x\nAction 1: ```\n{'function': 'search'}\n```") is None  # no parameters
    assert first_action("Thought 1: no action") is None
    assert first_action("no steps at all") is None
    # every step's action must read, the first is taken
    two = "Thought 1: a\nAction 1: `{'function': 'search', 'parameters': {'query': 'q'}}`\nThought 2: b\nAction 2: `{`"
    assert first_action(two) is None
    assert first_action(two[: two.index("\nThought 2")])["parameters"] == {"query": "q"}


def test_actions_lead_to_a_search_a_finish_or_a_restart():
    assert next_move({"function": "search", "parameters": {"query": "q"}}) == ("search", "q")
    assert next_move({"function": "finish", "parameters": {"answer": 1969}}) == ("finish", "1969")
    assert next_move({"function": "search", "parameters": {"query": b"q"}}) == ("restart", "")
    assert next_move({"function": "finish", "parameters": {"query": "q"}}) == ("restart", "")
    assert next_move({"function": "lookup", "parameters": {"query": "q"}}) == ("restart", "")
    assert next_move(None) == ("restart", "")


@given(st.text(max_size=40).filter(lambda query: "`" not in query))
def test_any_query_in_a_search_action_reads_back(query):
    action = {"function": "search", "parameters": {"query": query}}
    assert first_action(f"Thought 1: look.\nAction 1: ```\n{action!r}\n```") == action

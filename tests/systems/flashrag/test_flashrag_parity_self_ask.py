"""FlashRAG's Self-Ask (`SelfAskPipeline`, Ret-Robust's settings in run_exp.py) against `self_ask`, call for call.
Its prompt is one raw string for any model, so its chat form is its plain form (`same_as`); `self_ask` sends the
string to a chat model as well. The prediction is `selfask_pred_parse`'s, `raw_output` the text it parses."""

import pytest

from support.flashrag_parity import assert_parity, expected_calls, fixture, run_parity


@pytest.mark.parametrize("form", ["plain", "chat"])
def test_self_ask_matches_flashrag(tmp_path, form):
    assert_parity(tmp_path, "self_ask", form, "self_ask")


def test_self_ask_raw_output_is_what_flashrag_parses(tmp_path):
    _, raw = run_parity(tmp_path, "self_ask", "plain", "self_ask", field="raw_output")
    examples = fixture("self_ask")["forms"]["plain"]["examples"]
    assert raw == {example["id"]: example["output_fields"]["raw_pred"] for example in examples}


def test_self_ask_fixed_searches_the_follow_up_after_a_kept_follow_up(tmp_path):
    calls, _ = run_parity(tmp_path, "self_ask", "plain", "self_ask_fixed")
    searches = [call[1] for call in calls["hotpot_1"] if call[0] == "retrieve"]
    flashrag = [call[1] for call in expected_calls("self_ask", "plain")["hotpot_1"] if call[0] == "retrieve"]
    assert flashrag == [
        "Which country is the birthplace of the physicist who discovered polonium?",
        "polonium discovered physicist?",
    ]
    assert searches == [*flashrag, "Marie Curie born?"]


def test_self_ask_token_budget_is_its_own_unless_given(tmp_path):
    """The FlashRAG tasks declare max_tokens 32 for their readers; Self-Ask keeps run_exp.py's 100 (the parity
    tests) and --system-arg max_tokens still sets it."""
    calls, _ = run_parity(tmp_path, "self_ask", "plain", "self_ask", system_args={"max_tokens": 7})
    assert {call[2]["max_tokens"] for made in calls.values() for call in made if call[0] == "llm"} == {7}

"""FlashRAG's O2-Searcher pipeline against `o2_searcher`, call for call, with a plain and with a chat model (its
conversation is whole messages, so both forms compare exactly). The `openai` form is not compared: FlashRAG
fails there (it concatenates a message list and a string, recorded as its error)."""

import pytest

from ragbench.plugins.reasoning_search.o2_searcher import read_o2_output
from support.flashrag_parity import assert_parity, fixture


@pytest.mark.parametrize("form", ["plain", "chat"])
def test_o2_searcher_makes_flashrags_calls(tmp_path, form):
    assert "error" in fixture("o2_searcher")["forms"]["openai"]
    assert_parity(tmp_path, "o2_searcher", form, "o2_searcher")


def test_outputs_are_read_as_flashrag_does():
    turn = read_o2_output(" go <search>\n<query> a </query>\n<query>b</query>\n</search>")
    assert (turn.kind, turn.queries) == ("search", (" a ", "b"))
    # cut at the stop string "></search": completed with ">"
    assert read_o2_output("<search><query>a</query>></search").queries == ("a",)
    assert read_o2_output("x </answer> more").text == "None"  # "</answer>" anywhere answers
    assert read_o2_output("<answer> yes </answer>").text == "yes"
    assert read_o2_output("<search> no query tags </search>").kind == "bad_query"
    assert read_o2_output("<search></search>").kind == "bad_query"
    assert read_o2_output(" I think so. ").kind == "unformatted"

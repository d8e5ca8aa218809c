"""FlashRAG's reasoning-search pipelines (R1-Searcher, Search-R1, AutoRefine, SimpleDeepSearcher) against
`r1_searcher`, `search_r1`, `autorefine` and `simple_deep_searcher`, call for call, with a plain and with a chat
model. FlashRAG's chat form renders the chat template and appends what the model wrote; ragbench sends that
text as a final assistant message to continue, compared as the string FlashRAG rendered
(flashrag_parity.chat_input). The `openai` form is not compared: FlashRAG fails there (it concatenates a
message list and a string, recorded as its error)."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragbench.plugins.reasoning_search.system import (
    AUTOREFINE,
    R1_SEARCHER,
    SEARCH_R1,
    SIMPLE_DEEP_SEARCHER,
    extract_between,
    read_output,
)
from support.flashrag_parity import assert_parity, fixture, run_parity

METHODS = ["r1_searcher", "search_r1", "autorefine", "simple_deep_searcher"]


@pytest.mark.parametrize("form", ["plain", "chat"])
@pytest.mark.parametrize("method", METHODS)
def test_reasoning_search_makes_flashrags_calls(tmp_path, method, form):
    assert "error" in fixture(method)["forms"]["openai"]
    assert_parity(tmp_path, method, form, method)


def test_rounds_searches_and_the_format_are_reported(tmp_path):
    run_parity(tmp_path, "search_r1", "plain", "search_r1")
    results = json.loads((tmp_path / "search_r1_plain" / "results.json").read_text())
    # FlashRAG's six: one answers at once, two after one search, two after two, one (no answer tags) after two
    assert results["system_stats"]["nq_open_flashrag"] == {
        "examples": 6,
        "mean_rounds": round(14 / 6, 3),
        "mean_searches": round(8 / 6, 3),
        "finish": {"answer": 5, "unformatted": 1},
    }
    (adherence,) = results["format_adherence"]["nq_open_flashrag"]
    assert (adherence["followed"], adherence["of"]) == (5, 6)


def test_the_formats_read_outputs_as_flashrag_does():
    assert read_output(" x. </think>\n\n<answer> Poland </answer>", SEARCH_R1).text == "Poland"
    assert read_output(" so <search> Marie Curie born </search>", SEARCH_R1).text == "Marie Curie born"
    assert read_output(" so <search> </search>", SEARCH_R1).kind == "search"  # an empty query is still searched
    assert read_output(" <|begin_of_query|> a <|end_of_query|>", R1_SEARCHER).text == "a"
    assert read_output(" so <search> q </search>", AUTOREFINE).kind == "search"
    assert read_output(" I think it is Ohio. ", R1_SEARCHER).text == "I think it is Ohio."
    # </answer> inside an output that does not end with it is no answer; nor is a search tag not at the end
    assert read_output(" <answer> a </answer> and more", SEARCH_R1).kind == "unformatted"
    assert read_output(" <search> q </search> more", SEARCH_R1).kind == "unformatted"
    # "</answer>" with no "<answer>": FlashRAG's str(None)
    assert read_output(" a </answer>", SEARCH_R1).text == "None"
    assert read_output(" \\boxed{Warsaw} and \\boxed{Poland}.", SIMPLE_DEEP_SEARCHER).text == "Poland"
    assert read_output(" \\boxed without braces", SIMPLE_DEEP_SEARCHER).text == "None"


@given(st.text(), st.text(alphabet=st.characters(blacklist_characters="<>"), max_size=20))
def test_a_search_tag_at_the_end_is_read_as_its_last_query(before, query):
    output = f"{before}<search>{query}</search>"
    turn = read_output(output, SEARCH_R1)
    if "</answer>" in output and output.endswith("</answer>"):
        return
    assert turn.kind == "search" and turn.text == extract_between(output, "<search>", "</search>")

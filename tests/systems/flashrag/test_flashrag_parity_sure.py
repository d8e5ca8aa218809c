"""FlashRAG's SuRe (`SuRePipeline`) against `sure`, call for call, with a plain and with a chat model (each prompt
one user message) and on the openai engine, and `sure_fixed`, which differs only in the spaces FlashRAG's prompts
lack."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.plugins.sure.prompts import JOINED_WORDS
from ragbench.plugins.sure.system import best_candidate, parse_candidates, parse_ranking, parse_validation, ranking_rows
from support.flashrag_parity import assert_parity, run_parity


@pytest.mark.parametrize("form", ["plain", "chat", "openai"])
def test_sure_is_flashrags_sure(tmp_path, form):
    assert_parity(tmp_path, "sure", form, "sure")


def test_sure_fixed_sends_the_prompts_with_their_spaces(tmp_path):
    calls, _ = run_parity(tmp_path, "sure", "plain", "sure_fixed")
    prompts = [call[1] for example in calls.values() for call in example if call[0] == "llm"]
    assert prompts and not any(joined in p for p in prompts for joined in JOINED_WORDS)
    assert any("After reading the passages" in p for p in prompts)
    assert any("write a good-quality passage" in p for p in prompts)
    assert any("provides a more informative" in p for p in prompts)


def test_parsing_follows_flashrag():
    assert parse_candidates(" (a) Jane Austen, (b) Pride\nmore") == ["Jane Austen", "Pride"]
    assert parse_candidates("no list here") == []
    assert parse_candidates("(a) 1,000 people (b) x") == ["1000 people", "x"]
    assert [parse_validation(r) for r in (" True", "FALSE", "it is true")] == [1, 0, 1]
    assert [parse_ranking(r) for r in (" Passage 1", "passage 2.", "Neither")] == [1, 0, 0.5]
    # validation + ranking row sums; the first of equal totals wins
    assert ranking_rows(3, {(0, 1): 1, (0, 2): 0.5, (1, 0): 0, (2, 1): 1}) == [1.5, 0, 1]
    assert best_candidate([1, 1], ranking_rows(2, {(0, 1): 0, (1, 0): 0.5})) == 1
    assert best_candidate([1, 1], ranking_rows(2, {(0, 1): 0.5, (1, 0): 0.5})) == 0
    assert best_candidate([0], ranking_rows(1, {})) == 0


@settings(max_examples=60)
@given(st.text(alphabet=st.sampled_from("ab (),\n:x1"), max_size=40))
def test_candidates_parse_from_any_reply(reply):
    candidates = parse_candidates(reply)
    assert len(candidates) <= reply.count("(")
    assert all("," not in c and "(" not in c and ")" not in c and "\n" not in c and c == c.strip() for c in candidates)

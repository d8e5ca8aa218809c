"""FlashRAG's CoRAG pipeline against `corag`, call for call. FlashRAG's run_exp sets `is_reasoning`, so every
prompt is rendered with the chat template (its `chat` form is `same_as` its `plain` one): compared with a chat
model, and on the openai engine with its `openai` form. The fixture was recorded with run_exp's multi-hop task
description."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragbench.plugins.corag.prompts import MULTI_HOP_TASK_DESC, TASK_DESC, WIKI_TASK_DESC
from ragbench.plugins.corag.system import normalize_subquery, task_description
from support.flashrag_parity import assert_parity


@pytest.mark.parametrize("form", ["chat", "openai"])
def test_corag_makes_flashrags_calls(tmp_path, form):
    assert_parity(tmp_path, "corag", form, "corag", system_args={"task_desc": MULTI_HOP_TASK_DESC})


def test_subqueries_are_normalized_as_flashrag_does():
    assert normalize_subquery(' "polonium discovered physicist"\n') == "polonium discovered physicist"
    assert normalize_subquery("Intermediate query 3: Marie Curie born details") == "Marie Curie born details"
    assert normalize_subquery('"Intermediate query 2: x"') == "x"
    assert normalize_subquery('"') == ""
    assert normalize_subquery("Intermediate query: x") == "Intermediate query: x"


@given(st.text(alphabet=st.characters(blacklist_characters='"'), max_size=30))
def test_a_quoted_subquery_loses_only_its_quotes(query):
    stripped = query.strip()
    assert normalize_subquery(f'"{stripped}"') == normalize_subquery(stripped)


def test_the_task_description_follows_run_exp_by_dataset():
    assert task_description("hotpotqa_distractor_flashrag") == MULTI_HOP_TASK_DESC
    assert task_description("nq_open_flashrag") == WIKI_TASK_DESC
    assert task_description("popqa") == TASK_DESC

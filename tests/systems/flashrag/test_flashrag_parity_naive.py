"""FlashRAG's naive RAG (`SequentialPipeline`) and zero-shot generation against `vanilla` (top 5) and
`closed_book` on a FlashRAG-format task, call for call, with a plain and with a chat model and on the openai
engine. FlashRAG's vLLM generator adds "<|eot_id|>" to every stop list: given as the readers' `stop` here. Its
prediction is the unprocessed output, a reader's `raw_output`."""

import pytest

from support.flashrag_parity import assert_parity


@pytest.mark.parametrize("form", ["plain", "chat", "openai"])
def test_naive_rag_is_vanilla_with_the_top_5(tmp_path, form):
    assert_parity(
        tmp_path,
        "naive",
        form,
        "vanilla",
        field="raw_output",
        system_args={"top_n": 5, "max_tokens": 32, "stop": ["<|eot_id|>"]},
    )


@pytest.mark.parametrize("form", ["plain", "chat", "openai"])
def test_zero_shot_is_closed_book(tmp_path, form):
    assert_parity(
        tmp_path,
        "zero_shot",
        form,
        "closed_book",
        system_args={"max_tokens": 32, "stop": ["<|eot_id|>"]},
        field="raw_output",
    )

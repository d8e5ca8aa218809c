"""FlashRAG's Iter-RetGen (`IterativePipeline`, 3 rounds) against `iter_retgen`, call for call, with a plain and
with a chat model and on the openai engine: each round's query is the question and the previous raw generation,
the prediction the last generation unprocessed."""

import pytest

from support.flashrag_parity import assert_parity


@pytest.mark.parametrize("form", ["plain", "chat", "openai"])
def test_iter_retgen_matches_flashrag(tmp_path, form):
    assert_parity(tmp_path, "iter_retgen", form, "iter_retgen")

"""The batch price of a model (`--model-arg batch=true`, ragbench._cost.prices): the price table's batch prices
where it gives both, else half the table's prices, the built-in OpenAI prices halved too; a table entry with one
batch price only is refused in one line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._cost.prices import model_price, read_price_table
from ragbench.api import ConfigError

finite = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=50, deadline=None)
@given(prompt=finite, completion=finite, batch=st.none() | st.tuples(finite, finite))
def test_the_batch_price_is_the_tables_batch_price_else_half(prompt, completion, batch):
    entry = {"prompt": prompt, "completion": completion}
    if batch is not None:
        entry.update(batch_prompt=batch[0], batch_completion=batch[1])
    table = {"openai:m": entry}
    assert model_price("openai:m", {}, table) == {"prompt": prompt, "completion": completion}
    given_batch = (prompt / 2, completion / 2) if batch is None else batch
    expected = {"prompt": given_batch[0], "completion": given_batch[1]}
    assert model_price("openai:m", {"batch": True}, table) == expected


def test_the_default_openai_prices_are_halved_for_a_batch_model():
    halved = {"prompt": 0.075, "completion": 0.3, "cached_prompt": 0.0375}  # the cached-input price too
    assert model_price("openai:gpt-4o-mini", {"batch": True}, {}) == halved


@pytest.mark.parametrize("entry", ["{prompt: 1, completion: 2, batch_prompt: 0.5}", "{prompt: 1, batch_prompt: 1}"])
def test_a_table_entry_with_one_batch_price_only_is_refused_in_one_line(tmp_path, entry):
    table = tmp_path / "prices.yaml"
    table.write_text(f"m: {entry}\n")
    with pytest.raises(ConfigError) as raised:
        read_price_table(table)
    assert "batch_prompt and batch_completion" in str(raised.value) and "\n" not in str(raised.value)

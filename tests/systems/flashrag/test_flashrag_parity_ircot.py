"""FlashRAG's IRCoT (`IRCOTPipeline`, max_iter 5) against `ircot`, call for call. FlashRAG renders IRCoT's
prompt as one string for a chat model too (`enable_chat=False`), so its chat form is its plain form
(`same_as`); `ircot` sends the string to a chat model as well. `ircot_fixed` orders the passages best first."""

import pytest

from support.flashrag_parity import assert_parity, run_parity
from support.helpers import samples


@pytest.mark.parametrize("form", ["plain", "chat"])
def test_ircot_matches_flashrag(tmp_path, form):
    assert_parity(tmp_path, "ircot", form, "ircot")


def test_ircot_raw_output_is_the_joined_thoughts(tmp_path):
    _, raw = run_parity(tmp_path, "ircot", "plain", "ircot", field="raw_output")
    assert (
        raw["hotpot_1"]
        == " Polonium was discovered by Marie Curie.  Marie Curie was born in Warsaw, Poland\n  So the answer is: Poland."
    )


def pool_order(tmp_path, system):
    tmp_path.mkdir()
    run_parity(tmp_path, "ircot", "plain", system)
    return {
        s["id"]: [d["score"] for d in s["prediction"]["docs"]]
        for s in samples(tmp_path / "ircot_plain", "nq_open_flashrag")
    }


def test_ircot_fixed_shows_the_best_passage_first(tmp_path):
    flashrag = pool_order(tmp_path / "a", "ircot")
    fixed = pool_order(tmp_path / "b", "ircot_fixed")
    assert flashrag["hotpot_1"] == sorted(flashrag["hotpot_1"])
    assert fixed["hotpot_1"] == sorted(flashrag["hotpot_1"], reverse=True)
    assert fixed["hotpot_1"][0] == 4.381725  # Warsaw, found by the second thought

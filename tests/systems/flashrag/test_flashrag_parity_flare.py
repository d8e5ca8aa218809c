"""FlashRAG's FLARE (`FLAREPipeline`, recorded with its HF generator) against `flare`, call for call with a plain
and with a chat model. The model is the recorder's fake causal LM as per-token answers in the recording's tokens
(SmolLM2's, the embedded model's tokenizer), so FLARE's judgement reads the same token probabilities and decodes
the same queries; the scripted engine ends each look-ahead at its budget or stop string and cuts the text there,
as FlashRAG's HF generator does. With a chat model FlashRAG appends the kept sentences to the rendered chat
template; `flare` sends them as a final assistant message to continue, compared as the string FlashRAG rendered
(the HF recording shows it without the template's special tokens: flashrag_parity.recorded_input)."""

import pytest

from support.flashrag_parity import assert_parity, expected_calls, recording_tokenizer, run_parity
from support.helpers import samples

MODEL = "scripted:support.flashrag_parity:fake_flare_model"


@pytest.fixture(autouse=True, scope="module")
def embedded_tokenizer():
    """The recording's tokens are SmolLM2's: the embedded model's safetensors copy, whose tokenizer
    `tokenizer=embedded` reads, converted here where no earlier test of the session made it. (A skip on its absence,
    decided while the file was collected, before any test had converted it, skipped these tests in every run.)"""
    from ragbench.api.engines import embedded_safetensors_dir

    embedded_safetensors_dir()
    assert recording_tokenizer() is not None


def test_flare_matches_flashrag(tmp_path):
    assert_parity(tmp_path, "flare", "plain", "flare", model=MODEL, system_args={"tokenizer": "embedded"})


def test_flare_with_a_chat_model_matches_flashrag(tmp_path):
    assert_parity(tmp_path, "flare", "chat", "flare", model=MODEL, system_args={"tokenizer": "embedded"})


def test_flare_without_a_tokenizer_reads_the_engine_tokens(tmp_path):
    """The scripted engine's model has no tokenizer on disk: the engine's own tokens count the sentence and form
    the query. FlashRAG re-tokenizes the stripped sentence ("Pride" without its space is two tokens), so it
    reads one probability too many, the next sentence's " So" (0.1), and searches for a sentence it was sure of."""
    calls, _ = run_parity(tmp_path, "flare", "plain", "flare", model=MODEL)
    searches = [call[1] for call in calls["nq_1"] if call[0] == "retrieve"]
    flashrag = [call[1] for call in expected_calls("flare", "plain")["nq_1"] if call[0] == "retrieve"]
    assert flashrag == ["Pride and Prejudice was written by Jane Austen", " the answer is Jane Austen."]
    assert searches == [" the answer is Jane Austen."]


LOOK_AHEAD = [" Jane", " Austen", " wrote", " it", " (in", " 1813).", "\nMore"]


def bracketed_model(request):
    """Every look-ahead continues past one of FLARE's stop characters, "(", each token certain."""
    return {"response": "".join(LOOK_AHEAD), "tokens": LOOK_AHEAD, "logprobs": [{t: -0.01} for t in LOOK_AHEAD]}


def test_a_look_ahead_ends_at_the_token_completing_a_stop_string_cut_before_it_and_stripped(tmp_path):
    """FlashRAG's HF generator stops at the token that completes a stop string, cuts the text before it and
    strips it: the sentence kept each round is "Jane Austen wrote it", judged by its four tokens."""
    _, predictions = run_parity(
        tmp_path, "flare", "plain", "flare", model="scripted:test_flashrag_parity_flare:bracketed_model"
    )
    assert set(predictions.values()) == {"Jane Austen wrote it" * 5}
    for sample in samples(tmp_path / "flare_plain", "nq_open_flashrag"):
        looks = [step["response"] for step in sample["trace"] if step["kind"] == "llm"]
        assert {(r["texts"][0], len(r["logprobs"])) for r in looks} == {(" Jane Austen wrote it ", 5)}
        assert [r["tokens"] for r in sample["prediction"]["extras"]["flare"]["rounds"]] == [4] * 5

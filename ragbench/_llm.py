"""The LLM handle a system or metric awaits: every call goes through the scheduler and is traced."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._types import Step
from ._values.billed import TOKEN_COUNTS, Billed
from ._values.ceiling import CeilingHeld, ExampleCeiling
from ._values.chat_turns import Message
from ._values.engine_errors import EngineError, RequestError
from ._values.images import Image
from ._values.json_values import JsonObject
from ._values.llm_request import Request
from ._values.llm_responses import Response
from ._values.sampling import Sampling, SamplingArgs
from ._values.traced_replies import traced_texts

if TYPE_CHECKING:
    from ._engines.base import Engine
    from ._scheduler import Scheduler


class LLM(CeilingHeld):
    """`await llm.generate(prompt)` / `await llm.chat(messages)`, one example at a time.

    `defaults` are sampling parameters applied unless a call overrides them; `trace` (the
    example's list of steps) receives one `Step` per call, failed calls included; `ceiling` (the
    example's, shared by its handles) counts each call and its prompt, and refuses one past it: given when the
    handle is made, it cannot be replaced or deleted, and `traced` keeps it.
    """

    def __init__(
        self,
        scheduler: Scheduler,
        engine: Engine,
        defaults: SamplingArgs | None = None,
        trace: list[Step] | None = None,
        recorder: Callable[..., None] | None = None,
        seed_base: str | None = None,
        ceiling: ExampleCeiling | None = None,
        seed_greedy: bool = False,
        role: str | None = None,
    ) -> None:
        self.scheduler = scheduler
        self.engine = engine
        self.defaults: SamplingArgs = defaults.copy() if defaults else {}
        self.trace = trace
        self.recorder = recorder  # ragbench._replay.recording.LlmRecorder: every call to the run's calls/llm.jsonl
        self.seed_base = seed_base  # "run seed:task:example id": sampled calls get seeds derived from it
        self.ceiling = ceiling
        self.seed_greedy = seed_greedy  # greedy calls seeded too (a judge's repeat: its own request, not a cached one)
        self.role = role  # which of the run's models this is, where not its --model (`Step.role`)
        self._calls = 0
        self._redraws = 0

    def traced(
        self,
        trace: list[Step],
        seed_base: str | None = None,
        ceiling: ExampleCeiling | None = None,
        seed_greedy: bool = False,
    ) -> LLM:
        """This LLM for one example: its calls traced into `trace`, counted against the example's `ceiling`
        and, when `seed_base` is given, every sampled call (temperature > 0, no seed of its own; with
        `seed_greedy`, every call without a seed) seeded from (seed_base, call number), so a run's samples do
        not depend on batch composition or on which examples ran before. A handle already counted against a
        ceiling gives handles counted against the same one (another is a ValueError)."""
        if self.ceiling is not None:
            if ceiling not in (None, self.ceiling):
                raise ValueError("this LLM handle counts against its example's ceiling: it cannot be given another")
            ceiling = self.ceiling
        return LLM(
            self.scheduler, self.engine, self.defaults, trace, self.recorder, seed_base, ceiling, seed_greedy, self.role
        )

    def redrawn(self) -> LLM:
        """This handle for asking a request it has sent once more, as a new draw (a reference script that asks
        again, unchanged, a request whose reply it could not read): its calls are seeded, greedy ones too, from this
        handle's seed base and the number of handles redrawn from it, as a judge's repeat is (`:repeatR`), so that
        neither the response cache nor an identical call in flight answers them (a call given a seed of its own
        keeps it). A call that leaves its seed to the server (`left_to_server`) is sent as the first was: the seed is
        in its cache key only."""
        self._redraws += 1
        return LLM(
            self.scheduler,
            self.engine,
            self.defaults,
            self.trace,
            self.recorder,
            f"{self.seed_base}:redraw{self._redraws}",
            self.ceiling,
            True,
            self.role,
        )

    def _seeded(self, request: Request) -> Request:
        self._calls += 1
        greedy = request.sampling.temperature <= 0 and not self.seed_greedy
        if self.seed_base is None or request.sampling.seed is not None or greedy:
            return request
        digest = hashlib.sha256(f"{self.seed_base}:{self._calls}".encode()).digest()
        return request.with_sampling(seed=int.from_bytes(digest[:4], "big") & 0x7FFFFFFF)

    @property
    def chat_model(self) -> bool:
        """Whether the model is a chat model (`Engine.chat_model`: --model-arg chat=true|false, else the
        engine's rule), for prompt formats that differ for one."""
        return self.engine.chat_model

    def sampling(self, **overrides: Any) -> Sampling:
        return Sampling.make(**{**self.defaults, **overrides})

    async def generate(
        self, prompt: str, *, step: str = "generate", images: Sequence[Any] = (), **sampling: Any
    ) -> Response:
        """Complete `prompt` (sent as is, no chat template).

        step: the name of this call in the example's trace (the viewer's timeline), e.g. "rerank".
        images: pictures sent with the prompt (each anything `Image.of` reads; `Request.images`): a local
            engine hands them to the model's processor with the prompt as written, which must then hold the
            model's image placeholders; a chat API gets them before the prompt in one user turn.
        **sampling: any field of `Sampling`, overriding `defaults`: max_tokens, temperature, top_p,
            stop, seed, n, logprobs, logprob_tokens, logprob_window, lora, skip_special_tokens,
            json_mode, json_schema, keep_stop, left_to_server, max_tokens_as, frequency_penalty, presence_penalty,
            top_k, min_p, enable_thinking (see `Sampling`); an unknown keyword is a TypeError naming it.
        Returns the `Response` (`.text`, `.texts`, `.logprobs`, token counts, `.finish_reason`); an
        engine failure raises `EngineError` after the call is traced.
        """
        request = Request(prompt=prompt, sampling=self.sampling(**sampling), images=tuple(map(Image.of, images)))
        return await self.send(request, step)

    async def chat(
        self,
        messages: Sequence[Message | Mapping[str, Any]],
        *,
        step: str = "chat",
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        **sampling: Any,
    ) -> Response:
        """Answer a conversation, `[{"role": "system" | "user" | "assistant", "content": ...}, ...]`,
        rendered with the model's chat template (local engines) or sent to a chat endpoint (openai).
        `step` and `**sampling` as for `generate`. A turn may be a `ragbench.api.Message`: a role and its text, or
        its parts, texts and images in order (`chat_turn(parts)`, `user_turn(text, images)`); a user turn's dict
        content may be such a list too: `{"type": "text", "text": ...}`, `{"type": "image", "image": X}` (X
        anything `Image.of` reads). Each image is sent in the engine's own form, and is in the cache key and the
        record by its digest.

        tools: functions the model may call, in the OpenAI form (`{"type": "function", "function": {"name",
            "description", "parameters"}}`); the answer's `.tool_calls` are the calls it made (each with `.id`,
            `.name`, `.arguments` parsed, `.raw_arguments`, `.error`), finish_reason "tool_calls". Send each
            result back as `{"role": "tool", "tool_call_id": call.id, "content": ...}` after the assistant turn
            `{"role": "assistant", "content": response.text or None, "tool_calls": response.tool_calls}`.
        tool_choice: "auto", "none", "required", or a tool's name; None: the engine's default.
        An engine that cannot send tools (`Engine.calls_tools` False) raises `RequestError`, as a system's
        `engine_needs` (EngineNeeds(tools=True)) makes the pre-flight say before the run."""
        request = Request.chat(messages, self.sampling(**sampling), tools, tool_choice)
        if (request.tools or request.tool_choice is not None) and not self.engine.calls_tools:
            raise RequestError(f"the {self.engine.kind} engine cannot send tools to the model")
        if any(tool.remote_mcp for tool in request.tools) and not self.engine.connects_mcp:
            raise RequestError(
                f"the {self.engine.kind} engine cannot send a remote MCP server: run the model with --model anthropic:"
            )
        return await self.send(request, step)

    async def generate_ensemble(
        self,
        inputs: Sequence[str | Sequence[dict[str, str]]],
        weights: Sequence[float],
        *,
        step: str = "generate",
        **sampling: Any,
    ) -> Response:
        """`inputs` (prompts, or chat messages rendered with the model's chat template) decoded as ONE text: for
        every token, the next one is chosen from the sum of each input's next-token logits times its weight
        (REPLUG's ensemble, as FlashRAG's REPLUGLogitsProcessor mixes them). Greedy decoding only; an engine
        that cannot (`Engine.decodes_ensembles` False: only `hf` can) raises `EngineError`, as a system's
        `check_model` should have said before the run."""
        if not self.engine.decodes_ensembles:
            raise RequestError(
                f"the {self.engine.kind} engine cannot decode an ensemble of prompts (it needs every "
                "prompt's next-token logits for every token): run the model with --model hf:MODEL"
            )
        return await self.send(Request.ensemble_of(inputs, weights, self.sampling(**sampling)), step)

    async def send(self, request: Request, step: str = "generate") -> Response:
        if not getattr(self.engine, "takes_images", False) and request.sent_images:
            raise RequestError(f"the {self.engine.kind} engine sends no images (`Engine.takes_images`)")
        if self.ceiling is not None:  # a call past the example's ceiling is neither sent nor traced
            self.ceiling.take_step(request.text_length())
        request = self._seeded(request)
        started = time.perf_counter()
        record = Step(kind="llm", name=step, request=request.to_dict(), role=self.role)
        if self.trace is not None:  # in the order the system made its calls, whatever order they finish in
            self.trace.append(record)
        try:
            response = await self.scheduler.submit(self.engine, request)
        except EngineError as exc:
            record.error = str(exc)
            if exc.billed is not None:  # answers the vendor billed and ragbench refused: the failed call's cost
                _traced_tokens(record, exc.billed)
            if self.recorder is not None:
                self.recorder(self.engine.engine_id, record.request, None, record.error, step=self._held(record))
            raise
        finally:
            record.seconds = round(time.perf_counter() - started, 6)
        traced: JsonObject = {**traced_texts(response.texts), "finish_reason": response.finish_reason}
        if response.choice_tool_calls is not None:
            traced["tool_calls"] = response.to_dict()["tool_calls"]
        if response.logprobs is not None:
            traced["logprobs"] = [t.__dict__ for t in response.logprobs]
        if response.token_ids is not None:
            traced["token_ids"] = list(response.token_ids)
        record.response = traced
        _traced_tokens(record, response)
        record.cached = response.cached
        if self.recorder is not None:
            self.recorder(self.engine.engine_id, record.request, response.to_dict(), step=self._held(record))
        return response

    def _held(self, step: Step) -> JsonObject | None:
        """The step's fields as the example's trace will hold them (the recorder then refers to it), or None
        when the call is not traced: its own fields, not a copy (the sample's writer makes the step's one
        dict; the recorder only reads the reply and token counts)."""
        return vars(step) if self.trace is not None else None


def _traced_tokens(record: Step, tokens: Response | Billed) -> None:
    """A call's tokens in its step: those of its answer, or those billed for a call that failed."""
    for count in TOKEN_COUNTS:
        setattr(record, count, getattr(tokens, count))

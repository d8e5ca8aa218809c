"""A reply the `http` system asked for as a stream (`stream=true`): Server-Sent Events, decoded by the OpenAI SDK's
own SSE decoder (incremental over bytes, whatever the TCP writes split: a line, a character, a CRLF), then assembled.

`openai`: each `data:` event a `ChatCompletionChunk`, assembled as the SDK assembles them (its
`ChatCompletionStreamState`: each choice's `delta` merged into its message by the choice's `index` - contents
concatenated, the delta's other fields (Azure's `context.citations`) merged as the SDK merges them - and the usage
chunk's `usage`); a top-level field a chunk adds beyond the SDK's chunk (`passages`, `documents`, `search_results`)
is the value of the last chunk that sends it (the SDK keeps only the first chunk's, and Perplexity repeats its
`search_results` in each). The assembled completion is then read as a whole non-streamed reply is (mapping.py).
The stream ends at `data: [DONE]`.

`json`: each event's data a JSON object; the answer the strings `answer_delta` (JMESPath) finds in the events,
concatenated, or `answer` read from the final event; the final event (the last one `final` is true of; every event
without `final`) is where the passages and citations are read as from a whole reply; the usage (and its model) the
last event `usage` (and `usage_model`) finds one in. The stream ends at `data:
[DONE]`, at an `event: end` (LangServe) or after an event `end` (JMESPath) is true of.

Both: an `event: error`, or an event whose JSON has a true `error` (the SDK's rule), fails the example with its
message; so does an event that is not JSON, or a stream that stops before its end (an answer read in part is never
the answer).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ragbench.api import ConfigError
from ragbench.api.apps import Streamed, value_summary

if TYPE_CHECKING:  # the SDK is imported when a stream is read (a run without stream=true never loads it)
    from openai._streaming import ServerSentEvent

DONE = "[DONE]"
SHOWN_EVENT = 200  # characters of a bad event's data its line quotes


def needs_sdk() -> None:
    """The OpenAI SDK there, or a ConfigError naming the extra that brings it."""
    try:
        import openai  # noqa: F401
    except ImportError:
        raise ConfigError(
            "system http: stream=true reads the stream with the OpenAI SDK's decoder: pip install 'ragbench[openai]'"
        ) from None


@lru_cache(maxsize=1)
def chunk_fields() -> frozenset[str]:
    """A chunk's own top-level fields, as the SDK's `ChatCompletionChunk` declares them."""
    from openai.types.chat import ChatCompletionChunk

    return frozenset(ChatCompletionChunk.model_fields)


class StreamError(Exception):
    """The stream said it failed (an error event), or sent what cannot be read: one line."""


class StreamCut(Exception):
    """The stream stopped before its end: one line (tried again as a lost connection is)."""


@dataclass
class ReplyProgress:
    """How far one try of a reply got: its stream's reader (None: not streamed), its chunks, and when the first
    piece of answer came (seconds from the request)."""

    reader: OpenAIChunks | JsonEvents | None = None  # None: a reply not streamed
    started: float = field(default_factory=time.perf_counter)
    chunks: int = 0
    first_token_seconds: float | None = None

    def piece(self, text: str) -> None:
        if text and self.first_token_seconds is None:
            self.first_token_seconds = round(time.perf_counter() - self.started, 6)

    def streamed(self, usage: dict[str, int] | None = None) -> Streamed:
        return Streamed(first_token_seconds=self.first_token_seconds, chunks=self.chunks, usage=usage)

    def told(self) -> str:
        return f"{self.chunks} chunk(s)"


def events(body: AsyncIterator[bytes]) -> AsyncIterator[ServerSentEvent]:
    """The events of a stream of bytes, as the OpenAI SDK decodes them (an event is dispatched at its blank line: a
    last one the stream cut before it is not an event)."""
    from openai._streaming import SSEDecoder  # the SDK's own decoder (no public name for it)

    return SSEDecoder().aiter_bytes(body)


def event_json(event: ServerSentEvent, progress: ReplyProgress) -> Any:
    """An event's data as JSON, after the error rules (see the module's docstring)."""
    try:
        data = json.loads(event.data)
    except (json.JSONDecodeError, RecursionError) as exc:
        if event.event == "error":
            raise StreamError(f"sent an error event after {progress.told()}: {event.data[:SHOWN_EVENT]!r}") from None
        raise StreamError(
            f"sent an event that is not JSON after {progress.told()} ({exc}): {event.data[:SHOWN_EVENT]!r}"
        ) from None
    error = data.get("error") if isinstance(data, dict) else None
    if event.event == "error" or error:
        message = error.get("message") if isinstance(error, dict) else error
        shown = message if isinstance(message, str) and message else value_summary(data)
        raise StreamError(f"sent an error event after {progress.told()}: {' '.join(shown.split())[:SHOWN_EVENT]}")
    return data


class OpenAIChunks:
    """`ChatCompletionChunk`s assembled as the SDK assembles them (see the module's docstring)."""

    end = f"data: {DONE}"

    def __init__(self) -> None:
        from openai.lib.streaming.chat import ChatCompletionStreamState

        self._state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
        self._extras: dict[str, Any] = {}
        self._any = False
        self._usage: dict[str, int] | None = None

    def add(self, data: Any) -> str:
        """One chunk taken in; the piece of answer it brings (its choices' content)."""
        if not isinstance(data, dict):
            raise StreamError(f"sent a chunk that is not a JSON object: {value_summary(data)}")
        from openai.types.chat import ChatCompletionChunk

        try:
            chunk = ChatCompletionChunk.construct(**data)
            self._state.handle_chunk(chunk)
        except Exception as exc:  # the SDK's assembly refused it: a chunk of another shape
            raise StreamError(
                f"sent a chunk the OpenAI SDK cannot assemble ({type(exc).__name__}: {exc}): {value_summary(data)}"
            ) from None
        self._any = True
        self._extras.update({key: value for key, value in data.items() if key not in chunk_fields()})
        usage = data.get("usage")
        if isinstance(usage, dict):
            self._usage = stream_usage(usage)
        return "".join(
            choice["delta"]["content"]
            for choice in data.get("choices") or []
            if isinstance(choice, dict)
            and isinstance(choice.get("delta"), dict)
            and isinstance(choice["delta"].get("content"), str)
        )

    def ends_before(self, event: ServerSentEvent) -> bool:
        return False

    def ends_at(self, event: ServerSentEvent, data: Any) -> bool:
        return False

    def reply(self) -> Any:
        """The completion the chunks make (a JSON value), read as a whole reply is."""
        if not self._any:
            raise StreamError("ended its stream with no chunk")
        return {**self._state.current_completion_snapshot.to_dict(), **self._extras}

    @property
    def usage(self) -> dict[str, int] | None:
        return self._usage


class JsonEvents:
    """JSON events assembled by the declared rule (see the module's docstring); the expressions compiled."""

    def __init__(
        self,
        answer_delta: Any | None,
        final: Any | None,
        end: Any | None,
        end_expression: str,
        usage: Any | None = None,
        usage_model: Any | None = None,
    ) -> None:
        self._answer_delta, self._final, self._end = answer_delta, final, end
        self._usage, self._usage_model = usage, usage_model
        self.usage_found: Any = None  # the last usage an event reported (a JSON value, read by the system)
        self.model_found: Any = None
        self.end = f"data: {DONE}, event: end" + (f" or an event end={end_expression!r} is true of" if end else "")
        self._pieces: list[str] = []
        self._final_event: Any = None
        self._any_final = False
        self.usage: dict[str, int] | None = None

    def add(self, data: Any) -> str:
        piece = ""
        if self._answer_delta is not None:
            found = self._answer_delta.search(data)
            if isinstance(found, list) and all(isinstance(each, str) for each in found):
                found = "".join(found)
            if found is not None and not isinstance(found, str):
                raise StreamError(f"sent an event whose answer_delta is {value_summary(found)}, not a string")
            piece = found or ""
            self._pieces.append(piece)
        if self._final is None or truthy(self._final.search(data)):
            self._final_event, self._any_final = data, True
        usage = self._usage.search(data) if self._usage is not None else None
        if usage is not None:
            self.usage_found, self.usage = usage, stream_usage(usage)
        model = self._usage_model.search(data) if self._usage_model is not None else None
        if model is not None:
            self.model_found = model
        return piece

    def ends_before(self, event: ServerSentEvent) -> bool:
        return event.event == "end"

    def ends_at(self, event: ServerSentEvent, data: Any) -> bool:
        return self._end is not None and truthy(self._end.search(data))

    def answer(self) -> str | None:
        """The concatenated deltas (None: no `answer_delta`: the answer is read from the final event)."""
        return "".join(self._pieces) if self._answer_delta is not None else None

    def reply(self) -> Any:
        if not self._any_final:
            raise StreamError("ended its stream with no event that final= selects")
        return self._final_event


def stream_usage(usage: Any) -> dict[str, int] | None:
    """A stream's usage as `Streamed` records it: its top-level whole numbers, as sent."""
    if not isinstance(usage, dict):
        return None
    return {str(k): v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}


def truthy(value: Any) -> bool:
    """JMESPath's truth: false, null, an empty string, list or object are false."""
    return value is not None and value is not False and value not in ("", [], {})


async def read_stream(body: AsyncIterator[bytes], reader: OpenAIChunks | JsonEvents, progress: ReplyProgress) -> None:
    """The stream's events into `reader` up to its end; StreamCut where the bytes stop first."""
    async for event in events(body):
        if event.data.startswith(DONE) or reader.ends_before(event):
            return
        data = event_json(event, progress)
        progress.chunks += 1
        progress.piece(reader.add(data))
        if reader.ends_at(event, data):
            return
    raise StreamCut(f"cut its stream before {reader.end} after {progress.told()} (the connection closed)")

"""What an application is asked for one example (`AppRequest`) and what ragbench takes from its answer (`AppReply`):
the answer, the passages it retrieved (which become the prediction's documents, scored as a built-in system's), the
citations where it gives them, and a short summary of the value it returned.

`reply_from` reads what a plain Python application returns (a string, or a mapping with `answer` and optionally
`passages` and `citations`); a value of another shape is an `AppReplyError` saying what came back and what was
expected, so the example fails in one line (counted, its spans kept).
"""

from __future__ import annotations

import copy
import reprlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._types import Document, Example
from .._values.images import Image
from .._values.json_values import JsonObject
from .reply_usage import ReplyUsage

SUMMARY_CHARS = 300  # of a returned value's repr, kept in the prediction's extras


class AppReplyError(ValueError):
    """An application's answer that ragbench cannot read, in one line."""


@dataclass(frozen=True)
class AppRequest:
    """One example as an application is asked it: plain copies of the example's fields (an application that changes
    them changes its own copy, never what the metrics score), and what joins a remote application's spans to the
    example (`traceparent`, the W3C header value, and `otlp_endpoint`, where ragbench receives OTLP traces)."""

    id: str
    question: str
    history: list[JsonObject] = field(default_factory=list)  # the conversation's turns before the question
    images: tuple[Image, ...] = ()
    meta: dict[str, object] = field(default_factory=dict)
    extras: dict[str, object] = field(default_factory=dict)
    task: str = ""
    traceparent: str | None = None
    otlp_endpoint: str | None = None

    @classmethod
    def of(cls, example: Example, task: str) -> AppRequest:
        return cls(
            id=example.id,
            question=example.question,
            history=copy.deepcopy([{**turn} for turn in example.turns]) if example.turns else [],
            images=tuple(example.images),
            meta=copy.deepcopy(dict(example.meta)) if example.meta else {},  # an empty one copied with no walk
            extras=copy.deepcopy(dict(example.extras)) if example.extras else {},
            task=task,
        )

    def messages(self) -> list[JsonObject]:
        """The conversation as chat messages: the history, then the question as the user's turn."""
        return [*copy.deepcopy(self.history), {"role": "user", "content": self.question}]

    def fields(self) -> dict[str, object]:
        """The request's fields by name, fresh copies (what a Python application's parameters are given by)."""
        return {name: self.field(name) for name in ("id", "question", "history", "images", "meta", "extras", "task")}

    def field(self, name: str) -> object:
        """One of `fields()`, a fresh copy made of it alone."""
        if name == "images":
            return list(self.images)
        value = getattr(self, name)
        return copy.deepcopy(value) if name in ("history", "meta", "extras") else value


@dataclass(frozen=True)
class Streamed:
    """How a streamed answer arrived: `first_token_seconds` (from the request to the first piece of the answer; None:
    no piece came), `chunks` (the events it came in, its end marker not counted) and `usage` (the token counts its
    stream reported, as sent: OpenAI's usage chunk)."""

    first_token_seconds: float | None
    chunks: int
    usage: dict[str, int] | None = None

    def to_dict(self) -> JsonObject:
        out: JsonObject = {"first_token_seconds": self.first_token_seconds, "chunks": self.chunks}
        if self.usage is not None:
            out["usage"] = dict(self.usage)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Streamed:
        first, usage = data.get("first_token_seconds"), data.get("usage")
        return cls(
            first_token_seconds=None if first is None else float(first),
            chunks=int(data.get("chunks") or 0),
            usage={str(k): int(v) for k, v in usage.items()} if isinstance(usage, dict) else None,
        )


@dataclass(frozen=True)
class AppReply:
    """What ragbench takes from an application's answer: `answer` (its text, before the task's post-processing),
    `passages` (the documents it retrieved or showed its model, in order), `citations` (per statement of the answer,
    the 1-based numbers of the passages it cites; None: read from the answer by the task, as for a built-in system),
    `raw` (a short summary of the value it returned), `stream` (how a streamed answer arrived; None: not
    streamed) and `usage` (the model and tokens the reply says the application used: priced where its spans carry
    no model call's tokens, ragbench._apps.reply_usage; None: none reported)."""

    answer: str
    passages: list[Document] = field(default_factory=list)
    citations: list[list[int]] | None = None
    raw: str = ""
    stream: Streamed | None = None
    usage: ReplyUsage | None = None

    def to_dict(self) -> JsonObject:
        out: JsonObject = {"answer": self.answer, "passages": [doc.to_dict() for doc in self.passages]}
        if self.citations is not None:
            out["citations"] = [list(each) for each in self.citations]
        if self.raw:
            out["raw"] = self.raw
        if self.stream is not None:
            out["stream"] = self.stream.to_dict()
        if self.usage is not None:
            out["usage"] = self.usage.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AppReply:
        citations, stream, usage = data.get("citations"), data.get("stream"), data.get("usage")
        return cls(
            answer=str(data.get("answer", "")),
            passages=[Document.from_dict(doc) for doc in data.get("passages") or []],
            citations=[list(map(int, each)) for each in citations] if isinstance(citations, list) else None,
            raw=str(data.get("raw", "")),
            stream=Streamed.from_dict(stream) if isinstance(stream, dict) else None,
            usage=ReplyUsage.from_dict(usage) if isinstance(usage, dict) else None,
        )


def value_summary(value: object) -> str:
    """A returned value in a line: its type and a short repr."""
    shown = _Shown(SUMMARY_CHARS)
    return " ".join(f"{type(value).__name__}: {shown.repr(value)}".split())[:SUMMARY_CHARS]  # one line


class _Shown(reprlib.Repr):
    """reprlib's short repr that makes no more of it than a summary keeps: once its parts made so far (each a value
    with nothing inside it, as written) hold `chars` characters that are not white space, the parts after them are
    left empty. The text before them, hence the summary's first `chars` characters, is as the whole repr's."""

    def __init__(self, chars: int) -> None:
        super().__init__()
        self.maxstring, self.maxother, self.maxlist, self.maxdict = 120, 120, 6, 6
        self.left, self.parts = chars, 0

    def repr1(self, x: object, level: int) -> str:
        if self.left <= 0:
            return ""
        self.parts += 1
        made = self.parts
        method = _REPR_OF.get(type(x))  # reprlib's own method for the type, found with no lookup by its name
        text = method(self, x, level) if method is not None else super().repr1(x, level)
        if self.parts == made:  # nothing inside it was shown part by part: a part as it is written
            self.left -= len("".join(text.split()))
        return text


_REPR_OF: dict[type, Any] = {  # as `reprlib.Repr.repr1` finds them by the type's name (`repr_instance`: none named)
    str: reprlib.Repr.repr_str,
    dict: reprlib.Repr.repr_dict,
    list: reprlib.Repr.repr_list,
    tuple: reprlib.Repr.repr_tuple,
    int: reprlib.Repr.repr_int,
    float: reprlib.Repr.repr_instance,
    bool: reprlib.Repr.repr_instance,
    type(None): reprlib.Repr.repr_instance,
}


def passage_of(item: object, where: str) -> Document:
    """One passage an application returned: a `Document`, a mapping with `text` (and `id`, `title`, `score`, `url`;
    other keys go to its metadata), or a string (its text)."""
    if isinstance(item, Document):
        return item.annotatable()
    if isinstance(item, str):
        return Document(id=None, title="", text=item)
    if isinstance(item, Mapping):
        text = item.get("text", item.get("content"))
        if not isinstance(text, str):
            raise AppReplyError(f"{where} has no text (a string under 'text'): {value_summary(item)}")
        data = {str(key): value for key, value in item.items() if key != "content"}
        data["text"] = text
        try:
            return Document.from_dict(data)
        except (TypeError, ValueError) as exc:
            raise AppReplyError(f"{where}: {exc}") from None
    raise AppReplyError(
        f"{where} is {value_summary(item)}, expected a mapping with 'text' (and 'id', 'title', 'score')"
    )


def citations_of(value: object, where: str) -> list[list[int]] | None:
    """Per statement, the 1-based passage numbers cited; None where the reply gives none."""
    if value is None:
        return None
    if isinstance(value, Sequence) and not isinstance(value, str):
        out = []
        for each in value:
            if isinstance(each, int) and not isinstance(each, bool):
                out.append([each])  # one number a statement
            elif isinstance(each, Sequence) and all(isinstance(n, int) and not isinstance(n, bool) for n in each):
                out.append(list(each))
            else:
                break
        else:
            return out
    raise AppReplyError(f"{where} is {value_summary(value)}, expected per statement a list of passage numbers")


def reply_from(value: object, who: str) -> AppReply:
    """What a Python application returned, read (see the module's docstring)."""
    if isinstance(value, str):
        return AppReply(answer=value, raw=value_summary(value))
    if isinstance(value, Mapping):
        answer = value.get("answer")
        if not isinstance(answer, str):
            raise AppReplyError(
                f"{who} returned a mapping whose 'answer' is {value_summary(answer)}, expected a string"
            )
        passages = value.get("passages") or []
        if not isinstance(passages, Sequence) or isinstance(passages, str):
            raise AppReplyError(f"{who} returned 'passages' as {value_summary(passages)}, expected a list")
        return AppReply(
            answer=answer,
            passages=[passage_of(item, f"{who}'s passage {n + 1}") for n, item in enumerate(passages)],
            citations=citations_of(value.get("citations"), f"{who}'s 'citations'"),
            raw=value_summary(value),
        )
    raise AppReplyError(
        f"{who} returned {value_summary(value)}, expected a string or a mapping with 'answer' (and optionally 'passages')"
    )

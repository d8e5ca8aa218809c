"""The data that flows through a run: task -> Example -> system -> Prediction -> metrics.

Plain dataclasses that serialise to JSON with `to_dict`; nothing here knows about engines,
files or plugins. A run hands them to plugins as `read_only()` copies (ragbench._read_only).
"""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ._read_only import ReadOnly
from ._trace_groups import current_group
from ._values.conversation import History
from ._values.images import Image
from ._values.json_values import JsonObject, JsonValue, json_object


def _copied(value: Any) -> Any:
    """A copy of JSON-like data: dicts, lists and tuples copied all the way down, other values as they are."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_copied(item) for item in value)
    return value


@dataclass
class Document(ReadOnly):
    """A passage shown to (or retrieved for) the model."""

    id: str | None
    title: str
    text: str
    url: str | None = None
    score: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    image: Image | None = None  # a page or picture as the passage (ViDoRe's pages, an image search's hits)

    def to_dict(self) -> JsonObject:
        """The fields that are set, the metadata copied (as `dataclasses.asdict` copies it; written field by
        field: asdict's generic walk was a tenth of a multi-step run's own work, every retrieved document's)."""
        out: JsonObject = {
            "id": self.id,
            "title": self.title,
            "text": self.text,
            "url": self.url,
            "score": self.score,
            "metadata": _copied(self.metadata),
            "image": None if self.image is None else self.image.record(source=True),
        }
        return {key: value for key, value in out.items() if value not in (None, {})}

    def annotatable(self) -> Document:
        """A mutable copy whose metadata (copied all the way down) its receiver may change: what a search
        hands a system, so that annotating a document changes no other example's or cache's."""
        return replace(self, metadata=_copied(self.metadata))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Document:
        """From `to_dict` output or an upstream passage dict: id, title, text, url, score as
        fields; every other key (summary, extraction, sent ...) goes to `metadata`."""
        metadata = dict(data.get("metadata") or {})
        metadata.update({k: v for k, v in data.items() if k not in ("id", "title", "text", "url", "score", "metadata")})
        score = data.get("score")
        return cls(
            id=str(data["id"]) if data.get("id") is not None else None,
            title=data.get("title") or "",
            text=data.get("text") or "",
            url=data.get("url"),
            score=float(score) if score not in (None, "") else None,
            metadata=metadata,
        )


TEXT_LIST_GOLD = ("answers", "claims", "long_answers")  # gold kinds that hold a list of texts


def _kind(value: Any) -> str:
    """What a gold value is, as a bad record's line names it."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return "None" if value is None else f"{type(value).__name__} {reprlib.repr(value)}"


def _text_list_problem(value: Any, aliases: bool) -> str | None:
    """Why `value` is not a list of strings (with `aliases`, nor a list of alias lists), or None."""
    expected = "expected a string or a list of strings" + (" (or of alias lists)" if aliases else "")
    if not isinstance(value, list):
        return f"{expected}, got {_kind(value)}"
    if aliases and all(isinstance(item, list) for item in value):
        value = [text for item in value for text in item]
    for item in value:
        if not isinstance(item, str):
            return f"{expected}, got a list holding {_kind(item)}"
    return None


def _gold_problem(gold: Any) -> str | None:
    """Why `gold` would be mis-scored, in one line, or None: it is not a mapping, a kind of `TEXT_LIST_GOLD`
    is not a list of strings (`answers`: or of alias lists, lists of strings), or `label` is not one finite
    string, number or true/false."""
    if not isinstance(gold, dict):
        return f'gold is {_kind(gold)}, not a mapping of gold kinds (e.g. {{"answers": [...]}})'
    for key in TEXT_LIST_GOLD:
        problem = _text_list_problem(gold[key], aliases=key == "answers") if key in gold else None
        if problem:
            return f"gold '{key}': {problem}"
    label = gold.get("label")
    if not (label is None or isinstance(label, str) or (isinstance(label, numbers.Real) and math.isfinite(label))):
        return f"gold 'label': expected one string, number or true/false, got {_kind(label)}"
    return None


@dataclass
class Example(ReadOnly):
    """One evaluation item.

    `gold` holds whatever the task's metrics need (answers, label, choices, qa_pairs ...);
    `meta` holds slice fields (domain, question_type ...); `extras` holds inputs other than
    the question (query_time, choices to show ...). `turns` is set for conversational items. `images` are
    the pictures the question is asked about (CRAG-MM's), sent with it to a model that takes images.
    `gold_error` is set when it is built: why its gold would be mis-scored, naming the example and the
    kind (the run counts it as a bad record), or None.
    """

    id: str
    question: str
    gold: dict[str, Any] = field(default_factory=dict)
    docs: list[Document] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    turns: list[dict[str, str]] | History | None = None  # History: a conversation's turns held once (its tasks')
    images: tuple[Image, ...] = ()
    index: int = 0  # position in the task's data, keeps samples and aggregates in data order
    gold_error: str | None = field(init=False, default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # a gold kind that holds a list of texts, given one string, holds that one text (as a YAML task
        # reads `answers: Paris`), never its characters
        lone = {
            key: [text]
            for key in TEXT_LIST_GOLD
            if isinstance(self.gold, dict) and isinstance(text := self.gold.get(key), str)
        }
        if lone:
            self.gold = {**self.gold, **lone}
        problem = _gold_problem(self.gold)
        # kept, not raised: a task's examples() goes on past a bad record, and a generator that raises ends
        self.gold_error = None if problem is None else f"example {self.id!r}: {problem}"

    def summary(self) -> JsonObject:
        """What a sample record repeats of the example (docs are recorded on the prediction)."""
        out: JsonObject = {"id": self.id, "question": self.question, "gold": self.gold}
        if self.meta:
            out["meta"] = self.meta
        if self.turns is not None:
            out["turns"] = [dict[str, JsonValue](turn) for turn in self.turns]
        if self.images:
            out["images"] = [image.record(source=True) for image in self.images]
        return out


@dataclass
class Step(ReadOnly):
    """One traced action of a system: an LLM call, a retrieval, a tool call, or a step of the system's
    own (kind "custom", `Context.record_step`: `request` holds its inputs, `response` its outputs and
    `docs` the documents it kept, as `Document.to_dict()`s; an application's search keeps the documents it found
    there too)."""

    kind: str  # "llm" | "retrieval" | "tool" | "custom"
    name: str
    request: JsonObject
    response: JsonObject | None = None
    error: str | None = None
    seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False  # answered by ragbench's response cache (not sent, not paid)
    # of prompt_tokens, those the vendor's prompt cache served and those written to it (1-hour cache: of those)
    cached_prompt_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    group: list[str] = field(default_factory=current_group)  # `with ctx.group(label):` labels, outermost first
    docs: list[JsonObject] | None = None  # a custom step's documents kept, in its order
    # an LLM call's model, where it is not the run's --model: a system role's name (its --role-model) or
    # "judge:N" (the N-th --judge), so each call is priced at its model's price (ragbench._cost.prices)
    role: str | None = None
    # a step read from an application's span (ragbench._apps): {"id", "parent", "kind"} of that span, from which the
    # viewer draws the application's spans as a tree
    span: JsonObject | None = None

    def to_dict(self) -> JsonObject:
        out = dict(self.__dict__)  # shallow: request/response dicts are not mutated after the call
        if not out["group"]:
            del out["group"]
        for key in ("docs", "role", "span"):
            if out[key] is None:
                del out[key]
        for key in ("cached_prompt_tokens", "cache_write_tokens", "cache_write_1h_tokens"):
            if not out[key]:  # left out when 0: a record of a call no prompt cache served holds no cache fields
                del out[key]
        return out


@dataclass
class Prediction(ReadOnly):
    """What a system produced for one example."""

    DOCS_UNKNOWN: ClassVar[str] = "docs_unknown"  # an extras key: which documents were shown is not known
    # an extras key: how many of `docs` (their first) the prompt showed, where it showed fewer than the prediction
    # keeps (ViDoRe's reader sees the top `images` pages; its figures score every page retrieved)
    DOCS_READ: ClassVar[str] = "docs_read"

    example_id: str
    answer: str = ""
    raw_output: str | None = None
    citations: list[list[int]] = field(default_factory=list)
    docs: list[Document] = field(default_factory=list)  # in the order shown to the model
    trace: list[Step] = field(default_factory=list)
    error: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def prompts(self) -> list[JsonValue]:
        return trace_prompts(step.to_dict() for step in self.trace)

    def shown_docs(self, to_score: str) -> list[Document]:
        """The documents shown, in order, for a metric that reads them. Outputs scored from a predictions
        line without "docs" (`extras[DOCS_UNKNOWN]`, set by the recorded system) raise instead, so the metric
        fails on the example (counted) rather than reading "not known" as "none shown", a 0."""
        if self.extras.get(self.DOCS_UNKNOWN):
            raise ValueError(
                f'the predictions line has no "docs" (the documents shown, in order): add them to score {to_score}'
            )
        return self.docs

    def to_dict(self) -> JsonObject:
        out: JsonObject = {"answer": self.answer}
        if self.raw_output is not None and self.raw_output != self.answer:
            out["raw_output"] = self.raw_output
        if self.citations:
            out["citations"] = [list[JsonValue](cited) for cited in self.citations]
        if self.docs:
            out["docs"] = [d.to_dict() for d in self.docs]
        if self.extras:
            out["extras"] = self.extras
        return out


def trace_prompts(trace: Iterable[JsonObject]) -> list[JsonValue]:
    """The prompt (or chat messages, or an ensemble's weighted inputs) of every LLM call of a trace, in call
    order. A sample record keeps no other copy: `trace_prompts(sample["trace"])` gives its prompts."""
    requests = [json_object(step["request"]) for step in trace if step["kind"] == "llm"]
    return [
        next((request[key] for key in ("messages", "prompt", "ensemble") if key in request), None)
        for request in requests
    ]

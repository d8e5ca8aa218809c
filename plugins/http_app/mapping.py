"""What the `http` system sends an application over HTTP and where it finds the answer in the reply.

Two presets. `openai`: an OpenAI-compatible chat endpoint (the request `{"model", "messages", "stream": false}`, the
example's conversation and question as the messages; the answer `choices[0].message.content`; the passages from the
first of the extension fields RAG servers return them in, `OPENAI_PASSAGES`). `json`: any JSON API, declared: the
request body a JSON template whose strings are Jinja2 templates (rendered in jinja2's sandbox, as a YAML task's
prompts; a string that is one `{{ expression }}` gives that value itself, a list or an object), and JMESPath
expressions for the answer, the passages (a list) and the citations in the reply; each passage's id, title, text,
score and url are JMESPath expressions too, relative to it.

A reply where the answer is not a string is one line naming the expression and what the reply holds there.
"""

from __future__ import annotations

import json
import re
from base64 import b64encode
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jmespath
from jinja2 import StrictUndefined, TemplateError, meta
from jinja2.sandbox import SandboxedEnvironment
from jmespath.exceptions import JMESPathError

from ragbench.api import ConfigError, Document
from ragbench.api.apps import AppReplyError, AppRequest, value_summary
from ragbench.api.data import JsonObject, JsonValue

VARIABLES = ("question", "id", "history", "messages", "meta", "extras", "task")  # what a body template can use
OPENAI_PASSAGES = (  # where OpenAI-compatible RAG servers put the passages, tried in this order
    "passages",  # a plain list of {id, title, text, score}
    "documents",
    "choices[0].message.context.citations",  # Azure OpenAI "on your data": {content, title, url, filepath, chunk_id}
    "search_results",  # Perplexity: {title, url, snippet, date}
)
PASSAGE_FIELDS = {  # each field of a passage: the keys tried in order, where the system's options name none
    "id": ("id", "chunk_id", "doc_id", "document_id", "filepath", "url"),
    "title": ("title", "name"),
    "text": ("text", "content", "snippet", "page_content"),
    "score": ("score", "relevance_score"),
    "url": ("url",),
}
_ONE_EXPRESSION = re.compile(r"^\{\{(.*)\}\}$", re.DOTALL)


@dataclass(frozen=True)
class ReplyPaths:
    """Where the answer, the passages and the citations are in a reply (JMESPath), and each passage's fields (an
    expression each, relative to the passage; None: the keys of `PASSAGE_FIELDS`)."""

    answer: str
    passages: tuple[str, ...] = ()
    citations: str | None = None
    fields: Mapping[str, str | None] = field(default_factory=dict)


def compiled(expression: str, option: str) -> Any:
    try:
        return jmespath.compile(expression)
    except JMESPathError as exc:
        raise ConfigError(f"system http: {option}={expression!r} is not a JMESPath expression ({exc})") from None


class Reading:
    """A reply read by its `ReplyPaths`, the expressions compiled once (a bad one is a ConfigError)."""

    def __init__(self, paths: ReplyPaths) -> None:
        self.paths = paths
        self._answer = compiled(paths.answer, "answer")
        self._passages = [compiled(path, "passages") for path in paths.passages]
        self._citations = compiled(paths.citations, "citations") if paths.citations else None
        self._fields = {
            name: compiled(path, f"passage_{name}") if path else None for name, path in paths.fields.items()
        }

    def answer(self, reply: Any) -> str:
        found = self._answer.search(reply)
        if not isinstance(found, str):
            keys = ", ".join(map(str, reply)) if isinstance(reply, dict) else type(reply).__name__
            raise AppReplyError(
                f"http: the reply has no answer at {self.paths.answer!r} (found {value_summary(found)}; the reply's "
                f"keys: {keys}): name where it is with --system-arg answer=JMESPATH"
            )
        return found

    def passages(self, reply: Any) -> list[Document]:
        for path, expression in zip(self.paths.passages, self._passages):
            found = expression.search(reply)
            if found is None:
                continue
            if not isinstance(found, list):
                raise AppReplyError(f"http: the reply's {path!r} is {value_summary(found)}, not a list of passages")
            return [self._passage(item, f"{path}[{n}]") for n, item in enumerate(found)]
        return []

    def _passage(self, item: Any, where: str) -> Document:
        if isinstance(item, str):
            return Document(id=None, title="", text=item)
        values = {name: self._field(item, name) for name in PASSAGE_FIELDS}
        text = values["text"]
        if not isinstance(text, str):
            raise AppReplyError(f"http: the reply's passage {where} has no text: {value_summary(item)}")
        score = values["score"]
        try:
            score = None if score is None else float(score)
        except (TypeError, ValueError):
            raise AppReplyError(f"http: the reply's passage {where} has a score that is no number: {score!r}") from None
        return Document(
            id=None if values["id"] is None else str(values["id"]),
            title=str(values["title"] or ""),
            text=text,
            url=None if values["url"] is None else str(values["url"]),
            score=score,
        )

    def _field(self, item: Any, name: str) -> Any:
        expression = self._fields.get(name)
        if expression is not None:
            return expression.search(item)
        if isinstance(item, dict):
            return next((item[key] for key in PASSAGE_FIELDS[name] if item.get(key) is not None), None)
        return None

    def citations(self, reply: Any) -> list[list[int]] | None:
        if self._citations is None:
            return None
        found = self._citations.search(reply)
        if found is None:
            return None
        if isinstance(found, list) and all(
            isinstance(each, list) and all(isinstance(n, int) and not isinstance(n, bool) for n in each)
            for each in found
        ):
            return [list(each) for each in found]
        raise AppReplyError(
            f"http: the reply's {self.paths.citations!r} is {value_summary(found)}, expected per statement a list "
            "of passage numbers"
        )


class BodyTemplate:
    """A JSON request body whose strings are Jinja2 templates (see the module's docstring), checked when made: a
    template that does not parse, or uses a name other than `VARIABLES`, is a ConfigError."""

    def __init__(self, body: Any) -> None:
        if isinstance(body, str):
            try:
                body = json.loads(body)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"system http: body is not JSON ({exc.msg} at column {exc.colno})") from None
        self.body = body
        self._env = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
        for text in strings(body):
            try:
                names = meta.find_undeclared_variables(self._env.parse(text)) - set(self._env.globals)
            except TemplateError as exc:
                raise ConfigError(f"system http: body template {text!r}: {exc}") from None
            unknown = sorted(names - set(VARIABLES))
            if unknown:
                raise ConfigError(
                    f"system http: body template {text!r} uses {', '.join(unknown)}: it can use {', '.join(VARIABLES)}"
                )

    def render(self, request: AppRequest) -> Any:
        variables = {**request.fields(), "messages": request.messages()}
        return self._rendered(self.body, variables)

    def _rendered(self, value: Any, variables: Mapping[str, Any]) -> Any:
        if isinstance(value, str):
            whole = _ONE_EXPRESSION.match(value.strip())
            if whole and "{{" not in whole.group(1):
                return self._env.compile_expression(whole.group(1))(**variables)
            return self._env.from_string(value).render(**variables)
        if isinstance(value, dict):
            return {key: self._rendered(item, variables) for key, item in value.items()}
        if isinstance(value, list):
            return [self._rendered(item, variables) for item in value]
        return value


def strings(value: Any) -> list[str]:
    """The strings in a JSON value, all the way down."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return []


def openai_body(request: AppRequest, model: str, stream: bool = False) -> JsonObject:
    """An OpenAI chat-completions request for the example: its conversation, then the question (with its pictures as
    image parts, as data URLs); streamed, with the usage chunk asked for."""
    messages = request.messages()
    if request.images:
        parts: list[JsonValue] = [{"type": "text", "text": request.question}]
        parts += [
            {
                "type": "image_url",
                "image_url": {"url": f"data:{image.media_type};base64,{b64encode(image.data).decode()}"},
            }
            for image in request.images
        ]
        messages[-1] = {"role": "user", "content": parts}
    body: JsonObject = {"model": model, "messages": list[JsonValue](messages), "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}  # the usage chunk, before data: [DONE]
    return body


def passage_fields(**given: str | None) -> dict[str, str | None]:
    return {name: given.get(name) or None for name in PASSAGE_FIELDS}


def as_paths(value: str | Sequence[str] | None, default: Sequence[str]) -> tuple[str, ...]:
    if value is None or value == "":
        return tuple(default)
    return (value,) if isinstance(value, str) else tuple(value)

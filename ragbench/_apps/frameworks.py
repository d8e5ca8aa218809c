"""What the systems of the frameworks an application is built with (`langchain`, `llamaindex`, `haystack`, `dspy`)
share, so that each says only what is its framework's own:

- `framework`: the framework's (or its instrumentor's) module, or one line naming the extra that brings it;
- `load_application`: the application an option names (`module:attribute`), the object itself or one made by the
  class or the function of no arguments named there; anything else refused in one line naming what it is;
- `declared_inputs` and `request_value`: what a declared input mapping gives the application, each of its inputs a
  field of the request by name (`REQUEST_FIELDS`);
- `value_at`: the value at a declared path (`answer`, `llm.replies.0`, `messages.-1.content`) in what the
  application returned: keys of mappings, indexes of sequences (from the end where negative), attributes of
  objects; `NothingAtPath` where the path leads nowhere, saying where it stopped;
- `document_of`: a framework's document (its text, metadata, own id and score) as a ragbench `Document`, its id and
  title taken from the metadata keys the system's options name, every other metadata value kept as JSON.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .._errors import ConfigError
from .._imports import import_extra
from .._types import Document
from .exchange import AppReplyError, AppRequest, value_summary
from .spans import json_attribute
from .targets import load_object

if TYPE_CHECKING:
    from .capture import Instrumentor

REQUEST_FIELDS = ("question", "history", "messages", "images", "id", "meta", "extras", "task")


class NothingAtPath(LookupError):
    """A declared path that leads nowhere in what the application returned (the message says where it stopped)."""


def framework(module: str, system: str, packages: str, instrumentors: Sequence[Instrumentor] = ()) -> ModuleType:
    """`module`, which system `system` needs, the module of each of its `instrumentors` checked after it; where one
    is not installed, a ConfigError of one line naming the packages and the extra that brings them
    (`ragbench[system]`)."""

    def needed(name: str) -> ModuleType:
        line = f"system {system} needs {packages}, which is not installed ({name} cannot be imported): "
        return import_extra(name, line + f"pip install 'ragbench[{system}]'")

    found = needed(module)
    for instrumentor in instrumentors:
        needed(instrumentor.target.partition(":")[0])
    return found


def load_application(target: str, system: str, option: str, kinds: tuple[type, ...], kind: str) -> Any:
    """The application `option=target` names for system `system`: an instance of `kinds` there, or one that the
    class or the function of no arguments there makes (called once, when the system is made); anything else a
    ConfigError of one line saying what it is and what `kind` the system takes."""
    where = f"system {system}: {option}={target}"
    found = load_object(target, system, option)
    if isinstance(found, kinds):
        return found
    if not (isinstance(found, type) and issubclass(found, kinds)) and not _maker(found):
        raise ConfigError(
            f"{where} is {_what(found)}, not {kind} (or a class or a function of no arguments that makes one)"
        )
    try:
        made = found()
    except Exception as exc:
        raise ConfigError(f"{where}: making the application raised {type(exc).__name__}: {exc}") from None
    if not isinstance(made, kinds):
        raise ConfigError(f"{where}() returned {_what(made)}, not {kind}")
    return made


def _maker(found: object) -> bool:
    """A function (not a class, nor an object that can be called) that can be called without arguments."""
    if not (inspect.isfunction(found) or inspect.ismethod(found)):
        return False
    try:
        parameters = inspect.signature(found).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters
    )


def _what(found: object) -> str:
    """What an object is, as a refusal names it: `a RunnableSequence`, `a function of (question)`, `the class X`."""
    if isinstance(found, type):
        return f"the class {found.__name__}"
    if inspect.isfunction(found) or inspect.ismethod(found):
        return f"a function of ({', '.join(inspect.signature(found).parameters)})"
    return f"a {type(found).__name__}"


def declared_inputs(value: object, system: str, option: str) -> dict[str, str]:
    """An input mapping (`{input: field}`) as declared: each input a string, each field one of `REQUEST_FIELDS`;
    anything else a ConfigError of one line."""
    if not isinstance(value, Mapping) or not value:
        raise ConfigError(
            f"system {system}: {option}={value!r}: a mapping of the application's inputs to the request's fields, "
            "e.g. {question: question}"
        )
    out: dict[str, str] = {}
    for key, field in value.items():
        if field not in REQUEST_FIELDS:
            raise ConfigError(
                f"system {system}: {option}: {key}={field!r} names no field of the request: one of "
                f"{', '.join(REQUEST_FIELDS)}"
            )
        out[str(key)] = str(field)
    return out


def request_value(request: AppRequest, field: str) -> Any:
    """The request's field `field` (one of `REQUEST_FIELDS`), a copy of its own: `messages` the history then the
    question as chat messages."""
    if field == "messages":
        return request.messages()
    return request.field(field)


def value_at(value: object, path: str) -> Any:
    """The value at `path` (parts joined by dots) in `value`; `NothingAtPath` where it leads nowhere."""
    found = value
    for part in path.split("."):
        if isinstance(found, Mapping):
            if part not in found:
                raise NothingAtPath(f"no {part!r} in {value_summary(found)}")
            found = found[part]
        elif isinstance(found, Sequence) and not isinstance(found, (str, bytes)):
            try:
                found = found[int(part)]
            except (ValueError, IndexError):
                raise NothingAtPath(f"no item {part!r} in {value_summary(found)}") from None
        elif part.startswith("_") or not hasattr(found, part):
            raise NothingAtPath(f"no {part!r} in {value_summary(found)}")
        else:
            found = getattr(found, part)
    return found


def declared_value(value: object, path: str, who: str, option: str) -> Any:
    """`value_at`, where the path was declared by the user: leading nowhere is an AppReplyError of one line."""
    try:
        return value_at(value, path)
    except NothingAtPath as exc:
        raise AppReplyError(f"{who}: {option}={path} finds nothing in what it returned: {exc}") from None


def answer_text(value: object, who: str, where: str) -> str:
    """An answer found at `where` as text: a string, or a message or answer object's text (its `text`, `content` or
    `data` where that is a string); anything else an AppReplyError of one line."""
    if isinstance(value, str):
        return str(value)  # a str of a subclass (LangChain's message text) as a plain one
    for name in ("text", "content", "data"):
        text = getattr(value, name, None)
        if isinstance(text, str):
            return str(text)
    raise AppReplyError(f"{who} returned {value_summary(value)} as its answer ({where}), expected a string")


def document_of(
    text: object,
    metadata: Mapping[str, Any] | None,
    where: str,
    own_id: object = None,
    score: object = None,
    id_key: str = "id",
    title_key: str = "title",
) -> Document:
    """One document the application retrieved: `text`, its id the metadata's `id_key` (else `own_id`, the
    framework's own id), its title the metadata's `title_key`, its url the metadata's `url`, its `score`; the rest of
    the metadata kept, as JSON."""
    if not isinstance(text, str):
        raise AppReplyError(f"{where} has no text: {value_summary(text)}")
    rest = {str(key): json_attribute(item) for key, item in (metadata or {}).items()}
    named_id = rest.pop(id_key, None)
    title = rest.pop(title_key, None)
    url = rest.pop("url", None)
    doc_id = named_id if named_id is not None else own_id
    if score is not None and (isinstance(score, bool) or not isinstance(score, numbers.Real)):
        raise AppReplyError(f"{where} has a score that is no number: {value_summary(score)}")
    number = None if score is None else float(score)
    return Document(
        id=None if doc_id is None else str(doc_id),
        title="" if title is None else str(title),
        text=text,
        url=None if url is None else str(url),
        score=number,
        metadata=rest,
    )

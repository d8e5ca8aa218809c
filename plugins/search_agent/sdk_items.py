"""A Responses-API answer's output items as BrowseComp-Plus's clients send them back: each one as the openai SDK
they run (1.97.0, pinned by BrowseComp-Plus's uv.lock) dumps the model it parsed (`model_dump(mode="python")`):
every field the SDK's model of that item type declares, in its order, None where the server sent none; then the
fields the model does not declare, as sent. A reasoning item's summary, a message's content parts, their
annotations and log-probs are dumped the same way; an item of a type not listed goes back as sent.
"""

from __future__ import annotations

from typing import Any

from ragbench.api.data import JsonObject

# the fields of openai 1.97.0's models (openai/types/responses/), in their order
ITEMS = {
    "reasoning": ("id", "summary", "type", "encrypted_content", "status"),
    "message": ("id", "content", "role", "status", "type"),
    "function_call": ("arguments", "call_id", "name", "type", "id", "status"),
}
SUMMARY = ("text", "type")
CONTENT = {"output_text": ("annotations", "text", "type", "logprobs"), "refusal": ("refusal", "type")}
ANNOTATIONS = {
    "file_citation": ("file_id", "filename", "index", "type"),
    "url_citation": ("end_index", "start_index", "title", "type", "url"),
    "container_file_citation": ("container_id", "end_index", "file_id", "filename", "start_index", "type"),
    "file_path": ("file_id", "index", "type"),
}
LOGPROB = ("token", "bytes", "logprob", "top_logprobs")
TOP_LOGPROB = ("token", "bytes", "logprob")


def _dumped(value: Any, fields: tuple[str, ...] | None) -> Any:
    """`value` with `fields` first (None where missing), then its other keys as sent; as sent where it is no
    object or its type is not one the SDK models."""
    if not isinstance(value, dict) or fields is None:
        return value
    return {name: value.get(name) for name in fields} | {k: v for k, v in value.items() if k not in fields}


def _by_type(value: Any, models: dict[str, tuple[str, ...]]) -> Any:
    """`value` dumped as the model its "type" names among `models`."""
    kind = value.get("type") if isinstance(value, dict) else None
    return _dumped(value, models.get(kind) if isinstance(kind, str) else None)


def _each(values: Any, dump: Any) -> Any:
    return [dump(value) for value in values] if isinstance(values, list) else values


def _content_part(part: Any) -> Any:
    dumped = _by_type(part, CONTENT)
    if isinstance(dumped, dict) and dumped.get("type") == "output_text":
        dumped["annotations"] = _each(dumped["annotations"], lambda annotation: _by_type(annotation, ANNOTATIONS))
        dumped["logprobs"] = _each(dumped["logprobs"], _logprob)
    return dumped


def _logprob(logprob: Any) -> Any:
    dumped = _dumped(logprob, LOGPROB)
    if isinstance(dumped, dict):
        dumped["top_logprobs"] = _each(dumped["top_logprobs"], lambda top: _dumped(top, TOP_LOGPROB))
    return dumped


def sdk_dump(item: JsonObject) -> JsonObject:
    """One output item as openai 1.97.0's `model_dump(mode="python")` gives it."""
    dumped: JsonObject = _by_type(item, ITEMS)
    if dumped.get("type") == "reasoning":
        dumped["summary"] = _each(dumped["summary"], lambda part: _dumped(part, SUMMARY))
    elif dumped.get("type") == "message":
        dumped["content"] = _each(dumped["content"], _content_part)
    return dumped

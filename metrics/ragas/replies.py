"""A judge's reply read as ragas 0.4.3 reads it through instructor 1.17 (`llm_factory`, OpenAI provider: instructor's
JSON mode): pydantic's `model_validate_json` of the whole reply, in strict mode, against the prompt's output model.
No code fence or text around the JSON is taken, and an integer field takes only an integer (`1.0`, `true` and
`"1"` are refused); a reply nested deeper than pydantic's JSON parser goes is refused as invalid JSON. A refused
reply is answered with instructor's re-ask: the reply as the assistant's turn, then a user turn holding pydantic's
error text; instructor makes 4 attempts (max_retries 3), then raises. An attempt its OpenAI client cannot send (a
conversation that is not UTF-8: a reply holding a lone surrogate, sent back in the re-ask) ends it there too.

The output models are pydantic models built from the JSON Schema in prompts.json (ragas's own models' schema),
so pydantic's checks and its error text are those ragas's instructor gets (with the same pydantic release)."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field, ValidationError, create_model

from ragbench.api.engines import Response

from .prompts import PROMPTS, FieldSchema, ObjectSchema

Content = str | list[Any]  # a message's content: text, or a list of content parts

ATTEMPTS = 4  # instructor's default max_retries (3), which ragas leaves, plus the first attempt
REASK = "Correct your JSON ONLY RESPONSE, based on the following errors:\n"
# a refused reply longer than this is not sent back in a re-ask: ~1,000 characters a token of the 1,024 ragas asks
# for, so no model's reply; instructor would send it back, into every later attempt (a 20 MB reply: 120 MB of prompts
# over 3 re-asks), which no judge's context holds and past the example's ceiling of prompt characters
REASK_CHARS = 1_000_000

_TYPES: dict[str, type] = {"string": str, "integer": int}


@functools.cache
def output_model(prompt: str) -> type[BaseModel]:
    """The pydantic model of prompt `prompt`'s output: its JSON Schema is the prompt's `output_schema`."""
    schema = PROMPTS[prompt]["output_schema"]
    return _model(schema, schema.get("$defs", {}))


def _model(schema: ObjectSchema, defs: dict[str, ObjectSchema]) -> type[BaseModel]:
    fields: dict[str, Any] = {
        name: (_annotation(field, defs), Field(description=field.get("description")))
        for name, field in schema["properties"].items()
    }
    model: type[BaseModel] = create_model(schema["title"], __doc__=schema.get("description"), **fields)
    return model


def _annotation(field: FieldSchema, defs: dict[str, ObjectSchema]) -> Any:
    if "$ref" in field:
        return _model(defs[field["$ref"].rsplit("/", 1)[-1]], defs)
    if field.get("type") == "array":
        return list[_annotation(field["items"], defs)]  # type: ignore[misc]
    return _TYPES[field["type"]]


def content(reply: Response) -> Content:
    """The reply's message content as the OpenAI SDK gives instructor it: its text, or the list of content parts
    the server sent in its place (which instructor's JSON mode refuses: JSON input should be string)."""
    parts: list[Any] | None = None if reply.content_parts is None else json.loads(reply.content_parts)
    return reply.text if parts is None else parts


def read(text: Content, prompt: str) -> dict[str, Any]:
    """The reply as instructor's JSON mode validates it against prompt `prompt`'s output model; pydantic's
    `ValidationError` where it refuses it."""
    value: dict[str, Any] = output_model(prompt).model_validate_json(text, strict=True).model_dump()  # type: ignore[arg-type]
    return value


def sendable(conversation: Sequence[Mapping[str, Content]]) -> bool:
    """Whether instructor's OpenAI client can send `conversation`: it encodes the request's JSON as UTF-8, which
    a lone surrogate (a judge's reply may hold one: JSON's `\\ud800`) cannot be (UnicodeEncodeError, and instructor
    gives up: InstructorRetryException)."""
    try:
        for turn in conversation:
            json.dumps(turn["content"], ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def reask(reply: Content, error: ValidationError) -> list[dict[str, Content]]:
    """The turns instructor's JSON mode appends to the conversation after a refused reply."""
    return [{"role": "assistant", "content": reply}, {"role": "user", "content": REASK + str(error)}]

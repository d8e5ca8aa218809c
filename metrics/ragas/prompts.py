"""The chat requests ragas 0.4.3 sends through `llm_factory` (instructor's JSON mode over the OpenAI client).

prompts.json holds each prompt's data as ragas defines it: the instruction, the output's JSON Schema and the
few-shot examples (factual correctness: one example set per atomicity/coverage level). The user message is
ragas's `BasePrompt.to_string` layout (the schema as compact JSON, examples and input as 4-space-indented
JSON); instructor's JSON mode adds a system message with the schema indented by 2 and asks for
`response_format: json_object`. llm_factory's sampling defaults: temperature 0.01, top_p 0.1, 1,024 tokens; for
a reasoning model (its `_map_openai_params`: o1-o9, gpt-5 to gpt-19, codex-mini) temperature 1.0, no top_p, and
the 1,024 tokens sent as `max_completion_tokens` (the openai engine sends that for such a model)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict

from ragbench.api.data import JsonObject
from ragbench.api.engines import SamplingArgs, reasoning_model

# The JSON Schema of a ragas output model, as far as its models use it (prompts.json's `output_schema`)
FieldSchema = TypedDict(
    "FieldSchema", {"type": str, "items": "FieldSchema", "$ref": str, "description": str}, total=False
)
ObjectSchema = TypedDict(
    "ObjectSchema",
    {"title": str, "description": str, "properties": dict[str, FieldSchema], "$defs": "dict[str, ObjectSchema]"},
    total=False,
)

# An example: the input and the output ragas shows for it
Example = tuple[JsonObject, JsonObject]


class Prompt(TypedDict):
    """One prompt of prompts.json, as ragas defines it."""

    instruction: str
    input_fields: list[str]  # the fields of the input shown, in this order
    output_schema: ObjectSchema
    examples: list[Example] | dict[str, list[Example]]  # several sets: by "atomicity/coverage"


PROMPTS: dict[str, Prompt] = json.loads(Path(__file__).with_name("prompts.json").read_text(encoding="utf-8"))

# ragas's InstructorModelArgs defaults; instructor's JSON mode asks for a JSON object (response_format)
SAMPLING: SamplingArgs = {"temperature": 0.01, "top_p": 0.1, "max_tokens": 1024, "json_mode": True}
REASONING: SamplingArgs = {"temperature": 1.0, "left_to_server": ("top_p",), "max_tokens": 1024, "json_mode": True}


def sampling(model: str) -> SamplingArgs:
    """The sampling ragas's llm_factory sends to judge `model`."""
    return REASONING if reasoning_model(model) else SAMPLING


INSTRUCTOR_JSON_MODE = """
            As a genius expert, your task is to understand the content and provide
            the parsed objects in json that match the following json_schema:


            {schema}

            Make sure to return an instance of the JSON, not the schema itself
"""


def indented(value: Mapping[str, object]) -> str:
    """A pydantic model's `model_dump_json(indent=4)`: non-ASCII characters as they are."""
    return json.dumps(value, indent=4, ensure_ascii=False)


def examples_text(examples: list[Example]) -> str:
    if not examples:
        return ""
    shown = [
        f"Example {number}\nInput: {indented(given)}\nOutput: {indented(expected)}"
        for number, (given, expected) in enumerate(examples, 1)
    ]
    return "--------EXAMPLES-----------\n" + "\n\n".join(shown)


def user_message(name: str, given: Mapping[str, object], examples: str = "default") -> str:
    """Prompt `name` of prompts.json over the input `given` (its fields in the prompt's order); `examples`:
    the example set of a prompt that has several (factual correctness's "atomicity/coverage")."""
    prompt = PROMPTS[name]
    shown = prompt["examples"] if isinstance(prompt["examples"], list) else prompt["examples"][examples]
    data = {field: given[field] for field in prompt["input_fields"] if given.get(field) is not None}
    return (
        f"{prompt['instruction']}\n"
        "Please return the output in a JSON format that complies with the following schema as specified in "
        f"JSON Schema:\n{json.dumps(prompt['output_schema'])}Do not use single quotes in your response but "
        f"double quotes,properly escaped with a backslash.\n\n{examples_text(shown)}\n"
        "-----------------------------\n\nNow perform the same with the following input\n"
        f"input: {indented(data)}\nOutput: "
    )


def messages(name: str, given: Mapping[str, object], examples: str = "default") -> list[dict[str, str]]:
    """The chat ragas sends for prompt `name`: instructor's JSON-mode system message, then the prompt."""
    schema = json.dumps(PROMPTS[name]["output_schema"], indent=2, ensure_ascii=False)
    return [
        {"role": "system", "content": INSTRUCTOR_JSON_MODE.format(schema=schema)},
        {"role": "user", "content": user_message(name, given, examples)},
    ]

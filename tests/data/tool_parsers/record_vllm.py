"""Records what vLLM's own `hermes` and `llama3_json` tool parsers (vllm.tool_parsers, vLLM 0.33.0, run unchanged)
read from a set of model outputs: hand-written edge cases and a few hundred generated ones (seeded), each text
through both parsers' `extract_tool_calls` with a ChatCompletionRequest that offers tools. Writes
`vllm_parsers.json` beside this file: per case and parser, tools_called, content and the calls' (name, arguments).
tests/engines/test_tool_parsers_vllm_parity.py compares ragbench's parsers of the same names with it.

The tokenizer is SmolLM2's (ragbench's embedded model: `embedded_safetensors_dir()`); neither parser reads it
to extract calls, but `llama3_json` refuses a vocabulary without `<|python_tag|>`, which is added to it here as
Llama 3's tokenizer has it.

vLLM 0.33.0 is the PyPI wheel installed without its dependencies, then only the packages its parsers and OpenAI
protocol classes import (it asks for torch 2.14.0; they run on torch 2.13.0's CPU wheel, no GPU used):

    python -m venv /tmp/vllm-rec && /tmp/vllm-rec/bin/pip install --no-deps vllm==0.33.0
    /tmp/vllm-rec/bin/pip install torch==2.13.0 "transformers<5.21" regex pydantic "fastapi<0.137" openai \
        partial-json-parser msgspec pyyaml cachetools psutil jinja2 numpy cbor2 pyzmq urllib3 aiohttp requests \
        oss-harmony pillow pybase64 prometheus_client cloudpickle uvloop py-cpuinfo
    /tmp/vllm-rec/bin/python tests/data/tool_parsers/record_vllm.py SMOLLM2_TOKENIZER_DIR
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SEED = 49
GENERATED = 300
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the corpus.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_document",
            "description": "A document by docid.",
            "parameters": {"type": "object", "properties": {"docid": {"type": "string"}}, "required": ["docid"]},
        },
    },
]


def call(name: str, arguments: Any, key: str = "arguments") -> str:
    return json.dumps({"name": name, key: arguments}, ensure_ascii=False)


def block(body: str) -> str:
    return f"<tool_call>\n{body}\n</tool_call>"


HAND: dict[str, str] = {
    "no call": "Paris is the capital of France.",
    "empty": "",
    "only whitespace": "  \n\t",
    "braces in prose": "A set is written {1, 2} in maths.",
    "json object in prose": 'The config is {"a": 1} here.',
    "hermes one call": block(call("search", {"query": "Eiffel tower"})),
    "hermes text before": "Let me look that up.\n" + block(call("search", {"query": "Eiffel"})),
    "hermes text after": block(call("search", {"query": "x"})) + "\nwaiting for the result",
    "hermes text between": block(call("search", {"query": "a"}))
    + " and also "
    + block(call("get_document", {"docid": "7"})),
    "hermes several calls": "".join(block(call("search", {"query": q})) for q in ["one", "two", "three"]),
    "hermes nested arguments": block(call("search", {"query": "q", "filters": {"year": [1990, 2000], "x": None}})),
    "hermes unicode": block(call("search", {"query": "Zürich – 東京 😀"})),
    "hermes escapes": block(
        json.dumps({"name": "search", "arguments": {"query": 'a "quoted" \\ back\nslash\ttab'}}, ensure_ascii=True)
    ),
    "hermes ascii escapes of unicode": block(json.dumps({"name": "search", "arguments": {"query": "Zürich"}})),
    "hermes parameters key": block(call("search", {"query": "x"}, key="parameters")),
    "hermes no arguments": block(json.dumps({"name": "search"})),
    "hermes arguments as a json string": block(call("search", '{"query": "x"}')),
    "hermes arguments null": block(call("search", None)),
    "hermes arguments a list": block(call("search", ["x", 1])),
    "hermes no newlines": '<tool_call>{"name": "search", "arguments": {"query": "x"}}</tool_call>',
    "hermes much whitespace": '<tool_call>\n\n   {"name" :  "search" ,\n "arguments" : { "query" : "x" } }  \n\n'
    "</tool_call>\n",
    "hermes cut short": 'Looking.<tool_call>\n{"name": "search", "arguments": {"query": "Ann',
    "hermes cut short after name": '<tool_call>\n{"name": "search", ',
    "hermes unclosed but complete": '<tool_call>\n{"name": "search", "arguments": {"query": "x"}}\n',
    "hermes second call cut short": block(call("search", {"query": "a"})) + '<tool_call>{"name": "get_document", "ar',
    "hermes malformed json": '<tool_call>\n{"name": "search", "arguments": {"query": "x",}}\n</tool_call>',
    "hermes single quotes": "<tool_call>\n{'name': 'search', 'arguments': {'query': 'x'}}\n</tool_call>",
    "hermes no name": block(json.dumps({"arguments": {"query": "x"}})),
    "hermes name not a string": block(json.dumps({"name": 5, "arguments": {}})),
    "hermes not an object": block(json.dumps(["search", {"query": "x"}])),
    "hermes not json": "<tool_call>not json at all</tool_call>",
    "hermes empty block": "<tool_call></tool_call>",
    "hermes name with escapes": block(json.dumps({"name": 'se"arch', "arguments": {}})),
    "hermes unknown tool": block(call("calculator", {"expression": "1+1"})),
    "hermes extra keys": block(json.dumps({"name": "search", "arguments": {"query": "x"}, "id": "c1"})),
    "hermes both keys": block(json.dumps({"name": "search", "arguments": {"a": 1}, "parameters": {"b": 2}})),
    "hermes with python tag": "<|python_tag|>" + block(call("search", {"query": "x"})),
    "llama one call": call("search", {"query": "x"}, key="parameters"),
    "llama arguments key": call("search", {"query": "x"}),
    "llama both keys": json.dumps({"name": "search", "arguments": {"a": 1}, "parameters": {"b": 2}}),
    "llama python tag": "<|python_tag|>" + call("search", {"query": "x"}, key="parameters"),
    "llama python tag no call": "<|python_tag|>print('hello')",
    "llama semicolon separated": "; ".join(call("search", {"query": q}, key="parameters") for q in ["a", "b"]),
    "llama semicolon no space": ";".join(call("search", {"query": q}, key="parameters") for q in ["a", "b"]),
    "llama newline separated": "\n".join(call("search", {"query": q}, key="parameters") for q in ["a", "b"]),
    "llama space separated": " ".join(call("search", {"query": q}, key="parameters") for q in ["a", "b"]),
    "llama text before": "Sure, here it is: " + call("search", {"query": "x"}, key="parameters"),
    "llama text after": call("search", {"query": "x"}, key="parameters") + " That is my call.",
    "llama leading whitespace": "\n  " + call("search", {"query": "x"}, key="parameters") + "\n",
    "llama nested arguments": call("search", {"query": "q", "opts": {"k": [1, {"deep": True}]}}, key="parameters"),
    "llama braces in strings": call("search", {"query": "a {b} c }"}, key="parameters"),
    "llama unicode": call("search", {"query": "naïve café 🚀"}, key="parameters"),
    "llama escapes": json.dumps({"name": "search", "parameters": {"query": 'say "hi"\n'}}),
    "llama arguments as a json string": call("search", '{"query": "x"}', key="parameters"),
    "llama no arguments": json.dumps({"name": "search"}),
    "llama no name": json.dumps({"parameters": {"query": "x"}}),
    "llama name not a string": json.dumps({"name": ["search"], "parameters": {}}),
    "llama cut short": '{"name": "search", "parameters": {"query": ',
    "llama second call cut short": call("search", {"query": "a"}, key="parameters") + '; {"name": "search", "par',
    "llama malformed json": '{"name": "search", "parameters": {"query": "x",}}',
    "llama malformed before a call": "Use {braces} then " + call("search", {"query": "x"}, key="parameters"),
    "llama object then prose object": call("search", {"query": "x"}, key="parameters") + ' and {"a": 1}',
    "llama a list": json.dumps([{"name": "search", "parameters": {"query": "x"}}]),
    "llama objects back to back": call("search", {"query": "a"}, "parameters")
    + call("search", {"query": "b"}, "parameters"),
    "llama hermes tags": block(call("search", {"query": "x"}, key="parameters")),
}

WORDS = ["Paris", "tower", "Zürich", "東京", 'a "quote"', "back\\slash", "new\nline", "tab\t", "{brace}", "ß", "😀", ""]


def value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(7 if depth < 2 else 4)
    if kind == 0:
        return rng.choice(WORDS)
    if kind == 1:
        return rng.randint(-1000, 1000)
    if kind == 2:
        return rng.choice([True, False, None, 1.5, -0.25])
    if kind == 3:
        return " ".join(rng.choices(WORDS, k=rng.randint(1, 3)))
    if kind == 4:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(["query", "docid", "k", "opts", "ñ"]): value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def damage(rng: random.Random, text: str) -> str:
    """A call as a model may break it: cut short, a comma too many, or a quote lost."""
    how = rng.randrange(3)
    if how == 0:
        return text[: rng.randint(1, max(1, len(text) - 1))]
    if how == 1:
        return text[:-1] + ",}" if text.endswith("}") else text + ","
    at = text.find('"', len('{"name": "x') + 1)
    return text[:at] + text[at + 1 :] if at > 0 else text


def generated(rng: random.Random) -> str:
    """A model output in one family's format (or none), with the variations models write."""
    calls = []
    for _ in range(rng.randint(0, 3)):
        name = rng.choice(["search", "get_document", "lookup_ñ"])
        arguments: Any = {"query": rng.choice(WORDS)} if rng.random() < 0.4 else value(rng)
        if rng.random() < 0.1:
            arguments = json.dumps(arguments)
        key = rng.choice(["arguments", "arguments", "parameters"])
        text = json.dumps({"name": name, key: arguments}, ensure_ascii=rng.random() < 0.3)
        if rng.random() < 0.1:
            text = damage(rng, text)
        calls.append(text)
    before = rng.choice(["", "", "Let me search.", "I will call a tool.\n", " "])
    after = rng.choice(["", "", "\n", " Done."])
    if rng.random() < 0.5:  # hermes
        ends = [rng.choice(["\n</tool_call>", "</tool_call>", "\n</tool_call>\n"]) for _ in calls]
        if calls and rng.random() < 0.15:
            ends[-1] = ""  # the last block never closed
        sep = rng.choice(["", "\n"])
        body = sep.join(f"<tool_call>{rng.choice(['', chr(10)])}{c}{e}" for c, e in zip(calls, ends))
        return before + body + (after if ends[-1:] != [""] else "")
    tag = rng.choice(["", "", "<|python_tag|>"])
    sep = rng.choice(["; ", "; ", ";", "\n", " "])
    return (before if rng.random() < 0.3 else "") + tag + sep.join(calls) + (after if rng.random() < 0.3 else "")


def record(parser: Any, request: Any, text: str) -> dict[str, Any]:
    found = parser.extract_tool_calls(text, request)
    return {
        "tools_called": found.tools_called,
        "content": found.content,
        "calls": [[c.function.name, c.function.arguments] for c in found.tool_calls],
    }


def main(tokenizer_dir: str) -> None:
    import vllm
    from transformers import AutoTokenizer
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.tool_parsers import ToolParserManager

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|python_tag|>"]})
    request = ChatCompletionRequest(
        model="m", messages=[{"role": "user", "content": "Who built it?"}], tools=TOOLS, tool_choice="auto"
    )
    parsers = {name: ToolParserManager.get_tool_parser(name)(tokenizer) for name in ("hermes", "llama3_json")}
    rng = random.Random(SEED)
    texts = {**{f"hand: {name}": text for name, text in HAND.items()}}
    texts.update({f"generated {n:03d}": generated(rng) for n in range(GENERATED)})
    cases = [
        {"case": case, "text": text, **{name: record(p, request, text) for name, p in parsers.items()}}
        for case, text in texts.items()
    ]
    out = {"vllm": vllm.__version__, "seed": SEED, "tools": TOOLS, "cases": cases}
    (HERE / "vllm_parsers.json").write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])

"""Records what vLLM's own classes (vLLM 0.33.0, run unchanged) return where ragbench's `vllm` engine calls them for
a tool request (ragbench/_engines/vllm/tools.py), and what ragbench made of it: per case (a parser, a tool choice,
a model output), the sampling settings the server's adjust_request made (`skip_special_tokens`, and
`structured_outputs` as its JSON), `vllm.parser`'s parse (reasoning, content, each FunctionCall's fields), the
tool parser's own `extract_tool_calls` (ExtractedToolCallInformation's fields, what releases before vllm.parser
read), and ragbench's answer (content, calls). Writes `vllm_server.json` beside this file, which
tests/engines/test_engine_vllm_tools.py replays in place of vLLM.

Run in the venv of record_vllm.py (with xgrammar==0.2.8, apache-tvm-ffi==0.1.11, mistral_common, jsonschema and
ragbench's own dependencies added), from the repository root:

    PYTHONPATH=. /tmp/vllm-rec/bin/python tests/data/tool_parsers/record_vllm_server.py SMOLLM2_TOKENIZER_DIR
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the corpus.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
}
HERMES_TWO = (
    'Looking.<tool_call>\n{"name": "search", "arguments": {"query": "x"}}\n</tool_call>'
    '<tool_call>{"name": "search", "arguments": {"query": "y"}}</tool_call>'
)
CASES = [  # (parser, tool_choice, model output)
    ("hermes", "auto", HERMES_TWO),
    ("hermes", "auto", '<tool_call>{"name": "search", "arguments": {"query": "x"}}</tool_call>'),
    ("hermes", "auto", ' \n<tool_call>{"name": "search", "arguments": {"query": "x"}}</tool_call>'),
    ("hermes", "auto", "plain answer"),
    ("hermes", "auto", ""),
    ("hermes", "auto", '<tool_call>{"name": "search", "arguments": {"query": "x",}}</tool_call>'),
    ("hermes", None, HERMES_TWO),
    ("hermes", "required", HERMES_TWO),
    ("hermes", "search", HERMES_TWO),
    (
        "llama3_json",
        "auto",
        '<|python_tag|>{"name": "search", "parameters": {"query": "x"}}; {"name": "search", '
        '"parameters": {"query": "y"}}',
    ),
    ("llama3_json", "auto", "no call"),
    ("llama3_json", "required", '{"name": "search", "parameters": {"query": "x"}}'),
    (
        "qwen3_xml",
        "auto",
        "Let me.\n<tool_call>\n<function=search>\n<parameter=query>\nx\n</parameter>\n</function>\n</tool_call>",
    ),
    ("pythonic", "auto", '[search(query="x"), search(query="y")]'),
    ("pythonic", "required", '[{"name": "search", "parameters": {"query": "x"}}]'),
    ("pythonic", "search", '{"query": "x"}'),
]


def fields(value: Any) -> Any:
    """A pydantic object's, or a dataclass's, fields as JSON (its own field names)."""
    if value is None:
        return None
    if dataclasses.is_dataclass(value):
        return {k: v for k, v in dataclasses.asdict(value).items() if v is not None and not k.startswith("_")}
    return json.loads(value.model_dump_json())


def main(tokenizer_dir: str) -> None:
    import vllm
    from transformers import AutoTokenizer
    from vllm.tool_parsers import ToolParserManager

    from ragbench._engines.local.tool_parsers import with_tool_calls
    from ragbench._engines.vllm.tools import ToolCallReader
    from ragbench._values.llm_request import Request
    from ragbench._values.llm_responses import Response

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|python_tag|>"]})
    out = []
    for name, choice, text in CASES:
        request = Request.chat(
            [{"role": "user", "content": "Who?"}], tools=[SEARCH], **({"tool_choice": choice} if choice else {})
        )
        reader = ToolCallReader(name, lambda: tokenizer)
        reader.load()
        server = reader._server
        assert server is not None
        parser, asked = server.adjusted(request)
        reasoning, content, calls = parser.parse(text, asked, enable_auto_tools=True)
        try:  # the tool parser alone reads a text that a JSON schema constrained as vllm.parser does not
            extracted = fields(ToolParserManager.get_tool_parser(name)(tokenizer).extract_tool_calls(text, asked))
        except ValueError:
            extracted = None
        answer = with_tool_calls(request, Response(texts=[text]), reader.parser(request), "vllm")
        out.append(
            {
                "parser": name,
                "tool_choice": choice,
                "text": text,
                "adjusted": {
                    "skip_special_tokens": asked.skip_special_tokens,
                    "structured_outputs": fields(asked.structured_outputs),
                },
                "parsed": {"reasoning": reasoning, "content": content, "calls": [fields(c) for c in calls or []]},
                "extracted": extracted,
                "ragbench": {"content": answer.text, "calls": [[c.name, c.raw_arguments] for c in answer.tool_calls]},
            }
        )
    record = {"vllm": vllm.__version__, "tool": SEARCH, "cases": out}
    (HERE / "vllm_server.json").write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])

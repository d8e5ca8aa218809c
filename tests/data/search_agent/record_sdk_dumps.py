"""Records how openai 1.97.0 (the SDK BrowseComp-Plus's uv.lock pins, which its clients run) dumps the output items
of a Responses answer it parsed, `model_dump(mode="python")`, as the clients put them in their next request:
sdk_dumps.json holds each item as a server sent it and as the SDK dumped it (key order kept).
tests/systems/search_agent/test_search_agent_sdk_items.py compares ragbench's dump (plugins/search_agent/sdk_items.py).

    python -m venv /tmp/bcp && /tmp/bcp/bin/pip install openai==1.97.0
    /tmp/bcp/bin/python tests/data/search_agent/record_sdk_dumps.py
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
from pathlib import Path
from typing import Any

from openai._models import construct_type
from openai.types.responses import Response

HERE = Path(__file__).resolve().parent
SUMMARY = {"type": "summary_text", "text": "Thinking."}
LOGPROB = {
    "token": "Hi",
    "logprob": -0.5,
    "bytes": [72, 105],
    "top_logprobs": [{"logprob": -0.5, "token": "Hi", "bytes": [72, 105]}],
}
ITEMS: list[dict[str, Any]] = [
    {"type": "reasoning", "id": "rs_1", "summary": [SUMMARY]},
    {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAA", "status": "completed"},
    {"summary": [{"text": "no type"}], "type": "reasoning", "content": [{"type": "reasoning_text", "text": "t"}]},
    {"type": "function_call", "call_id": "call_1", "name": "search", "arguments": '{"query": "x"}'},
    {
        "status": "completed",
        "id": "fc_2",
        "type": "function_call",
        "call_id": "call_2",
        "name": "search",
        "arguments": "{}",
    },
    {"type": "function_call", "name": "get_document", "call_id": "call_3"},
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Hi", "annotations": []}],
    },
    {
        "type": "message",
        "role": "assistant",
        "id": "msg_2",
        "status": "incomplete",
        "extra": 1,
        "content": [
            {
                "text": "Hi",
                "type": "output_text",
                "logprobs": [LOGPROB],
                "annotations": [
                    {
                        "url": "https://example.org",
                        "type": "url_citation",
                        "title": "t",
                        "start_index": 0,
                        "end_index": 2,
                    },
                    {"type": "file_citation", "index": 1, "file_id": "f", "filename": "a.txt"},
                ],
            },
            {"refusal": "no", "type": "refusal"},
        ],
    },
]


def main() -> None:
    payload = {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "agent",
        "status": "completed",
        "output": ITEMS,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    response: Any = construct_type(type_=Response, value=payload)  # as the SDK reads a server's answer
    fixture = {
        "versions": {"openai": metadata.version("openai"), "pydantic": metadata.version("pydantic")},
        "items": [
            {"sent": sent, "dumped": item.model_dump(mode="python")} for sent, item in zip(ITEMS, response.output)
        ],
    }
    (HERE / "sdk_dumps.json").write_text(json.dumps(fixture, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

"""BrowseComp-Plus's anthropic_client (search_agent/anthropic_client.py at commit 97c637c): one Messages API
request per question, the search tools on an MCP server that Anthropic's servers call themselves (the beta MCP
connector), so the whole agent loop runs on the API's side and one answer holds every call (`mcp_tool_use`),
its result (`mcp_tool_result`), the thinking and the final text. An answer the API paused (stop_reason
`pause_turn`) is asked again with the answers so far, up to `max_pause_attempts` times
(`handle_complete_conversation`); the run file is read from all the answers' blocks (`_persist_response`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ragbench.api import Context, Document, Prediction
from ragbench.api.data import JsonObject, JsonValue

from .mcp_server import NAME
from .qwen_client import retrieved_docids
from .shapes import RunFileRecord, RunItem, StatusRecord, TurnSampling

PAUSED = "pause_turn"
# the run file's status: "completed" for the API's end_turn, else its stop_reason (the finish reasons ragbench
# names them by, back to the API's names; a stop sequence is never sent, so "stop" is end_turn)
STATUS = {"stop": "completed", "length": "max_tokens", "content_filter": "refusal", "tool_calls": "tool_use"}


@dataclass
class AnthropicRun:
    """What one question's requests gathered: every answer's content blocks (a paused answer's last call
    without its result dropped, as the client drops it), the last answer's finish reason and output tokens,
    the requests made."""

    blocks: list[JsonObject] = field(default_factory=list)
    finish_reason: str = "stop"
    output_tokens: int = 0
    requests: int = 0
    pause_restarts: int = 0


def answer_blocks(items: str | None, text: str) -> list[JsonObject]:
    """An answer's content blocks: the SDK's dump of each (the engine keeps them when there is more than text),
    else its text as one block."""
    if items is not None:
        blocks: list[JsonObject] = json.loads(items)
        return blocks
    return [{"type": "text", "text": text}] if text else []


async def run_agent(
    ctx: Context, question: list[dict[str, str]], server_url: str, sampling: TurnSampling, max_pause_attempts: int
) -> AnthropicRun:
    """The requests of one question: `question` (the system turn, if any, and the user turn), the MCP server at
    `server_url` as a tool, `sampling` every time; each paused answer sent back as an assistant turn of its
    blocks."""
    server = {"type": "mcp", "server_label": NAME, "server_url": server_url}
    run, answers = AnthropicRun(), list[list[JsonObject]]()
    for attempt in range(max_pause_attempts + 1):
        with ctx.group(f"request {attempt + 1}"):
            response = await ctx.llm.chat(
                question + [{"role": "assistant", "content": None, "items": blocks} for blocks in answers],
                step="turn",
                tools=[server],
                **sampling,
            )
        run.requests += 1
        blocks = answer_blocks(response.items, response.text)
        answers.append(blocks)
        run.finish_reason, run.output_tokens = response.finish_reason, response.completion_tokens
        if response.finish_reason != PAUSED:
            break
        if blocks and blocks[-1]["type"] == "mcp_tool_use":
            blocks.pop()
        run.pause_restarts += 1
    run.blocks = [block for blocks in answers for block in blocks]
    return run


def tool_output(block: JsonObject) -> str:
    """An `mcp_tool_result`'s output as the run file records it: its text parts joined and stripped, else the
    JSON of its content."""
    content = block.get("content", [])
    parts = content if isinstance(content, list) else []
    text = "".join(str(part["text"]) for part in parts if isinstance(part, dict) and part.get("text"))
    return text.strip() or json.dumps(content, ensure_ascii=False)


def run_record(run: AnthropicRun) -> StatusRecord:
    """The run file's fields: a tool_call item per `mcp_tool_use` (its `input` as the arguments) with the output
    of the `mcp_tool_result` that answers it, a reasoning item per thinking block, an output_text item per text;
    the calls per tool; the searches' docids; the status ("completed" for end_turn, else the stop reason)."""
    result: list[RunItem] = []
    counts: dict[str, int] = {}
    pending: dict[JsonValue, RunItem] = {}
    for block in run.blocks:
        kind = block.get("type")
        if kind == "mcp_tool_use":
            entry: RunItem = {
                "type": "tool_call",
                "tool_name": block.get("name"),
                "arguments": block.get("input"),
                "output": None,
            }
            if block.get("id"):
                pending[block["id"]] = entry
            result.append(entry)
            name = block.get("name")
            if name:  # a tool's name: a string in the Messages API
                counts[str(name)] = counts.get(str(name), 0) + 1
        elif kind == "mcp_tool_result":
            output = tool_output(block)
            answered = pending.get(block.get("tool_use_id", ""))
            if answered is not None:
                answered["output"] = output
            else:
                result.append({"type": "tool_call", "tool_name": None, "arguments": None, "output": output})
        elif kind == "thinking":
            result.append(
                {"type": "reasoning", "tool_name": None, "arguments": None, "output": [block.get("thinking")]}
            )
        elif kind == "text" and block.get("text"):
            result.append({"type": "output_text", "tool_name": None, "arguments": None, "output": block["text"]})
    return {
        "status": STATUS.get(run.finish_reason, run.finish_reason),
        "tool_call_counts": counts,
        "retrieved_docids": retrieved_docids(result),
        "result": result,
    }


def searched_docids(result: list[RunItem]) -> list[str]:
    """The docids of every search's hits, search by search in rank order (a search whose output is no list of
    hits, an error, gives none)."""
    docids: list[str] = []
    for item in result:
        if item["type"] == "tool_call" and item["tool_name"] == "search" and isinstance(item["output"], str):
            try:
                hits = json.loads(item["output"])
            except ValueError:
                continue
            hits = hits if isinstance(hits, list) else [hits]
            docids += [str(hit["docid"]) for hit in hits if isinstance(hit, dict) and "docid" in hit]
    return docids


def prediction(
    example_id: str, record: RunFileRecord, extras: Mapping[str, int], document: Callable[[str], Document | None]
) -> Prediction:
    """An example of a client whose tools the API's servers call: the last text of its run file's `record`,
    stripped, as the answer; the documents of every search's hits, in order (`document` of each docid); the run
    file's fields and `extras` as extras (arguments that do not fit are fastmcp's to answer: none counted invalid
    here)."""
    texts = [str(item["output"]) for item in record["result"] if item["type"] == "output_text"]  # a text each
    answer = texts[-1].strip() if texts else ""
    docs = [doc for doc in map(document, searched_docids(record["result"])) if doc is not None]
    recorded = {**record, **extras, "invalid_tool_calls": 0}
    return Prediction(example_id=example_id, answer=answer, raw_output=answer or None, docs=docs, extras=recorded)

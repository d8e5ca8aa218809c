"""The shapes of what the search agent's clients send and record: a turn's sampling, a search's hits and a fetched
document as the tools answer them (searcher/mcp_server.py), qwen_agent's messages, and the run file BrowseComp-Plus's
clients write per query (`_persist_response`), which an example's extras hold. A vendor's own request and answer
bodies (tool declarations, content blocks, output items) keep JSON's open shape (`JsonObject`)."""

from __future__ import annotations

from typing import TypedDict

from ragbench.api.data import JsonValue


class TurnSampling(TypedDict, total=False):
    """The sampling keywords a client's request sends (`Sampling` fields); `left_to_server`, those it does not."""

    max_tokens: int
    temperature: float
    top_p: float
    left_to_server: list[str]


class Hit(TypedDict):
    """The keys every search hit has (`SearchHit`)."""

    docid: str | None
    snippet: str


class SearchHit(Hit, total=False):
    """One hit of a search: its docid, its score (none where the retriever gives none) and its snippet."""

    score: float


class DocumentValue(TypedDict):
    """What get_document returns: the document's docid and full text."""

    docid: str
    text: str


class FunctionCall(TypedDict):
    """A call as qwen_agent reads it from the model's text: the function's name and its arguments' text."""

    name: str
    arguments: str


class QwenMessage(TypedDict, total=False):
    """A message of qwen_agent's response list: an assistant text, an assistant's `function_call`, or a function's
    result (`name`, its text the content)."""

    role: str
    content: str
    function_call: FunctionCall
    name: str


class RunItem(TypedDict):
    """An entry of the run file's `result`: a "tool_call" (the tool's name, its arguments, its output), a
    "reasoning" or an "output_text" (its output); the values as the vendor's answer held them."""

    type: str
    tool_name: JsonValue
    arguments: JsonValue
    output: JsonValue


class RunFileRecord(TypedDict):
    """The run file's fields every client writes: the calls per tool, the searches' docids, the `result` items."""

    tool_call_counts: dict[str, int]
    retrieved_docids: list[str]
    result: list[RunItem]


class StatusRecord(RunFileRecord):
    """A run file with the status of its query ("completed", else how it ended)."""

    status: str


class AgentExtras(StatusRecord):
    """What an example of the search agent records (its extras): the run file's fields, the requests made, the
    output tokens, the calls whose arguments did not fit their tool."""

    turns: int
    output_tokens: int
    invalid_tool_calls: int


class TongyiExtras(AgentExtras):
    """tongyi_client's: every call counted too, unreadable ones as "invalid_json" (`tool_call_counts_all`)."""

    tool_call_counts_all: dict[str, int]

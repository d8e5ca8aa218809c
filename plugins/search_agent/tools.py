"""BrowseComp-Plus's two tools as its clients define and answer them (search_agent/openai_client.py and
oss_client.py, `SearchToolHandler`, at commit 97c637c): `search` by any ragbench retriever, `get_document`
by the corpus, each answer the JSON text the client sends back to the model.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ragbench.api import Document
from ragbench.api.data import JsonObject
from ragbench.api.engines import InvalidArguments, checked_arguments
from ragbench.api.retrieval import passage_text

from .prompts import GET_DOCUMENT_DESCRIPTION, SEARCH_DESCRIPTION
from .sdk_items import sdk_dump
from .shapes import DocumentValue, SearchHit


@dataclass(frozen=True)
class Client:
    """What differs between BrowseComp-Plus's clients: the name of the search tool and of its argument, the
    tool choice sent, whether each turn may write only what is left of the token budget (openai_client.py:
    183-194) or the whole budget every turn (oss_client.py), and how its run file counts and records calls:
    openai_client counts every call and records a failed one's output as None; oss_client counts the calls
    that ran, under "search" for a name holding "retrieval" (oss_client.py:263-270), and records the error
    text it sent; over the Responses API, whether the output items it sends back keep their `status` and how it records a
    reasoning item; whether a final turn the server cut short is recorded "incomplete" (openai_client records the
    last response's status, oss_client "completed" once a turn calls nothing); whether a model whose name starts
    with "o" is sent no temperature or top_p (openai_client's build_request)."""

    name: str
    search: str
    query: str
    query_description: str
    tool_choice: str | None
    shares_token_budget: bool
    counts_failed_calls: bool
    keeps_item_status: bool
    reads_reasoning_content: bool
    records_incomplete: bool = False
    unsampled_o_models: bool = False

    def counted_name(self, name: str) -> str:
        return "search" if not self.counts_failed_calls and "retrieval" in name.lower() else name

    def sent_back(self, items: str) -> list[JsonObject]:
        """A Responses-API answer's output items as the client puts them in its next request: each as its SDK
        dumps it (sdk_items.py); openai_client then drops each item's `status` (openai_client.py:238-242),
        oss_client sends them as dumped."""
        dumped = [sdk_dump(item) for item in json.loads(items)]
        return dumped if self.keeps_item_status else [{k: v for k, v in i.items() if k != "status"} for i in dumped]

    def sends_sampling(self, model: str) -> bool:
        """Whether a temperature or top_p given is sent to `model` (openai_client: not to a model whose name
        starts with "o", openai_client.py:156-160)."""
        return not (self.unsampled_o_models and model.lower().startswith("o"))

    def reasoning_output(self, item: JsonObject) -> Any:
        """What the run file records of a reasoning item: its summary (openai_client.py:325-333); oss_client's,
        where the summary is empty, the texts of its content (oss_client.py:246-267)."""
        summary = item.get("summary")
        if not self.reads_reasoning_content or (isinstance(summary, list) and summary):
            return summary
        content = item.get("content")
        parts = [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []
        texts = (
            str(p.get("text", "")).strip() for p in parts if p.get("type") in ("reasoning_text", "output_text", "text")
        )
        return [text for text in texts if text]


OPENAI_CLIENT = Client(
    "openai_client",
    "search",
    "query",
    "Search query string",
    "auto",
    True,
    True,
    False,
    False,
    records_incomplete=True,
    unsampled_o_models=True,
)
OSS_CLIENT = Client(
    "oss_client",
    "local_knowledge_base_retrieval",
    "user_query",
    "Query to search the local knowledge base for relevant information",
    None,
    False,
    False,
    True,
    True,
)
# qwen_client's tools are listed in its system message (qwen_client.py), not sent natively; of these fields only
# its token budget, the whole of it every turn, applies
QWEN_CLIENT = Client("qwen_client", "search-server-search", "query", "", None, False, True, False, False)
# tongyi_client's one tool is listed in its system prompt too; its search answers are text (tongyi_client.py)
TONGYI_CLIENT = Client("tongyi_client", "search", "query", "", None, False, True, False, False)
# anthropic_client's tools are served over MCP and called by Anthropic's servers; each request may write the
# whole token budget
ANTHROPIC_CLIENT = Client("anthropic_client", "search", "query", "", None, False, True, False, False)
# openai_client_with_mcp's too, by OpenAI's; it sends tool choice "auto", and no temperature or top_p to "o" models
OPENAI_MCP_CLIENT = Client(
    "openai_client_with_mcp", "search", "query", "", "auto", False, True, False, False, unsampled_o_models=True
)
# gemini_client's run on ragbench's side as google-genai runs them (gemini_client.py); each request may write the
# whole token budget
GEMINI_CLIENT = Client("gemini_client", "search", "query", "", None, False, True, False, False)
CLIENTS = {
    client.name: client
    for client in (
        OPENAI_CLIENT,
        OSS_CLIENT,
        QWEN_CLIENT,
        TONGYI_CLIENT,
        ANTHROPIC_CLIENT,
        OPENAI_MCP_CLIENT,
        GEMINI_CLIENT,
    )
}
GET_DOCUMENT = "get_document"


DOCID_DESCRIPTION = "Document ID to retrieve"


def parameters(argument: str, argument_description: str) -> JsonObject:
    """A tool's parameters: one required string argument and no other."""
    return {
        "type": "object",
        "properties": {argument: {"type": "string", "description": argument_description}},
        "required": [argument],
        "additionalProperties": False,
    }


def function(name: str, description: str, argument: str, argument_description: str) -> JsonObject:
    """One tool in the chat completions form, with the fields and order of the client's Responses-API
    definition (`get_tool_definitions`): one required string argument, strict."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": parameters(argument, argument_description),
            "strict": True,
        },
    }


def tool_definitions(client: Client, k: int, get_document: bool) -> list[JsonObject]:
    tools = [function(client.search, SEARCH_DESCRIPTION.format(k=k), client.query, client.query_description)]
    if get_document:
        tools.append(function(GET_DOCUMENT, GET_DOCUMENT_DESCRIPTION, "docid", DOCID_DESCRIPTION))
    return tools


def search_hits(docs: list[Document], snippet: Callable[[str], str]) -> list[SearchHit]:
    """What a search returns: each hit's docid, score (left out where the retriever gives none) and snippet, in
    rank order."""
    results: list[SearchHit] = []
    for doc in docs:
        text = snippet(passage_text(doc))
        if doc.score is None:
            results.append({"docid": doc.id, "snippet": text})
        else:
            results.append({"docid": doc.id, "score": doc.score, "snippet": text})
    return results


def search_results(hits: list[SearchHit]) -> str:
    """What a search answers the model: `json.dumps` (indent 2, ASCII) of its hits."""
    return json.dumps(hits, indent=2)


def document_value(docid: str, doc: Document | None) -> DocumentValue | None:
    """The searcher's get_document (searcher/mcp_server.py): the document's docid and full text; None for none."""
    return None if doc is None else {"docid": docid, "text": passage_text(doc)}


def document_result(docid: str, doc: Document | None) -> str:
    """What get_document answers: the document's docid and full text, or the client's not-found error."""
    if doc is None:
        return json.dumps({"error": f"Document with docid '{docid}' not found"})
    return json.dumps(document_value(docid, doc), indent=2)


@dataclass(frozen=True)
class ToolAnswer:
    """One call's answer: `output` goes back to the model, `failed` when the call raised (the output is then
    the error text), `invalid` when it failed for arguments that do not fit the tool's parameters, `docs` the
    documents it returned."""

    output: str
    failed: bool = False
    docs: tuple[Document, ...] = ()
    invalid: bool = False


async def answer_call(
    name: str,
    raw_arguments: str,
    client: Client,
    search: Callable[[str], Awaitable[tuple[str, list[Document]]]],
    document: Callable[[str], str] | None,
) -> ToolAnswer:
    """Run one tool call as `execute_tool` does: the arguments read with `json.loads`, the tool looked up by
    name, any exception turned into "Error executing NAME: MESSAGE" for the model. Arguments that do not fit
    the tool's parameters are such an exception (InvalidArguments), raised before the tool runs."""
    try:
        arguments: Any = json.loads(raw_arguments)
        if name == client.search:
            query = checked_arguments(parameters(client.query, client.query_description), arguments)[client.query]
            output, docs = await search(query)
            return ToolAnswer(output, docs=tuple(docs))
        if name == GET_DOCUMENT and document is not None:  # answered whether offered or not, as the clients do
            return ToolAnswer(document(checked_arguments(parameters("docid", DOCID_DESCRIPTION), arguments)["docid"]))
        raise ValueError(f"Unknown tool: {name}")
    except Exception as exc:  # the client catches everything a tool raises and tells the model
        return ToolAnswer(f"Error executing {name}: {exc}", failed=True, invalid=isinstance(exc, InvalidArguments))

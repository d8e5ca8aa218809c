"""What the `llamaindex` system gives an engine (the conversation as LlamaIndex chat messages) and reads of its
response: the text, and the source nodes as documents (system.py says how)."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.base.response.schema import AsyncStreamingResponse, StreamingResponse
from llama_index.core.schema import MetadataMode, NodeWithScore

from ragbench.api import Document
from ragbench.api.apps import AppReply, AppReplyError, answer_text, document_of, value_summary
from ragbench.api.data import JsonObject


def chat_history(turns: list[JsonObject]) -> list[ChatMessage]:
    """The example's conversation before its question, as a chat engine's history."""
    history = []
    for turn in turns:
        content = turn.get("content")
        if not isinstance(content, str):  # content parts: their texts
            content = "".join(
                str(part.get("text", ""))
                for part in (content if isinstance(content, list) else [])
                if isinstance(part, dict) and part.get("type") == "text"
            )
        history.append(ChatMessage(role=str(turn.get("role", "user")), content=content))
    return history


class LlamaIndexReading:
    """A query or chat engine's response read: its text and its source nodes."""

    def __init__(self, engine: str, id_key: str, title_key: str) -> None:
        self.who = f"system llamaindex: engine {engine}"
        self.id_key, self.title_key = id_key, title_key

    async def reply(self, response: Any) -> AppReply:
        raw = value_summary(response)
        if isinstance(response, StreamingResponse):
            response = response.get_response()
        elif isinstance(response, AsyncStreamingResponse):
            response = await response.get_response()
        if not hasattr(response, "response") or not hasattr(response, "source_nodes"):
            raise AppReplyError(f"{self.who} returned {raw}, expected a response with its source_nodes")
        text = response.response
        answer = "" if text is None else answer_text(text, self.who, "its response")
        nodes = response.source_nodes or []
        passages = [self.document(node, f"{self.who}'s source node {n + 1}") for n, node in enumerate(nodes)]
        return AppReply(answer=answer, passages=passages, raw=raw)

    def document(self, found: Any, where: str) -> Document:
        if not isinstance(found, NodeWithScore):
            raise AppReplyError(f"{where} is {value_summary(found)}, expected a NodeWithScore")
        node = found.node
        metadata = {**node.metadata, "node_id": node.node_id}
        own_id = node.ref_doc_id or node.node_id
        text = node.get_content(metadata_mode=MetadataMode.NONE)
        return document_of(text, metadata, where, own_id, found.score, self.id_key, self.title_key)

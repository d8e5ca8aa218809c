"""LlamaIndex applications the `llamaindex` system's tests run as a user's own (`--system llamaindex --system-arg
engine=support.llamaindex_apps:NAME`): real LlamaIndex, built offline with its own mocks - a `VectorStoreIndex` over
the Varn passages embedded by `MockEmbedding`, answered by `MockLLM` (which answers with the prompt's own words, a few
of them) - as a query engine and as a chat engine, and each misbehaving in one way where its name says so."""

from __future__ import annotations

import time
from typing import Any

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.response.schema import Response
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import CustomQueryEngine

from support.rag_apps import CORPUS

index = VectorStoreIndex.from_documents(
    [Document(text=p["text"], metadata={"title": p["title"]}, doc_id=p["id"]) for p in CORPUS],
    embed_model=MockEmbedding(embed_dim=8),
)
llm = MockLLM(max_tokens=3)
query_engine = index.as_query_engine(llm=llm, similarity_top_k=2)
chat_engine = index.as_chat_engine(chat_mode="context", llm=llm, similarity_top_k=2)


def make_query_engine() -> Any:
    return index.as_query_engine(llm=llm, similarity_top_k=1)


class FailsAfterRetrieval(CustomQueryEngine):
    """Retrieves, then fails as its synthesizer would."""

    def custom_query(self, query_str: str) -> Response:
        index.as_retriever(similarity_top_k=2).retrieve(query_str)
        raise RuntimeError("the synthesizer is down")


class NotAResponse(CustomQueryEngine):
    def custom_query(self, query_str: str) -> Any:
        return ["Olm"]


class BlocksLoop(CustomQueryEngine):
    """Its async path makes a blocking call (asked with `sync=false`: on the run's event loop)."""

    def custom_query(self, query_str: str) -> str:
        return "Olm"

    async def acustom_query(self, query_str: str) -> str:
        time.sleep(0.3)  # a blocking call inside async code: every other example waits
        return "Olm"


fails_after_retrieval = FailsAfterRetrieval()
blocks_loop = BlocksLoop()
not_a_response = NotAResponse()

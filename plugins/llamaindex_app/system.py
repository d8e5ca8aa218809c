"""`--system llamaindex --system-arg engine=my_app:query_engine`: the user's own RAG application as a LlamaIndex query
engine or chat engine, asked once per example through its own API (docs/apps.md).

`engine` names the engine (`module:attribute`, found on the Python path, the current folder first), or a class or
function of no arguments that makes it (called once, when the system is made). A query engine is asked the question
(`query`, in a thread of its own: LlamaIndex's async path runs its in-memory retrievers and synthesizers on the event
loop, stalling every other example; `sync=false`: `aquery`, on the loop); a chat engine is sent it with the example's
conversation as its chat history (`chat(question, chat_history=...)`; `sync=false`: `achat`). A chat engine keeps one
conversation in its memory: its examples are sent one at a time, each with its own history (none for a question
asked alone), so that no example sees another's turns.

The answer is the response's text (a streamed response's whole text; none: an empty answer); the documents are its
`source_nodes`, in order: each node's text (without its metadata), its score, its metadata's `passage_title` key
(default `title`) as the title, and as the id its metadata's `passage_id` key (default `id`), else the id of the
document the node was cut from (`ref_doc_id`), else the node's own id (kept in the metadata as `node_id`).

Its spans are those of openinference-instrumentation-llama-index: each LLM call a model call (priced by the price
table), each retriever's search a search, each tool's call a tool call, in the example's trace.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ragbench.api.apps import Application, AppReply, AppRequest, Instrumentor, framework, load_application

PACKAGES = "llama-index-core and openinference-instrumentation-llama-index"
INSTRUMENTOR = Instrumentor(
    "openinference.instrumentation.llama_index:LlamaIndexInstrumentor", "openinference-instrumentation-llama-index"
)
KIND = "a LlamaIndex query engine or chat engine (index.as_query_engine() or index.as_chat_engine() makes one)"


class LlamaIndexApp(Application):
    name = "llamaindex"
    instrumentors = (INSTRUMENTOR,)

    def __init__(
        self,
        engine: str,
        passage_id: str = "id",
        passage_title: str = "title",
        sync: bool = True,
        timeout: float = 300.0,
    ) -> None:
        super().__init__(timeout)
        framework("llama_index.core", self.name, PACKAGES, self.instrumentors)
        from llama_index.core.base.base_query_engine import BaseQueryEngine
        from llama_index.core.chat_engine.types import BaseChatEngine

        from .reading import LlamaIndexReading

        self.engine, self.sync = str(engine), bool(sync)
        self.passage_id, self.passage_title = str(passage_id), str(passage_title)
        self._engine: Any = load_application(self.engine, self.name, "engine", (BaseQueryEngine, BaseChatEngine), KIND)
        self.chat = isinstance(self._engine, BaseChatEngine)  # recorded: which API the engine was asked through
        self._reading = LlamaIndexReading(self.engine, self.passage_id, self.passage_title)
        self._one_at_a_time = asyncio.Lock()  # a chat engine's one memory

    async def call(self, request: AppRequest) -> AppReply:
        if not self.chat:
            if self.sync:
                response = await self.in_thread(self._engine.query, request.question)
            else:
                response = await self._engine.aquery(request.question)
            return await self._reading.reply(response)
        from .reading import chat_history

        history = chat_history(request.history)
        async with self._one_at_a_time:
            if self.sync:
                response = await self.in_thread(self._engine.chat, request.question, history)
            else:
                response = await self._engine.achat(request.question, chat_history=history)
            return await self._reading.reply(response)

"""`--system langchain --system-arg runnable=my_app:chain`: the user's own RAG application as a LangChain Runnable (a
chain, a retriever-backed agent, a compiled LangGraph graph), called once per example through its own API
(`ainvoke`; `invoke` in a thread of its own with `sync=true`) (docs/apps.md).

`runnable` names the Runnable (`module:attribute`, found on the Python path, the current folder first), or a class or
function of no arguments that makes it (called once, when the system is made). `inputs` says what it is given: a
mapping of its input keys to the request's fields (default `{question: question}`: the LangGraph tutorials' state
and most chains' prompt variable), or one field's name (`inputs=question`: the bare question, as a chain that starts
with a retriever takes it). The fields `history` and `messages` are given as LangChain messages (`HumanMessage`,
`AIMessage`, `SystemMessage`). Each example runs in a LangGraph thread of its own (`configurable.thread_id`), with
`config`'s other keys (`recursion_limit` ...) as the Runnable's config.

The answer is what it returns where that is a string or a message (its text), else the value at `answer` (a dotted
path; default: the first of `answer`, `output`, `result` it holds, or the last of its `messages`). The documents
are the value at `passages` (default: the first of `context`, `documents`, `source_documents`, `docs` that holds a
list), each a LangChain `Document` (or a (Document, score) pair, a mapping or a string); where what it returns holds
none, the documents its retrievers returned while it ran, in order (its callbacks' `on_retriever_end`). A
document's id is its metadata's `passage_id` key (default `id`), else the Document's own id; its title the
metadata's `passage_title` key, its score the metadata's `score` (or `relevance_score`).

Its spans are those of openinference-instrumentation-langchain: each chat model's call a model call (priced by the
price table), each retriever's search a search, each tool's call a tool call, in the example's trace.
"""

from __future__ import annotations

from typing import Any

from ragbench.api import ConfigError
from ragbench.api.apps import (
    REQUEST_FIELDS,
    Application,
    AppReply,
    AppRequest,
    Instrumentor,
    declared_inputs,
    framework,
    load_application,
)

PACKAGES = "langchain-core and openinference-instrumentation-langchain"
INSTRUMENTOR = Instrumentor(
    "openinference.instrumentation.langchain:LangChainInstrumentor", "openinference-instrumentation-langchain"
)


class LangChainApp(Application):
    name = "langchain"
    instrumentors = (INSTRUMENTOR,)

    def __init__(
        self,
        runnable: str,
        inputs: Any = None,
        answer: str = "",
        passages: str = "",
        passage_id: str = "id",
        passage_title: str = "title",
        config: dict[str, Any] | None = None,
        sync: bool = False,
        timeout: float = 300.0,
    ) -> None:
        super().__init__(timeout)
        framework("langchain_core", self.name, PACKAGES, self.instrumentors)
        from langchain_core.runnables import Runnable

        from .reading import RunnableReading, check_config

        self.runnable, self.answer, self.passages = str(runnable), str(answer), str(passages)
        self.passage_id, self.passage_title, self.sync = str(passage_id), str(passage_title), bool(sync)
        if isinstance(inputs, str):
            if inputs not in REQUEST_FIELDS:
                raise ConfigError(
                    f"system langchain: inputs={inputs} names no field of the request: one of "
                    f"{', '.join(REQUEST_FIELDS)} (or a mapping of the Runnable's input keys to them)"
                )
            self._inputs: str | dict[str, str] = inputs
        else:
            self._inputs = declared_inputs({"question": "question"} if inputs is None else inputs, self.name, "inputs")
        self.inputs = self._inputs if isinstance(self._inputs, str) else dict(self._inputs)
        self._config = dict(config or {})
        check_config(self._config)
        self._runnable: Any = load_application(
            self.runnable,
            self.name,
            "runnable",
            (Runnable,),
            "a LangChain Runnable (a chain, or a compiled LangGraph graph)",
        )
        self._reading = RunnableReading(self.answer, self.passages, self.passage_id, self.passage_title, self.runnable)

    async def call(self, request: AppRequest) -> AppReply:
        from .reading import RetrieverDocuments, given, run_config

        retrieved = RetrieverDocuments()
        value = given(request, self._inputs)
        config = run_config(self._config, retrieved, request)
        if self.sync:
            returned = await self.in_thread(self._runnable.invoke, value, config)
        else:
            returned = await self._runnable.ainvoke(value, config)
        return self._reading.reply(returned, retrieved.documents)

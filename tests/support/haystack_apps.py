"""Haystack pipelines the `haystack` system's tests run as a user's own (`--system haystack --system-arg
pipeline=support.haystack_apps:NAME`): real Haystack, built offline of in-memory components - an
`InMemoryDocumentStore` of the Varn passages searched by `InMemoryBM25Retriever`, a `PromptBuilder`, a generator of
the tests' own that answers with the first word of the prompt's first passage (and reports its usage in its `meta`,
as Haystack's generators do) and an `AnswerBuilder` - and each misbehaving in one way where its name says so."""

from __future__ import annotations

import time
from typing import Any

from haystack import Document, Pipeline, component
from haystack.components.builders import AnswerBuilder, PromptBuilder
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

from support.rag_apps import CORPUS

TEMPLATE = (
    "Answer from the documents.\n{% for doc in documents %}{{ doc.content }}\n{% endfor %}Question: {{ question }}"
)
store = InMemoryDocumentStore()
store.write_documents([Document(id=p["id"], content=p["text"], meta={"title": p["title"]}) for p in CORPUS])


@component
class FirstWordGenerator:
    """The first word of the prompt's second line (its first document) as the reply; its usage in words."""

    @component.output_types(replies=list[str], meta=list[dict[str, Any]])
    def run(self, prompt: str) -> dict[str, Any]:
        lines = prompt.splitlines()
        reply = lines[1].split()[0] if len(lines) > 2 else "unknown"
        usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": 1}
        return {"replies": [reply], "meta": [{"model": "first-word-1", "usage": usage}]}


@component
class Broken:
    @component.output_types(replies=list[str])
    def run(self, prompt: str) -> dict[str, Any]:
        raise RuntimeError("the generator is down")


@component
class BlockingGenerator:
    """A generator whose `run_async` makes a blocking call (run with `sync=false`: on the run's event loop)."""

    @component.output_types(replies=list[str])
    def run(self, prompt: str) -> dict[str, Any]:
        return {"replies": ["Olm"]}

    @component.output_types(replies=list[str])
    async def run_async(self, prompt: str) -> dict[str, Any]:
        time.sleep(0.3)  # a blocking call inside async code: every other example waits
        return {"replies": ["Olm"]}


@component
class Mutator:
    """Changes everything it is given (its copies): the conversation's turns, the example's meta and extras."""

    @component.output_types(replies=list[str])
    def run(
        self, question: str, history: list[dict[str, Any]], meta: dict[str, Any], extras: dict[str, Any]
    ) -> dict[str, Any]:
        history.clear()
        meta["source"] = "changed"
        extras.clear()
        return {"replies": ["Olm"]}


def rag(generator: Any = None, answer_builder: bool = True) -> Pipeline:
    """Retriever -> prompt builder -> generator (-> answer builder, given the retriever's documents)."""
    pipeline = Pipeline()
    pipeline.add_component("retriever", InMemoryBM25Retriever(store, top_k=2))
    pipeline.add_component("prompt_builder", PromptBuilder(TEMPLATE, required_variables=["question", "documents"]))
    pipeline.add_component("llm", generator if generator is not None else FirstWordGenerator())
    pipeline.connect("retriever.documents", "prompt_builder.documents")
    pipeline.connect("prompt_builder.prompt", "llm.prompt")
    if answer_builder:
        pipeline.add_component("answer_builder", AnswerBuilder())
        pipeline.connect("llm.replies", "answer_builder.replies")
        pipeline.connect("llm.meta", "answer_builder.meta")
        pipeline.connect("retriever.documents", "answer_builder.documents")
    return pipeline


pipeline = rag()
without_answer_builder = rag(answer_builder=False)
broken = rag(Broken(), answer_builder=False)
blocks_loop = rag(BlockingGenerator(), answer_builder=False)
mutates = Pipeline()
mutates.add_component("llm", Mutator())

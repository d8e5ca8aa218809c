"""The user's own applications of the system x task matrix built with each framework (tests/run/test_matrix.py):
a LangChain Runnable, a LlamaIndex query engine, a Haystack pipeline and a DSPy module that answer each example of a
cell as the cell's predictions file does for `recorded` (the scripted output, the example's first document, each in
its framework's own document type), looked up in `support.matrix_apps.ANSWERS` (by task and example id; the query
engine, asked the question alone, by task and question: `matrix_apps.BY_QUESTION`). Imported only by the framework
systems' cells (each framework is loaded there)."""

from __future__ import annotations

from typing import Any

import dspy
from haystack import Document as HaystackDocument
from haystack import Pipeline, component
from langchain_core.documents import Document as LangChainDocument
from langchain_core.runnables import RunnableLambda
from llama_index.core.base.response.schema import Response
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.schema import NodeWithScore, TextNode

from support.matrix_apps import ANSWERS, BY_QUESTION


def fields(doc: dict[str, Any]) -> tuple[str | None, str, dict[str, Any]]:
    """A recorded document's id, text and the rest (its title, url, score and metadata) as metadata."""
    rest = {key: value for key, value in doc.items() if key not in ("id", "text", "metadata", "score")}
    return doc.get("id"), doc["text"], {**doc.get("metadata", {}), **rest}


def langchain_answer(given: dict[str, str]) -> dict[str, Any]:
    found = ANSWERS[(given["task"], given["id"])]
    context = []
    for doc in found["passages"]:
        doc_id, text, metadata = fields(doc)
        score = {"score": doc["score"]} if "score" in doc else {}
        context.append(LangChainDocument(page_content=text, metadata={**metadata, **score}, id=doc_id))
    return {"answer": found["answer"], "context": context}


runnable = RunnableLambda(langchain_answer)


class MatrixQueryEngine(CustomQueryEngine):
    task: str = ""

    def custom_query(self, query_str: str) -> Response:
        found = BY_QUESTION[query_str]
        nodes = []
        for doc in found["passages"]:
            doc_id, text, metadata = fields(doc)
            node = TextNode(text=text, metadata=metadata, **({"id_": doc_id} if doc_id else {}))  # else its own id
            nodes.append(NodeWithScore(node=node, score=doc.get("score")))
        return Response(response=found["answer"], source_nodes=nodes)


query_engine = MatrixQueryEngine()


@component
class MatrixLookup:
    @component.output_types(replies=list[str], documents=list[HaystackDocument])
    def run(self, task: str, id: str) -> dict[str, Any]:
        found = ANSWERS[(task, id)]
        documents = []
        for doc in found["passages"]:
            doc_id, text, metadata = fields(doc)
            documents.append(HaystackDocument(id=doc_id, content=text, meta=metadata, score=doc.get("score")))
        return {"replies": [found["answer"]], "documents": documents}


pipeline = Pipeline()
pipeline.add_component("lookup", MatrixLookup())


class MatrixModule(dspy.Module):
    def forward(self, task: str, id: str) -> dspy.Prediction:
        found = ANSWERS[(task, id)]
        return dspy.Prediction(answer=found["answer"], passages=found["passages"])


module = MatrixModule()

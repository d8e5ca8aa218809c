"""LangChain applications the `langchain` system's tests run as a user's own (`--system langchain --system-arg
runnable=support.langchain_apps:NAME`): real LangChain, built offline with langchain-core's own fakes - an
`InMemoryVectorStore` over the Varn passages with `DeterministicFakeEmbedding`, a `FakeListChatModel` that answers
"Olm" - in the shapes LangChain's docs build a RAG application in (a chain returning its context beside its answer,
a chain returning only its answer, a LangGraph graph, a chain with the chat history), and each misbehaving in one way
where its name says so."""

from __future__ import annotations

import time
from typing import Any, TypedDict

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import FakeListChatModel, ParrotFakeChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from support.rag_apps import CORPUS

store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
store.add_documents(
    [Document(page_content=p["text"], metadata={"title": p["title"], "source": "varn.txt"}, id=p["id"]) for p in CORPUS]
)
retriever = store.as_retriever(search_kwargs={"k": 2})
prompt = ChatPromptTemplate.from_messages([("system", "Answer from the context.\n{context}"), ("human", "{question}")])
model = FakeListChatModel(responses=["Olm"])


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(doc.page_content for doc in docs)


# The shape of LangChain's "returning sources" how-to: {context, question} -> {context, question, answer}
answer_from_docs = (
    RunnablePassthrough.assign(context=lambda x: format_docs(x["context"])) | prompt | model | StrOutputParser()
)
chain = RunnableParallel({"context": retriever, "question": RunnablePassthrough()}).assign(answer=answer_from_docs)

# The shape of LangChain's RAG quickstart: the question in, the answer's text out (the documents only in its callbacks)
answer_only = (
    {"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt | model | StrOutputParser()
)


class State(TypedDict, total=False):
    question: str
    context: list[Document]
    answer: str


def make_graph() -> Any:
    """The LangGraph RAG tutorial's graph: retrieve, then generate, over a state of question, context and answer."""
    from langgraph.graph import START, StateGraph

    def retrieve(state: State) -> State:
        return {"context": retriever.invoke(state["question"])}

    def generate(state: State) -> State:
        messages = prompt.invoke({"question": state["question"], "context": format_docs(state["context"])})
        return {"answer": str(model.invoke(messages).content)}

    graph = StateGraph(State)
    graph.add_node("retrieve", retrieve)
    graph.add_node("generate", generate)
    graph.add_edge(START, "retrieve")
    graph.add_edge("retrieve", "generate")
    return graph.compile()


# A chain that sees the conversation: the history as LangChain messages, then the question; the parrot repeats the
# messages' count and kinds, so a test reads what the chain was given from its answer.
history_prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("chat_history"), ("human", "{question}")])


def given_messages(messages: Any) -> str:
    return " ".join(type(message).__name__ for message in messages.to_messages())


with_history = history_prompt | RunnableLambda(given_messages)
parrot = ParrotFakeChatModel()


def fail_after_retrieval(x: dict[str, Any]) -> str:
    raise RuntimeError("the reranker is down")


raises = RunnableParallel({"context": retriever, "question": RunnablePassthrough()}) | RunnableLambda(
    fail_after_retrieval
)
no_answer = RunnableParallel({"context": retriever, "question": RunnablePassthrough()})  # {context, question}
number_answer = RunnableLambda(lambda question: {"answer": 42})


def needs_arguments(question: str) -> Any:
    return chain


async def _blocks_loop(question: str) -> str:
    time.sleep(0.3)  # a blocking call inside async code: every other example waits
    return "Olm"


blocks_loop = RunnableLambda(_blocks_loop)  # ainvoke runs it on the run's event loop


def _mutates(given: dict[str, Any]) -> str:
    """Changes everything it is given (its copies): the conversation's messages, the example's meta and extras."""
    given["history"].clear()
    given["meta"]["source"] = "changed"
    given["extras"].clear()
    return "Olm"


mutates = RunnableLambda(_mutates)


class Documents(BaseCallbackHandler):
    """A callback handler of the tests' own: the documents the Runnable's retrievers returned."""

    def __init__(self) -> None:
        self.documents: list = []

    def on_retriever_end(self, documents, **kwargs) -> None:
        self.documents.extend(documents)

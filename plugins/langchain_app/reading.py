"""What the `langchain` system gives a Runnable and reads of what it returns: the request's fields as its input (the
conversation as LangChain messages), its config (a callback handler that keeps the documents its retrievers
return; a LangGraph thread of the example's own), and its answer and documents (system.py says where from)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, cast

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document as LangChainDocument
from langchain_core.messages import BaseMessage, convert_to_messages
from langchain_core.runnables import RunnableConfig

from ragbench.api import ConfigError, Document
from ragbench.api.apps import (
    AppReply,
    AppReplyError,
    AppRequest,
    NothingAtPath,
    answer_text,
    declared_value,
    document_of,
    passage_of,
    request_value,
    value_at,
    value_summary,
)

ANSWER_KEYS = ("answer", "output", "result")  # where a returned mapping holds the answer, tried in order
PASSAGE_KEYS = ("context", "documents", "source_documents", "docs")  # and the documents
SCORE_KEYS = ("score", "relevance_score")  # where a document's metadata holds its score
CONVERSATION = ("history", "messages")  # the fields given as LangChain messages


class RetrieverDocuments(BaseCallbackHandler):
    """The documents a Runnable's retrievers returned while it answered one example, in the order they returned."""

    run_inline = True  # called in the Runnable's own thread or task: the list is the example's alone

    def __init__(self) -> None:
        super().__init__()
        self.documents: list[Any] = []

    def on_retriever_end(self, documents: Sequence[LangChainDocument], **kwargs: Any) -> None:
        self.documents.extend(documents)


def field_value(request: AppRequest, field: str) -> Any:
    """A field of the request as a Runnable is given it: the conversation as LangChain messages."""
    value = request_value(request, field)
    return convert_to_messages(value) if field in CONVERSATION else value


def given(request: AppRequest, inputs: str | dict[str, str]) -> Any:
    """The Runnable's input: one field's value, or a mapping of its input keys to fields' values."""
    if isinstance(inputs, str):
        return field_value(request, inputs)
    return {key: field_value(request, field) for key, field in inputs.items()}


def check_config(config: dict[str, Any]) -> None:
    """A Runnable's config as the user gave it: RunnableConfig's keys, the callbacks the run's own."""
    for key in config:
        if key == "callbacks" or key not in RunnableConfig.__annotations__:
            raise ConfigError(
                f"system langchain: config: {key} is not a key the run passes on: one of "
                f"{', '.join(sorted(set(RunnableConfig.__annotations__) - {'callbacks'}))}"
            )


def run_config(config: dict[str, Any], retrieved: RetrieverDocuments, request: AppRequest) -> RunnableConfig:
    """The config of one example's call: the user's, the callback handler that keeps its retrievers' documents, and
    a LangGraph thread of its own (a checkpointer never carries one example's state into another's)."""
    configurable = {"thread_id": f"ragbench-{request.task}-{request.id}-{uuid.uuid4().hex}"}
    configurable.update(config.get("configurable") or {})
    return cast(RunnableConfig, {**config, "callbacks": [retrieved], "configurable": configurable})


class RunnableReading:
    """Where the answer and the documents are in what the Runnable returns (system.py's `answer`, `passages`,
    `passage_id`, `passage_title`)."""

    def __init__(self, answer: str, passages: str, id_key: str, title_key: str, runnable: str) -> None:
        self.answer, self.passages, self.id_key, self.title_key = answer, passages, id_key, title_key
        self.who = f"system langchain: runnable {runnable}"

    def reply(self, returned: Any, retrieved: list[Any]) -> AppReply:
        found = self.found_passages(returned)
        items = retrieved if found is None else found
        passages = [self.document(item, f"{self.who}'s document {n + 1}") for n, item in enumerate(items)]
        return AppReply(answer=self.answer_of(returned), passages=passages, raw=value_summary(returned))

    def answer_of(self, returned: Any) -> str:
        if self.answer:
            return answer_text(declared_value(returned, self.answer, self.who, "answer"), self.who, self.answer)
        if isinstance(returned, (str, BaseMessage)):
            return answer_text(returned, self.who, "what it returned")
        if isinstance(returned, Mapping):
            for key in ANSWER_KEYS:
                if key in returned:
                    return answer_text(returned[key], self.who, key)
            messages = returned.get("messages")
            if isinstance(messages, Sequence) and messages and isinstance(messages[-1], BaseMessage):
                return answer_text(messages[-1], self.who, "its last message")
        raise AppReplyError(
            f"{self.who} returned {value_summary(returned)}: no answer where one is looked for (a string, a message, "
            f"or a mapping's {', '.join(ANSWER_KEYS)} or messages): name it with answer=PATH"
        )

    def found_passages(self, returned: Any) -> list[Any] | None:
        """The documents in what it returned (None: it holds none, its retrievers' are taken)."""
        if self.passages:
            found = declared_value(returned, self.passages, self.who, "passages")
            if not isinstance(found, Sequence) or isinstance(found, str):
                raise AppReplyError(
                    f"{self.who} returned {value_summary(found)} at passages={self.passages}, expected a list"
                )
            return list(found)
        for key in PASSAGE_KEYS:
            try:
                found = value_at(returned, key)
            except NothingAtPath:
                continue
            if isinstance(found, Sequence) and not isinstance(found, str):
                return list(found)
        return None

    def document(self, item: Any, where: str) -> Document:
        """One document: a LangChain Document, a (Document, score) pair, or what `passage_of` reads."""
        score = None
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], LangChainDocument):
            item, score = item
        if not isinstance(item, LangChainDocument):
            return passage_of(item, where)
        metadata = dict(item.metadata)
        if score is None:
            score = next((metadata.pop(key) for key in SCORE_KEYS if key in metadata), None)
        return document_of(item.page_content, metadata, where, item.id, score, self.id_key, self.title_key)

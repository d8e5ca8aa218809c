"""What the `haystack` system gives a pipeline (the request's fields at its components' inputs) and reads of its
outputs (the answer and the documents, at declared paths or found by the components' outputs: system.py says how)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from graphlib import CycleError, TopologicalSorter
from typing import Any

from haystack import Document as HaystackDocument

from ragbench.api import ConfigError, Document
from ragbench.api.apps import (
    AppReply,
    AppReplyError,
    AppRequest,
    answer_text,
    declared_inputs,
    declared_value,
    document_of,
    request_value,
    value_summary,
)

QUESTION_INPUTS = ("query", "question")  # open inputs given the question by default
EMBEDDER_INPUT = ("TextEmbedder", "text")  # and the text of a component whose class name ends so


def run_order(pipeline: Any) -> list[str]:
    """The pipeline's components in the order it runs them (a pipeline with loops: as they were added)."""
    graph = pipeline.graph
    try:
        return list(TopologicalSorter({name: set(graph.predecessors(name)) for name in graph.nodes}).static_order())
    except CycleError:
        return list(graph.nodes)


def pipeline_inputs(pipeline: Any, declared: Any) -> dict[str, dict[str, str]]:
    """Which component's which open input gets which field of the request: `declared`, or the default (system.py);
    an input that is not open, or a mandatory one left without a value, a ConfigError of one line."""
    open_inputs: dict[str, dict[str, Any]] = pipeline.inputs()
    if declared is None:
        given = {
            component: {
                name: "question"
                for name in sockets
                if name in QUESTION_INPUTS or embedder_text(pipeline, component, name)
            }
            for component, sockets in open_inputs.items()
        }
        given = {component: names for component, names in given.items() if names}
    elif isinstance(declared, Mapping):
        given = {
            str(component): declared_inputs(names, "haystack", f"inputs.{component}")
            for component, names in declared.items()
        }
    else:
        raise ConfigError(
            f"system haystack: inputs={declared!r}: a mapping of components to their inputs' fields, e.g. "
            "{retriever: {query: question}, prompt_builder: {question: question}}"
        )
    shown = "; ".join(f"{component}: {', '.join(sockets)}" for component, sockets in open_inputs.items())
    for component, names in given.items():
        for name in names:
            if name not in open_inputs.get(component, {}):
                raise ConfigError(
                    f"system haystack: inputs: {component}.{name} is not an input the pipeline takes (its inputs no "
                    f"component feeds: {shown})"
                )
    missing = [
        f"{component}.{name}"
        for component, sockets in open_inputs.items()
        for name, socket in sockets.items()
        if socket.get("is_mandatory") and name not in given.get(component, {})
    ]
    if missing:
        raise ConfigError(
            f"system haystack: the pipeline needs {', '.join(missing)}, which no field of the request is given to: "
            "declare them in inputs, e.g. inputs={retriever: {query: question}}"
        )
    if not given:
        raise ConfigError(
            f"system haystack: no input of the pipeline is named query or question: declare where the question goes "
            f"with inputs (its inputs no component feeds: {shown})"
        )
    return given


def embedder_text(pipeline: Any, component: str, name: str) -> bool:
    suffix, socket = EMBEDDER_INPUT
    return name == socket and type(pipeline.get_component(component)).__name__.endswith(suffix)


def pipeline_data(request: AppRequest, inputs: dict[str, dict[str, str]]) -> dict[str, dict[str, Any]]:
    """The data of one run: each component's inputs, each the value of its field of the request."""
    return {
        component: {name: request_value(request, field) for name, field in names.items()}
        for component, names in inputs.items()
    }


class PipelineReading:
    """Where a pipeline's answer and documents are in its outputs (declared, or found as system.py says) and the
    components whose outputs are asked for."""

    def __init__(self, pipeline: Any, target: str, answer: str, passages: str, id_key: str, title_key: str) -> None:
        self.who = f"system haystack: pipeline {target}"
        self.id_key, self.title_key = id_key, title_key
        outputs: dict[str, dict[str, Any]] = pipeline.outputs(include_components_with_connected_outputs=True)
        order = run_order(pipeline)

        def last_with(socket: str) -> str | None:
            return next((name for name in reversed(order) if socket in outputs.get(name, {})), None)

        builder, generator, lister = last_with("answers"), last_with("replies"), last_with("documents")
        if not answer:
            if builder is None and generator is None:
                raise ConfigError(
                    f"{self.who}: no component has an answers or replies output: name the answer's path with "
                    "answer=COMPONENT.OUTPUT..."
                )
            answer = f"{builder}.answers.0" if builder is not None else f"{generator}.replies.0"
        if not passages:
            passages = (
                f"{builder}.answers.0.documents"
                if builder is not None and answer.startswith(f"{builder}.answers.0")
                else ""
            )
            passages = passages or (f"{lister}.documents" if lister is not None else "")
        for option, path in (("answer", answer), ("passages", passages)):
            if path and path.split(".")[0] not in outputs:
                raise ConfigError(
                    f"system haystack: {option}={path}: the pipeline has no component {path.split('.')[0]!r} (its "
                    f"components: {', '.join(order)})"
                )
        self.answer, self.passages = answer, passages
        self.components = {path.split(".")[0] for path in (answer, passages) if path}

    def reply(self, outputs: Any) -> AppReply:
        answer = answer_text(declared_value(outputs, self.answer, self.who, "answer"), self.who, self.answer)
        found: Any = declared_value(outputs, self.passages, self.who, "passages") if self.passages else []
        if not isinstance(found, Sequence) or isinstance(found, str):
            raise AppReplyError(f"{self.who} gave {value_summary(found)} at passages={self.passages}, expected a list")
        passages = [self.document(item, f"{self.who}'s document {n + 1}") for n, item in enumerate(found)]
        return AppReply(answer=answer, passages=passages, raw=value_summary(outputs))

    def document(self, item: Any, where: str) -> Document:
        if not isinstance(item, HaystackDocument):
            raise AppReplyError(f"{where} is {value_summary(item)}, expected a Haystack Document")
        return document_of(item.content or "", item.meta, where, item.id, item.score, self.id_key, self.title_key)

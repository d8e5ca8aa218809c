"""What a whole trace of an application says, read from its spans (ragbench._apps.conventions reads each span): its
answer, the passages its searches found, and the example it answers - what `ragbench score --traces` takes of each
trace of a file (the `traced` system)."""

from __future__ import annotations

from .._types import Document
from .conventions import documents_of, flat_attributes, genai_messages, json_text, span_kind, span_step
from .spans import Span

ANSWER_KEYS = ("answer", "output", "result", "text", "response")  # an output.value that is a JSON object: its answer


def roots(spans: list[Span]) -> list[Span]:
    """A trace's outermost spans (no parent, or a parent the trace does not hold), in the order they started."""
    ids = {span.span_id for span in spans}
    return sorted((s for s in spans if s.parent_id is None or s.parent_id not in ids), key=lambda s: s.start_ns)


def trace_answer(spans: list[Span], attribute: str | None = None) -> str | None:
    """The answer a trace holds: `attribute` of its root span where named; else the root's output (OpenInference's
    `output.value`: a text, or a JSON object's `answer`, `output`, `result`, `text` or `response`; GenAI's
    `gen_ai.output.messages`); else the last model call's reply. None where it holds none."""
    outer = roots(spans)
    if not outer:
        return None
    root = flat_attributes(outer[0].attributes)
    if attribute:
        value = root.get(attribute)
        return value if isinstance(value, str) else None
    output = json_text(root.get("output.value"))
    if isinstance(output, dict):
        output = next((output[key] for key in ANSWER_KEYS if isinstance(output.get(key), str)), None)
    if isinstance(output, str):
        return output
    replies = genai_messages(root.get("gen_ai.output.messages"))
    if replies:
        return str(replies[-1]["content"])
    models = [span_step(span) for span in spans if span_kind(flat_attributes(span.attributes)) == "llm"]
    texts = (models[-1].response or {}).get("texts") if models else None
    return str(texts[0]) if isinstance(texts, list) and texts else None


def trace_passages(spans: list[Span]) -> list[Document] | None:
    """The documents a trace's searches found, in the order the searches started, each id once (the first time it
    was found); None where the trace holds no search (which passages were shown is not known)."""
    searches = [span for span in spans if span_kind(flat_attributes(span.attributes)) == "retriever"]
    if not searches:
        return None
    seen: set[str] = set()
    found = []
    for span in sorted(searches, key=lambda s: s.start_ns):
        for doc in documents_of(flat_attributes(span.attributes)):
            if doc.id is None or doc.id not in seen:
                found.append(doc)
            if doc.id is not None:
                seen.add(doc.id)
    return found


def example_id_of(spans: list[Span], attribute: str) -> str | None:
    """The example a trace answers: `attribute` of the first of its spans (in start order) that holds it."""
    for span in sorted(spans, key=lambda s: s.start_ns):
        value = flat_attributes(span.attributes).get(attribute)
        if value is not None and not isinstance(value, (dict, list)):
            return str(value)
    return None

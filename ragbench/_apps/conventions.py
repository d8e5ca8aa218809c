"""An application's spans read as the steps of its example's trace, in both conventions LLM frameworks trace in:
OpenInference's attributes (`openinference.span.kind`, `llm.*`, `retrieval.documents.*`, `tool.*`; what the
OpenInference instrumentors of LangChain, LlamaIndex, Haystack, DSPy and the vendors' SDKs write) and OpenTelemetry's
GenAI semantic conventions (`gen_ai.operation.name` chat / text_completion / generate_content, retrieval,
execute_tool, embeddings; `gen_ai.usage.*`, `gen_ai.input.messages` ...).

Each span is one step, in the order the spans started: a model call (`kind` "llm": its model, messages or prompt,
reply, tokens and seconds; `role` "app:PROVIDER:MODEL", which the price table prices: ragbench._cost.prices), a
search ("retrieval": its query, k, and the documents found with their ids, texts and scores), a tool call ("tool":
its name, arguments and result), or a step of the application's own ("custom": a chain, an agent, a rerank, an
embedding, its input and output). Every step keeps where its span sat (`Step.span`: its id, its parent's and its
kind), from which the viewer draws the spans as a tree (`span_outline`).

A model's provider is named in its role only where the call is known to have gone to that provider's own API (a
vendor's list price applies there alone): OpenInference's `llm.provider` (the instrumentors infer it from the
client's host) or GenAI's provider with `server.address` its API's host. Otherwise the role names the model alone,
priced by a --price-table entry.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from .._types import Document, Step
from .._values.json_values import JsonObject, JsonValue, json_object
from .._values.traced_replies import traced_texts
from .spans import Span

APP_ROLE = "app:"  # the role of an application's model call: "app:" then [provider:]model
OI_KIND = "openinference.span.kind"
GENAI_OPERATION = "gen_ai.operation.name"
LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
PROVIDER_HOSTS = {
    "openai": "api.openai.com",
    "anthropic": "api.anthropic.com",
}  # as ragbench._cost.prices' VENDOR_HOSTS


def flat_attributes(attributes: Mapping[str, JsonValue], prefix: str = "") -> JsonObject:
    """Attributes as OTel holds them, one dotted key each: a nested form (Phoenix's exports nest them by their dots:
    {"llm": {"model_name": ...}}, lists of objects for indexed keys) flattened, a flat one as it is."""
    if not prefix and not any(isinstance(value, (dict, list)) for value in attributes.values()):
        return dict(attributes)  # flat already (an in-process span's always are)
    out: JsonObject = {}
    for key, value in attributes.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flat_attributes(value, f"{name}."))
        elif isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
            for index, item in enumerate(value):
                out.update(flat_attributes(json_object(item), f"{name}.{index}."))
        else:
            out[name] = value
    return out


def indexed(attributes: Mapping[str, JsonValue], prefix: str) -> list[JsonObject]:
    """The items of an indexed attribute (`prefix.0.rest`, `prefix.1.rest` ...), each {rest: value}, by index."""
    items: dict[int, JsonObject] = {}
    start = f"{prefix}."
    for key, value in attributes.items():
        if key.startswith(start):
            index, dot, rest = key[len(start) :].partition(".")
            if dot and rest and index.isdecimal():
                items.setdefault(int(index), {})[rest] = value
    return [items[index] for index in sorted(items)]


def json_text(value: Any) -> Any:
    """A JSON attribute written as text (`gen_ai.input.messages`, `tool.parameters`) read back; other values as
    they are, and text that is not JSON as text."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return value
    return value


def whole(value: Any) -> int:
    """A token count as a whole number >= 0 (0 where it is none)."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        return 0
    return max(0, number)


def span_kind(attributes: Mapping[str, JsonValue]) -> str:
    """What a span did, lower case: llm, retriever, tool, embedding, reranker, chain, agent ... (OpenInference's
    kind, else GenAI's operation mapped onto those), "span" where neither says."""
    kind = attributes.get(OI_KIND)
    if isinstance(kind, str) and kind:
        return kind.lower()
    operation = attributes.get(GENAI_OPERATION)
    if operation in LLM_OPERATIONS:
        return "llm"
    return {
        "retrieval": "retriever",
        "execute_tool": "tool",
        "embeddings": "embedding",
        "invoke_agent": "agent",
        "create_agent": "agent",
        "invoke_workflow": "chain",
    }.get(str(operation), "span")


def genai_messages(value: Any) -> list[JsonObject]:
    """GenAI's `gen_ai.input.messages` / `gen_ai.output.messages` ([{role, parts: [{type, content}]}]) as chat
    turns {role, content}, the text parts joined."""
    turns: list[JsonObject] = []
    for message in json_text(value) if isinstance(json_text(value), list) else []:
        if not isinstance(message, dict):
            continue
        parts = message.get("parts") or []
        texts = [
            str(part.get("content", "")) for part in parts if isinstance(part, dict) and part.get("type") == "text"
        ]
        turns.append({"role": str(message.get("role", "")), "content": "".join(texts)})
    return turns


def _oi_messages(attributes: Mapping[str, JsonValue], prefix: str) -> list[JsonObject]:
    turns: list[JsonObject] = []
    for item in indexed(attributes, prefix):
        content = item.get("message.content")
        if content is None:  # a message of content parts: its texts in order
            parts = indexed({key.removeprefix("message."): v for key, v in item.items()}, "contents")
            content = "".join(str(part.get("message_content.text", "")) for part in parts)
        turns.append({"role": str(item.get("message.role", "")), "content": str(content)})
    return turns


def _model(attributes: Mapping[str, JsonValue]) -> tuple[str, str | None]:
    """The model a call asked for (its request's, which a price list names; else the one that answered) and the
    provider whose API it was sent to, where that is known (see the module's docstring)."""
    invocation = json_text(attributes.get("llm.invocation_parameters"))
    asked = invocation.get("model") if isinstance(invocation, dict) else None
    model = (
        attributes.get("gen_ai.request.model")
        or asked
        or attributes.get("llm.model_name")
        or attributes.get("gen_ai.response.model")
        or "unknown"
    )
    provider = attributes.get("llm.provider")
    if not provider:
        named = attributes.get("gen_ai.provider.name") or attributes.get("gen_ai.system")
        host = attributes.get("server.address")
        provider = named if isinstance(named, str) and host and PROVIDER_HOSTS.get(named) == host else None
    return str(model), str(provider) if provider else None


def model_step(span: Span, attributes: Mapping[str, JsonValue]) -> Step:
    model, provider = _model(attributes)
    messages = _oi_messages(attributes, "llm.input_messages") or genai_messages(attributes.get("gen_ai.input.messages"))
    request: JsonObject = {"model": model}
    if provider:
        request["provider"] = provider
    if messages:
        request["messages"] = list(messages)
    else:
        prompts = [str(item.get("prompt.text", "")) for item in indexed(attributes, "llm.prompts")]
        request["prompt"] = "\n".join(prompts) if prompts else str(attributes.get("input.value", ""))
    replies = _oi_messages(attributes, "llm.output_messages") or genai_messages(
        attributes.get("gen_ai.output.messages")
    )
    texts = [str(turn["content"]) for turn in replies] or [str(attributes.get("output.value", ""))]
    response: JsonObject = traced_texts(texts)
    reasons = attributes.get("gen_ai.response.finish_reasons")
    if isinstance(reasons, list) and reasons:
        response["finish_reason"] = str(reasons[0])
    step = Step(
        kind="llm",
        name=span.name,
        request=request,
        response=response,
        role=f"{APP_ROLE}{provider + ':' if provider else ''}{model}",
    )
    step.prompt_tokens = whole(attributes.get("llm.token_count.prompt", attributes.get("gen_ai.usage.input_tokens")))
    step.completion_tokens = whole(
        attributes.get("llm.token_count.completion", attributes.get("gen_ai.usage.output_tokens"))
    )
    step.cached_prompt_tokens = whole(
        attributes.get(
            "llm.token_count.prompt_details.cache_read", attributes.get("gen_ai.usage.cache_read.input_tokens")
        )
    )
    step.cache_write_tokens = whole(
        attributes.get(
            "llm.token_count.prompt_details.cache_write", attributes.get("gen_ai.usage.cache_creation.input_tokens")
        )
    )
    return step


def documents_of(attributes: Mapping[str, JsonValue], prefix: str = "retrieval.documents") -> list[Document]:
    """The documents of a retrieval (or rerank) span: OpenInference's indexed `document.*` attributes, else GenAI's
    `gen_ai.retrieval.documents` (JSON: [{id, score, content ...}])."""
    docs = []
    for item in indexed(attributes, prefix):
        metadata = json_text(item.get("document.metadata"))
        docs.append(
            Document(
                id=None if item.get("document.id") is None else str(item["document.id"]),
                title=str(metadata.get("title", "")) if isinstance(metadata, dict) else "",
                text=str(item.get("document.content", "")),
                score=_score(item.get("document.score")),
                metadata=dict(metadata) if isinstance(metadata, dict) else {},
            )
        )
    if docs or prefix != "retrieval.documents":
        return docs
    found = json_text(attributes.get("gen_ai.retrieval.documents"))
    for item in found if isinstance(found, list) else []:
        if isinstance(item, dict):
            text = item.get("content", item.get("text", ""))
            rest = {key: value for key, value in item.items() if key not in ("id", "score", "content", "text", "title")}
            docs.append(
                Document(
                    id=None if item.get("id") is None else str(item["id"]),
                    title=str(item.get("title", "")),
                    text=str(text),
                    score=_score(item.get("score")),
                    metadata=rest,
                )
            )
    return docs


def _score(value: Any) -> float | None:
    try:
        return None if value is None or isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        return None


QUERY_KEYS = ("query", "query_str", "question")  # where a search span's JSON input holds its query (Haystack, DSPy)


def search_query(attributes: Mapping[str, JsonValue]) -> JsonValue:
    """A search's query: GenAI's query text, else the span's input - its text, or where that is a JSON object of the
    search's arguments (`{"query": ..., "top_k": ...}`: Haystack's and DSPy's retrievers), the query among them."""
    if "gen_ai.retrieval.query.text" in attributes:
        return attributes["gen_ai.retrieval.query.text"]
    given = attributes.get("input.value", "")
    arguments = json_text(given)
    if isinstance(arguments, dict):
        return next((arguments[key] for key in QUERY_KEYS if isinstance(arguments.get(key), str)), given)
    return given


def search_step(span: Span, attributes: Mapping[str, JsonValue]) -> Step:
    docs = documents_of(attributes)
    query = search_query(attributes)
    request: JsonObject = {"retriever": str(attributes.get("gen_ai.data_source.id") or span.name), "query": str(query)}
    top_k = attributes.get("gen_ai.retrieval.top_k")
    if top_k is not None:
        request["k"] = whole(top_k)
    step = Step(
        kind="retrieval",
        name=span.name,
        request=request,
        response={"ids": [doc.id for doc in docs], "scores": [doc.score for doc in docs]},
    )
    step.docs = [doc.to_dict() for doc in docs]
    return step


def tool_step(span: Span, attributes: Mapping[str, JsonValue]) -> Step:
    name = attributes.get("gen_ai.tool.name", attributes.get("tool.name", span.name))
    arguments = json_text(attributes.get("gen_ai.tool.call.arguments", attributes.get("input.value")))
    result = json_text(attributes.get("gen_ai.tool.call.result", attributes.get("output.value")))
    return Step(
        kind="tool",
        name=span.name,
        request={"tool": str(name), "arguments": _json(arguments)},
        response={"result": _json(result)},
    )


def own_step(span: Span, attributes: Mapping[str, JsonValue], kind: str) -> Step:
    """A span of the application's own (a chain, an agent, a rerank, an embedding): its input and output."""
    inputs: JsonObject = {}
    outputs: JsonObject = {}
    if "input.value" in attributes:
        inputs["input"] = _json(json_text(attributes["input.value"]))
    if "output.value" in attributes:
        outputs["output"] = _json(json_text(attributes["output.value"]))
    step = Step(kind="custom", name=span.name, request=inputs, response=outputs)
    if kind == "reranker":
        step.docs = [doc.to_dict() for doc in documents_of(attributes, "reranker.output_documents")]
    return step


def _json(value: Any) -> JsonValue:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(key): _json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(item) for item in value]
    return str(value)


def span_step(span: Span, counted: bool = True, attributes: JsonObject | None = None) -> Step:
    """One span as a step of the example's trace (see the module's docstring); a model call or search that is not
    `counted` (`uncounted`) a step of the application's own. `attributes`: the span's, flattened already."""
    attributes = flat_attributes(span.attributes) if attributes is None else attributes
    kind = span_kind(attributes)
    if kind == "llm" and counted:
        step = model_step(span, attributes)
    elif kind == "retriever" and counted:
        step = search_step(span, attributes)
    elif kind == "tool":
        step = tool_step(span, attributes)
    else:
        step = own_step(span, attributes, kind)
    step.seconds = round(span.seconds, 6)
    if span.status == "ERROR":
        step.error = span.status_message or _exception(span) or "the span ended in error"
    step.group = []
    step.span = {"id": span.span_id, "parent": span.parent_id, "kind": kind}
    return step


def _exception(span: Span) -> str | None:
    for event in span.events:
        attributes = event.get("attributes")
        if event.get("name") == "exception" and isinstance(attributes, dict):
            return f"{attributes.get('exception.type', 'Exception')}: {attributes.get('exception.message', '')}"
    return None


def span_steps(spans: Iterable[Span]) -> list[Step]:
    """The spans of one example as its trace's steps, in the order they started (ties: as they ended)."""
    ordered = [span for _, span in sorted(enumerate(spans), key=lambda pair: (pair[1].start_ns, pair[0]))]
    flat = [flat_attributes(span.attributes) for span in ordered]  # once a span, for both passes
    skipped = uncounted(ordered, flat)
    return [span_step(span, span.span_id not in skipped, attributes) for span, attributes in zip(ordered, flat)]


PROMPT_TEMPLATE = "llm.prompt_template.template"
CALL_ATTRIBUTES = ("llm.input_messages.", "llm.prompts", "llm.output_messages.", "llm.token_count.", "gen_ai.")


def uncounted(spans: list[Span], flat: list[JsonObject]) -> set[str]:
    """The ids of the model-call and search spans that are no call of their own: an LLM span that only renders a
    prompt (a template and nothing sent: Haystack's PromptBuilder, LlamaIndex's `predict`), an LLM span around
    another (LlamaIndex's `acomplete` around `complete`, LangChain's chat model around the vendor SDK's instrumented
    call: the innermost is the call as sent, with its usage), and a search inside another (LlamaIndex's
    `_aretrieve` inside `aretrieve`: the outermost holds what the application got). `flat`: the spans' attributes,
    flattened, in their order."""
    kinds = {span.span_id: span_kind(attributes) for span, attributes in zip(spans, flat)}
    parents = {span.span_id: span.parent_id for span in spans}
    skipped: set[str] = set()
    for span, attributes in zip(spans, flat):
        if (
            kinds[span.span_id] == "llm"
            and PROMPT_TEMPLATE in attributes
            and not any(key.startswith(CALL_ATTRIBUTES) for key in attributes)
        ):
            skipped.add(span.span_id)
    for span in spans:
        kind = kinds[span.span_id]
        if kind not in ("llm", "retriever") or span.span_id in skipped:
            continue
        parent, seen = parents.get(span.span_id), {span.span_id}
        while parent is not None and parent in parents and parent not in seen:
            seen.add(parent)
            if kinds[parent] == kind:
                skipped.add(parent if kind == "llm" else span.span_id)  # an llm: its wrapper; a search: itself
            parent = parents[parent]
    return skipped


def span_outline(trace: list[Any]) -> list[JsonObject]:
    """The viewer's outline of a trace whose steps came from spans (ragbench._trace_groups' form): a span with
    children is a group labelled with its name, holding its own step first, then its children's; a step of no span
    (or whose parent is not in the trace) sits at the top."""
    by_id: dict[str, JsonObject] = {}
    children: dict[str | None, list[int]] = {}
    for index, step in enumerate(trace):
        span = getattr(step, "span", None) or {}
        if isinstance(span.get("id"), str):
            by_id[span["id"]] = {"index": index, "name": step.name, "kind": span.get("kind")}
    for index, step in enumerate(trace):
        span = getattr(step, "span", None) or {}
        parent = span.get("parent")
        children.setdefault(parent if parent in by_id else None, []).append(index)

    def items(index: int) -> JsonObject:
        span_id = (getattr(trace[index], "span", None) or {}).get("id")
        below = children.get(span_id, []) if isinstance(span_id, str) else []
        if not below or not isinstance(span_id, str):
            return {"step": index}
        node = by_id[span_id]
        return {
            "group": f"{node['name']} ({node['kind']})",
            "items": [{"step": index}, *(items(child) for child in below)],
        }

    return [items(index) for index in children.get(None, [])]

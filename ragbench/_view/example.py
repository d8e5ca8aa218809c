"""One example's page data from its sample record: question, gold, answer, scores with the reasons
the run recorded (the judge's replies, the NLI verdicts on the answer's sentences), the documents
with the cited ones marked, and the trace with the system's outline of it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sized
from pathlib import Path

from .._records import SampleRecord
from .._storage.files import open_file
from .._storage.thumbnails import thumbnail_url
from .._system import System, trace_outline
from .._trace_groups import outline
from .._types import Document, Step
from .._values.json_values import JsonObject, json_object
from .page_data import DocumentView, ExampleView, GoldPage, ImageView, Reason, StepView
from .runs import RunFolder, clip, gold_text

STEP_CHARS = 40_000  # a prompt or reply longer than this is cut (the record keeps it whole)
DOC_CHARS = 4_000
TRACEBACK_CHARS = 40_000


def _prompt_text(request: Mapping[str, object]) -> str:
    messages = request.get("messages")
    if isinstance(messages, list):
        return "\n\n".join(_turn_text(m) for m in messages if isinstance(m, dict))
    prompt = request.get("prompt")
    return prompt if isinstance(prompt, str) else json.dumps(request, ensure_ascii=False, default=str)


def _turn_text(message: Mapping[str, object]) -> str:
    """A chat turn, turn by turn as the model saw it: its role (a tool result's call id), its text (content in
    parts, as JSON) and the tool calls an assistant turn made."""
    head = f"[{message.get('role', '?')}]" + (f" ({message['tool_call_id']})" if message.get("tool_call_id") else "")
    calls = _call_lines(message.get("tool_calls"))
    text = _content_text(message.get("content") or "")
    return "\n".join([head, *([text] if text or not calls else []), *calls])


def _content_text(content: object) -> str:
    """A turn's content as text; parts that hold an image each on its line, an image as `[image sha256:…]` (the
    record's digest: the picture itself is the example's, shown at the top of its page)."""
    if not (isinstance(content, list) and any(isinstance(p, dict) and p.get("type") == "image" for p in content)):
        return _dump(content)
    return "\n".join(
        f"[image sha256:{json_object(part.get('image')).get('sha256')}]"
        if part.get("type") == "image"
        else str(part.get("text", _dump(part)))
        for part in content
        if isinstance(part, dict)
    )


def _call_lines(calls: object) -> list[str]:
    """Tool calls (the OpenAI form) as `-> name(arguments)  [id]` lines, arguments as the model wrote them."""
    return (
        [
            f"-> {json_object(c.get('function')).get('name')}({json_object(c.get('function')).get('arguments')})  [{c.get('id')}]"
            for c in calls
            if isinstance(c, dict)
        ]
        if isinstance(calls, list)
        else []
    )


def _dump(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str, indent=1)


def image_views(images: list[dict[str, object]], run: Path) -> list[ImageView]:
    """An example's images as the page shows them: each by its digest, with the thumbnail the run kept of it
    (ragbench._storage.thumbnails); the task's own image files are not read."""
    return [image_view(image, run) for image in images]


def image_view(image: Mapping[str, object], run: Path) -> ImageView:
    digest = str(image.get("sha256") or "")
    size, kind, source = image.get("bytes"), image.get("media_type"), image.get("source")
    return {
        "sha256": digest,
        "media_type": kind if isinstance(kind, str) else None,
        "bytes": size if isinstance(size, int) else None,
        "source": source if isinstance(source, str) else None,
        "thumbnail": thumbnail_url(run, digest),
    }


def document_views(docs: list[Document], run: Path) -> list[DocumentView]:
    """Documents as the page lists them, numbered from 1 (the prediction's as citations number them); a page
    retrieved as the passage with its image (what its record holds, `metadata["image"]`, and the thumbnail)."""
    return [
        {
            "number": k,
            "id": d.id,
            "title": d.title,
            "url": d.url,
            "score": d.score,
            "text": clip(d.text, DOC_CHARS),
            "image": image_view(image, run) if isinstance(image := d.metadata.get("image"), dict) else None,
        }
        for k, d in enumerate(docs, 1)
    ]


def gold_pages(gold: Mapping[str, object], docs: list[DocumentView]) -> list[GoldPage]:
    """The documents a qrels gold grades above 0 (BEIR's, ViDoRe's pages), each with its rank among the example's
    documents and their image where it was retrieved, in the gold's order."""
    qrels = gold.get("qrels")
    if not isinstance(qrels, dict):
        return []
    found = {str(doc["id"]): doc for doc in reversed(docs)}  # a document shown twice: its first place
    pages: list[GoldPage] = []
    for key, grade in qrels.items():
        if isinstance(grade, (int, float)) and not isinstance(grade, bool) and grade > 0:
            doc = found.get(str(key))
            rank = doc["number"] if doc is not None else None
            pages.append({"id": str(key), "grade": grade, "rank": rank, "image": doc["image"] if doc else None})
    return pages


def step_view(index: int, step: Step, run: Path) -> StepView:
    """A trace step as the timeline shows it: an LLM call's prompt and reply as text, any other
    step's request and response (a custom step's inputs and outputs) as JSON, with the documents a
    custom step kept (log-probs are counted, not shown)."""
    request, response = json_object(step.request), json_object(step.response)
    extra: dict[str, object] = {}
    if step.kind == "llm":
        prompt = _prompt_text(request)
        texts = response.get("texts") or []
        reply = _dump(texts[0]) if isinstance(texts, list) and len(texts) == 1 else _dump(texts) if texts else ""
        calls = response.get("tool_calls")
        if isinstance(calls, list) and calls:  # the first completion's calls, under its text
            reply = "\n".join([reply, *_call_lines(calls[0])]).lstrip("\n")
        extra = {k: v for k, v in response.items() if k not in ("texts", "logprobs", "tool_calls")}
        tools = request.get("tools")
        if isinstance(tools, list) and tools:
            extra["tools"] = [  # a function's name, a remote MCP server's label
                json_object(t.get("function")).get("name") or t.get("server_label")
                for t in tools
                if isinstance(t, dict)
            ]
            extra["tool_choice"] = request.get("tool_choice")
        logprobs = response.get("logprobs")
        if logprobs and isinstance(logprobs, Sized):
            extra["logprobs"] = f"{len(logprobs)} positions"
        settings = json_object(request.get("sampling"))
        extra["sampling"] = {k: v for k, v in settings.items() if v not in (None, [], False)}
    else:
        prompt, reply = _dump(request), _dump(response) if response else ""
    kept = step.docs if isinstance(step.docs, list) else []
    return {
        "i": index,
        "kind": step.kind,
        "name": step.name,
        "group": step.group or [],
        "seconds": step.seconds,
        "cached": bool(step.cached),
        "error": step.error,
        "tokens": [step.prompt_tokens, step.completion_tokens],
        "prompt": clip(prompt, STEP_CHARS),
        "reply": clip(reply, STEP_CHARS),
        "details": clip(_dump(extra), 2000) if extra else "",
        "docs": document_views([Document.from_dict(d) for d in kept if isinstance(d, dict)], run),
    }


def nli_decision(line: str) -> tuple[str, str, str] | None:
    """(hypothesis, premise, verdict) of one nli_calls.jsonl line; None for a line that is not a JSON object."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict):
        return None
    text = str(entry.get("prompt") or _prompt_text(entry))
    premise, _, hypothesis = text.partition("hypothesis: " if "hypothesis: " in text else "Hypothesis: ")
    return hypothesis.split("\n\nDoes the premise")[0].strip(), premise, str(entry.get("response"))


def read_nli_log(path: Path) -> dict[str, list[tuple[str, str]]]:
    """nli_calls.jsonl by hypothesis: (premise, verdict) of each decision (read up to where it cannot be)."""
    by_hypothesis: dict[str, list[tuple[str, str]]] = {}
    try:
        with open_file(path, "r", errors="replace") as handle:
            for decision in filter(None, map(nli_decision, handle)):
                by_hypothesis.setdefault(decision[0], []).append(decision[1:])
    except OSError:
        pass  # the decisions read so far are shown
    return by_hypothesis


def nli_verdicts(answer: str, docs: list[Document], run: RunFolder) -> list[Reason]:
    """The NLI decisions on this answer's sentences over this example's documents (a premise is
    matched to the documents whose text it contains; the log has no example ids)."""
    out: list[Reason] = []
    logged: dict[str, list[tuple[str, str]]] = run.cached("nli_calls.jsonl", read_nli_log, {})
    for hypothesis, decisions in logged.items():
        if not hypothesis or hypothesis.rstrip(".") not in answer:
            continue
        for premise, verdict in decisions:
            numbers = [k for k, doc in enumerate(docs, 1) if doc.text[:120] in premise]
            if numbers:
                out.append(
                    {
                        "source": f"NLI: documents {numbers} entail the sentence?",
                        "reply": verdict,
                        "prompt": clip(f"{premise}hypothesis: {hypothesis}", 6000),
                    }
                )
    return out


def _texts(response: Mapping[str, object]) -> str:
    texts = response.get("texts")
    return " | ".join(map(str, texts)) if isinstance(texts, list) else ""


def reasons(record: SampleRecord, run: RunFolder) -> list[Reason]:
    """What the run recorded about why a metric scored as it did: the judges' replies, the NLI verdicts."""
    out: list[Reason] = [
        {
            "source": f"judge call {step.name}",
            "prompt": clip(_prompt_text(json_object(step.request)), 6000),
            "reply": step.error or _texts(json_object(step.response)),
        }
        for step in record.judge_trace
        if step.kind == "llm"  # a metric's own recorded step (ctx.record_step) is no judge call
    ]
    if record.answer and record.docs:
        out += nli_verdicts(record.answer, record.docs, run)
    return out[:200]


def example_page(record: SampleRecord, system: type[System] | None, run: RunFolder) -> ExampleView:
    """An example's page from its record (read with its texts)."""
    cited = {n for sentence in record.citations for n in (sentence or []) if isinstance(n, int)}
    try:
        items: list[JsonObject] = trace_outline(system, record)
    except Exception as exc:  # a third-party hook's bug must not hide the trace
        items = [{"group": f"(trace_outline failed: {type(exc).__name__}: {exc})", "items": [*outline(record.trace)]}]
    docs = document_views(record.docs, run.path)
    return {
        "id": record.id,
        "question": record.question,
        "gold": record.gold,
        "gold_text": gold_text(record),
        "gold_pages": gold_pages(record.gold, docs),
        "images": image_views(record.images, run.path),
        "answer": record.answer,
        "output": record.output,
        "error": record.error,
        "traceback": clip(record.traceback, TRACEBACK_CHARS) or None,
        "scores": record.scores,
        "score_errors": record.score_errors,
        "score_tracebacks": {
            str(metric): clip(text, TRACEBACK_CHARS) for metric, text in record.score_tracebacks.items()
        },
        "infrastructure_failures": record.infrastructure_failures,
        "seconds": record.seconds,
        "citations": record.citations,
        "docs": [{**doc, "cited": doc["number"] in cited} for doc in docs],
        "reasons": reasons(record, run),
        "steps": [step_view(i, step, run.path) for i, step in enumerate(record.trace)],
        "outline": items,
        "extras": clip(_dump(record.extras), 20000) if record.extras else "",
    }

"""One example's page data from its sample record: question, gold, answer, scores with the reasons
the run recorded (the judge's replies, the NLI verdicts on the answer's sentences), the documents
with the cited ones marked, and the trace with the system's outline of it."""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from ..records import SampleRecord
from ..trace_groups import outline
from .runs import clip, gold_text

STEP_CHARS = 40_000  # a prompt or reply longer than this is cut (the record keeps it whole)
DOC_CHARS = 4_000
_NLI_CACHE: dict[tuple[str, float], dict[str, list[tuple[str, str]]]] = {}
_NLI_LOCK = threading.Lock()


def _prompt_text(request: dict[str, Any]) -> str:
    messages = request.get("messages")
    if isinstance(messages, list):
        return "\n\n".join(f"[{m.get('role', '?')}]\n{m.get('content', '')}" for m in messages if isinstance(m, dict))
    prompt = request.get("prompt")
    return prompt if isinstance(prompt, str) else json.dumps(request, ensure_ascii=False, default=str)


def _dump(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str, indent=1)


def step_view(index: int, step: dict[str, Any]) -> dict[str, Any]:
    """A trace step as the timeline shows it: an LLM call's prompt and reply as text, any other
    step's request and response as JSON (log-probs are counted, not shown)."""
    request, response = step.get("request") or {}, step.get("response") or {}
    if step.get("kind") == "llm":
        prompt = _prompt_text(request)
        texts = response.get("texts") or []
        reply = texts[0] if len(texts) == 1 else _dump(texts) if texts else ""
        extra = {k: v for k, v in response.items() if k not in ("texts", "logprobs")}
        if response.get("logprobs"):
            extra["logprobs"] = f"{len(response['logprobs'])} positions"
        settings = request.get("sampling") or {}
        extra["sampling"] = {k: v for k, v in settings.items() if v not in (None, [], False)}
    else:
        prompt, reply, extra = _dump(request), _dump(response) if response else "", {}
    return {"i": index, "kind": step.get("kind"), "name": step.get("name"), "group": step.get("group") or [],
            "seconds": step.get("seconds"), "cached": bool(step.get("cached")), "error": step.get("error"),
            "tokens": [step.get("prompt_tokens", 0), step.get("completion_tokens", 0)],
            "prompt": clip(prompt, STEP_CHARS), "reply": clip(reply, STEP_CHARS),
            "details": clip(_dump(extra), 2000) if extra else ""}


def _nli_log(run_path: Path) -> dict[str, list[tuple[str, str]]]:
    """nli_calls.jsonl by hypothesis: (premise, verdict) of each decision."""
    path = run_path / "nli_calls.jsonl"
    try:
        key = (str(path), path.stat().st_mtime)
    except OSError:
        return {}
    with _NLI_LOCK:
        if key not in _NLI_CACHE:
            by_hypothesis: dict[str, list[tuple[str, str]]] = {}
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    text = entry.get("prompt") or _prompt_text(entry)
                    marker = "hypothesis: " if "hypothesis: " in text else "Hypothesis: "
                    premise, _, hypothesis = text.partition(marker)
                    hypothesis = hypothesis.split("\n\nDoes the premise")[0].strip()
                    by_hypothesis.setdefault(hypothesis, []).append((premise, str(entry.get("response"))))
            _NLI_CACHE[key] = by_hypothesis
        return _NLI_CACHE[key]


def nli_verdicts(answer: str, docs: list[dict[str, Any]], run_path: Path) -> list[dict[str, Any]]:
    """The NLI decisions on this answer's sentences over this example's documents (a premise is
    matched to the documents whose text it contains; the log has no example ids)."""
    out = []
    for hypothesis, decisions in _nli_log(run_path).items():
        if not hypothesis or hypothesis.rstrip(".") not in answer:
            continue
        for premise, verdict in decisions:
            numbers = [k for k, doc in enumerate(docs, 1) if (doc.get("text") or "")[:120] in premise]
            if numbers:
                out.append({"source": f"NLI: documents {numbers} entail the sentence?", "reply": verdict,
                            "prompt": clip(f"{premise}hypothesis: {hypothesis}", 6000)})
    return out


def reasons(record: dict[str, Any], run_path: Path) -> list[dict[str, Any]]:
    """What the run recorded about why a metric scored as it did: the judges' replies, the NLI verdicts."""
    out = [{"source": f"judge call {step.get('name')}", "prompt": clip(_prompt_text(step.get("request") or {}), 6000),
            "reply": step.get("error") or " | ".join((step.get("response") or {}).get("texts") or [])}
           for step in record.get("judge_trace") or []]
    prediction = record.get("prediction") or {}
    if prediction.get("answer") and prediction.get("docs"):
        out += nli_verdicts(str(prediction["answer"]), prediction["docs"], run_path)
    return out[:200]


def example_page(record: dict[str, Any], system: Any, run_path: Path) -> dict[str, Any]:
    prediction = record.get("prediction") or {}
    citations = prediction.get("citations") or []
    cited = {n for sentence in citations for n in (sentence or []) if isinstance(n, int)}
    docs = [{"number": k, "id": d.get("id"), "title": d.get("title"), "url": d.get("url"), "score": d.get("score"),
             "text": clip(d.get("text"), DOC_CHARS), "cited": k in cited}
            for k, d in enumerate(prediction.get("docs") or [], 1)]
    trace = record.get("trace") or []
    sample = SampleRecord.from_dict(record)
    try:
        items = system.trace_outline(sample) if system is not None else outline(sample.trace)
    except Exception as exc:  # a third-party hook's bug must not hide the trace
        items = [{"group": f"(trace_outline failed: {type(exc).__name__}: {exc})", "items": outline(sample.trace)}]
    return {"id": record.get("id"), "question": record.get("question"), "gold": record.get("gold"),
            "gold_text": gold_text(record.get("gold")), "meta": record.get("meta") or {},
            "answer": prediction.get("answer", record.get("output")), "output": record.get("output"),
            "error": record.get("error"), "scores": record.get("scores") or {},
            "score_errors": record.get("score_errors") or {},
            "infrastructure_failures": record.get("infrastructure_failures") or [],
            "seconds": record.get("seconds"), "citations": citations, "docs": docs, "reasons": reasons(record, run_path),
            "steps": [step_view(i, s) for i, s in enumerate(trace)], "outline": items,
            "extras": clip(_dump(prediction.get("extras")), 20000) if prediction.get("extras") else ""}

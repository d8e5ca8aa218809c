"""DRAGUN's Task 2 submission format (the resources README, the starter kit's produce_run.py): one JSON line per
topic, `{"metadata": {"team_id", "run_id", "topic_id", "type"}, "responses": [{"text", "citations"}]}`, each
response a sentence and its citations the MS MARCO V2.1 segment docids it rests on. AutoJudge reads a report as
its sentences' texts joined by single spaces.

A ragbench answer cites the segments it was shown as "[n]": `responses` splits it into Punkt sentences (as TREC
RAG's export does) and names each cited segment by its docid; `recorded_answer` writes a submission's sentences
back as such an answer, the markers before each sentence's closing punctuation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

from ragbench.api import Document, RecordError
from ragbench.api.data import JsonObject, JsonValue, given_values
from ragbench.api.text import cited_numbers, remove_citations, sent_tokenize

CLOSING = re.compile(r"[.!?]+$")
EXTRAS = "dragun_responses"  # a scored submission's sentences as submitted (the dragun_autojudge metric reads them)


class ReportSentence(TypedDict):
    text: str
    citations: list[str]


def responses(answer: str, docs: list[Document]) -> tuple[list[ReportSentence], int]:
    """The answer's sentences (without their markers) with the docids of the segments they cite, each once, and
    how many citations named no segment shown (left out)."""
    ids = [str(doc.id) for doc in docs]
    out: list[ReportSentence] = []
    dropped = 0
    for statement in sent_tokenize(answer):
        numbers = list(dict.fromkeys(cited_numbers(statement)))
        kept = [ids[number - 1] for number in numbers if 1 <= number <= len(ids)]
        dropped += len(numbers) - len(kept)
        text = " ".join(remove_citations(statement).split())
        if text:
            out.append({"text": text, "citations": kept})
    return out, dropped


def recorded_answer(answer: list[dict[str, Any]], cited: list[str]) -> str:
    """A submission's sentences as a ragbench answer citing `cited` (1-based "[n]" markers before each sentence's
    closing punctuation)."""
    parts = []
    for sentence in answer:
        marks = "".join(f"[{cited.index(str(cite)) + 1}]" for cite in sentence.get("citations") or [])
        text = sentence["text"].strip()
        end = CLOSING.search(text)
        body, stop = (text[: end.start()], end.group()) if end else (text, "")
        parts.append(f"{body} {marks}{stop}" if marks else text)
    return " ".join(parts)


def submission_line(topic_id: str, answer: list[ReportSentence], run_id: str, team_id: str) -> JsonObject:
    metadata: JsonObject = {"team_id": team_id, "run_id": run_id, "topic_id": topic_id, "type": "automatic"}
    sent: list[JsonValue] = [{"text": s["text"], "citations": [cite for cite in s["citations"]]} for s in answer]
    return {"metadata": metadata, "responses": sent}


def submission_record(line: Any) -> JsonObject:
    """One submission line as a `ragbench score` record: the sentences as a ragbench answer citing the segments
    in the order first cited, and the sentences as submitted in its extras (what AutoJudge reads)."""
    if not isinstance(line, dict) or not isinstance(line.get("metadata"), dict):
        raise ValueError('expected {"metadata": {"topic_id", ...}, "responses": [...]}')
    topic_id, answer = line["metadata"].get("topic_id"), line.get("responses")
    if not isinstance(topic_id, str) or not isinstance(answer, list):
        raise ValueError('expected "metadata": {"topic_id"} and "responses", a list of {"text", "citations"}')
    if not all(isinstance(s, dict) and isinstance(s.get("text"), str) for s in answer):
        raise ValueError('a response is not {"text", "citations"}')
    cited = list(dict.fromkeys(str(cite) for s in answer for cite in s.get("citations") or []))
    return {
        "id": topic_id,
        "output": recorded_answer(answer, cited),
        "docs": [{"id": docid} for docid in cited],
        "extras": {EXTRAS: [{"text": s["text"], "citations": list(s.get("citations") or [])} for s in answer]},
    }


def run_records(path: Path) -> Iterator[tuple[int, JsonObject | RecordError]]:
    """Every line of a run file as a `ragbench score` record; a line that is not UTF-8, not JSON or not a
    submission line is a RecordError naming it."""
    for index, value in given_values(path, "a DRAGUN Task 2 run file (JSONL)"):
        try:  # a RecordError: not UTF-8, not JSON, nested too deeply
            yield index, value if isinstance(value, RecordError) else submission_record(value)
        except ValueError as exc:
            yield index, RecordError(str(path), index + 1, str(exc))

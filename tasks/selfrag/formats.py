"""The record format of SQuAD v1.1's JSON, registered for YAML tasks' `data.format: squad`
(this folder's registrations.yaml, the ragbench_record_formats hook)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError
from ragbench.api.yaml_tasks import RecordFormat, RecordPlace, read_document


class SquadFormat(RecordFormat):
    """SQuAD v1.1 JSON (`data.format: squad`)."""

    def read(self, path: Path) -> Iterator[tuple[RecordPlace, Any]]:
        return squad_records(path)


def squad_records(path: Path) -> Iterator[tuple[RecordPlace, Any]]:
    """SQuAD v1.1 JSON, one record per question: id, question, the distinct answer texts (file order),
    title, context, and the paragraph as one passage titled with the article's title (underscores as spaces)."""
    data = read_document(path, 'SQuAD v1.1 JSON ({"data": [{"title", "paragraphs": [...]}]})')
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ConfigError(f"{path} has no 'data' list of articles; expected SQuAD v1.1 JSON (dev-v1.1.json)")
    where, position = str(path), 0
    for a, article in enumerate(data["data"]):
        paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
        if not isinstance(paragraphs, list):
            place = RecordPlace(where, position, position + 1, f"data[{a}]")
            yield place, place.error("article without a 'paragraphs' list", "paragraphs")
            continue
        title = str(article.get("title", ""))
        for p, paragraph in enumerate(paragraphs):
            qas = (paragraph.get("qas") or []) if isinstance(paragraph, dict) else [None]
            for q, qa in enumerate(qas):
                place = RecordPlace(where, position, position + 1, f"data[{a}].paragraphs[{p}].qas[{q}]")
                yield place, _squad_question(place, title, paragraph, qa)
                position += 1


def _squad_question(place: RecordPlace, title: str, paragraph: Any, qa: Any) -> Any:
    if not isinstance(paragraph, dict) or not isinstance(paragraph.get("context"), str):
        return place.error("paragraph without a 'context' string", "context")
    if not isinstance(qa, dict) or not isinstance(qa.get("question"), str) or qa.get("id") is None:
        return place.error("question without 'id' and 'question'", "qas")
    texts = [a.get("text") for a in qa.get("answers") or [] if isinstance(a, dict)]
    if not all(isinstance(text, str) for text in texts):  # SQuAD's evaluate-v1.1.py stops on one (s.lower())
        return place.error(f"question {qa['id']} has an answer whose text is not a string", "answers")
    answers = list(dict.fromkeys(t for t in texts if t))
    if not answers:
        return place.error(f"question {qa['id']} has no answer text", "answers")
    context = paragraph["context"]
    return {
        "id": str(qa["id"]),
        "question": qa["question"],
        "answers": answers,
        "title": title,
        "context": context,
        "passages": [{"id": f"{qa['id']}:context", "title": title.replace("_", " "), "text": context}],
    }

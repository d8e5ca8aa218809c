"""The record formats of FlashRAG's JSONL and WebQuestions' release JSON, registered for YAML tasks'
`data.format` (this folder's registrations.yaml, the ragbench_record_formats hook)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ragbench.api import RecordError
from ragbench.api.yaml_tasks import RecordFormat, RecordPlace, json_records, jsonl_records, kind


class FlashragFormat(RecordFormat):
    """FlashRAG's JSONL (`data.format: flashrag`): its `golden_answers` are the gold answers unless the file
    maps the gold itself."""

    counts_lines = True
    default_gold = MappingProxyType({"answers": "golden_answers"})

    def read(self, path: Path) -> Iterator[tuple[RecordPlace, Any]]:
        return flashrag_records(path)


class WebQuestionsFormat(RecordFormat):
    """WebQuestions' release JSON (`data.format: webquestions`)."""

    def read(self, path: Path) -> Iterator[tuple[RecordPlace, Any]]:
        return webquestions_records(path)


def flashrag_records(path: Path) -> Iterator[tuple[RecordPlace, Any]]:
    """FlashRAG's JSONL as its `Item` and `BaseMetric.get_dataset_answer` read it: a record with a list of
    `choices` is multiple choice, its `golden_answers` indexes into them (Python's, -1 the last), which become
    the choices' texts (the indexes stay as `golden_answer_indexes`); any other's are answer texts. FlashRAG
    stops on a record it cannot read; here each is one bad record: `choices` that are not a list, indexes
    that miss the choices, and golds that are not texts without choices to index (upstream's
    `normalize_answer` takes only strings)."""
    for place, record in jsonl_records(path):
        choices = record.get("choices") if isinstance(record, dict) else None
        if choices is not None and not isinstance(choices, list):
            yield place, place.error(f"expected a list of choice texts, got {kind(choices)}", "choices")
            continue
        indexes: Any = record.get("golden_answers") if isinstance(record, dict) else None
        if not choices:
            golds = indexes if isinstance(indexes, list) else [indexes]
            number = next((gold for gold in golds if isinstance(gold, (int, float))), None)
            yield (
                place,
                record
                if number is None
                else place.error(
                    f"holds {kind(number)}, not an answer text; a multiple-choice record's indexes "
                    "need its list of choices",
                    "golden_answers",
                ),
            )
            continue
        try:
            texts = [choices[i] for i in indexes]
        except (TypeError, IndexError):
            yield place, place.error(f"expected indexes into its {len(choices)} choices", "golden_answers")
            continue
        yield place, {**record, "golden_answers": texts, "golden_answer_indexes": indexes}


# SEMPRE's answer list: (list (description Word) (description "Two words") ...), quotes escaped inside
_DESCRIPTION = re.compile(r'\(description (?:"((?:[^"\\]|\\.)*)"|([^()"]*))\)')


def webquestions_records(path: Path) -> Iterator[tuple[RecordPlace, Any]]:
    """WebQuestions' release JSON (a list of {"url", "targetValue", "utterance"}): each record plus
    `answers`, the descriptions of its `targetValue` list in order."""
    for place, record in json_records(path, None):
        target = record.get("targetValue") if isinstance(record, dict) else None
        if not isinstance(target, str) or not target.startswith("(list"):
            yield (
                place,
                record
                if isinstance(record, RecordError)
                else place.error('expected a targetValue "(list (description ...) ...)"', "targetValue"),
            )
            continue
        answers = [
            bare.strip() if bare else quoted.replace('\\"', '"') for quoted, bare in _DESCRIPTION.findall(target)
        ]
        yield place, {**record, "answers": answers}

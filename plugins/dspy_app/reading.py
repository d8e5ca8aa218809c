"""What the `dspy` system reads of a module's prediction: the answer field, and the passages as documents (system.py
says where from)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragbench.api import Document
from ragbench.api.apps import (
    AppReply,
    AppReplyError,
    NothingAtPath,
    answer_text,
    declared_value,
    passage_of,
    value_at,
    value_summary,
)

PASSAGE_FIELDS = ("context", "passages")  # where a prediction holds its passages, tried in order
ALIASES = {"long_text": "text", "pid": "id"}  # the keys of DSPy's ColBERTv2 passages, as a passage's


class PredictionReading:
    """Where a prediction's answer and passages are (system.py's `answer` and `passages`)."""

    def __init__(self, module: str, answer: str, passages: str) -> None:
        self.who = f"system dspy: module {module}"
        self.answer, self.passages = answer, passages

    def reply(self, prediction: Any) -> AppReply:
        answer = answer_text(declared_value(prediction, self.answer, self.who, "answer"), self.who, self.answer)
        found = self.found_passages(prediction)
        if not isinstance(found, Sequence) or isinstance(found, str):
            raise AppReplyError(f"{self.who}'s passages are {value_summary(found)}, expected a list")
        passages = [self.document(item, f"{self.who}'s passage {n + 1}") for n, item in enumerate(found)]
        return AppReply(answer=answer, passages=passages, raw=value_summary(prediction))

    def found_passages(self, prediction: Any) -> Any:
        if self.passages:
            return declared_value(prediction, self.passages, self.who, "passages")
        for name in PASSAGE_FIELDS:
            try:
                return value_at(prediction, name)
            except NothingAtPath:
                continue
        return []

    def document(self, item: Any, where: str) -> Document:
        if isinstance(item, Mapping):
            fields = {str(key): value for key, value in item.items()}
            for alias, name in ALIASES.items():
                if alias in fields and name not in fields:
                    fields[name] = fields.pop(alias)
            item = fields
        return passage_of(item, where)

"""ARGUE's nuggets: questions with gold answers, each answer with the documents that attest it, OR (one answer
suffices) or AND (all are needed), `vital` or `okay` or unlabelled. Read from Auto-ARGUE's v3 nugget bank JSON
(`{"query_id", "nugget_bank": {question: {"question", "answers": {answer: {"answer", "references": [{"doc_id"}]}},
"aggregator_type", "importance"}}}`, the format of argue-viz's example nuggets) into the gold the `auto_argue`
metric reads: `[{"question", "answers": [{"answer", "docs"}], "aggregator", "importance"}]`. An answer no document
attests is dropped and a question left without answers too (a document is relevant only through an answer)."""

from __future__ import annotations

from typing import Any, TypedDict

AGGREGATORS = ("OR", "AND")
IMPORTANCE = ("vital", "okay")


class NuggetAnswer(TypedDict):
    answer: str
    docs: list[str]


class ArgueNugget(TypedDict):
    question: str
    answers: list[NuggetAnswer]
    aggregator: str
    importance: str | None


class BankError(ValueError):
    """A nugget bank that is not the v3 format (its message says what is wrong)."""


def _answers(question: str, given: Any) -> list[NuggetAnswer]:
    items = given.values() if isinstance(given, dict) else given
    if not isinstance(items, list) and not isinstance(given, dict):
        raise BankError(f"question {question!r}: answers is neither an object nor a list")
    answers = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("answer"), str):
            raise BankError(f"question {question!r}: an answer is not {{'answer', 'references'}}")
        found = [ref.get("doc_id") if isinstance(ref, dict) else ref for ref in item.get("references") or []]
        docs = [doc for doc in found if isinstance(doc, str)]
        if len(docs) != len(found):
            raise BankError(f"question {question!r}: a reference of {item['answer']!r} has no doc_id string")
        if docs:
            answers.append(NuggetAnswer(answer=item["answer"], docs=docs))
    return answers


def read_bank(bank: Any) -> tuple[str, list[ArgueNugget]]:
    """(query_id, nuggets) of one v3 nugget bank."""
    if not isinstance(bank, dict) or not isinstance(bank.get("nugget_bank"), dict):
        raise BankError('expected an object with "query_id" and "nugget_bank"')
    nuggets = []
    for question, entry in bank["nugget_bank"].items():
        if not isinstance(entry, dict):
            raise BankError(f"question {question!r} is not an object")
        aggregator = str(entry.get("aggregator_type") or "OR").upper()
        if aggregator not in AGGREGATORS:
            raise BankError(f"question {question!r}: aggregator_type {aggregator} is neither OR nor AND")
        importance = entry.get("importance")
        if importance is not None and importance not in IMPORTANCE:
            raise BankError(f"question {question!r}: importance {importance!r} is neither vital nor okay")
        answers = _answers(question, entry.get("answers", {}))
        if answers:
            text = entry.get("question", question)
            nuggets.append(
                ArgueNugget(question=str(text), answers=answers, aggregator=aggregator, importance=importance)
            )
    return str(bank.get("query_id", "")), nuggets

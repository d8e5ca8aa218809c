"""A record becomes an Example through the field mapping of a YAML task (`fields:`): paths into the
record, the gold kinds metrics know, documents in the shapes datasets ship them in.

A record missing a required path, or holding the wrong kind of value, is a `RecordError` naming the
data file, where the record is in it (`RecordPlace`) and the field (and the YAML key that asked for it):
counted, never dropped."""

from __future__ import annotations

import math
import string
from collections.abc import Mapping
from typing import Any, TypedDict

from .._errors import RecordError, did_you_mean
from .._types import Document, Example
from .located import SpecError
from .places import RecordPlace
from .spec import DocumentsSpec, FieldRef, FieldsSpec
from .values import kind, listed_text

MISSING = object()
Record = Mapping[str, object]  # a data file's record as read: its fields' shapes are the data's, not ours


class Choices(TypedDict):
    """A multiple-choice item's choices, in order: each one's label and text."""

    label: list[str]
    text: list[str]


class GoldPart(TypedDict, total=False):
    """The gold the core's own kinds read from a record (a registered gold kind or `extra_gold` adds others)."""

    answers: list[str] | list[list[str]]
    label: object
    claims: list[str]
    long_answers: list[str]
    answer: str
    qa_pairs: list[dict[str, object]]
    answer_key: str
    choices: Choices


class FieldError(RecordError):
    """A record the mapping cannot read: the field it lacks (or holds wrongly) and the YAML key asking for it."""

    def __init__(self, place: RecordPlace, ref: FieldRef, problem: str) -> None:
        super().__init__(place.source, place.line, problem, ref.paths[0], place.at)
        self.place, self.ref, self.problem, self.hint = place, ref, problem, ""

    def with_hint(self, record: Any) -> FieldError:
        """Names the fields the record has where the missing path was looked for, and the nearest one."""
        if self.problem.startswith("missing field"):
            parent, _, last = self.ref.paths[0].rpartition(".")
            holder = lookup(record, parent) if parent else record
            if isinstance(holder, dict):
                keys = [str(k) for k in holder]
                self.hint = (
                    f" (its fields{' under ' + parent if parent else ''}: {', '.join(keys)}){did_you_mean(last, keys)}"
                )
        return self

    def spec_error(self) -> SpecError:
        if self.problem.startswith("missing field"):
            problem = f"{self.place} has no field '{self.ref.paths[0]}'"
        else:
            problem = f"{self.place} field '{self.ref.paths[0]}': {self.problem}"
        return SpecError(self.ref.source, self.ref.line, self.ref.key, problem + self.hint)


def lookup(record: Any, path: str) -> Any:
    """The value at a dotted path (a number indexes a list; a key after a list of mappings takes it from
    each that has it, as SQuAD's `answers.text` and KILT's `output.answer`, whose provenance-only outputs
    have none; a null is no value, as for a record's own key), or MISSING (also when none of them has it)."""
    value = record
    for part in path.split("."):
        if isinstance(value, dict):
            value = value.get(part, MISSING)
        elif isinstance(value, (list, tuple)) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, (list, tuple)) and all(isinstance(item, dict) for item in value):
            taken = [item[part] for item in value if item.get(part) is not None]
            value = taken if taken or not value else MISSING
        else:
            return MISSING
        if value is MISSING:
            return MISSING
    return value


class Mapper:
    """Applies one task's field mapping to records, each named in messages by its `RecordPlace`."""

    def __init__(self, fields: FieldsSpec, kinds: Mapping[str, Any] | None = None) -> None:
        self.fields = fields
        self.kinds = dict(kinds or {})  # the registered gold kinds the fields map (name -> GoldKind)

    def fail(self, place: RecordPlace, ref: FieldRef, problem: str) -> FieldError:
        return FieldError(place, ref, problem)

    def value(self, record: Record, ref: FieldRef, place: RecordPlace, required: bool = True) -> Any:
        if ref.combine == "first" and len(ref.paths) == 1 and "." not in ref.paths[0]:  # most fields: one key
            found = [value] if (value := record.get(ref.paths[0])) is not None else []
        else:
            found = [v for v in (lookup(record, path) for path in ref.paths) if v is not MISSING and v is not None]
        if not found:
            if required and not ref.optional:
                if len(ref.paths) == 1 and lookup(record, ref.paths[0]) is None:
                    raise self.fail(place, ref, "null where a value is required")
                also = f"; also looked for {', '.join(ref.paths[1:])}" if len(ref.paths) > 1 else ""
                raise self.fail(place, ref, f"missing field{also}")
            return MISSING
        if ref.list is not None:
            found = [self.unlisted(value, ref, place) for value in found]
        if ref.combine == "first":
            return found[0]
        joined: list[Any] = []
        for value in found:
            joined.extend(value if isinstance(value, list) else [value])
        return joined

    # --- the example --------------------------------------------------------------------------------
    def example(self, record: Any, place: RecordPlace) -> Example:
        if not isinstance(record, dict):
            raise place.error(f"expected a record (a mapping), got {type(record).__name__}")
        fields = self.fields
        question = self.value(record, fields.question, place)
        if not isinstance(question, str):
            raise self.fail(place, fields.question, f"expected str, got {type(question).__name__}")
        raw_id = self.value(record, fields.id, place, required=False)
        example_id = str(place.index) if raw_id is MISSING else self.id_text(raw_id, place)
        meta = {**self.optional(record, fields.slices, place), **self.optional(record, fields.meta, place)}
        return Example(
            id=example_id,
            question=question,
            gold=self.gold(record, place),
            docs=self.documents(record, place, example_id),
            meta=meta,
            extras=self.inputs(record, place),
            index=place.index,
        )

    def unlisted(self, value: Any, ref: FieldRef, place: RecordPlace) -> Any:
        """A list written as text (`list: json`: a JSON list, or Python's repr of one as pandas writes a list
        column to CSV; `list: SEP`: items separated by SEP) as the list; a value that is a list already as it is."""
        if not isinstance(value, str):
            return value
        if ref.list != "json":
            return [item.strip() for item in value.split(ref.list)]
        items = listed_text(value)
        if items is None:
            raise self.fail(place, ref, f"expected a list written as JSON text (list: json), got {value[:40]!r}")
        return items

    def id_text(self, value: Any, place: RecordPlace) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or value == "":
            got = "an empty string" if value == "" else kind(value)
            raise self.fail(place, self.fields.id, f"expected an id (a string or a number), got {got}")
        return self.scalar_text(value, self.fields.id, place)

    def scalar_text(self, value: str | int | float, ref: FieldRef, place: RecordPlace) -> str:
        """A string as it is; a number as its decimal text, 1.0 as 1 (JSON's numbers 1.0 and 1 are one
        number, and a column with a null is floats in Parquet and pandas); NaN and infinity refused."""
        if isinstance(value, float):
            if not math.isfinite(value):
                raise self.fail(place, ref, f"expected a string or a number, got {value} (a null in a number column?)")
            return str(int(value)) if value.is_integer() else repr(value)
        return str(value)

    def inputs(self, record: Record, place: RecordPlace) -> dict[str, object]:
        """The prompt's inputs: each required (the template shows it), None where optional and missing."""
        out = {}
        for name, ref in self.fields.inputs.items():
            value = self.value(record, ref, place)
            out[name] = None if value is MISSING else value
        return out

    def optional(self, record: Record, refs: Mapping[str, FieldRef], place: RecordPlace) -> dict[str, object]:
        out = {}
        for name, ref in refs.items():
            value = self.value(record, ref, place, required=False)
            if value is not MISSING:
                out[name] = value
        return out

    # --- gold -------------------------------------------------------------------------------------------
    def gold(self, record: Record, place: RecordPlace) -> dict[str, object]:
        gold: dict[str, object] = {}
        for gold_kind, ref in self.fields.gold.items():
            if gold_kind in self.kinds:
                gold.update(self.kinds[gold_kind].gold(GoldReader(self, record, ref, place)))
                continue
            if isinstance(ref, dict):
                gold.update(getattr(self, gold_kind)(record, ref, place))
                continue
            value = self.value(record, ref, place)
            if value is not MISSING:
                gold.update(getattr(self, gold_kind)(value, ref, place))
        gold.update(self.optional(record, self.fields.extra_gold, place))
        return gold

    def strings(
        self, value: Any, ref: FieldRef, place: RecordPlace, what: str = "a string or a list of strings"
    ) -> list[str]:
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, bool) or not isinstance(item, (str, int, float)):
                held = f"a list holding {kind(item)}" if item is not value else kind(value)
                hint = (
                    f"; name the key that holds it, e.g. '{ref.paths[0]}.{next(iter(item))}'"
                    if item and isinstance(item, dict)
                    else ""
                )
                raise self.fail(place, ref, f"expected {what}, got {held}{hint}")
        return [self.scalar_text(item, ref, place) for item in items]

    def answers(self, value: Any, ref: FieldRef, place: RecordPlace) -> GoldPart:
        """The answer texts, as the data gives them: an empty list or an empty string stays (Self-RAG's
        `match` scores [""] 1 and [] 0: tests/systems/selfrag/test_selfrag_parity.py); a list of strings written as text
        (`["a", "b"]` in a CSV value) is refused unless the path declares `list`."""
        listed = listed_text(value) if isinstance(value, str) else None
        if listed and all(isinstance(item, str) for item in listed):
            raise self.fail(
                place,
                ref,
                f"the text {value[:40]!r} is a list written as text; declare the path "
                f"{{path: {ref.paths[0]}, list: json}}",
            )
        return {"answers": self.strings(value, ref, place)}

    def label(self, value: Any, ref: FieldRef, place: RecordPlace) -> GoldPart:
        if isinstance(value, (list, dict)) or (isinstance(value, float) and not math.isfinite(value)):
            raise self.fail(place, ref, f"expected a single label, got {kind(value) if value == value else 'NaN'}")
        return {"label": value}

    def claims(self, value: Any, ref: FieldRef, place: RecordPlace) -> GoldPart:
        return {"claims": self.strings(value, ref, place)}

    def long_answer(self, value: Any, ref: FieldRef, place: RecordPlace) -> GoldPart:
        if isinstance(value, list):
            return {"long_answers": self.strings(value, ref, place)}
        return {"answer": self.strings(value, ref, place, "a string")[0]}

    def qa_pairs(self, value: Any, ref: FieldRef, place: RecordPlace) -> GoldPart:
        if not isinstance(value, list) or not all(
            isinstance(p, dict) and isinstance(p.get("short_answers"), list) for p in value
        ):
            raise self.fail(place, ref, "expected a list of {question, short_answers: [...]} pairs")
        return {"qa_pairs": value}

    def answer_lists(self, value: Any, ref: FieldRef, place: RecordPlace) -> GoldPart:
        if not isinstance(value, list) or not all(
            isinstance(a, list) and all(isinstance(x, str) for x in a) for a in value
        ):
            raise self.fail(place, ref, "expected a list of alias lists (lists of strings)")
        return {"answers": value}

    def choices(self, record: Record, refs: Mapping[str, FieldRef], place: RecordPlace) -> GoldPart:
        """The choices: texts and labels from their own lists, or (`texts` a mapping, MIRAGE's `options`
        {"A": ..., "B": ...}) labels and texts from the mapping, in label order as MedRAG lists them."""
        value = self.value(record, refs["texts"], place)
        if isinstance(value, dict):
            if "labels" in refs:
                raise self.fail(
                    place,
                    refs["labels"],
                    "the choice texts are a mapping of label -> text, which gives the labels: leave labels out",
                )
            labels = self.strings(sorted(value), refs["texts"], place, "a mapping of label -> text")
            texts = self.strings(
                [value[label] for label in sorted(value)], refs["texts"], place, "a mapping of label -> text"
            )
        else:
            texts = self.strings(value, refs["texts"], place, "a list of choice texts")
            labels = (
                self.strings(self.value(record, refs["labels"], place), refs["labels"], place, "a list of labels")
                if "labels" in refs
                else list(string.ascii_uppercase[: len(texts)])
            )
        if len(labels) != len(texts):
            raise self.fail(place, refs["labels"], f"{len(labels)} labels for {len(texts)} choice texts")
        out: GoldPart = {}
        if "answer_key" in refs:
            out["answer_key"] = self.strings(
                self.value(record, refs["answer_key"], place), refs["answer_key"], place, "a label"
            )[0]
        elif "answer_index" in refs:
            position = self.value(record, refs["answer_index"], place)
            if isinstance(position, float) and position.is_integer():  # a Parquet/pandas column with a null
                position = int(position)
            if not isinstance(position, int) or isinstance(position, bool) or not 0 <= position < len(labels):
                raise self.fail(
                    place, refs["answer_index"], f"expected a choice index 0-{len(labels) - 1}, got {position!r}"
                )
            out["answer_key"] = labels[position]
        out["choices"] = {"label": labels, "text": texts}
        return out

    # --- documents --------------------------------------------------------------------------------------
    def documents(self, record: Record, place: RecordPlace, example_id: str) -> list[Document]:
        """The record's documents; one without an id of its own (HotpotQA's and 2Wiki's have none) gets
        `<example id>:<position in the record's list, from 0>`, the same in every run and unique in it, so
        that traces, replays and metrics by id can name it."""
        spec = self.fields.documents
        if spec is None:
            return []
        items = self.value(record, spec.source, place)
        if items is MISSING:
            return []
        try:
            docs = _documents(items, spec)
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise self.fail(place, spec.source, f"bad document ({exc}); documents are {spec.shape}") from exc
        for position, doc in enumerate(docs):
            if doc.id is None:
                doc.id = f"{example_id}:{position}"
        return docs


def _documents(items: Any, spec: DocumentsSpec) -> list[Document]:
    if spec.shape == "columns":
        if not isinstance(items, dict):
            raise TypeError(f"expected a mapping of parallel lists, got {kind(items)}")
        titles, texts = items[spec.title], items[spec.text]
        if len(titles) != len(texts):
            raise ValueError(f"{len(titles)} titles for {len(texts)} texts")
        return [Document(id=None, title=str(title), text=_text(text, spec.join)) for title, text in zip(titles, texts)]
    if not isinstance(items, list):
        raise TypeError(f"expected a list, got {kind(items)}")
    if spec.shape in ("pairs", "sentences"):
        out = []
        for item in items:
            if not isinstance(item, (list, tuple)) or len(item) != 2:
                raise ValueError(f"expected [title, text] pairs, got {kind(item)}")
            out.append(Document(id=None, title=str(item[0]), text=_text(item[1], spec.join)))
        return out
    return [_from_dict(item, spec) for item in items]


def _from_dict(item: Any, spec: DocumentsSpec) -> Document:
    if not isinstance(item, dict):
        raise TypeError(f"expected a mapping, got {kind(item)}")
    score = item.get(spec.score)
    return Document(
        id=str(item[spec.id]) if item.get(spec.id) is not None else None,
        title=str(item.get(spec.title) or ""),
        text=_text(item.get(spec.text) or "", spec.join),
        score=float(score) if score not in (None, "") else None,
        metadata={key: item[key] for key in spec.metadata if key in item},
    )


def _text(value: Any, join: str) -> str:
    if isinstance(value, list):
        return join.join(str(part) for part in value)
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {kind(value)}")
    return value


class GoldReader:
    """The paths one record's gold kind maps, read as the core reads its own kinds (a bad value is a bad
    record naming the path)."""

    def __init__(self, mapper: Mapper, record: Record, refs: Mapping[str, FieldRef], place: RecordPlace) -> None:
        self.mapper, self.record, self.refs, self.place = mapper, record, refs, place

    def has(self, part: str) -> bool:
        """The task file maps `part`."""
        return part in self.refs

    def text(self, part: str) -> str:
        """One text (a string, or a number as its decimal text); missing: a bad record."""
        ref = self.refs[part]
        return self.mapper.strings(self.mapper.value(self.record, ref, self.place), ref, self.place, "a string")[0]

    def texts(self, part: str) -> list[str] | None:
        """A string or a list of them, as texts; None when the record has no value there."""
        ref = self.refs[part]
        value = self.mapper.value(self.record, ref, self.place, required=False)
        return None if value is MISSING else self.mapper.strings(value, ref, self.place)

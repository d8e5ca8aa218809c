"""The shapes of what a run folder holds, as ragbench writes them: what its readers (--resume, the results,
rescore, compare, the viewer) may take for granted. A sample line of another shape (written by another
tool or version, or edited by hand: a `prediction` that is a string, a `trace` that is an object) is no
sample record: it is passed over like a line a kill cut short (named, counted, and its example runs again
on --resume), never a traceback in a reader; `compare`, `rescore` and the viewer first read an older
version's shapes as the current ones (`in_current_shape`). A run.json of another shape is refused in one line. A field
may be missing (a file of an older ragbench): readers take its absence as its empty value."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:  # the JSON types only: ragbench._types is a layer beside this one
    from .._values.json_values import JsonObject, JsonValue

SAMPLE_SCHEMA_VERSION = 2  # written on every sample line (`schema_version`); docs/outputs.md
# the versions this ragbench reads; 1: a line without `schema_version` (before it was written); 3: a line whose turns
# are in the run's turns file (shared_turns.py), read back as a version 2 line is
SAMPLE_VERSIONS = (1, 2, 3)
NONE = type(None)
TEXT = (str, NONE)
FIELDS: dict[str, tuple[type, ...]] = {
    "error": TEXT,
    "bad_record": (bool,),
    "example_sha256": TEXT,
    "question": TEXT,
    "gold": (dict, NONE),
    "meta": (dict, NONE),
    "turns": (list, NONE),
    "images": (list,),
    "prediction": (dict,),
    "trace": (list,),
    "judge_trace": (list,),
    "earlier_trace": (list,),
    "scores": (dict,),
    "score_errors": (dict,),
    "score_tracebacks": (dict,),
    "counted": (dict,),
    "judge_ratings": (dict,),
    "infrastructure_failures": (list,),
    "gold_references": (list,),
    "attempt_cost": (dict,),
}
PREDICTION_FIELDS: dict[str, tuple[type, ...]] = {
    "answer": TEXT,
    "raw_output": TEXT,
    "citations": (list,),
    "docs": (list,),
    "extras": (dict,),
}
STEP_FIELDS: dict[str, tuple[type, ...]] = {
    "kind": TEXT,
    "name": TEXT,
    "request": (dict, NONE),
    "response": (dict, NONE),
    "error": TEXT,
}
META_FIELDS: dict[str, type] = {
    "config": dict,
    "identity": dict,
    "config_hash": str,
    "data": dict,
    "finished": bool,
    "attempts": list,
    "records": dict,
}
TRACES = ("trace", "judge_trace", "earlier_trace")  # a sample's lists of steps
KINDS = {dict: "an object", list: "a list", str: "a string", bool: "true or false", NONE: "null"}


def sample_problem(record: JsonObject) -> str | None:
    """What in `record` is not of the shape ragbench writes (the first found), or None."""
    return next(_problems(record), None)


_EXACT = {field: frozenset(types) for field, types in FIELDS.items()}
_PREDICTION_EXACT = {field: frozenset(types) for field, types in PREDICTION_FIELDS.items()}
_STEP_EXACT = {field: frozenset(types) for field, types in STEP_FIELDS.items()}


def plainly_current(record: JsonObject) -> bool:
    """Whether a parsed line (of exact JSON types, as a parser makes them) is plainly a sample of the current
    shape: an integer `index`, and every field of the type it has here, so that `sample_problem` finds nothing
    and `in_current_shape` changes nothing a reader uses. Quicker than them; False only says: check it fully."""
    index, version = record.get("index"), record.get("schema_version", 1)
    if type(index) is not int or type(version) is not int or version not in SAMPLE_VERSIONS:
        return False
    if type(record.get("id")) in (dict, list) or not _exact(record, _EXACT):
        return False
    prediction = _object(record.get("prediction"))  # an object: `_exact` checked it
    if not _exact(prediction, _PREDICTION_EXACT) or any(type(doc) is not dict for doc in _list(prediction.get("docs"))):
        return False
    for field in TRACES:
        if not all(isinstance(step, dict) and _exact(step, _STEP_EXACT) for step in _list(record.get(field))):
            return False
    return not record.get("counted") or sample_problem(record) is None


def _exact(record: JsonObject, types: dict[str, frozenset[type]]) -> bool:
    for field, value in record.items():
        kinds = types.get(field)
        if kinds is not None and type(value) not in kinds:
            return False
    return True


def _object(value: JsonValue) -> JsonObject:
    """A field that is an object, or absent or null: what its shape check let through."""
    return value if isinstance(value, dict) else {}


def _list(value: JsonValue) -> list[JsonValue]:
    """A field that is a list, or absent or null: what its shape check let through."""
    return value if isinstance(value, list) else []


def _problems(record: JsonObject) -> Iterator[str]:
    version = record.get("schema_version", 1)
    if type(version) is not int or version not in SAMPLE_VERSIONS:
        yield (
            f"`schema_version` {version!r}: a sample of another ragbench (this one reads versions "
            f"{', '.join(map(str, SAMPLE_VERSIONS))}); read it with the ragbench that wrote it"
        )
        return
    if isinstance(record.get("id"), (dict, list)):
        yield f"`id` is {_kind(record['id'])}, not a string or number"
    yield from _field_problems(record, FIELDS, "")
    prediction = _object(record.get("prediction"))
    yield from _field_problems(prediction, PREDICTION_FIELDS, "prediction.")
    yield from _item_problems(_list(prediction.get("docs")), "prediction.docs")
    for field in TRACES:
        steps = _list(record.get(field))
        yield from _item_problems(steps, field)
        for n, step in enumerate(steps):
            yield from _field_problems(_object(step), STEP_FIELDS, f"{field}[{n}].")
    for metric, events in _object(record.get("counted")).items():
        if not isinstance(events, dict) or not all(_number(n) for n in events.values()):
            yield f"`counted.{metric}` is {_kind(events)}, not an object of counts"


def _field_problems(record: JsonObject, shapes: dict[str, tuple[type, ...]], prefix: str) -> Iterator[str]:
    for field, types in shapes.items():
        if field in record and not isinstance(record[field], types):
            yield f"`{prefix}{field}` is {_kind(record[field])}, not {' or '.join(KINDS[t] for t in types)}"


def _item_problems(items: list[JsonValue], field: str) -> Iterator[str]:
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            yield f"`{field}[{n}]` is {_kind(item)}, not an object"


def _kind(value: object) -> str:
    return next((name for kind, name in KINDS.items() if type(value) is kind), "a number")


def _number(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def meta_problem(meta: Mapping[str, object]) -> str | None:
    """What in run.json's `meta` is not of the shape ragbench writes (the first found), or None."""
    wrong = next(
        (field for field, kind in META_FIELDS.items() if field in meta and not isinstance(meta[field], kind)), None
    )
    if wrong is not None:
        return f"its `{wrong}` is {_kind(meta[wrong])}"
    attempts = meta.get("attempts")
    for n, attempt in enumerate(attempts if isinstance(attempts, list) else []):
        if not isinstance(attempt, dict) or not all(
            is_count(value) for name, value in attempt.items() if name not in ("id", "interrupted")
        ):
            return f"its `attempts[{n}]` is not an attempt's cost (an object of counts)"
    records = meta.get("records")
    records = records if isinstance(records, dict) else {}
    task = next((task for task, count in records.items() if not (is_count(count) and isinstance(count, int))), None)
    return None if task is None else f"its `records.{task}` is not a count of records"


def is_count(value: object) -> TypeGuard[float]:
    """Whether `value` is a count or a measure (a cost's figure): a finite number, not negative, not a bool."""
    return _number(value) and 0 <= value < float("inf")


def in_current_shape(record: JsonObject) -> JsonObject:
    """A sample record with the fields the readers use in the current shape: `prediction` an object (an
    older ragbench's string is its answer), `scores`, `score_errors` and `meta` objects, `trace` a list
    (what `compare`, `rescore` and the viewer read; --resume runs a line of another shape again)."""
    out = dict(record)
    prediction = record.get("prediction")
    if "prediction" in record and not isinstance(prediction, dict):
        out["prediction"] = {"answer": prediction if isinstance(prediction, str) else ""}
    for name in ("scores", "score_errors"):
        if name in record and not isinstance(record[name], dict):
            out[name] = {}
    if "meta" in record and not isinstance(record["meta"], dict):
        out["meta"] = {}
    if "trace" in record and not isinstance(record["trace"], list):
        out["trace"] = []
    return out

"""The typed shape of results.json (`Results`), its `schema_version`, and the JSON schema made from it.

The sections are a dataclass's fields; what a section holds per task and per key is a `TypedDict` (a dict
at run time: readers index it as the file reads). `Results.to_dict` is what results.json holds, in the
order it is written; `Results.from_dict` takes a results.json's object in the current shape
(ragbench._reports.results.file.normalized_results brings an older one to it). A key this version does
not name is kept as it was (`other`). `json_schema()` is the JSON schema docs/outputs.md shows.

Versions: 1 is results.json as ragbench wrote it before `schema_version` (the key is absent); 2 adds
`schema_version`. A later version's file is refused (ragbench._reports.results.file.NewerResults): its
sections may mean other things.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any, TypedDict, Union, cast

from ..._cost.cost_schema import Budget, Cost, CostSections, Efficiency, RepeatedWork, TokenCost
from ..._values.json_values import JsonObject, JsonValue
from .judging_schema import KeyCheck

SCHEMA_VERSION = 2
VERSIONS = (1, 2)  # the versions this ragbench reads; 1: no `schema_version` key


class PpiCell(TypedDict):
    """A judged key's (or slice's) prediction-powered estimate beside its value (ragbench._reports.judging.
    human_agreement): value, 95% interval, the examples labelled and not, and the labels it is worth."""

    value: float
    ci95: list[float]
    n_labelled: int
    n_unlabelled: int
    effective_n: float | None


class _Cell(TypedDict):
    value: float | None
    ci95: list[float] | None
    n: int


class Cell(_Cell, total=False):
    """A slice's value of a key, or a key's value over the answered examples alone (`answered`); a judged
    key's slice with human labels has its prediction-powered estimate (`ppi`)."""

    error: str
    ppi: PpiCell


class _KeyDetails(_Cell):
    n_none: int
    n_errors: int
    higher_is_better: bool | None


class KeyDetails(_KeyDetails, total=False):
    """What `details` says of a metric key: its value, 95% interval and counts, and where they apply its
    range, its slices' cells, why it has no value (`error`), a corpus key's mark, for a task that
    counts missing as wrong how many were scored 0 and the value over the answered examples, and for a judged
    key with human labels its prediction-powered estimate and interval (`ppi`,
    ragbench._reports.judging.human_agreement)."""

    range: list[float | None]  # an end null where the range is open there
    slices: dict[str, dict[str, Cell]]
    error: str
    corpus: bool
    counted_wrong: int
    answered: Cell
    ppi: PpiCell


def reported_errors(report: JsonObject | None) -> list[JsonValue]:
    """The problems a system's report (`Results.system_reports`, a system's own object) lists under `errors`."""
    errors = (report or {}).get("errors")
    return errors if isinstance(errors, list) else []


def reported_notes(report: JsonObject | None) -> list[JsonValue]:
    """What a system's report says under `notes`: what was read other than as given, not a failure (the recorded
    system's: what a task's own tools would say of a folder of outputs)."""
    notes = (report or {}).get("notes")
    return notes if isinstance(notes, list) else []


def direction(higher_is_better: bool | None) -> str:
    """How a table says which way a key (`KeyDetails.higher_is_better`) is better."""
    return {True: "higher", False: "lower", None: "neither"}[higher_is_better]


class Counts(TypedDict):
    """A task's records and what became of them."""

    records: int
    scored: int
    failed: int
    bad_records: int
    missing: int
    metric_failures: int


class _Failure(TypedDict):
    cause: str
    count: int
    ids: list[str]


class Failure(_Failure, total=False):
    """Failed records of one cause (ids listed up to a limit), with an example message and traceback; a
    metric's failures name it (a corpus metric's are marked, an aggregate's list its keys)."""

    example: str | None
    traceback: str | None
    metric: str
    corpus: bool
    keys: list[str]


class Cause(TypedDict):
    cause: str
    count: int


class InfrastructureFailures(TypedDict):
    """Judge and tool calls that failed and were folded into a score as upstream does."""

    examples: int
    calls: int
    causes: list[Cause]


class TokenLimit(TypedDict):
    """The system's calls that stopped at their token limit, by step, in how many examples."""

    examples: int
    calls: int
    steps: dict[str, int]


class _SamplingUsed(TypedDict):
    """One setting with which a kind of the system's LLM calls was decoded, as sent
    (ragbench._reports.results.sampling_used): how many calls used it; temperature and top_p read "the server's default"
    where an API engine left them to it."""

    calls: int
    max_tokens: int | None
    temperature: float | str | None
    top_p: float | str | None
    stop: list[str] | None
    n: int | None
    keep_stop: bool | None
    skip_special_tokens: bool | None
    json_mode: bool | None
    lora: str | None


class SamplingUsed(_SamplingUsed, total=False):
    frequency_penalty: float  # only where the calls set them (Sampling.frequency_penalty)
    presence_penalty: float


class Counted(TypedDict):
    count: int
    examples: int
    meaning: str


class _JudgeAgreement(TypedDict):
    raters: list[str]
    averaged: int
    examples: int
    percent_agreement: float | None
    cohen_kappa: float | None
    krippendorff_alpha: float | None
    flipped: float | None
    missing_ratings: int
    failed_ratings: int
    failure: str | None
    ci95_judged: list[float] | None


class JudgeAgreement(_JudgeAgreement, total=False):
    """One judged key: how far the raters that scored its examples agree (`--judge-repeats`, several judges), as
    ragbench._reports.judging.judge_agreement sums them up; or, `measured` false, that it was judged once, every
    statistic null, and `measure_with`, the command that measures it (RUN: the run folder). Absent `measured` (results
    written before it): measured."""

    measured: bool
    measure_with: str


class JudgeSwap(TypedDict):
    """One judged key of a rescoring with other judges (`rescore --judge`), against the run's own judges
    (ragbench._reports.judging.judge_swap)."""

    judge: str
    against: str
    examples: int
    percent_agreement: float | None
    cohen_kappa: float | None
    krippendorff_alpha: float | None
    flipped: float | None
    before: float | None
    after: float | None
    delta: float | None
    delta_ci95: list[float] | None


class Adherence(TypedDict):
    """How often the model's outputs followed the format a system parses."""

    format: str
    of: int
    followed: int
    fix: str


class TaskSections(CostSections, total=False):
    """One task's part of results.json, as its samples' tallies make it (ragbench._reports.aggregation.task_scores,
    then the run's: ragbench._run.assemble.scored_task): each section's entry of the task, by section (the cost
    room's, `CostSections`, among them)."""

    results: dict[str, float | None]
    details: dict[str, KeyDetails]
    counts: Counts
    failures: list[Failure]
    infrastructure_failures: InfrastructureFailures
    token_limit: TokenLimit
    counted: dict[str, dict[str, Counted]]
    judge_agreement: dict[str, JudgeAgreement]
    data_sha256: str
    sampling: dict[str, list[SamplingUsed]]
    human_agreement: dict[str, KeyCheck]


@dataclass(kw_only=True)
class Results:
    """results.json, its sections in the order they are written. Per-task sections are keyed by task name;
    `other` holds the keys of the file that this version does not name (written back as they were)."""

    schema_version: int = SCHEMA_VERSION
    results: dict[str, dict[str, float | None]]
    details: dict[str, dict[str, KeyDetails]]
    counts: dict[str, Counts]
    complete: bool
    failures: dict[str, list[Failure]] | None = None
    infrastructure_failures: dict[str, InfrastructureFailures] | None = None
    token_limit: dict[str, TokenLimit] | None = None
    counted: dict[str, dict[str, dict[str, Counted]]] | None = None
    human_agreement: dict[str, dict[str, KeyCheck]] | None = None
    judge_agreement: dict[str, dict[str, JudgeAgreement]] | None = None
    judge_swap: dict[str, dict[str, JudgeSwap]] | None = None
    data_sha256: dict[str, str] | None = None
    budget: dict[str, Budget] | None = None
    repeated_work: dict[str, RepeatedWork] | None = None
    sampling: dict[str, dict[str, list[SamplingUsed]]] | None = None
    format_adherence: dict[str, list[Adherence]] | None = None
    checkpoint_repairs: dict[str, list[str]] | None = None
    seed_policy: str | None = None
    system_reports: dict[str, JsonObject] | None = None
    system_stats: dict[str, JsonObject] | None = None
    cost: Cost
    model_cost: dict[str, TokenCost] | None = None
    judge_cost: dict[str, dict[str, TokenCost]] | None = None
    efficiency: dict[str, Efficiency] | None = None
    config: JsonObject
    rescored_from: str | None = None
    versions: JsonObject
    date: str | None = None
    reproduction: JsonObject | None = None
    other: JsonObject = field(default_factory=dict)

    def to_dict(self) -> JsonObject:
        """results.json's object: the sections this results has (an optional one that is None is left out),
        then `other`'s keys."""
        out = {item.name: getattr(self, item.name) for item in _sections()}
        return {**{name: value for name, value in out.items() if value is not None}, **self.other}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Results:
        """The `Results` of a results.json's object in the current shape (its required sections there, as
        ragbench._reports.results.file.normalized_results checked them: typed from here on); `schema_version`
        absent: 1."""
        named = {item.name for item in _sections()}
        return cls(
            **{
                **{key: value for key, value in data.items() if key in named},
                "schema_version": data.get("schema_version", 1),
            },
            other={key: value for key, value in data.items() if key not in named},
        )


def _sections() -> list[dataclasses.Field[Any]]:
    return [item for item in dataclasses.fields(Results) if item.name != "other"]


def _required(item: dataclasses.Field[Any]) -> bool:
    return item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING


def json_schema() -> JsonObject:
    """The JSON schema (draft 2020-12) of results.json, made from `Results` and the types of its sections."""
    hints = typing.get_type_hints(Results, localns=_JSON_TYPES)
    properties: JsonObject = {item.name: _schema_of(hints[item.name]) for item in _sections()}
    properties["schema_version"] = {"type": "integer", "enum": list(VERSIONS)}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "ragbench results.json",
        "type": "object",
        "properties": properties,
        "required": [item.name for item in _sections() if _required(item)],
        "additionalProperties": True,
    }


# `JsonValue` and `JsonObject` as the schema reads them: any value, an object of any values (at run time the aliases
# are the text of their types, which `get_type_hints` cannot read)
_JSON_TYPES = {"JsonValue": Any, "JsonObject": dict[str, Any]}


def _schema_of(kind: object) -> JsonObject:
    """The JSON schema of a Python type: a TypedDict an object of its keys, dict[str, X] an object of X's,
    list[X] an array, X | None either, Any anything."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is Any:
        return {}
    if origin in (Union, types.UnionType):
        options: list[JsonValue] = [_schema_of(arg) for arg in args if arg is not type(None)]
        nullable = type(None) in args
        only = options[0] if len(options) == 1 and isinstance(options[0], dict) and set(options[0]) == {"type"} else {}
        if isinstance(named := only.get("type"), str):
            return {"type": [named, "null"] if nullable else named}
        return {"anyOf": options + ([{"type": "null"}] if nullable else [])}
    if origin is dict:
        return {"type": "object", "additionalProperties": _schema_of(args[1])}
    if origin is list:
        return {"type": "array", "items": _schema_of(args[0])}
    if typing.is_typeddict(kind):
        hints = typing.get_type_hints(kind, localns=_JSON_TYPES)
        properties: JsonObject = {name: _schema_of(hint) for name, hint in hints.items()}
        required: list[JsonValue] = sorted(vars(kind)["__required_keys__"])
        return {"type": "object", "properties": properties, "required": required}
    return {"type": {bool: "boolean", int: "integer", float: "number", str: "string"}[cast(type, kind)]}


def schema_text(value: Any = None, depth: int = 0) -> str:
    """`json_schema()` as docs/outputs.md shows it: JSON indented by two, a part that fits in 100 columns on
    one line."""
    value = json_schema() if value is None else value
    flat = json.dumps(value)
    if len(flat) + 2 * depth <= 100 or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = "  " * (depth + 1)
    items = (
        [f"{pad}{json.dumps(key)}: {schema_text(inner, depth + 1)}" for key, inner in value.items()]
        if isinstance(value, dict)
        else [pad + schema_text(inner, depth + 1) for inner in value]
    )
    ends = "{}" if isinstance(value, dict) else "[]"
    return ends[0] + "\n" + ",\n".join(items) + "\n" + "  " * depth + ends[1]


if __name__ == "__main__":  # python -m ragbench._reports.results.schema: the schema docs/outputs.md shows
    print(schema_text())

"""The shapes of the viewer's page data: what /api/<key> answers and the static export writes, as the browser
(static/app.js) reads it. results.json's sections keep their own types (ragbench._reports.results.schema); what a
run or a plugin recorded in a shape of its own (run.json's options, a system's trace outline, a task's matrix) is
JSON (`JsonValue`), read by narrowing. A TypedDict is a dict at run time: the pages stay the dicts they were, their
keys in the order they are built."""

from __future__ import annotations

from typing import TypeAlias, TypedDict

from .._cost.cost_schema import Budget, Cost
from .._reports.results.schema import (
    Cell,
    Counts,
    Failure,
    InfrastructureFailures,
    PpiCell,
    TokenLimit,
)
from .._reports.results.slice_labels import SliceValue
from .._values.json_values import JsonObject, JsonValue


class NoSection(TypedDict):
    """`{}`: a section of results.json that a run not finished has not."""


class _RowTexts(TypedDict):
    id: str | None
    question: str
    answer: str
    gold: str
    scores: dict[str, float | None]
    error: str | None
    score_errors: dict[str, str]


class TableRow(_RowTexts):
    """An example's row of the examples table, its texts clipped (ragbench._view.runs.table_row), with what its
    slice labels are made of (None: a bad record, in no slice)."""

    slice_values: dict[str, SliceValue] | None


class IndexedRow(TableRow):
    """A row of a sample file's index: the row and its place in the table."""

    n: int


class ShownRow(_RowTexts):
    """A row as the Examples page lists it: its place and its slice label per field."""

    n: int
    slices: dict[str, str]


class BadLines(TypedDict):
    """How many lines of a sample file are no sample record, and the first ones named (file, line, why)."""

    count: int
    lines: list[str]


class RunStatus(TypedDict):
    """Where a run stands (`RunFolder.status`): its state and, while running, who holds it."""

    state: str
    holder: str | None


class _KeyRow(TypedDict):
    value: float | None
    ci95: list[float] | None
    n: int | None
    n_none: int | None
    n_errors: int | None
    higher_is_better: bool | None
    corpus: bool | None
    error: str | None


class KeyRow(_KeyRow, total=False):
    """A metric key as the run's table shows it: its value, interval and counts, and where there are any, its
    prediction-powered estimate, its judges' agreement and its tokens and dollars per correct answer."""

    ppi: PpiCell
    judge: str
    cost: tuple[str, str]


class LiveCounts(TypedDict):
    """A task's records of a run not finished, as its samples so far count them."""

    records: int
    scored: int
    failed: int


class TaskSummary(TypedDict):
    metrics: dict[str, KeyRow]
    counts: Counts | LiveCounts | None


class FinishedSummary(TypedDict):
    """What a Runs page row shows of results.json (null and empty before the run is finished)."""

    date: str | None
    complete: bool | None
    failures: dict[str, list[Failure]]
    infrastructure_failures: dict[str, InfrastructureFailures]
    token_limit: dict[str, TokenLimit]
    cost: Cost | NoSection


class RunSummary(RunStatus, FinishedSummary):
    """A row of the Runs page; `system`, `model` and `judges` as run.json holds them."""

    rid: str
    name: str
    path: str
    system: JsonValue
    model: JsonValue
    judges: JsonValue
    finished: bool
    tasks: dict[str, TaskSummary]


class RunsPage(TypedDict):
    runs: list[RunSummary]
    comparable: dict[str, list[str]]  # task -> the runs that have it, where two or more do


class RunPage(RunSummary):
    """A run's page: its summary, the options that differ from the defaults, the slice tables (task -> key ->
    field -> label -> cell) and the console's lines by task."""

    config: JsonObject
    slices: dict[str, dict[str, dict[str, dict[str, Cell]]]]
    slice_order: dict[str, dict[str, list[str]]]
    plot_keys: dict[str, JsonValue]
    matrix: dict[str, JsonValue]
    system_stats: dict[str, JsonObject]
    system_reports: dict[str, JsonObject]
    budget: dict[str, Budget]
    budget_quantities: dict[str, str]
    judging: dict[str, list[str]]
    efficiency: dict[str, list[str]]
    system_warnings: dict[str, list[str]]
    judge_notes: dict[str, list[str]]
    bad_lines: dict[str, BadLines]


class RowsPage(TypedDict):
    """One chunk of a task's examples table."""

    rid: str
    task: str
    total: int
    chunk: int
    chunk_size: int
    chunks: int
    metrics: list[str]
    higher_is_better: dict[str, bool | None]
    slice_labels: dict[str, list[str]]
    finished: bool
    state: str
    rows: list[ShownRow]


class DocumentView(TypedDict):
    """A document as a page lists it, numbered from 1, its text clipped; a page or picture retrieved as the
    passage (ViDoRe's pages) with its image as the record holds it and the run's thumbnail of it."""

    number: int
    id: str | None
    title: str
    url: str | None
    score: float | None
    text: str
    image: ImageView | None


class GoldPage(TypedDict):
    """A document the gold judges relevant (a qrels grade above 0), where the example's documents hold it: its rank
    among them (None: not retrieved) and the image the run kept of it (ViDoRe's page)."""

    id: str
    grade: float
    rank: int | None
    image: ImageView | None


class CitedDocument(DocumentView):
    cited: bool


class StepView(TypedDict):
    """A trace step as the timeline shows it (ragbench._view.example.step_view)."""

    i: int
    kind: str
    name: str
    group: list[str]
    seconds: float
    cached: bool
    error: str | None
    tokens: list[int]  # prompt, completion
    prompt: str
    reply: str
    details: str
    docs: list[DocumentView]


class Reason(TypedDict):
    """What the run recorded of why a metric scored as it did: a judge's call, an NLI verdict."""

    source: str
    prompt: str
    reply: str


class ImageView(TypedDict):
    """One of an example's images: what its record holds (`Image.record`) and the run's thumbnail of it, a `data:`
    URL (None where the run kept none: a run of an older ragbench, an image PIL could not read)."""

    sha256: str
    media_type: str | None
    bytes: int | None
    source: str | None
    thumbnail: str | None


class ExampleView(TypedDict):
    """An example's page from its sample record; `outline` as the system's `trace_outline` gives it."""

    id: str | None
    question: str
    gold: JsonObject
    gold_text: str
    gold_pages: list[GoldPage]
    images: list[ImageView]
    answer: str
    output: str | None
    error: str | None
    traceback: str | None
    scores: dict[str, float | None]
    score_errors: dict[str, str]
    score_tracebacks: dict[str, str]
    infrastructure_failures: list[str]
    seconds: float | None
    citations: list[list[int]]
    docs: list[CitedDocument]
    reasons: list[Reason]
    steps: list[StepView]
    outline: list[JsonObject]
    extras: str


class ExamplePage(ExampleView):
    rid: str
    task: str
    n: int
    slices: dict[str, str]


class DisagreementRow(TypedDict):
    id: str
    question: str
    answer_a: str
    answer_b: str
    n_a: int | None  # the example's row in each run's table
    n_b: int | None


class Side(TypedDict):
    """The examples one run got right and the other wrong: how many, the first ones listed."""

    count: int
    rows: list[DisagreementRow]


class Disagreements(TypedDict):
    metric: str
    a_right: Side
    b_right: Side


class Pair(TypedDict):
    """One run compared with the first (A) on the Compare page; `rows` as `ragbench compare` makes them."""

    a: str
    b: str
    runs: str
    warnings: list[str]
    differences: list[str]
    budgets: dict[str, Budget | None]
    rows: list[JsonObject]
    p_note: str
    disagreements: list[Disagreements]


class _ComparePage(TypedDict):
    task: str
    runs: list[str]


class ComparePage(_ComparePage, total=False):
    """The Compare page of a task: the pairs of its finished runs, or why there are none (`error`), and the runs
    not finished, left out (`unfinished`)."""

    pairs: list[Pair]
    budget_quantities: dict[str, str]
    error: str
    unfinished: list[str]
    unfinished_note: str


Page: TypeAlias = RunsPage | RunPage | RowsPage | ExamplePage | ComparePage


class ErrorBody(TypedDict):
    """What the server answers where a page cannot be given."""

    error: str

"""Upstream's file of turns, the JSONL `local_evaluation.py --mode generate` writes (response.jsonl) and `--mode
evaluate --input-file` reads, as a task's data and as its predictions: `ragbench score --task crag_mm_single --data
FILE --predictions FILE` scores it as evaluate mode does.

Evaluate mode (`CRAGEvaluator.load_turn_data` + `evaluate_agent_responses`) reads every line, in the file's order,
with its own query and ground truth; it leaves no session out (`SESSIONS_TO_SKIP` is the batch iterator's, which
generation uses) and cuts no answer (generation cut them). It requires session_id, interaction_id, query,
ground_truth and agent_response, and sorts and splits the turns by turn_idx and is_ego (a file without them makes
it crash). A line that lacks one, or holds one of another type, is a bad record here; a second line of one
interaction_id too (upstream judges both; a run holds an id once). Its pictures are not in it: a turn file is scored,
not run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ragbench.api import Example, RecordError
from ragbench.api.data import JsonObject, iter_jsonl

from .metrics import EVALUATE_MODE

PARQUET_MAGIC = b"PAR1"
TEXT_FIELDS = ("session_id", "interaction_id", "query", "ground_truth", "agent_response")  # load_turn_data's
LABELS = ("domain", "query_category", "dynamism", "image_quality")  # class numbers (no names in the file)


def is_turn_file(path: Path) -> bool:
    """A file that is not Parquet (the split's file): read as upstream's JSONL of turns."""
    if not path.is_file():
        return False
    with open(path, "rb") as f:
        return f.read(len(PARQUET_MAGIC)) != PARQUET_MAGIC


def _checked(record: Mapping[str, Any], where: str, number: int) -> None:
    for name in TEXT_FIELDS:
        if not isinstance(record.get(name), str):
            what = "missing" if name not in record else f"{type(record[name]).__name__}, not a string"
            raise RecordError(where, number, f"{what} (local_evaluation.py --mode evaluate reads it)", name)
    turn, ego = record.get("turn_idx"), record.get("is_ego")
    if not isinstance(turn, int) or isinstance(turn, bool):
        raise RecordError(where, number, "missing or not an integer (evaluate mode sorts turns by it)", "turn_idx")
    if not isinstance(ego, bool):
        raise RecordError(where, number, "missing or not true/false (evaluate mode's ego table)", "is_ego")


def turn_lines(path: Path) -> Iterator[tuple[int, JsonObject | RecordError]]:
    """Each line of the file (its index), checked: its record, or why it cannot be scored."""
    seen: set[str] = set()
    where = str(path)
    for index, record in iter_jsonl(path):
        if isinstance(record, RecordError):
            yield index, record
            continue
        try:
            _checked(record, where, index + 1)
            interaction = str(record["interaction_id"])
            if interaction in seen:
                raise RecordError(where, index + 1, f"a second line of interaction {interaction!r}", "interaction_id")
        except RecordError as exc:
            yield index, exc
            continue
        seen.add(interaction)
        yield index, record


def turn_examples(path: Path) -> Iterator[Example | RecordError]:
    """The file's turns as examples, in its order: id the interaction_id, the question and gold of the line."""
    for index, record in turn_lines(path):
        if isinstance(record, RecordError):
            yield record
            continue
        labels = {field: "none" if record.get(field) is None else str(record.get(field)) for field in LABELS}
        yield Example(
            id=str(record["interaction_id"]),
            question=str(record["query"]),
            gold={"answers": [str(record["ground_truth"])]},
            meta={
                "image_source": "ego" if record["is_ego"] else "normal",
                **labels,
                "session_id": str(record["session_id"]),
                "turn": record["turn_idx"],
            },
            index=index,
        )


def turn_predictions(path: Path) -> Iterator[tuple[int, JsonObject | RecordError]]:
    """The file's answers as `ragbench score` records, each judged as read (`EVALUATE_MODE`)."""
    for index, record in turn_lines(path):
        if isinstance(record, RecordError):
            yield index, record
            continue
        answer = str(record["agent_response"])
        extras: JsonObject = {EVALUATE_MODE: True}
        yield index, {"id": str(record["interaction_id"]), "output": answer, "answer": answer, "extras": extras}

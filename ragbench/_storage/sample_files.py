"""A run's samples files, samples/<task>.jsonl: where a task's is, and reading its lines (checked, or as
`RunDir.finalize_samples` rewrote them) with the byte offset of every line."""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._errors import RecordError
from .._values.names import inside
from .files import file_there, open_file
from .jsonl import iter_jsonl, parse_json
from .run_shapes import in_current_shape, sample_problem


def sample_file(run_folder: str | Path, task: str) -> Path:
    """samples/<task>.jsonl of a run folder: a task's name that would leave samples/ is a ConfigError."""
    return inside(Path(run_folder) / "samples", f"{task}.jsonl")


def iter_samples(
    path: str | Path, errors: list[RecordError] | None = None, older_shapes: bool = False
) -> Iterator[dict[str, Any]]:
    """The complete records of a samples file, one at a time (a missing file has none); a line cut
    short by a crash is passed over, and added to `errors` when given (to be counted and reported).
    `older_shapes`: each line is brought to the current shape before its shape is checked (`in_current_shape`:
    a reader of an older version's run); --resume runs such lines again."""
    for _, record in numbered_samples(path, errors, older_shapes):
        yield record


def finalized_samples(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a samples file `RunDir.finalize_samples` rewrote, one at a time in data order: each line
    was checked as it was copied there, so here it is only parsed."""
    if file_there(path):
        with open_file(path) as lines:
            for line in lines:
                yield parse_json(line)


def numbered_samples(
    path: str | Path, errors: list[RecordError] | None = None, older_shapes: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    if not file_there(path):
        return
    for line, record in iter_jsonl(path):
        if not isinstance(record, RecordError) and not is_sample(record):  # a damaged line that still parses
            record = RecordError(str(path), line + 1, "not a sample record (no integer `index`)")
        elif not isinstance(record, RecordError) and older_shapes:
            record = in_current_shape(record)
        elif not isinstance(record, RecordError) and (problem := sample_problem(record)) is not None:
            record = RecordError(str(path), line + 1, f"not a sample record of this ragbench ({problem})")
        if not isinstance(record, RecordError):
            yield line, record
        elif errors is not None:
            errors.append(record)


def is_sample(record: dict[str, Any]) -> bool:
    """A line the run wrote: every record has its integer position (`index`), the key of a bad record and
    the order the samples are rewritten in."""
    return isinstance(record.get("index"), int) and not isinstance(record["index"], bool)


def line_offsets(path: Path) -> array:
    """Byte offset of every line's start, and the file's size last (8 bytes a line)."""
    offsets, position = array("Q"), 0
    with open_file(path) as handle:
        for line in handle:
            offsets.append(position)
            position += len(line)
    offsets.append(position)
    return offsets

"""A run's samples files, samples/<task>.jsonl: where a task's is, and reading its lines (checked, or as
`RunDir.finalize_samples` rewrote them) with the byte offset of every line, from its start or on from a line's
offset (`located_samples`: the viewer's index follows a file as it grows, and reads one line again). A line
longer than any the writer writes (`most_line_bytes`) is a RecordError like a line cut short, never read whole."""

from __future__ import annotations

import io
import json
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from .._errors import ConfigError, RecordError
from .._values import json_values
from .._values.names import inside
from .files import file_there, open_file
from .jsonl import LocatedLine, broken_off, located_lines, parse_json
from .run_shapes import in_current_shape, sample_problem
from .shared_turns import TurnsReader

ATTEMPT_COST = "attempt_cost"  # a checkpoint line's last key: the saving attempt's cost then (ragbench._cost.run_cost)
STAMP_BYTES = 2**16  # room on a line for the cost of the attempt that saved it (`attempt_cost`, added once checked)
BLOCK = 2**20  # bytes read at a time where only the lines' offsets are looked for


class SavedLine(NamedTuple):
    """A checkpoint line as `RunDir.finalize_samples` rewrites it: its 0-based index in the file, its record's
    checkpoint key and `position` (its `index`), the cost of the attempt that saved it, written beside the
    record on the line (`attempt_cost`: no field of the record), and whether it re-scored the line before it
    (`rescored`: the same trace, its system not run again; ragbench._storage.earlier_runs)."""

    line: int
    key: str
    position: int
    attempt_cost: Any
    rescored: bool = False


SavedLines = Callable[[Path, list[RecordError]], Iterator[SavedLine]]  # a samples file's, the others into the list


def most_line_bytes() -> int:
    """The longest line a samples file's writer writes: a sample within json_values.MAX_BYTES, and its attempt's
    cost. A longer line (an older ragbench's, or damage) is a RecordError, never read whole."""
    return json_values.MAX_BYTES + STAMP_BYTES


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
        turns = TurnsReader()
        with open_file(path) as lines:
            for number, line in enumerate(lines):
                record = turns.with_turns(parse_json(line), str(path), number)
                if isinstance(record, RecordError):  # its turns file changed since the run checked it
                    raise ConfigError(str(record))
                yield record


def numbered_samples(
    path: str | Path, errors: list[RecordError] | None = None, older_shapes: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(0-based line index, record) of every sample line (`located_samples`); the others added to `errors`."""
    for located in located_samples(path, older_shapes):
        if not isinstance(located.value, RecordError):
            yield located.line, located.value
        elif errors is not None:
            errors.append(located.value)


def located_samples(
    path: str | Path,
    older_shapes: bool = False,
    line: int = 0,
    start: int = 0,
    loads: Callable[[str], Any] = json.loads,
) -> Iterator[LocatedLine]:
    """Every line of a samples file with where it is (`LocatedLine`: line index, byte offsets), its value the
    checked record (`checked_sample`) or the line's RecordError; `line` and `start`: read on from that line's
    index and byte offset (where an earlier reading stopped, or one line's start); `loads` parses a line
    (json.loads, or a faster parser of the same values). A missing file has none."""
    if not file_there(path):
        return
    where, turns = str(path), TurnsReader()
    with open_file(path) as handle:
        handle.seek(start)
        for number, begins, ends, ended, value in located_lines(
            handle, where, loads, line=line, start=start, most_bytes=most_line_bytes()
        ):
            yield LocatedLine(number, begins, ends, ended, checked_sample(where, number, value, older_shapes, turns))


def sample_lines(
    path: str | Path, loads: Callable[[str], Any] = json.loads
) -> Iterator[tuple[int, int, bytes, bool] | LocatedLine]:
    """The non-blank lines of a samples file read a block at a time, as (0-based line index, byte offset, the
    line's bytes without its newline, whether it had one) for the caller to parse (`sample_at` reads one as `located_samples` would);
    a line longer than `most_line_bytes`, or the stream breaking off, as `located_samples`'s LocatedLine (never read
    whole). A missing file has none."""
    if not file_there(path):
        return
    where, most = str(path), most_line_bytes()
    number = offset = 0
    rest = b""
    with open_file(path) as handle:
        while True:
            try:
                block = handle.read(BLOCK)
            except OSError as failure:
                yield broken_off(where, number, offset, failure)
                return
            lines = (rest + block).split(b"\n") if block else [rest]
            rest = lines.pop() if block else b""
            for text in lines:
                if len(text) > most:
                    yield next(located_samples(path, True, number, offset, loads))
                elif text.rstrip():
                    yield number, offset, text, bool(block)
                number, offset = number + 1, offset + len(text) + 1
            if not block:
                return
            if len(rest) > most:  # a line too long to hold: read over by `located_samples`, then on after it
                long_line = next(located_samples(path, True, number, offset, loads))
                yield long_line
                number, offset, rest = number + 1, long_line.end, b""
                handle.seek(offset)


def sample_at(
    where: str,
    line: int,
    start: int,
    text: bytes,
    ended: bool,
    loads: Callable[[str], Any] = json.loads,
    turns: TurnsReader | None = None,
) -> Any:
    """The checked record (`checked_sample`, older shapes brought to the current one) or the RecordError of one
    line of `sample_lines`, as `located_samples` reads it; `turns`: the reader of the turns file the caller's
    reading holds (else one for this line)."""
    text += b"\n" if ended else b""
    located = next(located_lines(io.BytesIO(text), where, loads, line=line, start=start, most_bytes=most_line_bytes()))
    return checked_sample(where, line, located.value, older_shapes=True, turns=turns)


def checked_sample(
    where: str, line: int, value: Any, older_shapes: bool = False, turns: TurnsReader | None = None
) -> dict[str, Any] | RecordError:
    """A parsed line (0-based `line`) as a sample record of the current shape, or the RecordError that says why
    it is none: not a JSON object, no integer `index`, or (after an older version's shape is brought to the
    current one, with `older_shapes`) of a shape this ragbench does not write. Its turns are read back by `turns`
    (the reading's reader of the run's turns file; else one for this line)."""
    if isinstance(value, RecordError):
        return value
    if not isinstance(value, dict):
        return RecordError(where, line + 1, f"expected a JSON object, got {type(value).__name__}")
    if not is_sample(value):  # a damaged line that still parses
        return RecordError(where, line + 1, "not a sample record (no integer `index`)")
    value = (turns or TurnsReader()).with_turns(value, where, line)  # its turns read back from the turns file
    if isinstance(value, RecordError):
        return value
    record = in_current_shape(value) if older_shapes else value
    problem = sample_problem(record)
    if problem is not None:
        return RecordError(where, line + 1, f"not a sample record of this ragbench ({problem})")
    return record


def is_sample(record: dict[str, Any]) -> bool:
    """A line the run wrote: every record has its integer position (`index`), the key of a bad record and
    the order the samples are rewritten in."""
    return isinstance(record.get("index"), int) and not isinstance(record["index"], bool)


def line_offsets(path: Path) -> array[int]:
    """Byte offset of every line's start, and the file's size last (8 bytes a line), read a block at a time
    (however long a line is)."""
    offsets, position = array("Q", [0]), 0
    with open_file(path) as handle:
        while block := handle.read(BLOCK):
            end = block.find(b"\n")
            while end >= 0:
                offsets.append(position + end + 1)
                end = block.find(b"\n", end + 1)
            position += len(block)
    if offsets[-1] != position:  # a last line without its newline
        offsets.append(position)
    return offsets

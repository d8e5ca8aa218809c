"""An application's answers as the run recorded them (calls/app.jsonl, ragbench._replay.recording): each written the
moment the application returned, so that `--resume` never calls it twice for an example it answered (an example
whose sample was not saved - the run was killed, its metrics or the system failed after the call - is answered from
its line, with its spans). A line is taken for the example of the same task, id and content (`example_sha256`: an
example whose data changed is asked again); a line a killed run cut short is counted, not read.

The spans' counts of each attempt (calls/app_spans.jsonl) are summed here too, for the system's report.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import RecordError
from .._replay.recording import APP_FILE, APP_SPANS_FILE, CALLS_DIR
from .._storage.files import file_there
from .._storage.jsonl import iter_jsonl
from .._values.json_values import JsonObject
from .exchange import AppReply
from .spans import Span


@dataclass(frozen=True)
class RecordedCall:
    """One recorded answer of the application: its reply, its spans and how long it took."""

    reply: AppReply
    spans: list[Span]
    seconds: float


def recorded_calls(folder: Path, task: str) -> tuple[dict[tuple[str, str], RecordedCall], int]:
    """The recorded answers of `task` in the run folder, by (example id, example_sha256) (the last line of an example
    wins), and how many lines could not be read."""
    path = folder / CALLS_DIR / APP_FILE
    calls: dict[tuple[str, str], RecordedCall] = {}
    unreadable = 0
    if not file_there(path):
        return calls, unreadable
    for _, line in iter_jsonl(path):
        if isinstance(line, RecordError):
            unreadable += 1
            continue
        if line.get("task") != task:
            continue
        try:
            key = (str(line["id"]), str(line["example_sha256"]))
            calls[key] = RecordedCall(
                AppReply.from_dict(line["reply"]),
                [Span.from_dict(span) for span in line.get("spans") or []],
                float(line.get("seconds") or 0.0),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            unreadable += 1
    return calls, unreadable


def call_line(task: str, example_id: str, digest: str, call: RecordedCall) -> JsonObject:
    return {
        "task": task,
        "id": example_id,
        "example_sha256": digest,
        "reply": call.reply.to_dict(),
        "spans": [span.to_dict() for span in call.spans],
        "seconds": round(call.seconds, 6),
    }


def span_counts(folder: Path, task: str) -> JsonObject:
    """The spans' counts of every attempt on `task`, summed (keys as ragbench._apps.collector's report)."""
    path = folder / CALLS_DIR / APP_SPANS_FILE
    total: dict[str, Any] = {}
    if not file_there(path):
        return total
    for _, line in iter_jsonl(path):
        if isinstance(line, RecordError) or line.get("task") != task:
            continue
        for key, value in line.items():
            if isinstance(value, int) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
            elif key == "unjoined_traces" and isinstance(value, list):
                total.setdefault(key, [])
                total[key] = [*total[key], *value][:3]
    return total

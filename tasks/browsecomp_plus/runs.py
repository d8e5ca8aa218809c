"""A BrowseComp-Plus run folder (its README's "Evaluation" format: one JSON file per query with `query_id`,
`status`, `retrieved_docids`, `tool_call_counts` and `result`, a list whose last item, where it is
{"type": "output_text", "output": ...}, is the final output) as `ragbench score` records, so a published run
is re-scored by `browsecomp_plus` (`ragbench score --task browsecomp_plus --predictions runs/NAME`).

The output is what evaluate_run.py judges: the last item's output, or "" where the run ended on another item
(scored incorrect, as the script scores it). What the agent did goes into the prediction's extras.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragbench.api import RecordError
from ragbench.api.data import JsonObject, given_bytes, parse_json, utf8

from .metric import MODEL, RETRIEVED, STATUS, TOOL_CALLS


def final_output(result: list[Any]) -> str:
    """evaluate_run.py's response: the last item's output where it is output_text, else ""."""
    last = result[-1] if result else None
    return str(last["output"]) if isinstance(last, dict) and last.get("type") == "output_text" else ""


def run_record(path: Path) -> JsonObject:
    """One query's file as a `recorded` record; a ValueError says what is missing."""
    run = parse_json(utf8(given_bytes(path, "a BrowseComp-Plus run file (JSON)")))
    if (
        not isinstance(run, dict)
        or not run.get("query_id")
        or not isinstance(run.get("result"), list)
        or not isinstance(run.get("status"), str)
    ):
        raise ValueError('not a BrowseComp-Plus run file (expected "query_id", "status" and a "result" list)')
    extras: JsonObject = {
        STATUS: run["status"],
        RETRIEVED: [str(docid) for docid in run.get("retrieved_docids") or []],
        TOOL_CALLS: dict(run.get("tool_call_counts") or {}),
    }
    model = run.get("metadata", {}).get("model") if isinstance(run.get("metadata"), dict) else None
    if model:
        extras[MODEL] = str(model)  # the agent's model (metadata.model), what evaluate_run.py names the LLM
    return {"id": str(run["query_id"]), "output": final_output(run["result"]), "extras": extras}


def run_folder_records(folder: Path) -> Iterator[tuple[int, JsonObject | RecordError]]:
    """(file index, record or RecordError) for every *.json file of the folder, in name order."""
    for index, path in enumerate(sorted(folder.glob("*.json"))):
        try:
            yield index, run_record(path)
        except (ValueError, OSError) as exc:
            yield index, RecordError(str(path), getattr(exc, "line", 1), str(exc))  # NotUtf8 names its line

"""OmniEval's own inference outputs as ragbench prediction records, for `ragbench score`.

Upstream writes one `<一级> - <二级> - <task>.pred.jsonl` per cell (evaluator/inference/rag_model.py),
records `{id, question, golden_answers, output: {retrieval_result, prompt, pred}, ...}` where `id` is
the test-file line number, repeated for each turn of a conversation in turn order."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ragbench.api import RecordError
from ragbench.api.data import JsonObject, given_values

from . import catalog

SUFFIX = ".pred.jsonl"


def cell_of(path: Path) -> str:
    """`A - B - task.pred.jsonl` -> `A - B - task` (the judge takes the last ` - ` item as the task)."""
    return path.name[: -len(SUFFIX)]


def prediction_records(folder: Path, conversation_task: str) -> Iterator[tuple[int, JsonObject | RecordError]]:
    """(line index, `{"id", "output", "docs"}` or RecordError) for every record of every file."""
    for path in sorted(folder.glob(f"*{SUFFIX}")):
        cell = cell_of(path)
        topic, _, task = cell.rpartition(" - ")
        if catalog.skipped(topic, task):  # the judge never scores these files
            continue
        conversational = cell.rsplit(" - ", 1)[-1] == conversation_task
        rounds: dict[str, int] = {}
        for number, record in given_values(path, "an OmniEval inference file (*.pred.jsonl)"):
            if isinstance(record, RecordError):
                yield number, record
                continue
            try:
                upstream_id, output = str(record["id"]), record["output"]
                pred = output["pred"]
            except (KeyError, TypeError) as err:
                yield number, RecordError(str(path), number + 1, f"not an OmniEval prediction record ({err!r})")
                continue
            example_id = f"{cell}/{upstream_id}"
            if conversational:
                round_ = rounds.get(upstream_id, 0)
                rounds[upstream_id] = round_ + 1
                example_id += f"/{round_}"
            # a closed-book file has no retrieval_result: no documents were shown
            yield (
                number,
                {
                    "id": example_id,
                    "output": pred if isinstance(pred, str) else str(pred),
                    "docs": list(output.get("retrieval_result") or []),
                },
            )

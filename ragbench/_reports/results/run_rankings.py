"""A finished run's retrieval as TREC run-file rankings: per example, the documents it showed, in order, each once
(`trec_ranking`), by example id; the examples left out are counted by why."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..._errors import ConfigError
from ..._retrieval.trec.run_file import trec_ranking
from ..._types import Prediction
from .finished_run import FinishedRun

FAILED = "failed"  # the example failed: it has no prediction
DOCS_UNKNOWN = "docs_unknown"  # outputs made elsewhere (the recorded system): which documents were shown is not known


@dataclass
class RunRankings:
    rankings: list[tuple[str, list[tuple[str, float]]]] = field(default_factory=list)  # (example id, ranking)
    left_out: Counter[str] = field(default_factory=Counter)  # why -> examples

    def left_out_text(self) -> str:
        """Why examples are not in the rankings, e.g. "3 failed", "" where none is left out."""
        meaning = {FAILED: "failed", DOCS_UNKNOWN: "do not say which documents they showed"}
        return "; ".join(f"{count} {meaning[why]}" for why, count in sorted(self.left_out.items()))


def run_task(run: FinishedRun, task: str | None) -> str:
    """`task`, or the run's only task; a ConfigError naming the run's tasks where it is not one of them."""
    tasks = list(run.results.results)
    if task is None and len(tasks) == 1:
        return tasks[0]
    if task not in tasks:
        named = "give one with --task" if task is None else f"it has no task {task}"
        raise ConfigError(f"{run.command}: {run.path} ran {', '.join(tasks)}: {named}")
    return task


def run_rankings(run: FinishedRun, task: str) -> RunRankings:
    """Each scored example's ranking, in the samples file's order; a document without a docid is a ConfigError
    naming the example."""
    out = RunRankings()
    for record in run.records(task, why="the documents each example showed"):
        if record.bad_record or record.id is None:
            continue
        if record.error is not None:
            out.left_out[FAILED] += 1
        elif record.extras.get(Prediction.DOCS_UNKNOWN):
            out.left_out[DOCS_UNKNOWN] += 1
        else:
            try:
                out.rankings.append((str(record.id), trec_ranking(record.docs)))
            except ValueError as exc:
                raise ConfigError(f"{run.command}: example {record.id} of {task}: {exc}") from None
    return out

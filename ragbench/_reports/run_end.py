"""The end of a run or a rescoring: results.json and report.md written, the run folder marked finished."""

from __future__ import annotations

from .._storage.run_record import AttemptCost
from .._storage.rundir import RunDir
from .results.file import results_text
from .results.schema import Results
from .run_summary import report_markdown


def finish_run(run_dir: RunDir, results: Results, attempt: AttemptCost | None = None) -> None:
    """results.json (`results_text`), report.md and run.json's mark with each task's record count (what
    --resume checks the samples against) and the final cost of the `attempt` that finished the run."""
    records = {task: counts["records"] + counts.get("missing", 0) for task, counts in results.counts.items()}
    run_dir.finish(results_text(results), report_markdown(results, run_dir.path), records, attempt)

"""Which mode a run is in, decided once from its options and its folder before any work (`run_mode`), and the
modes that make no attempt: a finished run resumed with nothing left to do, and one whose results.json is
rebuilt from its samples. The modes that make an attempt (a fresh run, a resumed one, a finished run with
only failed metrics to score) are one `Attempt` of the run taking the mode's `AttemptSteps`
(ragbench._run.modes.attempt); every mode runs on the run's `RunServices`, its retrieval open (`run_in`)."""

from __future__ import annotations

import logging

from ..._cost.prices import recorded_urls
from ..._cost.run_cost import ServiceReports
from ..._errors import ConfigError
from ..._reports.results.failures import metric_failed
from ..._reports.results.file import NewerResults, read_results
from ..._reports.results.schema import Results
from ..._storage.checkpoint import TaskCheckpoint
from ..models.contents import contents_now
from ..outcome import RunOutcome
from ..rescore import saved_predictions as rescore
from ..services import RunServices
from .attempt import FRESH, RESUMED, SCORE_ONLY, Attempt
from .planned_run import Assembled, PlannedRun, Retrieved, finished_keys

log = logging.getLogger(__name__)


class AlreadyFinishedRun:
    """--resume of a finished run with nothing left to do: its results.json, read back; nothing loads."""

    def __init__(self, run: PlannedRun, results: Results) -> None:
        self.run, self.results = run, results

    def run_in(self, services: RunServices) -> RunOutcome:
        return RunOutcome(self.results, self.run.run_dir.path, already_finished=True)


class RebuiltRun:
    """--resume of a finished run with nothing left to do whose results.json is missing or unreadable: rebuilt
    from the samples (`checkpoints`: of the tasks whose records were read as the mode was decided); no engine
    loads."""

    def __init__(self, run: PlannedRun, retrieved: Retrieved, checkpoints: dict[str, TaskCheckpoint]) -> None:
        self.run, self.retrieved, self.checkpoints = run, retrieved, checkpoints

    def run_in(self, services: RunServices) -> RunOutcome:
        run = self.run
        recorded = run.run_dir.record  # a finished run's: where its models were sent
        urls = recorded_urls(recorded.config if recorded is not None else {}) or {}
        results = run.results(Assembled(self.checkpoints, run.full_config(self.retrieved, {}, urls)), ServiceReports())
        run.finish(results)
        return RunOutcome(results, run.run_dir.path, already_finished=True, rebuilt=True)


RunMode = Attempt | AlreadyFinishedRun | RebuiltRun


def run_mode(run: PlannedRun, retrieved: Retrieved) -> RunMode:
    """The run's mode: without --resume a fresh run, and a resumed one where its folder holds no finished run.
    --resume of a run marked finished is refused (`ConfigError`) when a task's config or a model's files changed
    since it started, as an unfinished run's, and resumed when a task's data fingerprint changed (the data is
    read, records that changed run again). Else, when every record of the data has a sample that needs no new
    attempt (as many as run.json counts, else the data is read), it is finished: results.json is read back, or
    rebuilt from the samples when it is missing or unreadable, unless metrics that failed are left to score
    (score-only: the system's engines do not load). When examples are left to run (a sample line was lost, or
    an example failed), it is resumed."""
    if not run.config.output.resume:
        return Attempt(run, FRESH, retrieved)
    run_dir = run.run_dir
    recorded = run_dir.record
    if recorded is None or not recorded.finished:
        return Attempt(run, RESUMED, retrieved)
    run_dir.check_same_inputs(
        {
            "task_configs": run.task_configs(),
            "model_contents": contents_now(run.registry, recorded.config.get("model_contents")),
            "retriever_contents": retrieved.contents,
        }
    )
    changed = run_dir.data_changed(run.data_fingerprints())
    if changed:
        log.warning(
            "ragbench: %s is finished, but the data of task %s changed since it started: the data is read "
            "again and the records that changed run again",
            run_dir.path,
            ", ".join(changed),
        )
        return Attempt(run, RESUMED, retrieved)
    todo = run.records_to_do(resume=True)  # its checkpoints: of the tasks whose records are read here
    if (
        not all(len(finished_keys(run_dir, p.name)) == (recorded.records or {}).get(p.name) for p in run.planned)
        and todo.first() is not None
    ):  # the data is read only when a count is short
        return Attempt(run, RESUMED, retrieved)
    checkpoints = todo.checkpoints
    try:
        results: Results | None = read_results(run_dir.path / "results.json", "--resume")
    except NewerResults:
        raise
    except ConfigError:  # missing, damaged or no run's results: rebuilt from the samples
        results = None
    if rescore.pending(run_dir, run.planned) or (results is not None and metric_failed(results)):
        return Attempt(run, SCORE_ONLY, retrieved, checkpoints)  # metrics failed: they score again, examples don't run
    if results is None:
        return RebuiltRun(run, retrieved, checkpoints)
    return AlreadyFinishedRun(run, results)

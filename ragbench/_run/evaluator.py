"""Runs a system on tasks: examples stream in, run as coroutines (at most `max_inflight` at once,
across all tasks), each is scored as soon as it finishes and appended to the checkpoint.

Start-up order: the pre-flight (every option, data file and prerequisite; ragbench._run.plan.preflight), the
engines, each system's `check_model`, and only then the run folder, so a refused run writes nothing. What the
run then does - a fresh run, a resume, a finished run's resume, scoring only or a rebuilt results.json - is its
mode (ragbench._run.modes.run_modes), decided once its folder is locked and its retrieval open.
"""

from __future__ import annotations

import logging
import threading

from .._checks import Preflight
from .._config.run_config import RunConfig
from .._engines import preload
from .._registry import Registry
from .._storage.rundir import RunDir
from .example import sample_record
from .lifetime.interrupted import RunInterrupted
from .lifetime.workers import refuse_in_worker_start
from .modes.planned_run import PlannedRun
from .modes.run_modes import run_mode
from .outcome import RunOutcome
from .plan.planned_task import PlannedTask
from .plan.preflight import preflight
from .plan.run_folder import check_free_space
from .services import RunServices, held_services

log = logging.getLogger(__name__)

__all__ = ["Evaluator", "RunConfig", "RunInterrupted", "RunOutcome", "sample_record"]


class Evaluator:
    def __init__(self, config: RunConfig, registry: Registry, resume_held: bool = False) -> None:
        """The run planned and pre-flighted (every option, data file and prerequisite; all problems at once,
        `PreflightError`, nothing written), its tasks looked up in `registry`, which holds its task files
        (`run_registry(config.what, registry)`). No model loads and no index opens here: the run's services
        (ragbench._run.services) open when it starts, after its folder's lock. `config` is left as given: the
        run's own, with what the pre-flight settled (a task's corpus as its retriever), is `plan.config`.
        `resume_held`: a run the folder holds is continued (the estimate's pilot; `preflight`)."""
        refuse_in_worker_start()  # a script without the __main__ guard, re-run by a worker process
        # imports while the data loads, joined before the engines load
        preloading = preload(
            config.models.model, *config.judging.judges, config.judging.nli, *config.models.role_models.values()
        )
        run = preflight(config, registry, resume_held=resume_held)
        for line in run.query_warnings:
            log.warning("ragbench: warning: %s", line)
        self.plan = PlannedRun(run.config, registry, run.planned, run.run_dir, run.checks, preloading, run.task_index)

    # what `ragbench check` and tests read of the plan
    @property
    def planned(self) -> list[PlannedTask]:
        return self.plan.planned

    @property
    def checks(self) -> Preflight:
        return self.plan.checks

    @property
    def run_dir(self) -> RunDir:
        return self.plan.run_dir

    @property
    def preloading(self) -> threading.Thread | None:
        return self.plan.preloading

    def run(self) -> RunOutcome:
        """The run in its mode, on services of its own (ragbench._run.services) and holding its folder's lock,
        both let go however it ends."""
        plan = self.plan
        with held_services(plan.config, plan.registry, plan.run_dir, lock_now=plan.config.output.resume) as services:
            return run_mode(plan, plan.open_retrieval(services)).run_in(services)

    def check_services(self, models: bool = True) -> None:
        """`ragbench check`: the retriever and components opened (a bad index fails here) and, with `models`,
        the engines loaded and every `check_model` run; all closed again, nothing written."""
        plan = self.plan
        with RunServices(plan.config, plan.registry, plan.run_dir) as services:
            plan.open_retrieval(services)
            if models:
                plan.check_models(services.open_engines(plan.planned, preloading=plan.preloading))

    def check_free_space(self) -> None:
        """`ragbench check`: the free space where the run writes (a warning when short; the data is counted)."""
        check_free_space(self.plan.config, self.plan.run_dir.path, self.plan.planned, self.plan.checks)

"""The models a run's metrics call, its judges and its NLI model, as LLM handles over the run's scheduler:
each call recorded (calls/) and logged beside the run (judgeN_calls.jsonl, nli_calls.jsonl). A run and
`ragbench rescore` open them the same way and close them together."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..._llm import LLM
from ..._nli import NLI
from ..._replay.exchange_log import ExchangeLog
from ..._replay.recording import CallRecorder
from ..._scheduler import Scheduler
from ..._storage.rundir import judge_log_name
from .run_engines import Engines


@dataclass(frozen=True)
class CallRoute:
    """Where a run's calls go: the scheduler that batches them, the recorder of every call (calls/) and the run
    folder, beside which the judges' and the NLI model's exchanges are logged."""

    scheduler: Scheduler
    recorder: CallRecorder
    folder: Path


class MetricModels:
    def __init__(self, route: CallRoute, engines: Engines, nli_format: str) -> None:
        """The handles of `engines`' judges and NLI model (`nli_format`: how it is asked), over `route`."""
        scheduler, recorder, folder = route.scheduler, route.recorder, route.folder
        # the judges' exchanges, which --judge replay reads
        self.logs = [ExchangeLog(folder / judge_log_name(i)) for i in range(len(engines.judges))]
        self.judges = [
            LLM(scheduler, judge, recorder=recorder.for_role(f"judge:{i}", log=log), role=f"judge:{i}")
            for i, (judge, log) in enumerate(zip(engines.judges, self.logs))
        ]
        self.nli = (
            None
            if engines.nli is None
            else NLI(
                LLM(scheduler, engines.nli, recorder=recorder.for_role("nli", logged=True)),
                nli_format,
                folder / "nli_calls.jsonl",
            )
        )

    def close(self) -> None:
        if self.nli is not None:
            self.nli.close()
        for log in self.logs:
            log.close()

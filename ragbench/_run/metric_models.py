"""The models a run's metrics call, its judges and its NLI model, as LLM handles over the run's scheduler:
each call recorded (calls/) and logged beside the run (judgeN_calls.jsonl, nli_calls.jsonl). A run and
`ragbench rescore` open them the same way and close them together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._llm import LLM
from .._nli import NLI
from .._replay.exchange_log import ExchangeLog, LoggingRecorder
from .._replay.recording import CallRecorder
from .._scheduler import Scheduler
from .._storage.rundir import judge_log_name


class MetricModels:
    def __init__(
        self,
        scheduler: Scheduler,
        recorder: CallRecorder,
        folder: Path,
        judges: list[Any],
        nli_engine: Any,
        nli_format: str,
    ) -> None:
        self.logs = [ExchangeLog(folder / judge_log_name(i)) for i in range(len(judges))]  # --judge replay: reads them
        self.judges = [
            LLM(scheduler, judge, recorder=LoggingRecorder(recorder.for_role(f"judge:{i}"), log), role=f"judge:{i}")
            for i, (judge, log) in enumerate(zip(judges, self.logs))
        ]
        self.nli = (
            None
            if nli_engine is None
            else NLI(
                LLM(scheduler, nli_engine, recorder=recorder.for_role("nli", logged=True)),
                nli_format,
                folder / "nli_calls.jsonl",
            )
        )

    def close(self) -> None:
        if self.nli is not None:
            self.nli.close()
        for log in self.logs:
            log.close()

"""The viewer's data by key, one function for the server (/api/<key>) and the static export
(data/<key>.js): runs | run/<rid> | rows/<rid>/<task>/<chunk> | example/<rid>/<task>/<n> |
compare/<task>[/<rid>~<rid>...]."""
from __future__ import annotations

from typing import Any

from .comparison import compare_page
from .pages import example_data, rows_page, run_page, runs_page, system_class
from .runs import RunFolder


class NotFound(KeyError):
    pass


class Site:
    def __init__(self, runs: list[RunFolder]) -> None:
        self.runs = runs
        self.by_id = {run.rid: run for run in runs}

    def run(self, rid: str) -> RunFolder:
        if rid not in self.by_id:
            raise NotFound(f"no run {rid}")
        return self.by_id[rid]

    def with_task(self, task: str) -> list[RunFolder]:
        return [run for run in self.runs if task in run.tasks]

    def warm(self) -> None:
        """Index every sample file and load the runs' system plugins (the registry takes a second or
        two), so that the first pages open at once; the server runs this in the background."""
        for run in self.runs:
            system_class(run.config.get("system"))
            for task in run.tasks:
                run.samples(task)

    def data(self, key: str) -> Any:
        parts = key.strip("/").split("/")
        kind, args = parts[0], parts[1:]
        try:
            if kind == "runs" and not args:
                return runs_page(self.runs)
            if kind == "run" and len(args) == 1:
                return run_page(self.run(args[0]))
            if kind == "rows" and len(args) == 3:
                return rows_page(self.run(args[0]), args[1], int(args[2]))
            if kind == "example" and len(args) == 3:
                return example_data(self.run(args[0]), args[1], int(args[2]))
            if kind == "compare" and len(args) in (1, 2):
                runs = [self.run(r) for r in args[1].split("~")] if len(args) == 2 else self.with_task(args[0])
                return compare_page(runs, args[0])
        except (KeyError, ValueError) as exc:
            raise NotFound(f"{key}: {exc}") from exc
        raise NotFound(key)

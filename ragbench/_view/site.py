"""The viewer's data by key, one function for the server (/api/<key>) and the static export
(data/<key>.js): runs | run/<rid> | rows/<rid>/<task>/<chunk> | example/<rid>/<task>/<n> |
compare/<task>[/<rid>~<rid>...]. The Runs page and the default Compare page look for runs made since
the last request; any other key finds a run not seen yet by its id."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .catalog import RunCatalog
from .comparison import compare_page
from .page_data import Page
from .pages import example_data, rows_page, run_page, runs_page, system_class
from .runs import RunFolder

if TYPE_CHECKING:
    from .._registry import Registry


class NotFound(KeyError):
    pass


class Site:
    def __init__(self, catalog: RunCatalog, registry: Registry) -> None:
        self.catalog = catalog
        self.registry = registry  # the command's: the runs' system plugins (their defaults, trace outline)

    @property
    def runs(self) -> list[RunFolder]:
        return self.catalog.runs

    def run(self, rid: str) -> RunFolder:
        run = self.catalog.get(rid)
        if run is None:
            raise NotFound(f"no run {rid}")
        return run

    def with_task(self, task: str) -> list[RunFolder]:
        return [run for run in self.runs if task in run.tasks]

    def warm(self) -> None:
        """Index every sample file and load the runs' system plugins (importing them takes a second or
        two), so that the first pages open at once; the server runs this in the background."""
        for run in self.runs:
            system_class(run.config.get("system"), self.registry)
            for task in run.tasks:
                run.samples(task)

    def data(self, key: str) -> Page:
        parts = key.strip("/").split("/")
        kind, args = parts[0], parts[1:]
        try:
            if kind == "runs" and not args:
                return runs_page(self.catalog.refresh())
            if kind == "run" and len(args) == 1:
                return run_page(self.run(args[0]), self.registry)
            if kind == "rows" and len(args) == 3:
                return rows_page(self.run(args[0]), args[1], int(args[2]))
            if kind == "example" and len(args) == 3:
                return example_data(self.run(args[0]), args[1], int(args[2]), self.registry)
            if kind == "compare" and len(args) in (1, 2):
                if len(args) == 1:
                    self.catalog.refresh()
                runs = [self.run(r) for r in args[1].split("~")] if len(args) == 2 else self.with_task(args[0])
                return compare_page(runs, args[0], self.registry.metric_class)
        except (KeyError, ValueError) as exc:
            raise NotFound(f"{key}: {exc}") from exc
        raise NotFound(key)

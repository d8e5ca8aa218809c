"""The runs the viewer shows: every run folder given, or found below the folders given, looked for again
on request (`refresh`: the Runs page, a run id not seen yet), so that a run started after `ragbench view`
appears on reload. A run keeps its id (its path below the folder given) as long as the viewer runs, so
its links stay valid; a run folder removed leaves the list."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

from .._errors import ConfigError
from .._storage.files import folder_problem
from .runs import RunFolder


def is_run(path: Path) -> bool:
    return (path / "run.json").is_file() or (path / "results.json").is_file()


def _rid(path: Path, root: Path, taken: set[str]) -> str:
    try:
        name = str(path.relative_to(root)) if path != root else path.name
    except ValueError:
        name = path.name
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "run"
    rid, k = base, 2
    while rid in taken:
        rid, k = f"{base}_{k}", k + 1
    taken.add(rid)
    return rid


class RunCatalog:
    """The run folders under `paths` (each a run folder or a folder of runs), sorted by path."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = list(paths or ["runs"])
        for given in self.paths:
            problem = folder_problem(given)
            if problem is not None:
                raise ConfigError(f"view: {given}: {problem} (give a run folder or a folder of runs, e.g. runs/)")
        self._lock = threading.Lock()
        self._seen: dict[Path, RunFolder] = {}  # every run found so far, by path: its id never changes
        self._taken: set[str] = set()
        self.runs: list[RunFolder] = []
        self._by_id: dict[str, RunFolder] = {}
        self.refresh()
        if not self.runs:
            raise ConfigError(
                f"view: no ragbench run under {', '.join(self.paths)} (a run folder holds run.json "
                "or results.json; run `ragbench --tasks ... --output DIR` first)"
            )

    def _found(self) -> Iterator[tuple[Path, Path]]:
        """(run folder, the folder its id is relative to) of every run on disk now."""
        for given in self.paths:
            root = Path(given)
            if is_run(root):
                yield root, root.parent
            elif root.is_dir():
                yield from (
                    (path, root)
                    for path in sorted(
                        Path(d) for d, _, files in os.walk(root) if "run.json" in files or "results.json" in files
                    )
                )

    def refresh(self) -> list[RunFolder]:
        """Look for the runs again: new ones are added (with new ids), removed ones leave the list. Only
        folder listings are read here; a run's files are read when its data is asked for."""
        found = list(self._found())
        with self._lock:
            runs: dict[Path, RunFolder] = {}  # a run under two of the folders given is listed once
            for path, base in found:
                if path not in self._seen:
                    self._seen[path] = RunFolder(path, _rid(path, base, self._taken))
                runs.setdefault(path, self._seen[path])
            self.runs, self._by_id = list(runs.values()), {run.rid: run for run in runs.values()}  # replaced whole
        return self.runs

    def get(self, rid: str) -> RunFolder | None:
        """The run with id `rid`, looking for new runs first when it is not known."""
        if rid not in self._by_id:
            self.refresh()
        return self._by_id.get(rid)

"""A finished run folder as the commands that read one (`ragbench compare`, `ragbench export`) need it: its
results.json, and each task's sample records; a folder that is no finished run, a samples file missing or with
unreadable lines, is refused in one line (`ConfigError`) naming the command, the file and the fix."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..._errors import ConfigError, RecordError
from ..._records import SampleRecord, read_samples
from ..._storage.files import file_there, folder_problem
from ..._storage.rundir import RunDir
from ..._storage.sample_files import sample_file
from .file import read_results
from .schema import Results


@dataclass(frozen=True)
class FinishedRun:
    path: Path
    results: Results
    command: str  # who reads it, for the messages ("compare", "export trec")

    def records(self, task: str, *, has_text: bool = True, why: str = "") -> Iterator[SampleRecord]:
        """The task's sample records one at a time, in the file's order (older ragbench lines brought to the
        current shape), then a `ConfigError` if any line could not be read; `why`: what the command needs them
        for, said where the file is missing."""
        path = sample_file(self.path, task)
        if not file_there(path):
            raise ConfigError(f"{self.command}: {path} is missing{f' ({why})' if why else ''}")
        errors: list[RecordError] = []
        yield from read_samples(path, errors, has_text=has_text, older_shapes=True)
        if errors:
            raise ConfigError(
                f"{self.command}: {errors[0]} ({len(errors)} unreadable line(s) in {path}); "
                f"`ragbench --resume --output {self.path}` rebuilds it"
            )

    def every_example_scored(self, task: str, examples: str, why: str) -> None:
        """A `ConfigError` where an example of `task` failed or is missing (`examples`: what the task calls them,
        "topic"; `why`: why the command needs every one)."""
        unscored = self.results.counts[task]["failed"] + self.results.counts[task]["missing"]
        if unscored:
            raise ConfigError(
                f"{self.command}: {unscored} {examples}(s) of {self.path} failed or are missing, and {why}: finish "
                f"them with `ragbench ... --resume --output {self.path}`"
            )


def finished_run(path: str | Path, command: str) -> FinishedRun:
    """The run at `path`, refused unless it has a results.json and no attempt after it stopped or is running
    (its results and samples would then be of different attempts)."""
    path = Path(path)
    problem = folder_problem(path)
    if problem is not None:
        raise ConfigError(f"{command}: {path}: {problem}; give the folder of a finished ragbench run")
    results_path = path / "results.json"
    if not file_there(results_path):
        raise ConfigError(f"{command}: {path} has no results.json (give the folder of a finished ragbench run)")
    if (recorded := RunDir(path).record) is not None and recorded.finished is False:
        raise ConfigError(
            f"{command}: {path} is not finished: an attempt after its results.json stopped or is running, "
            "so its results and samples may be of different attempts; finish it with `ragbench ... "
            f"--resume --output {path}` (the options it was run with)"
        )
    return FinishedRun(path, read_results(results_path, command), command)

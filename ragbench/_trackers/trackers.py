"""The trackers a run can be logged to, what asks for one (`TrackerRequest`: `--wandb`, `--mlflow URI` and their
`-arg K=V` options), whether its package is installed, and logging a finished run folder to each."""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import shlex
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .._errors import ConfigError
from .._values.options import parse_assignments


@dataclass(frozen=True)
class Tracker:
    label: str  # as its messages name it
    package: str  # the module its client is imported from
    module: str  # the ragbench module whose `log` sends a run to it
    keys: tuple[str, ...]  # what its `-arg` option may set


TRACKERS = {
    "wandb": Tracker(
        "W&B",
        "wandb",
        "wandb_log",
        ("project", "entity", "name", "group", "job_type", "tags", "notes", "mode", "dir"),
    ),
    "mlflow": Tracker("MLflow", "mlflow", "mlflow_log", ("experiment", "run_name")),
}


@dataclass(frozen=True)
class TrackerRequest:
    """A tracker to log a run to: `target` is where (MLflow's tracking URI; None for W&B, which reads its own
    settings), `items` the `-arg` options as given (for the command that logs the run again)."""

    tracker: str
    target: str | None = None
    items: tuple[str, ...] = ()
    options: dict[str, object] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return TRACKERS[self.tracker].label

    @property
    def destination(self) -> str:
        """Where it logs, as the console names it: `MLflow at URI`, `W&B` (`W&B at URL` with WANDB_BASE_URL set, for
        a run W&B sends: not in its offline mode)."""
        if self.target is not None:
            return f"{self.label} at {tracking_uri(self.target)}"
        mode = str(self.options.get("mode") or os.environ.get("WANDB_MODE") or "online")
        where = os.environ.get("WANDB_BASE_URL") if mode not in ("offline", "dryrun", "disabled") else None
        return self.label + (f" at {where}" if where else "")

    def flags(self) -> list[str]:
        """The command-line options that ask for this again."""
        switch = [f"--{self.tracker}"] + ([self.target] if self.target is not None else [])
        return switch + [part for item in self.items for part in (f"--{self.tracker}-arg", item)]


def tracking_uri(target: str) -> str:
    """A folder (no URI scheme) as its absolute `file:` URI; any other URI as given."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target):
        return target
    return Path(target).resolve().as_uri()


@contextmanager
def environment_defaults(values: Mapping[str, str]) -> Iterator[None]:
    """Each of `values` set in the environment while a run is logged, where the user has not set it (the user's
    own value stands); the environment is then as it was."""
    added = [name for name in values if name not in os.environ]
    os.environ.update({name: values[name] for name in added})
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def tracker_requests(
    wandb: bool, wandb_args: tuple[str, ...], mlflow: str | None, mlflow_args: tuple[str, ...]
) -> list[TrackerRequest]:
    """The trackers the options ask for (ConfigError: an unknown key, an `-arg` without its tracker, an empty URI)."""
    if mlflow is not None and not mlflow.strip():
        raise ConfigError("--mlflow: give the tracking URI, e.g. --mlflow mlruns (a local folder) or http://HOST:5000")
    asked = {"wandb": (wandb, None, wandb_args), "mlflow": (mlflow is not None, mlflow, mlflow_args)}
    requests = []
    for name, (on, target, items) in asked.items():
        if items and not on:
            switch = "--wandb" if name == "wandb" else "--mlflow URI"
            raise ConfigError(f"--{name}-arg {items[0]}: give {switch} to log the run to {TRACKERS[name].label}")
        if not on:
            continue
        options = parse_assignments(items, f"--{name}-arg")
        unknown = sorted(set(options) - set(TRACKERS[name].keys))
        if unknown:
            raise ConfigError(
                f"--{name}-arg {unknown[0]}: not an option of {TRACKERS[name].label} logging; one of "
                f"{', '.join(TRACKERS[name].keys)}"
            )
        requests.append(TrackerRequest(name, target, tuple(items), options))
    return requests


def install_problems(requests: list[TrackerRequest]) -> list[str]:
    """A line for each tracker whose package is not installed, naming the extra that installs it."""
    return [
        f"--{request.tracker}: the {TRACKERS[request.tracker].package} package is not installed: "
        f"pip install 'ragbench[{request.tracker}]'"
        for request in requests
        if importlib.util.find_spec(TRACKERS[request.tracker].package) is None
    ]


def log_command(run_dir: str | Path, requests: list[TrackerRequest]) -> str:
    """The command that logs the finished run at `run_dir` to these trackers."""
    flags = [flag for request in requests for flag in request.flags()]
    return shlex.join(["ragbench", "log", str(run_dir), *flags])


def log_run(run_dir: str | Path, request: TrackerRequest) -> str:
    """Log the finished run at `run_dir` to the tracker; where it went (a URL, a folder). Whatever the tracker's
    client raises is raised; the run folder is only read."""
    from .run_log import run_log

    if problems := install_problems([request]):
        raise ConfigError(problems[0])
    sender = importlib.import_module(f"{__package__}.{TRACKERS[request.tracker].module}")
    logged: str = sender.log(run_log(run_dir), request)  # each tracker module's log()
    return logged

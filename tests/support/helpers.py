"""Running ragbench from tests: in this process through ragbench.testing (`run`), or through the command line.

The command line two ways, both returning (returncode, stdout, stderr):
- `cli_here` runs the command in this process (its streams captured, the process state it changes put back):
  for every test of what a command prints, writes and exits with.
- `cli` starts `python -m ragbench._cli.main` (at least 0.85 s): only where the process itself is what is
  tested: a signal, how the real process ends (threads a plugin left running), a real pipe or a full console,
  a fresh interpreter's imports or environment, an installed package, a `python -m` entry point.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ragbench.testing
from ragbench.api import SampleRecord
from ragbench.testing import PreflightError, Registry, preflight, run_eval, sample_lines

# The run options whose default is the command line's but not `run_eval`'s: no model given (the embedded default),
# the page cache on and a progress bar.
COMMAND_LINE_DEFAULTS = {"model": None, "page_cache": None, "progress": True}


def run(tmp_path: Path, name: str = "run", registry: Registry | None = None, **config) -> dict:
    """results.json of the run of `config` (the command line's options by their RunConfig names: `tasks`, `model`
    ...) made in this process into tmp_path/name, with the command line's defaults, no progress bar and 200
    bootstrap draws."""
    config = {**COMMAND_LINE_DEFAULTS, "progress": False, "bootstrap_iters": 200, **config}
    return run_eval(config.pop("tasks"), output=tmp_path / name, registry=registry, **config).results


def preflight_problems(tmp_path: Path, **config) -> list[str]:
    """Every problem the pre-flight of a run of `config` finds (it must find one), in the order said."""
    config = {**COMMAND_LINE_DEFAULTS, **config}
    try:
        preflight(config.pop("tasks"), output=tmp_path / "run", **config)
    except PreflightError as error:
        return error.problems
    raise AssertionError("the pre-flight found no problem")


def samples(run_dir: Path, task: str) -> list[dict]:
    return sample_lines(run_dir, task)


def search_agent_samples(
    tmp_path: Path,
    base_url: str,
    questions: Path,
    system_args: dict,
    model: str = "agent",
    model_args: dict | None = None,
) -> list[dict]:
    """The sample lines of `search_agent` run over `questions` (fictional_multihop's corpus) against the OpenAI
    server at `base_url` (tests/support/search_agent_fake.py's)."""
    run(
        tmp_path,
        tasks=["fictional_multihop"],
        system="search_agent",
        model=f"openai:{model}",
        model_args={"base_url": base_url, **(model_args or {})},
        data={"fictional_multihop": str(questions)},
        system_args=system_args,
    )
    return samples(tmp_path / "run", "fictional_multihop")


def viewed(*folders: Path, out: Path) -> dict[str, Any]:
    """The viewer's pages of the run folders by key (`runs`, `run/RID`, `example/RID/TASK/N` ...), as the user's
    `ragbench view FOLDERS --export OUT` writes them: each data/KEY.js is `RB.put(key, data);`."""
    from click.testing import CliRunner

    from ragbench.testing import cli as command

    result = CliRunner().invoke(command, ["view", *map(str, folders), "--export", str(out)])
    assert result.exit_code == 0, result.output
    pages = {}
    for script in (out / "data").rglob("*.js"):
        text = script.read_text(encoding="utf-8").removeprefix("RB.put(").removesuffix(");\n")
        key, end = json.JSONDecoder().raw_decode(text)
        pages[key] = json.loads(text[end:].removeprefix(", "))
    return pages


def records_without_texts(lines: list[dict]) -> list[SampleRecord]:
    """Sample lines as a run's aggregation reads them: `SampleRecord`s without their texts."""
    return [SampleRecord.from_dict(line, has_text=False) for line in lines]


def cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ragbench._cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def cli_here(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`cli(*args)` run in this process (`ragbench.testing.cli_here`): the same command, exit code and text, with
    `env` set for the command alone."""
    return ragbench.testing.cli_here(args, env, prog_name="python -m ragbench._cli.main")


@contextlib.contextmanager
def closed_port() -> Iterator[int]:
    """A loopback port nothing answers on while the test runs: bound here and never listened on, so a connection
    is refused and no server of another test (another xdist worker's) can be given it, as a port found free
    and let go could be."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


def comparable(results: dict) -> dict:
    """What must be equal between two runs of the same configuration."""
    return {
        "results": results["results"],
        "details": results["details"],
        "counts": results["counts"],
        "complete": results["complete"],
    }


@contextlib.contextmanager
def tmpfs(folder: Path, size: str = "1m", read_only: bool = False) -> Iterator[Path | None]:
    """A small tmpfs mounted on `folder` (a real full disk, or with `read_only` a real read-only
    folder); None where mounting is not allowed (not root, a CI container): the caller falls back
    to an injected fault."""
    folder.mkdir(parents=True, exist_ok=True)
    options = f"size={size}" + (",ro" if read_only else "")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        yield None
        return
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def plugin_pyproject(name: str, entry_points: dict[str, str], package: str, package_data: tuple[str, ...] = ()) -> str:
    """The pyproject.toml of a one-package plugin that registers `entry_points` in the `ragbench` group."""
    points = "\n".join(f'{key} = "{value}"' for key, value in entry_points.items())
    data = f"\n[tool.setuptools.package-data]\n{package} = {json.dumps(list(package_data))}\n" if package_data else ""
    return (
        f'[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "{name}"\nversion = "0.0.1"\ndependencies = ["ragbench"]\n\n'
        f'[project.entry-points.ragbench]\n{points}\n\n[tool.setuptools]\npackages = ["{package}"]\n{data}'
    )


def stopped_resume_after_the_data_changed(tmp_path: Path, demo: Path, remade: int = 3) -> tuple[Path, str]:
    """A finished closed_book run of the demo task (a copy of `demo`), whose every question then changed, and
    a `--resume` of it (running them all again) stopped by Ctrl-C once `remade` new samples were saved: the
    run folder and what the stopped command printed."""
    data = tmp_path / "demo.jsonl"
    data.write_text(demo.read_text())
    folder = tmp_path / "b"
    args = cli_run_args(
        "scripted:echo",
        "--data",
        f"demo={data}",
        "--model-arg",
        "per_request=0.1",
        "--max-inflight",
        "1",
        "--output",
        str(folder),
        "--no-progress",
    )
    assert cli_here(*args).returncode == 0
    records = [json.loads(line) for line in demo.read_text().splitlines()]
    data.write_text(
        "".join(json.dumps({**r, "question": r["question"] + " Answer briefly."}) + "\n" for r in records)
    )  # new prompts: the cache does not answer them
    resumed = subprocess.Popen(
        [sys.executable, "-m", "ragbench._cli.main", *args, "--resume"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while (
        len((folder / "samples" / "demo.jsonl").read_text().splitlines()) < len(records) + remade
        and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    resumed.send_signal(signal.SIGINT)
    _, stderr = resumed.communicate(timeout=30)
    assert resumed.returncode == 130, stderr
    return folder, stderr


def popqa_args(data: Path, out: Path, *extra: str, model: str = "scripted:echo") -> list[str]:
    """The command line of a vanilla run of the popqa task on `data` into `out`, then `extra`."""
    return task_run_args("popqa", data, "vanilla", model, "--output", str(out), *extra)


def score_args(task: str, data: Path, predictions: Path) -> list[str]:
    """The start of a `ragbench score` command line: the `predictions` of `task` on `data`."""
    return ["score", "--task", task, "--data", str(data), "--predictions", str(predictions)]


def write_dedented(path: Path, text: str) -> None:
    """`text`, dedented, as the file `path` (its folders made): a file of a plugin package a test builds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


def pip_install_args(source: Path, target: Path) -> list[str]:
    """The command that installs the package folder `source` into the folder `target`, offline and alone."""
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "--disable-pip-version-check",
        "-q",
        "--target",
        str(target),
        str(source),
    ]


def cli_run_args(model: str, *extra: str, task: str = "demo", system: str = "closed_book") -> list[str]:
    """The command line of a run of `system` on `task` with `model` (the demo task, closed-book, unless told),
    then `extra`."""
    return ["--tasks", task, "--system", system, "--model", model, *extra]


def task_counts(
    records: int, scored: int, failed: int = 0, bad_records: int = 0, missing: int = 0, metric_failures: int = 0
) -> dict[str, int]:
    """A task's counts as results.json's `counts` holds them: every key, the ones not given 0."""
    return {
        "records": records,
        "scored": scored,
        "failed": failed,
        "bad_records": bad_records,
        "missing": missing,
        "metric_failures": metric_failures,
    }


def task_run_args(task: str, data: Path, system: str, model: str, *extra: str) -> list[str]:
    """The command line of a run of `system` on `model` over the data file `data` of `task`, then `extra`."""
    return cli_run_args(model, "--data", f"{task}={data}", *extra, task=task, system=system)

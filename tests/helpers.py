"""Running ragbench from tests: in-process via the Evaluator, or as a subprocess CLI."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from ragbench._records import SampleRecord
from ragbench._registry import Registry, installed_registry
from ragbench._run.evaluator import Evaluator, RunConfig


def run(tmp_path: Path, name: str = "run", registry: Registry | None = None, **config) -> dict:
    config.setdefault("progress", False)
    config.setdefault("bootstrap_iters", 200)
    outcome = Evaluator(RunConfig(output=str(tmp_path / name), **config), registry or installed_registry()).run()
    return outcome.results


def samples(run_dir: Path, task: str) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "samples" / f"{task}.jsonl").read_text().splitlines()]


def records_without_texts(lines: list[dict]) -> list[SampleRecord]:
    """Sample lines as a run's aggregation reads them: `SampleRecord`s without their texts."""
    return [SampleRecord.from_dict(line, has_text=False) for line in lines]


def cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ragbench._cli.main", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def comparable(results: dict) -> dict:
    """What must be equal between two runs of the same configuration."""
    return {"results": results["results"], "details": results["details"], "counts": results["counts"],
            "complete": results["complete"]}


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
    return (f'[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
            f'[project]\nname = "{name}"\nversion = "0.0.1"\ndependencies = ["ragbench"]\n\n'
            f'[project.entry-points.ragbench]\n{points}\n\n[tool.setuptools]\npackages = ["{package}"]\n{data}')


def stopped_resume_after_the_data_changed(tmp_path: Path, demo: Path, remade: int = 3) -> tuple[Path, str]:
    """A finished closed_book run of the demo task (a copy of `demo`), whose every question then changed, and
    a `--resume` of it (running them all again) stopped by Ctrl-C once `remade` new samples were saved: the
    run folder and what the stopped command printed."""
    data = tmp_path / "demo.jsonl"
    data.write_text(demo.read_text())
    folder = tmp_path / "b"
    args = ["--tasks", "demo", "--data", f"demo={data}", "--system", "closed_book", "--model", "scripted:echo",
            "--model-arg", "per_request=0.1", "--max-inflight", "1", "--output", str(folder), "--no-progress"]
    assert cli(*args).returncode == 0
    records = [json.loads(line) for line in demo.read_text().splitlines()]
    data.write_text("".join(json.dumps({**r, "question": r["question"] + " Answer briefly."}) + "\n"
                            for r in records))  # new prompts: the cache does not answer them
    resumed = subprocess.Popen([sys.executable, "-m", "ragbench._cli.main", *args, "--resume"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while (len((folder / "samples" / "demo.jsonl").read_text().splitlines()) < len(records) + remade
           and time.monotonic() < deadline):
        time.sleep(0.05)
    resumed.send_signal(signal.SIGINT)
    _, stderr = resumed.communicate(timeout=30)
    assert resumed.returncode == 130, stderr
    return folder, stderr

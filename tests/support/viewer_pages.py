"""The viewer's pages as a user gets them: `ragbench view RUNS... --export DIR` writes each page's data as
data/<key>.js (`RB.put(key, data);`), which these helpers run and read back; `ragbench view RUNS... --port 0`
serves them (`/api/<key>`) from a process of its own, the pages of runs that go on as they change. A test of what
the viewer shows goes through the command line, the exported files or the server, not the viewer's modules."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from ragbench.testing import Registry, cli, installed_registry
from support.command_zygote import Zygote

PUT = re.compile(r"RB\.put\((\"(?:[^\"\\]|\\.)*\"), (.*)\);\n", re.S)


def export_view(runs: Iterable[str | Path], out: str | Path, registry: Registry | None = None) -> Path:
    """`ragbench view RUNS... --export OUT`, asserted to succeed; returns OUT."""
    result = CliRunner().invoke(
        cli, ["view", *map(str, runs), "--export", str(out)], obj=registry or installed_registry()
    )
    assert result.exit_code == 0, result.output or repr(result.exception)
    return Path(out)


def exported_page(out: str | Path, key: str) -> Any:
    """The data of the page `key` (`runs`, `run/RID`, `example/RID/TASK/N`, `compare/TASK/...`) an export wrote."""
    *folders, name = key.split("/")
    text = Path(out, "data", *folders, f"{name}.js").read_text(encoding="utf-8")
    found = PUT.fullmatch(text)
    assert found is not None and json.loads(found[1]) == key, text[:200]
    return json.loads(found[2])


def run_ids(out: str | Path) -> list[str]:
    """The ids of the exported runs, in the Runs page's order (each run's pages are keyed by it)."""
    return [run["rid"] for run in exported_page(out, "runs")["runs"]]


def viewer_page(runs: Iterable[str | Path], key: str, registry: Registry | None = None) -> Any:
    """One page of the viewer over `runs` as an export writes it; `{rid}` in `key` is the first run's id."""
    with tempfile.TemporaryDirectory(prefix="ragbench-view-") as scratch:
        out = export_view(runs, Path(scratch) / "site", registry)
        return exported_page(out, key.format(rid=run_ids(out)[0]) if "{rid}" in key else key)


@contextmanager
def viewer_server(zygote: Zygote, *runs: str | Path, host: str = "127.0.0.1") -> Iterator[str]:
    """`ragbench view RUNS... --host HOST --port 0` in a process of its own (a fork of the tests' command zygote),
    for the block: its address (`http://HOST:PORT`); stopped with Ctrl-C's signal after it, having printed no
    traceback."""
    viewer = zygote.popen(
        ["view", *map(str, runs), "--host", host, "--port", "0"],
        {**os.environ, "PYTHONUNBUFFERED": "1"},
        stderr=subprocess.PIPE,
    )
    try:
        line = viewer.stderr.readline() if viewer.stderr else ""
        found = re.search(rf"(http://{re.escape(host)}:\d+)/", line)
        assert found is not None, line
        yield found[1]
    finally:
        viewer.send_signal(signal.SIGINT)
        _, stderr = viewer.communicate(timeout=30)
    assert "Traceback" not in stderr, stderr


def served_page(base: str, key: str) -> Any:
    """The data of the page `key` as the server answers `/api/<key>`."""
    with urllib.request.urlopen(f"{base}/api/{key}", timeout=30) as response:
        return json.load(response)

"""A YAML task file cannot make ragbench use unbounded memory or wait forever: aliases (nine aliases of nine
aliases are a few lines that expand to gigabytes) are refused in one line, a value is formatted in a message
cut short, and a data.path that is a pipe or a device gets the one-line refusal `--data` gets."""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import pytest

from ragbench._values.options import construct
from ragbench.api import ConfigError
from support import paths
from support.command_zygote import Zygote
from support.helpers import cli_run_args

DEMO = paths.REPO / "tasks" / "selfrag" / "data" / "demo_qa.jsonl"
LAUGHS = ['      a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'] + [
    f"      {name}: &{name} [{', '.join([f'*{previous}'] * 9)}]" for previous, name in zip("abcdefgh", "bcdefghi")
]
MEMORY = 1_500_000_000  # the expanded value of LAUGHS is 9**9 strings: ~10 GB to format


def check(zygote: Zygote, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`ragbench check` in a process whose memory is bounded (the safety net of a test that would otherwise fill
    the machine's memory: a fork of the tests' command zygote, bounded before the command starts); the timeout
    only ends a hang the test then reports."""
    args = ("check", *args, "--system", "closed_book", "--model", "scripted:echo", "--no-model")
    return zygote.run(list(args), dict(os.environ), cwd=cwd, timeout=120, limits={resource.RLIMIT_AS: MEMORY})


def task_file(folder: Path, data: str, metric_args: list[str] = (), extra: str = "") -> Path:
    args = "\n    args:\n" + "\n".join(metric_args) if metric_args else ""
    path = folder / "t.yaml"
    path.write_text(
        f"task: t\ndata:\n  path: {data}\nfields:\n  gold:\n    answers: [answers]\n{extra}"
        f"metrics:\n  - name: em{args}\n",
        encoding="utf-8",
    )
    return path


def one_line(result: subprocess.CompletedProcess) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and lines[0].startswith("ragbench: error: "), result.stderr[:2000]
    return lines[0]


def test_aliases_in_metric_args_that_expand_to_gigabytes_are_refused_in_one_line(tmp_path, ragbench_zygote):
    line = one_line(check(ragbench_zygote, "--tasks", str(task_file(tmp_path, str(DEMO), LAUGHS)), cwd=tmp_path))
    assert "t.yaml:10: an alias (*name) of the value anchored here is not allowed in a task file" in line


@pytest.mark.parametrize(
    "yaml", ["base: &b {x: 1}\nother:\n  <<: *b\n", "one: &one answers\ntwo: *one\n"], ids=["merge_key", "scalar"]
)
def test_every_alias_is_refused_naming_the_anchor(tmp_path, yaml, ragbench_zygote):
    line = one_line(check(ragbench_zygote, "--tasks", str(task_file(tmp_path, str(DEMO), extra=yaml)), cwd=tmp_path))
    assert "t.yaml:7: an alias (*name)" in line


def test_an_option_value_in_a_message_is_cut_short():
    value: list = ["lol"] * 9
    for _ in range(6):
        value = [value] * 9  # what aliases of aliases are once read: 9**7 strings, 33 MB to format whole
    with pytest.raises(ConfigError) as refused:
        construct(Metric, {"x": value, "k": 1}, "metric em")
    assert len(str(refused.value)) < 1000 and "has no option 'x'" in str(refused.value)
    for wrong in (value, "z" * 10**6):
        with pytest.raises(ConfigError) as refused:
            construct(Metric, {"k": wrong}, "metric em")
        assert len(str(refused.value)) < 1000 and "metric em takes" in str(refused.value)


class Metric:
    def __init__(self, k: int = 1) -> None:
        self.k = k


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "socket"])
def test_a_data_path_that_is_a_pipe_or_device_is_refused_in_one_line(tmp_path, kind, ragbench_zygote):
    data = tmp_path / "data.jsonl"
    if kind == "fifo":
        os.mkfifo(data)  # opening it would wait for a writer: `check` hung
    elif kind == "dev_zero":
        data.symlink_to("/dev/zero")  # reading it never ends: MemoryError
    else:
        import socket

        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(data))
    line = one_line(check(ragbench_zygote, "--tasks", str(task_file(tmp_path, data.name)), cwd=tmp_path))
    assert f"task t: data.path {data} (" in line and "not a file or folder (a pipe or device)" in line
    # the run refuses it as `check` did (the run a fork of the tests' command zygote)
    run = ragbench_zygote.run(
        [*cli_run_args("scripted:echo", task=str(tmp_path / "t.yaml")), "--output", str(tmp_path / "run")],
        dict(os.environ),
        timeout=120,
    )
    assert one_line(run) == line and not (tmp_path / "run").exists()

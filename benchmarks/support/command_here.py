"""A `ragbench` command run in the calling process, as `python -m ragbench._cli.main ARGS` runs it in a fresh one
(`ragbench.testing.cli_here`, the runner the tests use too):
the quick modes of benchmarks/hf_engine.py, multihop_memory.py, storage_scale.py, dense_gpu.py, yaml_task_load.py
and aggregation_memory.py run their commands so (`python -c CODE` ones too: `python_here`). Their full
modes measure fresh processes (wall seconds, peak RSS), which a quick mode does not check: it checks that the
script runs end to end and prints its figures, and a fresh interpreter that loads the embedded model imports
torch and transformers again (~8 s of CPU on a 2-vCPU VM) to do it.

A script imports it with benchmarks/support put on `sys.path` (a folder, not a package: the test that runs the
scripts has tests/support under the name `support`)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence


@contextlib.contextmanager
def environment(env: Mapping[str, str]) -> Iterator[None]:
    """The block runs with the environment `env` alone; the process's own is put back after it."""
    environ = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(environ)


def ragbench_here(args: Sequence[str], env: Mapping[str, str], cwd: str | None = None) -> tuple[int, str]:
    """`ragbench ARGS` with the environment `env` alone (in the folder `cwd`), in this process
    (`ragbench.testing.cli_here`, which puts back what the command changes): its exit status and what it wrote to
    stderr (its stdout is dropped, as the scripts drop a fresh process's)."""
    from ragbench.testing import cli_here

    done = cli_here(args, env, env_only=True, cwd=cwd)
    return done.returncode, done.stderr


def python_here(args: Sequence[str], env: Mapping[str, str]) -> tuple[int, str, str]:
    """`PYTHON -m ragbench._cli.main ARGS` (`ragbench_here`, its stdout dropped) or `PYTHON -c CODE ARGS` (its
    stdout kept, the environment `env` while it runs) in this process: exit status, stdout and stderr."""
    if list(args[1:3]) == ["-m", "ragbench._cli.main"]:
        status, error = ragbench_here(args[3:], env)
        return status, "", error
    if args[1:2] != ["-c"]:
        raise ValueError(f"not a `python -m ragbench._cli.main` or `python -c` command: {args[:3]}")
    argv, stdout = sys.argv, sys.stdout
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out, environment(env):
        sys.argv, sys.stdout = ["-c", *args[3:]], out
        try:
            exec(compile(args[2], "<string>", "exec"), {"__name__": "__main__"})
        finally:
            sys.argv, sys.stdout = argv, stdout
        out.seek(0)
        return 0, out.read(), ""

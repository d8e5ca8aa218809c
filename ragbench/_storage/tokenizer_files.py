"""The tokenizer folder a benchmark's evaluation cuts answers with (CRAG's Llama-2, CRAG-MM's Llama-3.2): found from
the task's `tokenizer` option, an environment variable or ragbench's data folder, each miss one line saying how to give
it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .datafiles import data_dir


def tokenizer_in_context(ctx: Any, env: str, missing: str) -> str:
    """A metric's tokenizer folder: its task's `tokenizer_path`, else $`env`; ValueError(`missing`) without one."""
    path = getattr(getattr(ctx, "task", None), "tokenizer_path", None) or os.environ.get(env)
    if not path:
        raise ValueError(missing)
    return str(path)


def find_tokenizer_dir(task: str, given: str | None, env: str, folder: str, needs: str, source: str) -> str:
    """The first of `given`, $`env` and DATA_DIR/`folder` that holds a tokenizer.json; else a ConfigError saying
    why the task `needs` it and the three ways to give it (`source`: where the user gets it)."""
    for candidate in (given, os.environ.get(env), data_dir() / folder):
        if candidate and (Path(candidate) / "tokenizer.json").is_file():
            return str(candidate)
    named = given or os.environ.get(env)
    where = f"{named} has no tokenizer.json; " if named else ""
    raise ConfigError(
        f"task {task}: {where}{needs}: pass --task-arg tokenizer=DIR ({source}), set ${env}, or put it in "
        f"{data_dir() / folder}"
    )


def refuse_tokenizer(task: str, problem: str | None, fix: str) -> None:
    """The pre-flight's refusal of a tokenizer folder that is not the one the evaluation cuts with."""
    if problem:
        raise ConfigError(f"task {task}: {problem}; {fix}")

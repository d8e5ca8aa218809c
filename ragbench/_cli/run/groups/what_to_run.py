"""What a run runs: its tasks, their data and options, the system and its options, the seed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import click

from ...._values.options import parse_assignments
from ...._values.run_groups import RunWhat
from .option import Option, OptionGroup


def split_names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


def data_paths(items: tuple[str, ...]) -> dict[str, str]:
    return {k: str(v) for k, v in parse_assignments(items, "--data").items()}


class WhatToRun(OptionGroup):
    TITLE: ClassVar[str] = "What to run"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option(
            ("--tasks",),
            ("tasks",),
            {
                "default": None,
                "help": "comma-separated task or group names (ragbench list tasks), or YAML task files "
                "(docs/yaml-tasks.md)",
            },
        ),
        Option(
            ("--include-path",),
            ("tasks",),
            {
                "multiple": True,
                "metavar": "DIR",
                "help": "a folder of YAML tasks: --tasks may name any task (or group) declared by a *.yaml file "
                "under it (repeatable)",
            },
        ),
        Option(
            ("--data",), ("data",), {"multiple": True, "metavar": "TASK=PATH", "help": "local data file for a task"}
        ),
        Option(
            ("--task-arg",),
            ("task_args",),
            {"multiple": True, "metavar": "K=V", "help": "task option; TASK.K=V for one task"},
        ),
        Option(("--limit",), ("limit",), {"default": None, "type": int, "help": "first N records of each task"}),
        Option(
            ("--system",),
            ("system",),
            {"default": "vanilla", "show_default": True, "help": "system name (ragbench list systems)"},
        ),
        Option(
            ("--system-arg",),
            ("system_args",),
            {"multiple": True, "metavar": "K=V", "help": "system option, e.g. top_n=5"},
        ),
        Option(
            ("--top-k",),
            ("top_k",),
            {
                "default": None,
                "type": click.IntRange(min=1),
                "metavar": "N",
                "help": "passages shown per reader call, set through the option the system declares for it (a "
                "system that declares none refuses it); applies to the run's one system",
            },
        ),
        # numbers are ranged by the pre-flight (the groups' `problems()`, ragbench._values.run_groups), one line each
        Option(
            ("--seed",),
            ("seed",),
            {"default": 0, "show_default": True, "type": int, "help": "seeds sampling and the bootstrap (>= 0)"},
        ),
    )

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> RunWhat:
        """The tasks of --include-path folders are named by their files, so the run's config says which files it
        ran."""
        from ...._yaml_tasks.discovery import include

        names = split_names(values.get("tasks") or "")
        folders = values.get("include_path", ())
        return RunWhat(
            tasks=include(names, folders) if folders else names,
            data=data_paths(values.get("data", ())),
            task_args=parse_assignments(values.get("task_arg", ()), "--task-arg"),
            limit=values.get("limit"),
            system=values.get("system", "vanilla"),
            system_args=parse_assignments(values.get("system_arg", ()), "--system-arg"),
            top_k=values.get("top_k"),
            seed=values.get("seed", 0),
        )

"""A system's options for one task, merged from their sources in one declared order (`SOURCES`, lowest first;
docs/running.md's table of them is checked against it). `--top-k N` is one of them: one budget of passages shown
per reader call for whatever system a run has, given to the option the system declares for it
(`SystemDeclaration.budget_options["passages"]`); a system that declares none refuses it: an option that a system
does not read is never silently ignored."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..._errors import ConfigError
from ..._system import System
from ..._values.options import accepted_options


@dataclass(frozen=True)
class OptionSource:
    """One source of a system's options: a later source's value replaces an earlier one's."""

    given_by: str  # how it is given, as the docs' table says it
    reaches: str  # which options it sets


SOURCES = (
    OptionSource("the system's own defaults (its `__init__`)", "every option no source below sets"),
    OptionSource(
        "the task's declared `system_args` (its YAML file or catalogue entry)",
        "the options the system takes, except those it names in `own_defaults`",
    ),
    OptionSource(
        "the task's `system_defaults()` (e.g. RGB's passages)",
        "the options the system takes, except those it names in `own_defaults`",
    ),
    OptionSource("`--top-k N`", "the option the system declares for the passages it shows (`budget_options`)"),
    OptionSource(
        "`--system-arg K=V` (for `ragbench reproduce`, the row's `system_args`, then yours key by key)",
        "any option the system takes; one `--top-k` also sets must have its value",
    ),
)


def system_options(
    system_class: type[System],
    declared: Mapping[str, object],
    task_defaults: Mapping[str, object],
    top_k: int | None,
    system_args: Mapping[str, object],
) -> dict[str, object]:
    """The options a system is built with for one task, each source of `SOURCES` over the ones before it:
    the task's `declared` system_args, its `task_defaults`, `--top-k` and `--system-arg` (the system's own
    defaults are what remains unset). A `ConfigError` where `--top-k` cannot be given to the system."""
    accepted = accepted_options(system_class)
    keeps = set(system_class.declares.own_defaults)

    def for_the_system(options: Mapping[str, object]) -> dict[str, object]:
        return {k: v for k, v in options.items() if (accepted is None or k in accepted) and k not in keeps}

    layers: tuple[Mapping[str, object], ...] = (
        for_the_system(declared),
        for_the_system(task_defaults),
        top_k_args(top_k, system_class, system_args, accepted),
        system_args,
    )
    merged: dict[str, object] = {}
    for layer in layers:
        merged.update(layer)
    return merged


def top_k_args(
    top_k: int | None, system_class: type[System], system_args: Mapping[str, Any], accepted: set[str] | None
) -> dict[str, Any]:
    """The system options `--top-k` sets (none without it); a `ConfigError` where the system declares no option
    for the passages it shows, declares one it does not take (`accepted`: its options; None, any), or where
    `--system-arg` sets that option to another value."""
    if top_k is None:
        return {}
    name = getattr(system_class, "name", "") or system_class.__name__
    option = system_class.declares.budget_options.get("passages")
    if option is None:
        raise ConfigError(
            f"--top-k {top_k}: system {name} declares no option for the passages it shows "
            "(SystemDeclaration.budget_options), so it cannot take --top-k; leave --top-k out for it"
        )
    if accepted is not None and option not in accepted:
        raise ConfigError(
            f"--top-k {top_k}: system {name} declares option {option} for the passages it shows, "
            "but takes no such option (a bug of the system's budget_options)"
        )
    if option in system_args and system_args[option] != top_k:
        raise ConfigError(
            f"--top-k {top_k} and --system-arg {option}={system_args[option]} both set system {name}'s "
            f"{option}: give one"
        )
    return {option: top_k}

"""`--top-k N`: one budget of passages shown per reader call for whatever system a run has, given to the option
the system declares for it (`SystemDeclaration.budget_options["passages"]`). A system that declares none refuses it: an
option that a system does not read is never silently ignored."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._errors import ConfigError
from ..._system import System


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

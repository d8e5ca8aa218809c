"""Read-only mapping defaults of the contract classes (`Metric.key_specs`, `Metric.counters`; a task's
`TaskScoring.metric_options` is frozen by `TaskScoring` itself).

A dict written at class level is one object shared by the class, its subclasses and their instances: an
item written into it through one task would change every other. So the bases' defaults are empty read-only
mappings and a subclass's own dict is made read-only when the class is created (`freeze_mappings`, from
`__init_subclass__`): writing into one is a TypeError. A class declares its own mapping; an instance that
needs different values assigns a new one (`self.metric_options = {...}`), which only it sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

EMPTY: Mapping[str, Any] = MappingProxyType({})


def freeze_mappings(cls: type, *names: str) -> None:
    """Replace each dict `cls` itself declares under `names` by a read-only copy (its dict values too)."""
    for name in names:
        value = cls.__dict__.get(name)
        if isinstance(value, dict):
            setattr(
                cls,
                name,
                MappingProxyType(
                    {
                        key: MappingProxyType(dict(item)) if isinstance(item, dict) else item
                        for key, item in value.items()
                    }
                ),
            )

"""A run's models told by their files: "kind:model content_id" by place in the run (model, role NAME,
judge N, nli; the content_id a digest of a local model's files, ragbench._engines.local.content), as run.json
records them and --resume compares them, so that a model whose files changed under the same name is
refused."""

from __future__ import annotations

from typing import Any

from ..._registry import Registry
from ..._values.json_values import JsonObject
from .run_engines import Engines


def model_contents(engines: Engines, registry: Registry, recorded: JsonObject | None = None) -> dict[str, str]:
    """The loaded engines' contents; with `recorded` (the run.json config of a run whose only work left is
    metrics, the system's engines not loaded), the recorded ones of the others too, told again from their
    files (`contents_now`)."""
    loaded = engines.content_ids()
    if recorded is None:
        return loaded
    told = contents_now(registry, recorded.get("model_contents"))
    return {**(told if isinstance(told, dict) else {}), **loaded}


def contents_now(registry: Registry, recorded: Any) -> Any:
    """The recorded model contents, each content_id told again without loading the engine
    (`Engine.content_of`; kept as recorded where the engine cannot tell)."""
    if not isinstance(recorded, dict):
        return recorded  # not what ragbench writes: check_same_inputs names it
    now = {}
    for place, entry in recorded.items():
        name, _, _ = str(entry).rpartition(" ")
        kind, _, model = name.partition(":")
        known = kind in registry.names("engines")
        content = registry.load("engines", kind).content_of(model) if known else None
        now[place] = f"{name} {content}" if content is not None else entry
    return now

"""LLM engines (a plugin package like any other) and the `engine:model` string parser."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..builtin import section
from ..errors import ConfigError
from ..hookspecs import hookimpl
from .base import Engine
from .replicas import endpoint_replicas, ray_replicas, wants_ray

if TYPE_CHECKING:
    from ..registry import Registry

EMBEDDED_MODEL = "hf:embedded"


@hookimpl
def ragbench_catalog() -> dict[str, Any]:
    return section("engines")


def load_engine(model: str | None, *, registry: "Registry | None" = None, **options: Any) -> Engine:
    """Build an engine from `engine:model` (e.g. `hf:Qwen/Qwen2.5-7B-Instruct`, `replay:calls.jsonl`),
    its class from the run's `registry` (the installed plugins' when none is given).

    No model means the embedded default, SmolLM2-135M-Instruct on transformers.
    """
    from ..registry import get_registry

    model = model or EMBEDDED_MODEL
    kind, sep, name = model.partition(":")
    if not sep or not name:
        raise ConfigError(f"model '{model}' is not of the form engine:model "
                          f"(e.g. hf:Qwen/Qwen2.5-0.5B-Instruct, openai:gpt-4o-mini, replay:calls.jsonl)")
    engine_class = (registry or get_registry()).load("engines", kind)
    try:
        if wants_ray(options):  # data parallelism: replicas as Ray actors, each building engine_class
            return ray_replicas(engine_class, model, dict(options))
        if isinstance(options.get("base_url"), (list, tuple)):  # several endpoints of one model
            rest = {k: v for k, v in options.items() if k != "base_url"}
            return endpoint_replicas(engine_class, name, list(options["base_url"]), rest)
        return engine_class(name, **options)
    except TypeError as exc:
        raise ConfigError(f"engine '{kind}': bad --model-arg ({exc})") from exc

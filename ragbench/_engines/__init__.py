"""LLM engines (a plugin package like any other) and the `engine:model` string parser.

Here the engine interface (`base`), replicas of one model (`replicas`) and the engines that run no model (`scripted`,
`replay`); by family: transformers (`hf/`), vLLM (`vllm/`), hosted APIs (`hosted/`: openai, anthropic, gemini and
their batch APIs) and what the engines that run a model here share (`local/`).
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._builtin import section
from .._errors import ConfigError
from .._hookspecs import hookimpl
from .._values.engine_needs import EngineNeeds

if TYPE_CHECKING:
    from .._registry import Registry
    from .._values.json_values import JsonObject
    from .base import Engine

EMBEDDED_MODEL = "hf:embedded"
_HEAVY_IMPORTS = {"hf": ("torch", "transformers")}  # seconds to import: started early, in the background


def preload(*models: str | None) -> threading.Thread | None:
    """Start importing the heavy libraries of these models' engines (torch and transformers for `hf`, whose
    import takes seconds) in a background thread, so they load while the plan, the data and the retriever do; the
    thread (None when there is nothing to import) is the caller's, which joins it before it loads an
    engine (the run: `RunServices.open_engines`). A failure is left for the engine's own import to report."""
    kinds = {model.partition(":")[0] for model in models if model}  # not the default: a run may need none
    names = [name for kind in sorted(kinds) for name in _HEAVY_IMPORTS.get(kind, ()) if name not in sys.modules]
    if not names:
        return None
    thread = threading.Thread(target=_import_quietly, args=(names,), name="ragbench-preload", daemon=True)
    thread.start()
    return thread


def _import_quietly(names: list[str]) -> None:
    try:
        for name in names:
            module = importlib.import_module(name)
            if name == "transformers":  # its lazy module: the model classes are what takes the time
                module.AutoModelForCausalLM, module.AutoTokenizer  # noqa: B018
    except Exception:
        pass


@hookimpl
def ragbench_catalog() -> JsonObject:
    return {**section("engines")}


def starts_processes(model: str | None, options: Mapping[str, Any], registry: Registry) -> bool:
    """Whether the engine `load_engine(model, **options)` builds may start processes a killed run must end: its
    class's `Engine.starts_processes`, or Ray replicas of any engine. An unknown engine is load_engine's to say."""
    from .replicas import wants_ray  # this module is a plugin: it stays light (ragbench --help imports it)

    try:
        engine_class = registry.load("engines", (model or EMBEDDED_MODEL).partition(":")[0])
    except ConfigError:
        return True
    return bool(getattr(engine_class, "starts_processes", True)) or wants_ray(options)


def load_engine(model: str | None, *, registry: Registry, needs: Sequence[EngineNeeds] = (), **options: Any) -> Engine:
    """Build an engine from `engine:model` (e.g. `hf:Qwen/Qwen2.5-7B-Instruct`, `replay:calls.jsonl`),
    its class from the run's `registry`, set up for the
    `needs` of the systems it serves (`Engine.meet_needs`: e.g. vLLM started with max_logprobs=-1 for
    Self-RAG; what cannot be met is the pre-flight's to report).

    No model means the embedded default, SmolLM2-135M-Instruct on transformers.
    """
    model = model or EMBEDDED_MODEL
    kind, sep, name = model.partition(":")
    if not sep or not name:
        raise ConfigError(
            f"model '{model}' is not of the form engine:model "
            f"(e.g. hf:Qwen/Qwen2.5-0.5B-Instruct, openai:gpt-4o-mini, replay:calls.jsonl)"
        )
    from .replicas import endpoint_replicas, ray_replicas, wants_ray

    engine_class = registry.load("engines", kind)
    declared_chat = options.pop("chat", None)  # every engine's option (Engine.declared_chat), not the class's
    if needs:
        options, _ = engine_class.meet_needs(name, options, needs)
    try:
        if wants_ray(options):  # data parallelism: replicas as Ray actors, each building engine_class
            engine: Engine = ray_replicas(engine_class, model, dict(options))
        elif isinstance(options.get("base_url"), (list, tuple)):  # several endpoints of one model
            rest = {k: v for k, v in options.items() if k != "base_url"}
            engine = endpoint_replicas(engine_class, name, list(options["base_url"]), rest)
        else:
            engine = engine_class(name, **options)
    except TypeError as exc:
        raise ConfigError(f"engine '{kind}': bad --model-arg ({exc})") from exc
    engine.declared_chat = declared_chat
    return engine

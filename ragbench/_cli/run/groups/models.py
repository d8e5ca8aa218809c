"""The models a run's system calls: its model and that model's engine options, and a model of its own for some of the
system's roles."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ...._errors import ConfigError
from ...._values.options import parse_assignments
from ...._values.run_groups import RunModels
from .option import Option, OptionGroup


class ModelOptions(OptionGroup):
    TITLE: ClassVar[str] = "Model and engine"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option(
            ("--model",),
            ("model",),
            {
                "default": None,
                "help": "engine:model, e.g. hf:Qwen/Qwen2.5-0.5B-Instruct, vllm:/models/llama, openai:gpt-4o-mini, "
                "replay:calls.jsonl (default: embedded SmolLM2)",
            },
        ),
        Option(
            ("--model-arg",),
            ("model_args",),
            {"multiple": True, "metavar": "K=V", "help": "engine option (batch_size, dtype, base_url ...)"},
        ),
        Option(
            ("--base-url",),
            ("model_args",),
            {
                "multiple": True,
                "help": "OpenAI-compatible server URL (default: $OPENAI_BASE_URL); repeat it for several servers of "
                "one model (least-loaded dispatch)",
            },
        ),
        Option(
            ("--role-model",),
            ("role_models", "role_model_args"),
            {
                "multiple": True,
                "metavar": "ROLE=MODEL",
                "help": "engine:model for one role of the system (e.g. smart's reconstructor, locator, generator); "
                "other roles use --model",
            },
        ),
        Option(
            ("--role-model-arg",),
            ("role_model_args",),
            {
                "multiple": True,
                "metavar": "ROLE.K=V",
                "help": "engine option of a --role-model, e.g. locator.gpu_memory_utilization=0.3",
            },
        ),
    )

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> RunModels:
        model_args = parse_assignments(values.get("model_arg", ()), "--model-arg")
        base_url: tuple[str, ...] = values.get("base_url", ())
        if base_url:
            model_args["base_url"] = base_url[0] if len(base_url) == 1 else list(base_url)
        role_models = _role_models(values.get("role_model", ()))
        return RunModels(
            model=values.get("model"),
            model_args=model_args,
            role_models=role_models,
            role_model_args=_role_model_args(values.get("role_model_arg", ()), role_models),
        )


def _role_models(items: tuple[str, ...]) -> dict[str, str]:
    """--role-model ROLE=ENGINE:MODEL (repeatable)."""
    models: dict[str, str] = {}
    for item in items:
        role, sep, model = item.partition("=")
        if not sep or not role.strip() or not model.strip():
            raise ConfigError(
                f"--role-model {item!r}: expected ROLE=ENGINE:MODEL, e.g. locator=hf:/models/smart-locator"
            )
        if role.strip() in models:
            raise ConfigError(f"--role-model {role.strip()}: given twice")
        models[role.strip()] = model.strip()
    return models


def _role_model_args(items: tuple[str, ...], models: dict[str, str]) -> dict[str, dict[str, Any]]:
    """--role-model-arg ROLE.KEY=VALUE, ROLE one of the --role-model roles."""
    options: dict[str, dict[str, Any]] = {}
    for key, value in parse_assignments(items, "--role-model-arg").items():
        role, _, option = key.partition(".")
        if role not in models or not option:
            raise ConfigError(
                f"--role-model-arg {key}=...: expected ROLE.KEY with ROLE one of the --role-model roles "
                f"({', '.join(models) or 'none given'})"
            )
        options.setdefault(role, {})[option] = value
    return options

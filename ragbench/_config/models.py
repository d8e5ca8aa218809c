"""The models a run's system calls, as the engines load them (`RunModels`)."""

from __future__ import annotations

from dataclasses import dataclass

from .run_option import SCORED, Flag, option, pairs


@dataclass(frozen=True)
class RunModels:
    """The models a run's system calls (the engines load them): its model and that model's engine options, and a
    model of its own for some of the system's roles. Its engines are checked with the registry
    (ragbench._run.plan.engine_checks.check_engines)."""

    model: str | None = option(  # None: the embedded default
        None,
        help="engine:model, e.g. hf:Qwen/Qwen2.5-0.5B-Instruct, vllm:/models/llama, openai:gpt-4o-mini, "
        "replay:calls.jsonl (default: embedded SmolLM2)",
        offers=SCORED,
    )
    model_args: dict[str, object] = pairs(
        "--model-arg",
        "K=V",
        "engine option (batch_size, dtype, base_url ...)",
        # the model's base_url option, repeatable: one URL or a list (ragbench._cli.run.option_values)
        Flag(
            name="--base-url",
            help="OpenAI-compatible server URL (default: $OPENAI_BASE_URL); repeat it for several servers of one "
            "model (least-loaded dispatch)",
            offers=SCORED,
        ),
        offers=SCORED,
    )
    role_models: dict[str, str] = pairs(  # a system's role -> engine:model
        "--role-model",
        "ROLE=MODEL",
        "engine:model for one role of the system (e.g. smart's reconstructor, locator, generator); other roles "
        "use --model",
        offers={"reproduce": {"help": "engine:model for one role of the row's system (changes what is measured)"}},
    )
    role_model_args: dict[str, dict[str, object]] = pairs(  # role -> engine options
        "--role-model-arg",
        "ROLE.K=V",
        "engine option of a --role-model, e.g. locator.gpu_memory_utilization=0.3",
    )

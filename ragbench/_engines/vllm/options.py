"""What the `vllm` engine starts vLLM with: the documented options and their types (checked by the
pre-flight before vLLM is imported for real), those that do not change answers (left out of the engine
id), and `max_logprobs` set for the log-prob windows the systems need (`Engine.meet_needs`)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
from collections.abc import Mapping
from typing import Annotated, Any

from annotated_types import Ge, Gt, Le

from ..._values.options import engine_option_problems

INSTALL_HINT = "pip install ragbench[vllm]"
DEFAULT_MAX_LOGPROBS = 20  # vLLM's limit on the top-k log-probs of a request unless started with max_logprobs
# Options that do not change what the model answers (kept out of the engine id).
NEUTRAL_OPTIONS = {
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "gpu_memory_utilization",
    "enable_lora",
    "max_lora_rank",
    "max_loras",
    "max_logprobs",
    "trust_remote_code",
    "enforce_eager",
    "swap_space",
    "cpu_offload_gb",
    "max_num_seqs",
    "max_num_batched_tokens",
    "download_dir",
    "disable_log_stats",
    "enable_prefix_caching",
}


# The vllm.LLM options ragbench documents, typed so that the pre-flight checks their values before vLLM
# starts; any other vllm.EngineArgs field passes on verbatim (its name is checked when vLLM is installed).
OPTION_TYPES = {
    "tensor_parallel_size": Annotated[int, Ge(1)],
    "pipeline_parallel_size": Annotated[int, Ge(1)],
    "dtype": str,
    "max_model_len": Annotated[int, Ge(1)] | None,
    "gpu_memory_utilization": Annotated[float, Gt(0), Le(1)],
    "enable_lora": bool,
    "max_lora_rank": Annotated[int, Ge(1)],
    "max_loras": Annotated[int, Ge(1)],
    "max_logprobs": Annotated[int, Ge(-1)],
    "trust_remote_code": bool,
    "enforce_eager": bool,
    "max_num_seqs": Annotated[int, Ge(1)],
    "max_num_batched_tokens": Annotated[int, Ge(1)] | None,
    "swap_space": Annotated[float, Ge(0)],
    "cpu_offload_gb": Annotated[float, Ge(0)],
    "quantization": str | None,
}


def option_value(value: Any) -> Any:
    """--model-arg values may arrive as strings: 'true' -> True, '0.5' -> 0.5, '4096' -> 4096."""
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        for cast in (int, float):
            try:
                return cast(value)
            except ValueError:
                pass
    return value


def start_option_problems(engine_class: type, options: Mapping[str, object]) -> list[str]:
    """vLLM is installed, and every option is one of OPTION_TYPES (of its type) or a vllm.EngineArgs field."""
    try:
        import vllm
    except ImportError as exc:
        return [f"the vllm engine needs vLLM ({exc}); run `{INSTALL_HINT}`"]
    engine_args = getattr(vllm, "EngineArgs", None)
    fields = (
        ({field.name for field in dataclasses.fields(engine_args)}, "any other vllm.EngineArgs field")
        if dataclasses.is_dataclass(engine_args)
        else None
    )
    return engine_option_problems(
        engine_class, {name: option_value(value) for name, value in options.items()}, OPTION_TYPES, fields
    )


def options_for_needs(options: Mapping[str, object], needs: Any) -> tuple[dict[str, object], list[str]]:
    """Named-token log-probs read within a top-k window need vLLM's top-k dicts (`max_logprobs` >= k),
    and read exactly on a vLLM without `logprob_token_ids`, the whole vocabulary's (-1): vLLM fixes
    max_logprobs when it starts, so it is set here (-1) when not given, and a smaller value given is
    refused before vLLM starts. Without vLLM nothing is set (the pre-flight says to install it)."""
    try:
        import vllm
    except ImportError:
        return dict(options), []
    exact_needs_all = not accepts(vllm.SamplingParams, "logprob_token_ids")
    required = [
        (need, -1 if need.logprob_window is None else need.logprob_window)
        for need in needs
        if need.logprob_tokens and (need.logprob_window is not None or exact_needs_all)
    ]
    required = [(need, k) for need, k in required if k == -1 or k > DEFAULT_MAX_LOGPROBS]
    if not required:
        return dict(options), []
    if "max_logprobs" not in options:
        return {**options, "max_logprobs": -1}, []
    given = option_value(options["max_logprobs"])
    problems = [
        f"--model-arg max_logprobs={given}: {need.system} reads log-probs of named tokens "
        + (
            f"within vLLM's top-{k} dicts: give max_logprobs >= {k} or -1"
            if k != -1
            else "from the whole vocabulary (this vLLM has no logprob_token_ids): give max_logprobs=-1"
        )
        + (
            f", or leave it out (-1 is then set), or {need.instead}"
            if need.instead
            else ", or leave it out (-1 is then set)"
        )
        for need, k in required
        if given != -1 and (k == -1 or not isinstance(given, int) or given < k)
    ]
    return dict(options), problems


def accepts(cls: Any, name: str) -> bool:
    """Whether `cls(...)` takes the keyword `name` (vLLM's SamplingParams gained fields over versions)."""
    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def json_constraint(json_schema: str) -> dict[str, Any]:
    """A request's `json_schema` (`{"name", "schema"}`, as the openai engine sends it) as vLLM's decoding constraint
    on its schema: `structured_outputs=StructuredOutputsParams(json=...)` (vLLM 0.11 on; 0.12 has only this),
    `guided_decoding=GuidedDecodingParams(json=...)` before (what CRAG-MM's QueryRewrite sends)."""
    schema = json.loads(json_schema)["schema"]
    params = importlib.import_module("vllm.sampling_params")
    if hasattr(params, "StructuredOutputsParams"):
        return {"structured_outputs": params.StructuredOutputsParams(json=schema)}
    return {"guided_decoding": params.GuidedDecodingParams(json=schema)}


def cache_dir_option(options: Mapping[str, object]) -> str | None:
    """The `cache_dir` option (the hub's cache the tokenizer is read from), as a path's text; None: the default."""
    value = options.get("cache_dir")
    return None if value is None else str(value)

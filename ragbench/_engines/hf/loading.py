"""Where the hf engine's model is, and how it is loaded: a local folder or GGUF file, the embedded model, or a hub
name read from the local Hugging Face cache first and from the hub only where the hub can answer."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..._checks import HUB_FLAGS, hub_fetch_problem
from ..._errors import ConfigError
from ..base import one_line
from ..local.embedded import embedded_safetensors_dir, is_embedded
from ..local.vision import takes_images

Loaded = TypeVar("Loaded")


def import_hf() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise ConfigError(
            f"the hf engine needs torch and transformers ({exc}); run `pip install ragbench[hf]`"
        ) from exc
    return torch, transformers


def truthy(value: Any) -> bool:
    """An option given as text ("1", "true", "yes", "on") or as a value."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


@dataclass(frozen=True)
class LoadedModel:
    model: Any  # on its device, in eval mode
    tokenizer: Any
    seq2seq: bool  # an encoder-decoder checkpoint (T5, e.g. the TRUE NLI model)
    processor: Any  # an image-text-to-text model's AutoProcessor (hf/vision.py), else None


@dataclass(frozen=True)
class ModelPlace:
    folder: str  # what transformers loads: a folder, or a hub name
    gguf_file: str | None = None  # a GGUF file in `folder`
    local_only: bool = True  # never asked of the hub
    on_disk: bool = False  # given as a path: its files are its content


def model_place(model: str) -> ModelPlace:
    """Where `model` is: the embedded model's de-quantized folder (~/.cache/ragbench, made once), a path on disk,
    or a hub name (the hub is asked unless HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set)."""
    if is_embedded(model):
        return ModelPlace(str(embedded_safetensors_dir()))
    path = Path(model).expanduser()
    if path.exists() or model.startswith(("/", ".", "~")) or model.endswith(".gguf"):
        if not path.exists():
            raise ConfigError(f"hf engine: model path '{model}' does not exist")
        if path.is_file():
            return ModelPlace(str(path.parent), path.name, on_disk=True)
        return ModelPlace(str(path), on_disk=True)
    offline = any(truthy(os.environ.get(name, "")) for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
    return ModelPlace(model, local_only=offline)


def cache_then_hub(load: Callable[[bool], Loaded], place: ModelPlace) -> Loaded:
    """`load(local_files_only)` from the local files, then from the hub where the place allows it and the hub
    answers (a ConfigError at once where it does not, not a minute of the hub client's retries)."""
    try:
        return load(True)
    except OSError:
        if place.local_only:
            raise
    with HUB_FLAGS:
        if why := hub_fetch_problem(place.folder):
            raise ConfigError(
                f"hf engine: {why}; give the model's folder (--model hf:/path/to/model) or fetch it "
                "into the cache where the hub can be reached"
            ) from None
        return load(False)


def set_up_tokens(tok: Any, model: Any, transformers: Any, name: str) -> tuple[set[int], int, int]:
    """The model's end-of-sequence ids, its pad id (the eos token where it has none) and its context length;
    the tokenizer pads on the left, and only a request's Sampling decides decoding (the checkpoint's generation
    defaults are dropped)."""
    old = model.generation_config
    eos = old.eos_token_id if old.eos_token_id is not None else tok.eos_token_id
    eos_ids = [eos] if isinstance(eos, int) else list(eos or [])
    if tok.eos_token_id is not None and tok.eos_token_id not in eos_ids:
        eos_ids.append(tok.eos_token_id)
    if tok.pad_token_id is None:
        if tok.eos_token is None:
            raise ConfigError(f"hf engine: model '{name}' has neither a pad nor an eos token")
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    pad_id = int(tok.pad_token_id)
    model.generation_config = transformers.GenerationConfig(
        eos_token_id=eos_ids or None,
        pad_token_id=pad_id,
        bos_token_id=old.bos_token_id,
        decoder_start_token_id=old.decoder_start_token_id,
    )
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    return set(eos_ids), pad_id, int(getattr(config, "max_position_embeddings", 0) or 0)


def load_model(
    transformers: Any, place: ModelPlace, dtype: Any, trust_remote_code: bool, device: str, name: str
) -> LoadedModel:
    """The model at `place` and its tokenizer (and an image-text model's processor), from the local files first
    (`cache_then_hub`), on `device`; what fails to load is a ConfigError naming the model."""
    extra: dict[str, Any] = {"trust_remote_code": trust_remote_code}
    if place.gguf_file:
        extra["gguf_file"] = place.gguf_file

    def load(local_files_only: bool) -> LoadedModel:
        tokenizer = transformers.AutoTokenizer.from_pretrained(place.folder, local_files_only=local_files_only, **extra)
        # Encoder-decoder checkpoints (T5, e.g. the TRUE NLI model) load as seq2seq models.
        config = (
            None
            if place.gguf_file
            else transformers.AutoConfig.from_pretrained(place.folder, local_files_only=local_files_only, **extra)
        )
        seq2seq = bool(getattr(config, "is_encoder_decoder", False))
        auto = transformers.AutoModelForSeq2SeqLM if seq2seq else transformers.AutoModelForCausalLM
        processor = None
        if takes_images(config):  # an image-text-to-text model: its processor renders requests with images
            auto = transformers.AutoModelForImageTextToText
            processor = transformers.AutoProcessor.from_pretrained(
                place.folder, local_files_only=local_files_only, **extra
            )
        model = auto.from_pretrained(place.folder, dtype=dtype, local_files_only=local_files_only, **extra)
        return LoadedModel(model, tokenizer, seq2seq, processor)

    transformers.utils.logging.disable_progress_bar()  # loading bars are noise beside the run's own
    try:
        loaded = cache_then_hub(load, place)
        loaded.model.to(device)
    except ConfigError:
        raise
    except Exception as exc:  # OSError, ValueError, hub errors, missing gguf/accelerate...
        raise ConfigError(f"hf engine: cannot load model '{name}' ({one_line(exc)})") from exc
    loaded.model.eval()
    return loaded

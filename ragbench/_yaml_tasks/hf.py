"""Records through Hugging Face `datasets`: a hub dataset by name (from the HF cache offline), a folder
written by `save_to_disk`, a folder of data files, and Parquet files.

`datasets` is imported here only (a slow import), by the tasks that read through it. Without network,
`load_dataset(NAME)` retries the hub for about 25 s before it falls back to the cache; so the hub is
first asked for a TCP connection (3 s at most), and when it does not answer the load runs in the
libraries' offline mode, which answers from the cache at once or fails: one line saying what to
download where, never a traceback or a wait."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .._checks import HUB_FLAGS
from .._errors import ConfigError, did_you_mean
from .._storage.datafiles import is_saved_dataset
from .._storage.given_files import given_files_there

HUB_TIMEOUT = 3.0  # seconds the hub gets to accept a connection before the load runs offline


def hub_reachable(timeout: float = HUB_TIMEOUT) -> bool:
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return False
    endpoint = urlparse(constants.ENDPOINT)
    try:
        socket.create_connection((endpoint.hostname, endpoint.port or 443), timeout=timeout).close()
    except OSError:
        return False
    return True


@contextlib.contextmanager
def offline_mode() -> Iterator[None]:
    """`datasets` and `huggingface_hub` read their offline flags at call time: set for this load only (its
    caller holds HUB_FLAGS)."""
    import datasets.config
    from huggingface_hub import constants

    saved = datasets.config.HF_HUB_OFFLINE, constants.HF_HUB_OFFLINE
    datasets.config.HF_HUB_OFFLINE = constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        datasets.config.HF_HUB_OFFLINE, constants.HF_HUB_OFFLINE = saved


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No `datasets` progress bars over ragbench's own while a dataset is prepared."""
    import datasets

    was_disabled = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()


def load_split(
    task: str,
    *,
    folder: Path | None = None,
    name: str | None = None,
    parquet: Path | Sequence[Path] | None = None,
    config: str | None = None,
    split: str | None = None,
    revision: str | None = None,
) -> Any:
    """One split of a dataset, as a `datasets.Dataset`; every failure a one-line ConfigError. `parquet`: one file,
    or the files (shards) of one split."""
    import datasets

    files = [parquet] if isinstance(parquet, Path) else list(parquet or [])
    given_files_there(files, "a Parquet file")
    if folder is not None and folder.is_dir():  # the files `datasets` reads there (it would wait on a FIFO)
        given_files_there((path for path in folder.rglob("*") if not path.is_dir()), "a data file")
    what = (
        f"Parquet file {files[0]}" + (f" (and {len(files) - 1} more)" if len(files) > 1 else "")
        if files
        else f"dataset folder {folder}"
        if folder
        else f"Hugging Face dataset '{name}'" + (f" (config {config})" if config else "")
    )
    with HUB_FLAGS if name is not None else contextlib.nullcontext():  # the flag read, maybe set, for this load
        offline = name is not None and not hub_reachable()
        try:
            with quiet(), offline_mode() if offline else contextlib.nullcontext():
                if files:
                    loaded = datasets.load_dataset("parquet", data_files=[str(f) for f in files])
                elif folder is not None and is_saved_dataset(folder):
                    loaded = datasets.load_from_disk(str(folder))
                else:
                    loaded = datasets.load_dataset(str(folder) if folder else name, config, revision=revision)
        except Exception as exc:  # datasets raises many kinds; each becomes one line
            raise ConfigError(_load_failure(task, what, name, config, split, exc, offline)) from exc
    return _split(task, what, loaded, split)


def _split(task: str, what: str, loaded: Any, split: str | None) -> Any:
    import datasets

    if isinstance(loaded, datasets.Dataset):
        return loaded
    names = list(loaded)
    if split is None:
        if len(names) == 1:
            return loaded[names[0]]
        raise ConfigError(f"task {task}: {what} has the splits {', '.join(names)}; choose one with data.split")
    if split not in loaded:
        raise ConfigError(
            f"task {task}: {what} has no split '{split}' (its splits: {', '.join(names)})" + did_you_mean(split, names)
        )
    return loaded[split]


def _load_failure(
    task: str, what: str, name: str | None, config: str | None, split: str | None, exc: Exception, offline: bool
) -> str:
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if name is None:
        return f"task {task}: cannot read {what} ({type(exc).__name__}: {reason}); fix it or pass --data {task}=PATH"
    args = ", ".join(repr(a) for a in (name, config) if a is not None) + (f", split={split!r}" if split else "")
    save = f"python -c \"import datasets; datasets.load_dataset({args}).save_to_disk('FOLDER')\""
    where = "is not in the Hugging Face cache and the hub cannot be reached" if offline else "cannot be loaded"
    return (
        f"task {task}: {what} {where} ({type(exc).__name__}: {reason}); on a machine with network run {save}, "
        f"copy FOLDER here and pass --data {task}=FOLDER"
    )

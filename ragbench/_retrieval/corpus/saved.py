"""A corpus saved by Hugging Face `datasets` (`Dataset.save_to_disk(FOLDER)`, as BrowseComp-Plus's
Tevatron/browsecomp-plus-corpus is kept offline): its rows read through `datasets.load_from_disk`, memory-mapped
Arrow, each a record that `corpus` maps by the rules of a JSONL line, a row's index standing for the byte offset
a file's row starts at. Its identity is its Arrow data files: their names, sizes and bytes."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._imports import import_extra

DATA_FILES = "*.arrow"


def load_saved(path: Path) -> Any:
    """The one split of the dataset saved at `path`, as a `datasets.Dataset`; every failure one line."""
    datasets = import_extra(
        "datasets",
        f"corpus {path} is a dataset folder, read with Hugging Face datasets: pip install 'ragbench[datasets]'",
    )
    was_disabled = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        loaded = datasets.load_from_disk(str(path))
    except Exception as exc:  # datasets raises many kinds; each becomes one line
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"corpus {path}: cannot read the saved dataset ({type(exc).__name__}: {reason})") from exc
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()
    if isinstance(loaded, datasets.DatasetDict):
        if len(loaded) != 1:
            raise ConfigError(
                f"corpus {path} holds the splits {', '.join(loaded)}; save the corpus's split alone "
                "(dataset[SPLIT].save_to_disk(FOLDER))"
            )
        [loaded] = loaded.values()
    return loaded


def saved_records(path: Path) -> Iterator[dict[str, Any]]:
    """Every row of the saved dataset at `path`, a JSONL record whose every column is a key: a row holding no value
    in a column (or a field of a struct) holds a null there, which `corpus.jsonl_document` reads as absent."""
    yield from load_saved(path)


def data_files(folder: Path) -> list[Path]:
    """The Arrow files of a saved dataset, in sorted order (the JSON beside them holds a fingerprint that a
    second save of the same rows changes)."""
    return sorted(folder.rglob(DATA_FILES))


def folder_sha256(folder: Path, files: list[Path]) -> str:
    """sha256 over a folder's data `files` (a saved dataset's, a sharded corpus's) in sorted order: each one's
    name, size and bytes."""
    digest = hashlib.sha256()
    for file in files:
        digest.update(f"{file.relative_to(folder).as_posix()}\0{file.stat().st_size}\0".encode())
        with open(file, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()

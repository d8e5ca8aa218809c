"""A model folder's identity by the bytes of its files, what a page index records of the model that encoded it:
weights changed at the same path, with the same config.json (a fine-tune of the same architecture: the same
sizes, perhaps the same times), give another identity, so the index of the old weights is never served for them.

Every file `from_pretrained` reads from the folder counts (its top-level files, hidden ones such as
`.cache/` left out: the weights, the config, the processor's and tokenizer's files, which change the vectors
too), and a LoRA adapter's base model where adapter_config.json names a local folder. Each file's sha256 covers
every byte: a sampled digest (`content_digest`, 1 MiB a file) can miss a change confined to one layer, such as a
retrained projection head of 0.5 MB in 6 GB. Reading a 6 GB model costs seconds (sha256 at about 1 GB/s on one
core; loading it reads it anyway), once: the index's manifest records each file's digest with what its stat said
then (`seen`: device, inode, size, modification and change times), and a later run whose files stat the same
takes the recorded digest without reading them. The change time (ctime) cannot be set by a program, so a file
written over in place, even with its old size and modification time put back (`cp -p`, `rsync -a`), reads
again; so does a file copied or moved elsewhere (another inode), whose digest is then compared.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._values.json_values import JsonObject

CHUNK = 1 << 20
ADAPTER = "adapter_config.json"  # a PEFT adapter's; `base_model_name_or_path` names the model it adapts
BASE = "base/"  # the prefix of the adapted base model's files among the adapter's


@dataclass(frozen=True)
class ModelFiles:
    """A model folder's files: `sha256` over each file's name and digest (what the index's identity holds) and
    `records`, name -> {"sha256", "seen"} (what its manifest keeps, for the next run to stat against)."""

    sha256: str
    records: JsonObject


def model_files(folder: Path, known: Mapping[str, Any]) -> ModelFiles:
    """The identity of the model at `folder` (module docstring), each file's digest taken from `known` (a
    manifest's `model_files`) where the file stats as it did then, read otherwise."""
    digests: dict[str, tuple[str, list[int]]] = {}  # name -> (sha256, seen)
    for name, path in model_paths(folder):
        try:
            seen = stat_of(path)
            earlier = known.get(name)
            recorded = earlier.get("sha256") if isinstance(earlier, dict) else None
            if isinstance(earlier, dict) and earlier.get("seen") == seen and isinstance(recorded, str):
                digest = recorded
            else:
                digest = file_sha256(path)
        except OSError as exc:
            raise ConfigError(
                f"model {folder}: {path} cannot be read ({exc.strerror or exc}); the model's files are read for "
                "the index's record of them: make it readable"
            ) from None
        digests[name] = (digest, seen)
    listing = json.dumps([[name, digest] for name, (digest, _) in digests.items()])
    records: JsonObject = {name: {"sha256": digest, "seen": list(seen)} for name, (digest, seen) in digests.items()}
    return ModelFiles(hashlib.sha256(listing.encode()).hexdigest(), records)


def model_paths(folder: Path) -> Iterator[tuple[str, Path]]:
    """(name, path) of each file of the model, in name order: the folder's top-level files (a link followed: a
    hub cache snapshot's files are links to its blobs), then those of the local base model an adapter names."""
    yield from top_files(folder, "")
    try:
        adapter = json.loads((folder / ADAPTER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    base = adapter.get("base_model_name_or_path") if isinstance(adapter, dict) else None
    if isinstance(base, str) and Path(base).expanduser().is_dir():
        yield from top_files(Path(base).expanduser(), BASE)


def top_files(folder: Path, prefix: str) -> Iterator[tuple[str, Path]]:
    for name in sorted(os.listdir(folder)):
        path = folder / name
        if not name.startswith(".") and path.is_file():
            yield prefix + name, path


def stat_of(path: Path) -> list[int]:
    """What a file's stat says of its bytes: [device, inode, size, mtime_ns, ctime_ns] (of the file a link leads to)."""
    stat = path.stat()
    return [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()

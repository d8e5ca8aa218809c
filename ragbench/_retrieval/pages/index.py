"""A multi-vector page index on disk: each page's token vectors as the encoder (and the pooler) gave them, built
once and reused by every run that names the same pages, model and options.

Folder layout:

    manifest.json          what the vectors are of (the pages' dataset and its sha256, the model, the options
                           that change a vector) and their shape; written last
    vectors.safetensors    `vectors` (all pages' tokens, in page order, in the model's dtype) and `offsets`
                           (page i is rows offsets[i]:offsets[i+1])

The build writes a sibling staging folder and renames it into place, so a killed build leaves no index a later
run would trust; the staging folder is replaced by the next build.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._types import JsonObject
from ..index.staging import BUILD_MARK, held_staging
from ..option_paths import option_json

MANIFEST = "manifest.json"
VECTORS = "vectors.safetensors"
FORMAT = 1


def identity_of(manifest: Mapping[str, Any]) -> JsonObject:
    return {key: manifest.get(key) for key in ("format", "kind", "pages", "model", "options")}


def load_vectors(folder: Path, identity: JsonObject) -> list[Any] | None:
    """The pages' vectors of the index at `folder` if it was built for `identity`; None where there is none yet.
    A folder holding another index, or files of no index, is a ConfigError (nothing of the user's is replaced)."""
    if not folder.exists():
        return None
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        if folder.is_dir() and not any(folder.iterdir()):
            return None
        raise ConfigError(f"index {folder}: holds no {MANIFEST} (not a page index ragbench built); choose a new folder")
    manifest = option_json(manifest_path, f"index {folder}", "remove the folder to build it again")
    if identity_of(manifest) != identity:
        differs = [key for key, value in identity.items() if manifest.get(key) != value]
        raise ConfigError(
            f"index {folder} was built for other {', '.join(differs)}; name another index folder (or remove this one) "
            "to build the index of these pages with this model"
        )
    try:
        pages = read_vectors(folder / VECTORS)
    except ValueError as exc:
        raise ConfigError(
            f"index {folder}: {VECTORS} missing or damaged ({exc}); remove the folder to build again"
        ) from None
    if len(pages) != manifest["pages"]["count"]:
        raise ConfigError(
            f"index {folder}: {VECTORS} does not hold the manifest's pages; remove the folder to build again"
        )
    return pages


def read_vectors(path: Path) -> list[Any]:
    """The pages' vectors `write_vectors` wrote at `path`; a ValueError where the file is missing or damaged."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        tensors = load_file(str(path))
        vectors, offsets = tensors["vectors"], tensors["offsets"].tolist()
    except (OSError, SafetensorError, KeyError) as exc:
        raise ValueError(str(exc)) from None
    if not offsets or offsets[0] != 0 or offsets[-1] != vectors.shape[0]:
        raise ValueError("its offsets do not cut its vectors")
    return [vectors[start:end] for start, end in zip(offsets, offsets[1:])]


def write_vectors(path: Path, pages: list[Any]) -> int:
    """`pages` (each a (tokens, dim) tensor) saved at `path` as one `vectors` tensor and its `offsets`; their tokens."""
    import torch
    from safetensors import SafetensorError
    from safetensors.torch import save_file

    lengths = torch.tensor([0] + [int(page.shape[0]) for page in pages], dtype=torch.int64)
    try:
        save_file({"vectors": torch.cat(pages).contiguous(), "offsets": torch.cumsum(lengths, 0)}, str(path))
    except SafetensorError as exc:  # the writer's I/O error (a full disk): the OSError it was, naming the file
        code = re.search(r"\(os error (\d+)\)", str(exc))
        if code is None:
            raise
        raise OSError(int(code[1]), os.strerror(int(code[1])), str(path)) from None
    return int(lengths.sum())


def save_index(folder: Path, identity: JsonObject, build: Callable[[], list[Any]]) -> list[Any]:
    """The vectors `build` computes, saved at `folder` through `<folder>.partial` renamed into place, which this
    build holds from before `build` runs (`staging.held_staging`): a second build of the index (another run's) is
    refused at once in one line, a killed build's staging folder is taken over, and one that is not a build's (the
    user's) is refused and left as it is."""
    with held_staging(folder, "index") as staging:
        started = time.perf_counter()
        pages = build()
        tokens = write_vectors(staging / VECTORS, pages)
        manifest = {
            **identity,
            "tokens": tokens,
            "dim": int(pages[0].shape[1]),
            "dtype": str(pages[0].dtype).removeprefix("torch."),
            "bytes": (staging / VECTORS).stat().st_size,
            "build_seconds": round(time.perf_counter() - started, 3),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        (staging / BUILD_MARK).unlink()
        if folder.exists():
            folder.rmdir()  # load_vectors let only an empty folder through
        os.replace(staging, folder)
    return pages

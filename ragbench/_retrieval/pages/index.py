"""A multi-vector page index on disk: each page's token vectors as the encoder (and the pooler) gave them, built
once and reused by every run that names the same pages, model and options.

Folder layout:

    manifest.json          ragbench's mark (`"ragbench": "page index"`: a folder is a page index ragbench built
                           only where its manifest says so, never by a look-alike's fields), what the vectors are
                           of (the pages' dataset and its sha256, the model and its files' digest, the options that
                           change a vector), their shape, and the files the index is made of (`files`: what
                           `index build --overwrite` removes, and nothing else); written last
    vectors.safetensors    `vectors` (all rows' tokens, in row order, in the model's dtype) and `offsets`
                           (row i is rows offsets[i]:offsets[i+1])

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
from ..._storage.files import NotAFileError, file_there
from ..._values.json_values import JsonObject
from ..index.staging import BUILD_MARK, held_staging
from ..option_paths import option_json

MANIFEST = "manifest.json"
VECTORS = "vectors.safetensors"
FORMAT = 2  # 2: ragbench's mark, the files, the model's files' digest; every row of a V1 table encoded
MARK = {"ragbench": "page index"}  # the manifest's field that says ragbench built the folder
DEFAULT_BUILD_ARGS = {"split": "test", "batch_size": 4, "pool_factor": 1, "dtype": "bfloat16"}


def rebuild(folder: Path, manifest: Mapping[str, Any]) -> str:
    """The command that builds the index at `folder` again, as its manifest says it was built."""
    pages, model = manifest.get("pages") or {}, manifest.get("model") or {}
    given = {**(manifest.get("options") or {}), "split": pages.get("split"), "dtype": model.get("dtype")}
    args = "".join(
        f" --build-arg {name}={given[name]}"
        for name, default in DEFAULT_BUILD_ARGS.items()
        if given.get(name) is not None and given[name] != default
    )
    return (
        f"build it again: ragbench index build --retriever {manifest.get('kind')} --corpus {pages.get('path')} "
        f"--model {model.get('path')} --out {folder}{args} --overwrite"
    )


def index_files(folder: Path) -> tuple[str, ...] | None:
    """The files of the page index ragbench built at `folder`, its manifest first, as its manifest names them;
    None where `folder` holds none: no manifest.json (or a link there), or one without ragbench's mark (another
    tool's, whatever fields it shares with a page index's)."""
    path = folder / MANIFEST
    if path.is_symlink() or not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or any(manifest.get(key) != value for key, value in MARK.items()):
        return None
    files = manifest.get("files")
    if not isinstance(files, dict) or not all(isinstance(name, str) and "/" not in name for name in files):
        return None
    return (MANIFEST, *(name for name in files if name not in (MANIFEST, "", ".", "..")))


def not_the_index(folder: Path, files: tuple[str, ...]) -> list[str]:
    """What `folder` holds besides the index's own `files` (each a file, not a link): a file or folder of the
    user's, a link, in name order."""
    return sorted(
        name
        for name in os.listdir(folder)
        if name not in files or (folder / name).is_symlink() or not (folder / name).is_file()
    )


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
    if not isinstance(manifest, dict) or any(manifest.get(key) != value for key, value in MARK.items()):
        raise ConfigError(
            f'index {folder}: its {MANIFEST} is not a page index\'s ragbench built (no "ragbench": "page index" '
            "in it: another tool's, or an index of an earlier ragbench); choose a new folder"
        )
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
            f"index {folder}: {VECTORS} missing or damaged ({exc}); {rebuild(folder, manifest)}"
        ) from None
    if len(pages) != manifest["pages"]["rows"]:
        raise ConfigError(
            f"index {folder}: {VECTORS} holds {len(pages)} rows' vectors where its {MANIFEST} says "
            f"{manifest['pages']['rows']} (damaged, or a file of another build); {rebuild(folder, manifest)}"
        )
    return pages


def read_vectors(path: Path) -> list[Any]:
    """The pages' vectors `write_vectors` wrote at `path`; a ValueError where the file is missing or damaged."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        if not file_there(path):  # a FIFO or a device there is refused, never opened (its read would wait)
            raise ValueError("it is not there")
        tensors = load_file(str(path))
        vectors, offsets = tensors["vectors"], tensors["offsets"].tolist()
    except NotAFileError as exc:
        raise ValueError(exc.strerror) from None
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


def save_index(
    folder: Path, identity: JsonObject, build: Callable[[], list[Any]], records: JsonObject | None = None
) -> list[Any]:
    """The vectors `build` computes, saved at `folder` through `<folder>.partial` renamed into place, which this
    build holds from before `build` runs (`staging.held_staging`): a second build of the index (another run's) is
    refused at once in one line, a killed build's staging folder is taken over, and one that is not a build's (the
    user's) is refused and left as it is. `records`: more of the manifest, outside the identity (the model's
    files as they were seen, `model_files`)."""
    with held_staging(folder, "index") as staging:
        started = time.perf_counter()
        pages = build()
        tokens = write_vectors(staging / VECTORS, pages)
        manifest = {
            **MARK,
            **identity,
            **(records or {}),
            "files": {VECTORS: (staging / VECTORS).stat().st_size},
            "tokens": tokens,
            "dim": int(pages[0].shape[1]),
            "dtype": str(pages[0].dtype).removeprefix("torch."),
            "build_seconds": round(time.perf_counter() - started, 3),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        (staging / BUILD_MARK).unlink()
        if folder.exists():
            folder.rmdir()  # load_vectors let only an empty folder through
        os.replace(staging, folder)
    return pages

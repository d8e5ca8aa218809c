"""The build-state folder of a parallel index build, `<out>.ray-build`: one file a finished block, so a build that
was killed (its process, a worker or a node lost) resumes from the blocks already written.

The folder is ragbench's when it holds `STATE_FILE`, which records the build's key (the corpus's path, size and
modification time, the retriever, its options, the block size and the text settings): a later build with the same
key resumes from its blocks, one with another key empties it first. A folder of the user's there (without the
file), a link or a file is refused, never emptied. Each block is written to `block-N.npz.partial` and renamed, so a
block file is whole; one that is damaged all the same (cut short, another block's, unreadable) is not trusted: it
is computed again. A block file records the sha256 of its block's texts, which the build checks.

Not a shard build's state (`build.state.ShardBuildState`): that one records each shard's steps and the files they
wrote, locally or in an object store, for shards a run serves; this one caches analysed blocks of one index, built
on this machine, removed once the index is complete (`remove_state`). They share the key's rule (same key: resumed; another: emptied).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ...._errors import ConfigError
from ...._storage.files import flush_to_disk
from ...._storage.own_trees import remove_all_but_links

STATE_FILE = "ray-build.json"
DIGEST = "texts_sha256"
BLOCK_FILE_ERRORS = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile)


def texts_digest(texts: list[str]) -> str:
    """The identity of a block's texts (any string, lone surrogates of undecodable bytes included)."""
    digest = hashlib.sha256()
    for text in texts:
        encoded = text.encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "little") + encoded)
    return digest.hexdigest()


def state_folder(out: Path) -> Path:
    return out.with_name(out.name + ".ray-build")


class BuildState:
    """The build-state folder of `out` for a build of `key` (module docstring); made or taken over on opening."""

    def __init__(self, out: Path, key: dict[str, Any]) -> None:
        self.folder = state_folder(out)
        self.key = key
        record = self.folder / STATE_FILE
        if self.folder.is_symlink() or (self.folder.exists() and not self.folder.is_dir()):
            raise ConfigError(
                f"--out {out}: {self.folder} is not the build state a parallel ragbench index build made; remove "
                "it, or choose another --out"
            )
        if self.folder.is_dir() and not (record.is_file() and not record.is_symlink()):
            raise ConfigError(
                f"--out {out}: {self.folder} holds no {STATE_FILE}: not the build state of a parallel ragbench "
                "index build; remove it, or choose another --out"
            )
        if self.folder.is_dir() and self.recorded_key() != key:  # another build's blocks: start afresh
            for child in self.folder.iterdir():
                if child.name != STATE_FILE and not child.is_symlink():
                    remove_all_but_links(child) if child.is_dir() else child.unlink()
        for partial in self.folder.glob("*.partial"):  # a killed build's unfinished block
            partial.unlink()
        self.folder.mkdir(exist_ok=True)
        record.write_text(json.dumps(key, indent=1, ensure_ascii=False), encoding="utf-8")

    def recorded_key(self) -> Any:
        try:
            return json.loads((self.folder / STATE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def path(self, number: int) -> Path:
        return self.folder / f"block-{number:06d}.npz"

    def write(self, number: int, payload: bytes) -> None:
        """A worker's npz `payload` of block `number`, as a whole file (written, flushed, renamed)."""
        partial = self.path(number).with_name(self.path(number).name + ".partial")
        with open(partial, "wb") as handle:
            handle.write(payload)
            handle.flush()
            flush_to_disk(handle.fileno())
        partial.replace(self.path(number))

    def read(self, number: int, digest: str, fields: tuple[str, ...]) -> dict[str, np.ndarray] | None:
        """Block `number`'s arrays, or None when it has no file or a damaged one (then removed: computed again)."""
        path = self.path(number)
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as stored:
                arrays = {name: stored[name] for name in (DIGEST, *fields)}  # each member's CRC checked
        except BLOCK_FILE_ERRORS:
            arrays = None
        if arrays is None or str(arrays.pop(DIGEST)) != digest:
            path.unlink()
            return None
        return arrays


def remove_state(out: Path) -> None:
    """The build state of `out` and the blocks in it, once the index is complete; only a folder a build made (it
    holds STATE_FILE) is removed, and never a link in it."""
    folder = state_folder(out)
    if not folder.is_symlink() and (folder / STATE_FILE).is_file():
        remove_all_but_links(folder)


def npz_bytes(arrays: dict[str, np.ndarray], digest: str) -> bytes:
    buffer = io.BytesIO()
    members: dict[str, Any] = {DIGEST: np.array(digest), **arrays}
    np.savez(buffer, **members)
    return buffer.getvalue()

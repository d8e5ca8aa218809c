"""Ranged reads of a file in an object store checked by content: its writer records a digest of each block of
`block` bytes (`block_digests`: 8 bytes of blake2b a block, 64 KiB a block, larger for a file of more than
`MAX_BLOCKS` of them), and a reader reads the whole blocks a range lies in and checks each against its digest
before it hands any byte on (`CheckedRanges`): an object written over with other bytes, of the same size or not,
is never read as the one recorded. A read costs one ranged GET, as an unchecked one does; the blocks last read are
kept (`KEPT_BLOCKS`), so hits close together (a docs store's offsets: 8,192 passages a block) cost none.

The digests of a file of up to 1.5 GB fit in `MAX_BLOCKS` blocks of 64 KiB; those of two files in a JSON record
of under 1 MiB, which a shard's sampled content digest (`content_digest`) reads whole.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from threading import Lock
from typing import Any

from .locations import joined, read_range

BLOCK = 1 << 16
MAX_BLOCKS = 24_000
KEPT_BLOCKS = 32


def block_size(size: int) -> int:
    """The block of a file of `size` bytes: 64 KiB, doubled until the file has at most MAX_BLOCKS blocks."""
    block = BLOCK
    while size > block * MAX_BLOCKS:
        block *= 2
    return block


def block_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def block_digests(path: Path, block: int) -> list[str]:
    """The digest of each block of `block` bytes of the local file `path` (its last block the rest of it)."""
    digests = []
    with open(path, "rb") as handle:
        while data := handle.read(block):
            digests.append(block_digest(data))
    return digests


def block_record(folder: Path, names: Iterable[str]) -> dict[str, Any]:
    """The record of the blocks of `folder`'s files `names`: {"block": bytes a block (the largest file's
    `block_size`), "files": {name: {"bytes": its size, "digests": its blocks' digests}}}."""
    sizes = {name: (folder / name).stat().st_size for name in names}
    block = block_size(max(sizes.values(), default=0))
    files = {name: {"bytes": size, "digests": block_digests(folder / name, block)} for name, size in sizes.items()}
    return {"block": block, "files": files}


def record_problem(record: Any) -> str:
    """What is wrong with the shape of a `block_record` read back, or an empty string: a block size that is the
    largest file's `block_size`, each file's size and as many digests as it has blocks, names inside the folder."""
    if not isinstance(record, dict) or set(record) != {"block", "files"}:
        return "is not a record of blocks and files"
    block, files = record["block"], record["files"]
    if not isinstance(files, dict) or not files:
        return "names no files"
    sizes: dict[str, int] = {}
    for name, entry in files.items():
        if (
            not isinstance(entry, dict)
            or set(entry) != {"bytes", "digests"}
            or not isinstance(entry["bytes"], int)
            or isinstance(entry["bytes"], bool)
            or entry["bytes"] < 0
            or not isinstance(entry["digests"], list)
            or not all(isinstance(digest, str) for digest in entry["digests"])
        ):
            return f"holds no size and block digests of {_shown(name)}"
        if name.startswith("/") or ".." in name.split("/"):
            return f"names {_shown(name)}, not a file of the index"
        sizes[name] = entry["bytes"]
    if isinstance(block, bool) or block != block_size(max(sizes.values())):
        return f"has blocks of {_shown(block)} bytes, not {block_size(max(sizes.values()))}"
    for name, entry in files.items():
        if len(entry["digests"]) != -(-entry["bytes"] // block):
            return f"holds {len(entry['digests'])} block digests of {name}, of {entry['bytes']} bytes"
    return ""


def _shown(value: Any) -> str:
    return json.dumps(value)[:80]


def recorded_ranges(folder_url: str, record: Any, name: str) -> CheckedRanges:
    """Ranged reads of the file `name` in the folder `folder_url`, checked by `record` (a `block_record`); a
    ValueError, KeyError or TypeError where the record holds none of it."""
    entry = record["files"][name]
    return CheckedRanges(joined(folder_url, name), int(entry["bytes"]), int(record["block"]), list(entry["digests"]))


class BlockMismatch(ValueError):
    """Bytes of `url` read back that are not those its writer recorded (`problem` says which and how)."""

    def __init__(self, url: str, problem: str) -> None:
        self.url, self.problem = url, problem
        super().__init__(f"{url}: {problem}")


class CheckedRanges:
    """Ranged reads of the object `url`, of `size` bytes, each block checked against `digests` (blocks of `block`
    bytes): a BlockMismatch where one is not what was recorded."""

    def __init__(self, url: str, size: int, block: int, digests: list[str]) -> None:
        if block < 1 or len(digests) != -(-size // block):
            raise BlockMismatch(url, f"{len(digests)} block digests recorded for {size} bytes in blocks of {block}")
        self.url, self.size, self.block, self.digests = url, size, block, digests
        self.kept: OrderedDict[int, bytes] = OrderedDict()
        self.guard = Lock()

    def read(self, start: int, stop: int) -> bytes:
        """Bytes [start, stop) (fewer where the object ends before `stop`), each block of them checked."""
        start, stop = max(0, start), min(stop, self.size)
        if stop <= start:
            return b""
        first, last = start // self.block, (stop - 1) // self.block
        blocks = [self.kept_block(number) for number in range(first, last + 1)]
        if any(data is None for data in blocks):
            data = read_range(self.url, first * self.block, min((last + 1) * self.block, self.size))
            blocks = [
                self.checked(number, data[(number - first) * self.block :][: self.block])
                for number in range(first, last + 1)
            ]
        joined = b"".join(blocks)  # type: ignore[arg-type]
        return joined[start - first * self.block : stop - first * self.block]

    def check_copy(self, path: Path) -> None:
        """The local copy `path` of the whole object checked block by block: a BlockMismatch at the first block
        that is not what was recorded (a file fetched whole, checked as its ranged reads would be)."""
        with open(path, "rb") as handle:
            for number in range(len(self.digests)):
                self.checked(number, handle.read(self.block))
            if handle.read(1):
                raise BlockMismatch(self.url, f"holds more than the {self.size} bytes recorded")

    def kept_block(self, number: int) -> bytes | None:
        with self.guard:
            if number in self.kept:
                self.kept.move_to_end(number)
            return self.kept.get(number)

    def checked(self, number: int, data: bytes) -> bytes:
        """Block `number`, read as `data`, where it is what was recorded (then kept a while)."""
        expected = min(self.block, self.size - number * self.block)
        if len(data) != expected:
            raise BlockMismatch(self.url, f"block {number} holds {len(data)} bytes, recorded {expected}")
        if (found := block_digest(data)) != self.digests[number]:
            where = f"bytes {number * self.block}..{number * self.block + expected - 1}"
            raise BlockMismatch(
                self.url, f"{where} are not those written (their digest {found}, recorded {self.digests[number]})"
            )
        with self.guard:
            self.kept[number] = data
            if len(self.kept) > KEPT_BLOCKS:
                self.kept.popitem(last=False)
        return data

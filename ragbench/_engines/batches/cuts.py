"""A scheduler batch's input lines cut into vendor batches within the vendor's limits (`BatchLimits`: requests,
and bytes as the vendor receives the batch), in order: each batch takes lines until the next would pass a limit.
A line that alone passes the bytes of one batch can go in none: it is set apart, its request failed alone in one
line (batches/runner.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ..._values.json_values import JsonObject
from .interface import BatchLimits

Key = TypeVar("Key")


@dataclass
class Cut(Generic[Key]):
    """The batches (each a list of (key, line)) and the lines too large for any, with their bytes."""

    batches: list[list[tuple[Key, JsonObject]]] = field(default_factory=list)
    too_large: list[tuple[Key, int]] = field(default_factory=list)


def cut(lines: Sequence[tuple[Key, JsonObject]], limits: BatchLimits | None) -> Cut[Key]:
    """`lines` as batches within `limits` (None: one batch)."""
    out: Cut[Key] = Cut()
    if limits is None:
        out.batches = [list(lines)] if lines else []
        return out
    batch: list[tuple[Key, JsonObject]] = []
    used = limits.framing
    for key, line in lines:
        size = limits.size(line)
        if limits.framing + size > limits.bytes:
            out.too_large.append((key, size))
            continue
        joined = size + (limits.separator if batch else 0)
        if batch and (len(batch) >= limits.requests or used + joined > limits.bytes):
            out.batches.append(batch)
            batch, used, joined = [], limits.framing, size
        batch.append((key, line))
        used += joined
    if batch:
        out.batches.append(batch)
    return out


def megabytes(count: int) -> str:
    """Bytes as a line says them: MB, one decimal."""
    return f"{count / 1_000_000:.1f} MB"

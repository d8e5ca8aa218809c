"""dense's sharding: one kind (`kind.DenseKind`), the object its catalogue entry names."""

from __future__ import annotations

from .kind import DenseKind

KIND = DenseKind()

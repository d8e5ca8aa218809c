"""flashrag_bm25's sharding: one kind (`kind.FlashRagKind`), the object its catalogue entry names."""

from __future__ import annotations

from .kind import FlashRagKind

KIND = FlashRagKind()

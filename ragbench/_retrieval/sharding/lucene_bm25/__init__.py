"""lucene_bm25's sharding: one kind (`kind.LuceneKind`), the object its catalogue entry names."""

from __future__ import annotations

from .kind import LuceneKind

KIND = LuceneKind()

"""bm25's sharding: one kind (`kind.Bm25Kind`), the object its catalogue entry names."""

from __future__ import annotations

from .kind import Bm25Kind

KIND = Bm25Kind()

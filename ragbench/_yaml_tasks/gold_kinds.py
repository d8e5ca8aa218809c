"""Gold kinds a benchmark registers for YAML tasks (`fields.gold.NAME: {part: path, ...}`) through the
`ragbench_gold_kinds` hook: the shape of one benchmark's gold (CRAG's answer and alternatives), which
the core does not know by name. The core maps answers, label, choices, qa_pairs, answer_lists,
long_answer and claims itself (ragbench._yaml_tasks.fields)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from .fields import GoldReader


class GoldKind:
    """One kind of gold, mapped from several paths of a record (its `parts`, the first required)."""

    parts: ClassVar[tuple[str, ...]] = ()

    def gold(self, read: GoldReader) -> Mapping[str, object]:
        """The record's gold of this kind: the keys it adds to `example.gold`."""
        raise NotImplementedError

    def references(self, gold: Mapping[str, object]) -> list[str]:
        """The example's gold as reference texts, the preferred first (`Task.gold_references`)."""
        return []

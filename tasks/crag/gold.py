"""CRAG's gold as a kind of gold YAML tasks may map (`fields.gold.crag_answer: {answer: ..., alt_ans: ...}`),
registered through the ragbench_gold_kinds hook (this folder's registrations.yaml)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import cast

from ragbench.api.yaml_tasks import GoldKind, GoldReader


class CragAnswer(GoldKind):
    """CRAG's `answer` (one text) and `alt_ans` (its alternatives, [] when the record has none)."""

    parts = ("answer", "alt_ans")

    def gold(self, read: GoldReader) -> dict[str, object]:
        out: dict[str, object] = {"answer": read.text("answer")}
        if read.has("alt_ans"):
            out["alt_ans"] = read.texts("alt_ans") or []
        return out

    def references(self, gold: Mapping[str, object]) -> list[str]:
        return [str(gold["answer"]), *map(str, cast("Iterable[object]", gold.get("alt_ans") or []))]

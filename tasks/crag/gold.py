"""CRAG's gold as a kind of gold YAML tasks may map (`fields.gold.crag_answer: {answer: ..., alt_ans: ...}`),
registered through the ragbench_gold_kinds hook (this folder's registrations.yaml)."""

from __future__ import annotations

from typing import Any

from ragbench.api.yaml_tasks import GoldKind, GoldReader


class CragAnswer(GoldKind):
    """CRAG's `answer` (one text) and `alt_ans` (its alternatives, [] when the record has none)."""

    parts = ("answer", "alt_ans")

    def gold(self, read: GoldReader) -> dict[str, Any]:
        out: dict[str, Any] = {"answer": read.text("answer")}
        if read.has("alt_ans"):
            out["alt_ans"] = read.texts("alt_ans") or []
        return out

    def references(self, gold: dict[str, Any]) -> list[str]:
        return [str(gold["answer"]), *map(str, gold.get("alt_ans") or [])]

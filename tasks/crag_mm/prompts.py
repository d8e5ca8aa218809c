"""CRAG-MM's prompt strings, byte for byte, from `data/prompts.json` (the judge's messages and the example agents'
constants, kept as data so that every space and curly quote is upstream's)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any


@lru_cache(maxsize=1)
def prompts() -> dict[str, Any]:
    text = resources.files("ragbench.tasks.crag_mm").joinpath("data/prompts.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def judge_messages(query: str, ground_truth: str, prediction: str) -> list[dict[str, str]]:
    """LLMJudge.evaluate's chat: its system message, then the question, ground truth and prediction."""
    judge = prompts()["judge"]
    user = judge["user_template"].format(query=query, ground_truth=ground_truth, prediction=prediction)
    return [{"role": "system", "content": judge["system"]}, {"role": "user", "content": user}]

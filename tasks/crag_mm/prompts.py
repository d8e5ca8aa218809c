"""CRAG-MM's prompt strings, byte for byte, from `data/prompts.json` (the judge's messages and the example agents'
constants, kept as data so that every space and curly quote is upstream's)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import TypedDict


class RagStrings(TypedDict):
    """The RAG agent's context block: its strings, the web results' and image hits' caps in characters and the
    score an image hit must pass (`image_threshold`)."""

    open: str
    close: str
    web_intro: str
    web_doc: str
    web_outro: str
    web_cap_chars: int
    image_threshold: float
    image_cap_chars: int
    image_intro: str
    image_names: str
    image_attributes_intro: str
    image_entity: str
    image_attributes: str
    image_outro: str


class CragMMPrompts(TypedDict):
    """data/prompts.json: the judge's strings (`system`, `system_sha256`, `user_template`), the example agents'
    constants by their upstream names, and the RAG agent's context block."""

    about: str
    judge: dict[str, str]
    agents: dict[str, str]
    rag: RagStrings


@lru_cache(maxsize=1)
def prompts() -> CragMMPrompts:
    text = resources.files("ragbench.tasks.crag_mm").joinpath("data/prompts.json").read_text(encoding="utf-8")
    loaded: CragMMPrompts = json.loads(text)
    return loaded


def judge_messages(query: str, ground_truth: str, prediction: str) -> list[dict[str, str]]:
    """LLMJudge.evaluate's chat: its system message, then the question, ground truth and prediction."""
    judge = prompts()["judge"]
    user = judge["user_template"].format(query=query, ground_truth=ground_truth, prediction=prediction)
    return [{"role": "system", "content": judge["system"]}, {"role": "user", "content": user}]

"""CRAG's prompt strings, byte for byte, from `data/prompts.json`.

The JSON holds the upstream constants verbatim (judge prompts of the KDD Cup starter kit and
of facebookresearch/CRAG `prompts/templates.py`, and the baselines' prompts from
facebookresearch/CRAG `models/*.py`); keeping them as data preserves every trailing space.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import TypedDict


class CragPrompts(TypedDict):
    """data/prompts.json: each judge protocol's strings (its `source`, `system`, `system_sha256`, `user_template`,
    `system_is`) by name, and the baselines' prompts by name."""

    _about: str
    judge: dict[str, dict[str, str]]
    baselines: dict[str, str]


@lru_cache(maxsize=1)
def prompts() -> CragPrompts:
    text = resources.files("ragbench.tasks.crag").joinpath("data/prompts.json").read_text(encoding="utf-8")
    loaded: CragPrompts = json.loads(text)
    return loaded


def judge_prompt(protocol: str) -> dict[str, str]:
    """{"system", "user_template"} of a judge protocol: "kddcup2024" or "crag_repo"."""
    entry = prompts()["judge"]["kddcup2024_starter_kit" if protocol == "kddcup2024" else protocol]
    return {"system": entry["system"], "user_template": entry["user_template"]}


def baseline_prompt(name: str) -> str:
    return prompts()["baselines"][name]


# The paper's "straightforward RAG" prompts (arXiv 2406.04744, Appendix A.3.1) ask the model to
# answer "invalid question" for a false premise and "I don't know" when unsure. The PDF's exact
# wording could not be obtained offline, so these strings carry that instruction in our words:
# they are the paper's protocol, not its bytes.
STRAIGHTFORWARD_SYSTEM = (
    "You are given a Question, References and the time when it was asked. Answer the question "
    "succinctly, using the fewest words possible. If the question has a false premise or "
    'assumption, answer "invalid question". If the references and your own knowledge do not '
    'let you answer with confidence, answer "I don\'t know".'
)
STRAIGHTFORWARD_USER = (
    "### Question\n{query}\n\n### Query Time\n{query_time}\n\n### References\n{references}\n\n### Answer\n"
)

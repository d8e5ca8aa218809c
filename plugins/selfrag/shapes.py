"""What a Self-RAG run records: its options as they run on a task (`Settings`, results.json's `resolved`) and an
example's trace (`SelfRagTrace`, the prediction's extras["selfrag"]), which the statistics, the format adherence and the
viewer's outline read back."""

from __future__ import annotations

from typing import TypedDict

from ragbench.api.data import JsonObject


class Settings(TypedDict):
    """The per-form defaults filled in: "short" or "long" form, the retrieval mode, passages, the utility weight,
    and whether the task's answers are closed (voted on)."""

    form: str
    mode: str
    ndocs: int
    w_use: float
    closed: bool


class SelfRagTrace(TypedDict, total=False):
    """One example: its form, mode and passages; the retrieval decision (the decision's output, its ratio, whether
    it retrieved); short form: each passage's generation and critique scores, the votes of a closed task or the
    best passage; long form: the beam-search tree (each node's parent, segment, path score, passage and critique
    scores), its levels, the chosen path's depth and segments."""

    form: str
    mode: str
    ndocs: int
    no_retrieval_output: str
    retrieval_ratio: float
    decision_output: str
    retrieved: bool
    passages: list[JsonObject]
    votes: dict[str, float]
    best_passage: int
    tree: list[JsonObject]
    levels: list[list[int]]
    depth: int
    segments: list[str]

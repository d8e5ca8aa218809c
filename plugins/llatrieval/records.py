"""What an LLatrieval run records of an example (the prediction's extras["llatrieval"]["iterations"]): each iteration's
query, candidates and selection (`Iteration`), the selection's windows (`Window`) and the verifier's verdict
(`Verification`); a document is named by its corpus id, else its title. The statistics and the viewer's outline
read them back."""

from __future__ import annotations

from typing import TypedDict


class _Window(TypedDict):
    shown: list[str]
    reply: str
    selected: list[str]


class Window(_Window, total=False):
    """One select call: the documents shown, the model's reply, those it kept, and how many new ones were deferred
    to the next window for want of room (absent: none)."""

    deferred: int


class _Verification(TypedDict):
    method: str
    passed: bool


class Verification(_Verification, total=False):
    """The verifier's verdict on a selection: its method ("gold", "judgment" or "score"), whether it passed, the
    model's reply and the score read from it (None: not read, the selection not verified)."""

    output: str
    score: float | None


class Iteration(TypedDict):
    """One iteration: its query, the documents retrieved and new among the candidates, the candidates, the select
    windows, the documents selected and the verdict (None: the last iteration, never verified)."""

    iteration: int
    query: str
    retrieved: int
    new_candidates: int
    candidates: list[str]
    windows: list[Window]
    selected: list[str]
    verification: Verification | None

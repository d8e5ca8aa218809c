"""What the conditional methods (SKR, Adaptive-RAG) share about their judgers: the model that decides,
per question, which way the method goes. A judger is a model of its own, loaded from a local folder like
any model (never from a hub), or, to route by decisions made elsewhere, a file of judgements by example id.
Both are checked before the run: a missing folder or a bad file is one line, not an error per example."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import ConfigError
from .._values.json_values import JsonObject, JsonValue

if TYPE_CHECKING:
    from .._context import Context
    from .._types import Example


def judger_folder(path: str | None, what: str) -> Path:
    """`path` as a local model folder (one holding a config.json), else (none given too) a one-line ConfigError."""
    if path is None:
        raise ConfigError(f"{what} is not set: pass the local folder the model was downloaded to")
    folder = Path(path).expanduser()
    if not (folder / "config.json").is_file():
        raise ConfigError(
            f"{what} {path}: not a local model folder (no config.json there); pass the folder "
            "the model was downloaded to"
        )
    return folder


def read_judgements(path: str, labels: Collection[Any], what: str) -> JsonObject:
    """A judgements file: one JSON object of example id -> label, each label one of `labels`."""
    try:
        judgements = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{what} {path}: no such file; pass a JSON file of example id -> label") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(
            f"{what} {path}: not readable as JSON ({type(exc).__name__}: {exc}); pass a JSON "
            "object of example id -> label"
        ) from None
    if not isinstance(judgements, dict):
        raise ConfigError(
            f"{what} {path}: a JSON object of example id -> label is expected, not a {type(judgements).__name__}"
        )
    known = [(type(label), label) for label in labels]  # typed: JSON's true is not the label 1
    bad = next((key for key, label in judgements.items() if (type(label), label) not in known), None)
    if bad is not None:
        allowed = ", ".join(json.dumps(label) for label in labels)
        raise ConfigError(
            f"{what} {path}: example {bad!r} has label {json.dumps(judgements[bad])}, not one of {allowed}"
        )
    return judgements


def given_judgement(judgements: JsonObject, example_id: str, path: str) -> JsonValue:
    """The label of one example; a KeyError naming the file when it has none (the example fails, counted)."""
    if example_id not in judgements:
        raise KeyError(f"the judgements file {path} has no label for example {example_id!r}")
    return judgements[example_id]


class Judger:
    """The judgement of each question, {"label": one of `labels`, ...}: from the `judgements` file when one is
    given, else from the model judger `load()` builds (an object whose `judge(question)` returns that dict).
    `check` reads the file (the pre-flight); `load_model` builds the judger once, before the examples run;
    each question is judged in a thread, so the other examples' calls go on meanwhile, and recorded as the
    example's step "judgement"."""

    def __init__(self, what: str, labels: Collection[Any], judgements: str | None, load: Callable[[], Any]) -> None:
        self.what, self.labels, self.judgements_file, self.load = what, labels, judgements, load
        self._given: JsonObject | None = None
        self._model: Any = None

    def check(self) -> None:
        if self.judgements_file is not None:
            self._given = read_judgements(self.judgements_file, self.labels, f"{self.what} judgements")

    def load_model(self) -> None:
        if self.judgements_file is None and self._model is None:
            self._model = self.load()

    async def judge(self, example: Example, ctx: Context) -> JsonObject:
        judgement = await self._judgement(example.id, example.question)
        ctx.record_step("judgement", inputs={"question": example.question}, outputs=judgement)
        return judgement

    async def _judgement(self, example_id: str, question: str) -> JsonObject:
        if self.judgements_file is not None:
            if self._given is None:
                self.check()
            assert self._given is not None  # read by check()
            return {"label": given_judgement(self._given, example_id, self.judgements_file), "from": "file"}
        self.load_model()
        return await asyncio.to_thread(self._model.judge, question)

"""A flashrag_mm run over questions that come with pictures, and what its searches by picture found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragbench.api import Example, Image, Task, TaskScoring


def picture_questions(pictures: dict[str, Image], question: str) -> list[Example]:
    """One question a picture, the picture's name its id."""
    return [
        Example(id=name, question=question, gold={"answers": ["x"]}, images=(image,), index=index)
        for index, (name, image) in enumerate(pictures.items())
    ]


def run_flashrag_mm(examples: list[Example], retriever: str, options: dict[str, Any], output: Path, **system: Any):
    """A flashrag_mm run (a scripted model) over `examples` with the retriever `retriever`."""
    from ragbench.testing import ScriptedLLM, run_eval

    class Pictured(Task):
        name = "pictured"
        scoring = TaskScoring(metrics=("match",))
        holds_images = question_images = True

        def examples(self):
            return iter(examples)

    run = run_eval(
        Pictured,
        "flashrag_mm",
        ScriptedLLM("x"),
        system_args=system,
        retriever=retriever,
        retriever_args=options,
        output=output,
    )
    assert run.complete
    return run


def searched_by_picture(output: Path) -> dict[str, list[str]]:
    """Each search by picture of the run in `output` (by the picture's name in the recording): the ids it found."""
    lines = (output / "calls" / "retrieval.jsonl").read_text(encoding="utf-8").splitlines()
    return {s["query"]: s["ids"] for s in map(json.loads, lines) if s["query"].startswith("image sha256:")}

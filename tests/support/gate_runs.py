"""Run folders for `ragbench gate`'s tests, made by real runs: the demo task's 24 questions answered by `closed_book`
with a scripted model that answers the questions asked right, "no idea" to the others, and fails those asked (no
rule matches them: the call fails, and the example with it); optionally judged by `llm_judge` with a scripted judge
whose verdict is given per question (its rules file is one path, written again before each run: the same judge)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from pathlib import Path

import ragbench.tasks.selfrag
from support.helpers import run

DEMO = Path(ragbench.tasks.selfrag.__file__).parent / "data" / "demo_qa.jsonl"
QUESTIONS = [json.loads(line) for line in DEMO.read_text().splitlines()]
EVERY = range(len(QUESTIONS))


def demo_gate_run(
    folder: Path,
    name: str,
    right: Collection[int] = EVERY,
    failing: Collection[int] = (),
    judged: Mapping[int, bool] | None = None,
    **options: object,
) -> Path:
    """The run folder `folder`/`name` of the demo task (the questions' positions: `right` answered right, `failing`
    failed); `judged`: llm_judge's verdict per position (those not given: "incorrect")."""
    rules = [
        {"pattern": re.escape(q["question"]), "response": q["answers"][0] if i in right else "no idea"}
        for i, q in enumerate(QUESTIONS)
        if i not in failing
    ]
    model = folder / f"{name}.json"
    model.write_text(json.dumps(rules))
    if judged is not None:
        verdicts = [
            {
                "pattern": re.escape(f"Question: {q['question']}"),
                "response": "correct" if judged.get(i) else "incorrect",
            }
            for i, q in enumerate(QUESTIONS)
        ]
        judge = folder / "judge.json"
        judge.write_text(json.dumps(verdicts))
        options = {"metrics": ["+llm_judge"], "judges": [f"scripted:{judge}"], **options}
    run(folder, name=name, tasks=["demo"], system="closed_book", model=f"scripted:{model}", **options)
    return folder / name

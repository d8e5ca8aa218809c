"""A YAML task whose slice field `level` holds the number 1, the string "1", the string "None", null and
nothing, answered by a scripted model: the slices test_slice_labels.py and test_view_slices_browser.py read."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write_jsonl

# (level, answered right): "1 [number]" 2 of 2 right, "1" 0 of 1, "(none)" (null and absent) 1 of 2, "None" 0 of 1,
# 10 0 of 1, 2 1 of 1; EXPECTED in the order every table lists them (numbers as numbers: 2 before 10; no value last)
LEVELS = [(1, True), (1, True), ("1", False), ("None", False), (None, True), ("absent", False), (10, False), (2, True)]
EXPECTED = {"1": (0.0, 1), "1 [number]": (1.0, 2), "2": (1.0, 1), "10": (0.0, 1), "None": (0.0, 1), "(none)": (0.5, 2)}


def level_task(folder: Path) -> Path:
    records = [
        {
            "id": f"q{i}",
            "question": f"Question {i}?",
            "golden_answers": ["yes"],
            "metadata": {} if level == "absent" else {"level": level},
        }
        for i, (level, _) in enumerate(LEVELS)
    ]
    write_jsonl(folder / "levels.jsonl", records)
    (folder / "answers.json").write_text(
        json.dumps(
            [{"pattern": f"Question {i}\\?", "response": "yes"} for i, (_, right) in enumerate(LEVELS) if right]
            + [{"response": "no"}]
        )
    )
    task = folder / "levels.yaml"
    task.write_text(
        "task: levels\ndata: {path: levels.jsonl, format: flashrag}\n"
        "fields:\n  slices: {level: metadata.level}\nprompt:\n  template: '{{ question }}'\n"
        "metrics: [em, length]\n"
    )
    return task

"""results.json is assembled from a run's samples file the same way whatever the assembly holds in memory: a run's
numbers (values, intervals, slices, the official headline beside the answered-only one, a corpus metric, failures,
counted events, the data digest, the system's report) equal those recorded by the assembly that held every sample
(tests/data/assembly/levels_results.json, written by ragbench before the assembly was streamed)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import TEST_DATA, write_jsonl
from support.helpers import run

FIXTURE = TEST_DATA / "assembly" / "levels_results.json"
SECTIONS = (
    "results",
    "details",
    "counts",
    "complete",
    "failures",
    "counted",
    "token_limit",
    "data_sha256",
    "infrastructure_failures",
    "system_reports",
    "system_stats",
    "format_adherence",
)
# (level, output): numbers, strings, "None", null and no value share texts; an empty output is counted by bleu;
# q9 has no line in the predictions file (its example fails, and the official headline counts it 0)
LEVELS = [
    (1, "yes"),
    (1, "yes it is"),
    ("1", "no"),
    ("None", "no"),
    (None, "yes"),
    ("absent", ""),
    (10, "no"),
    (2, "yes"),
    ("1", "yes"),
    (3, None),
    (2, "maybe yes"),
    (10, "yes yes"),
]


def levels_run(tmp_path: Path) -> dict:
    """A YAML task with a mixed-kind slice field, match, BLEU (a corpus key and a counter) and the official
    headline (`missing_scores_zero`), scored by the recorded system with one prediction missing and one line
    naming an id the data does not hold; its results.json sections that do not depend on where or when."""
    records = [
        {
            "id": f"q{i}",
            "question": f"Question {i}?",
            "golden_answers": ["yes", "yes it is"],
            "metadata": {} if level == "absent" else {"level": level},
        }
        for i, (level, _) in enumerate(LEVELS)
    ]
    write_jsonl(tmp_path / "levels.jsonl", records)
    (tmp_path / "levels.yaml").write_text(
        "task: levels\ndata: {path: levels.jsonl, format: flashrag}\nfields:\n  slices: {level: metadata.level}\n"
        "prompt:\n  template: '{{ question }}'\nmetrics: [em, f1, bleu]\nmissing_scores_zero: true\n"
    )
    predictions = [{"id": f"q{i}", "output": output} for i, (_, output) in enumerate(LEVELS) if output is not None]
    write_jsonl(tmp_path / "predictions.jsonl", predictions + [{"id": "elsewhere", "output": "yes"}])
    results = run(
        tmp_path,
        tasks=[str(tmp_path / "levels.yaml")],
        system="recorded",
        system_args={"path": str(tmp_path / "predictions.jsonl")},
        bootstrap_iters=300,
        seed=7,
    )
    for group in (results.get("failures") or {}).get("levels", []):
        group["traceback"] = "traceback" in group  # its lines name this checkout's files
    text = json.dumps({section: results.get(section) for section in SECTIONS}, sort_keys=True)
    return json.loads(text.replace(str(tmp_path), "<tmp>"))


def test_a_runs_numbers_equal_those_of_the_assembly_that_held_every_sample(tmp_path):
    assert levels_run(tmp_path) == json.loads(FIXTURE.read_text(encoding="utf-8"))

"""Pairs of run folders of varied shapes for `ragbench compare`, made from a seed: random 0/1 and continuous
scores, examples in one run only, failed examples, bad records, values that are not scores, ids read twice,
slice values of several kinds with the same text, examples whose data changed between the runs.

tests/data/compare_before.json holds what `compare` made of them before it read runs into columns (ragbench at
55185d9): `python tests/support/compare_fixtures.py OUT` with that checkout first on PYTHONPATH writes it again."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

TASK = "demo"
KEYS = ("em", "f1", "x")  # 0/1, continuous, and a key with odd saved values (none, a string, a huge integer)
SEEDS = range(16)


def sample_line(rng: random.Random, index: int, example_id: Any, changed: bool, huge: bool) -> dict[str, Any]:
    """One sample line of the current shape: scored, failed or a bad record; `huge`: `x` may be near the
    largest float (differences that overflow)."""
    if rng.random() < 0.04:
        return {"schema_version": 2, "id": example_id, "error": "not JSON", "bad_record": True, "index": index}
    meta = {"level": rng.choice([0, 1, 2, "1", None]), "kind": rng.choice(["a", "b", True, "True"])}
    if rng.random() < 0.1:
        meta.pop("kind")
    digest = hashlib.sha256(f"{example_id}{changed}".encode()).hexdigest() if rng.random() < 0.9 else None
    line: dict[str, Any] = {
        "schema_version": 2,
        "index": index,
        "id": example_id,
        "question": f"q{index}",
        "gold": {"answers": ["a"]},
        "meta": meta,
        "example_sha256": digest,
        "prediction": {"answer": "a"},
        "trace": [],
        "error": None,
    }
    if rng.random() < 0.06:
        line["error"] = "TimeoutError: no answer"
        return line
    em = float(rng.random() < 0.5)
    odd = rng.choice([None, "0.5", 2**1100, 0.25, 1, True, 0.5, 3, *([1.5e308, -1.5e308] if huge else [])])
    line["scores"] = {
        "em": em if rng.random() < 0.95 else None,
        "f1": round(rng.random(), rng.choice([1, 2, 6])) if rng.random() < 0.9 else None,
        "x": odd,
    }
    return line


def write_run(folder: Path, rng: random.Random, ids: list[Any], changed: set[Any], model: str, seed: int) -> Path:
    lines = []
    for index, example_id in enumerate(ids):
        for _ in range(2 if rng.random() < 0.05 else 1):  # read twice: the later line counts
            lines.append(sample_line(rng, index, example_id, example_id in changed, huge=seed % 4 == 0))
    (folder / "samples").mkdir(parents=True)
    (folder / "samples" / f"{TASK}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    scored = [line["scores"] for line in lines if line.get("scores")]
    details = {
        key: {
            "value": sum(values := [s[key] for s in scored if type(s.get(key)) is float]) / max(1, len(values)),
            "higher_is_better": key != "x",
            "slices": {"level": {}, "kind": {}} if key != "x" else {"level": {}},
        }
        for key in KEYS
        if key != "x" or not model.endswith("x")  # a key one run did not score
    }
    results = {
        "results": {TASK: {key: entry["value"] for key, entry in details.items()}},
        "details": {TASK: details},
        "counts": {TASK: {"records": len(lines)}},
        "config": {"model": model, "tasks": [TASK]},
    }
    (folder / "results.json").write_text(json.dumps(results))
    return folder


def run_pair(folder: Path, seed: int) -> tuple[Path, Path]:
    """Two run folders of the seed's examples: B lacks some of A's, has some of its own, some changed."""
    rng = random.Random(seed)
    n = rng.randint(3, 70) if seed else 0  # none: nothing shared
    ids: list[Any] = [f"e{rng.randint(0, 10 * n)}" if rng.random() < 0.8 else rng.randint(0, 999) for _ in range(n)]
    others = [i for i in ids if rng.random() > 0.1] + [f"b{i}" for i in range(rng.randint(0, 3))]
    rng.shuffle(others)
    changed = {i for i in ids if rng.random() < 0.05}
    return (
        write_run(folder / f"a{seed}", rng, ids, set(), "m1", seed),
        write_run(folder / f"b{seed}", rng, others, changed, ["m1", "m2", "m1", "m2x"][seed % 4], seed),
    )


def compared(folder: Path, seed: int) -> dict[str, Any]:
    """What `compare` makes of the seed's pair (as JSON), or the one line it refuses it with."""
    from ragbench._errors import ConfigError
    from ragbench._reports.compare.comparison import adjust_p_values, compare_runs, load_run
    from ragbench._reports.compare.full_report import markdown

    a, b = run_pair(folder, seed)
    try:
        report = compare_runs(load_run(a), load_run(b), iterations=300, seed=seed)
    except ConfigError as exc:
        return {"refused": str(exc).replace(str(folder), "FOLDER")}
    adjust_p_values([report])
    return json.loads(
        json.dumps(
            {
                "rows": [dataclasses.asdict(row) for row in report.rows],
                "warnings": report.warnings,
                "differences": [d.line() for d in report.differences],
                "markdown": markdown(report).replace(str(folder), "FOLDER"),
            }
        )
    )


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        made = {seed: compared(Path(tmp), seed) for seed in SEEDS}
    Path(sys.argv[1]).write_text(json.dumps(made, indent=1) + "\n")

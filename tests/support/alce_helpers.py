"""Shared pieces of the ALCE tests: the parity fixtures and the NLI stand-in they were made with."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from conftest import TEST_DATA, write_jsonl

ALCE_DATA = TEST_DATA / "alce"
NLI_REPLAY = TEST_DATA / "parity" / "alce_nli_replay.jsonl"
DATA_FILES = {
    "asqa": "asqa_eval_gtr_top100.json",
    "qampari": "qampari_eval_gtr_top100.json",
    "eli5": "eli5_eval_bm25_top100.json",
}


def fixture(dataset: str) -> dict:
    return json.loads((TEST_DATA / "parity" / f"alce_{dataset}.json").read_text(encoding="utf-8"))


def scored_run(dataset: str, variant: str = "default") -> dict:
    return next(run for run in fixture(dataset)["runs"] if run["variant"] == variant and "aggregate" in run)


def records(dataset: str) -> list[dict]:
    return json.loads((ALCE_DATA / DATA_FILES[dataset]).read_text(encoding="utf-8"))


def record_id(record: dict, index: int) -> str:
    return str(record.get("sample_id", record.get("id", index)))


def stand_in_decision(premise: str, hypothesis: str) -> int:
    """The NLI stand-in the fixtures were made with (make_fixtures.py)."""
    return 1 if hashlib.sha256(f"{premise}\x00{hypothesis}".encode()).digest()[0] < 160 else 0


class StandInNli:
    """An object with NLI's `entails` coroutine, counting requests."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    async def entails(self, premise: str, hypothesis: str) -> int:
        self.asked.append((premise, hypothesis))
        return stand_in_decision(premise, hypothesis)


def write_predictions(path: Path, dataset: str, variant: str = "default", with_docs: bool = True) -> Path:
    run = scored_run(dataset, variant)
    rows = []
    for index, (record, item) in enumerate(zip(records(dataset), run["items"])):
        row = {"id": record_id(record, index), "output": item["output"]}
        if with_docs:
            row["docs"] = item["docs"]
        rows.append(row)
    return write_jsonl(path, rows)

"""DeepResearch Bench's data as its repository lays it out under `data/`, read as deepresearch_bench_race.py reads
it: the tasks (`prompt_data/query.jsonl`: `id`, `topic`, `language` zh or en, `prompt`), each task's RACE criteria
(`criteria_data/criteria.jsonl`: `prompt`, `dimension_weight`, `criterions`) and reference report
(`test_data/cleaned_data/reference.jsonl`: `prompt`, `article`), joined on the task's prompt text, as its maps are
(a prompt given twice: the later line). A system's reports (`test_data/raw_data/MODEL.jsonl`: `id`, `prompt`,
`article`) are matched to the tasks the same way."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ragbench.api import RecordError
from ragbench.api.data import JsonObject, built_records, given_jsonl, require

from ..shared.given_data import all_found

QUERIES = Path("prompt_data/query.jsonl")
CRITERIA = Path("criteria_data/criteria.jsonl")
REFERENCES = Path("test_data/cleaned_data/reference.jsonl")
LANGUAGES = ("zh", "en")


@dataclass(frozen=True)
class ResearchTask:
    id: str
    prompt: str
    language: str
    topic: str
    line: int  # in the queries file, 1-based


def data_files(folder: Path) -> dict[str, Path]:
    """The three files under the data folder; a missing one is a ConfigError naming it."""
    return all_found(
        {"queries": folder / QUERIES, "criteria": folder / CRITERIA, "references": folder / REFERENCES},
        lambda what, path: (
            f"DeepResearch Bench's {what} file {path} not found: --data names the repository's data/ "
            f"folder (with {QUERIES}, {CRITERIA} and {REFERENCES})"
        ),
    )


def read_tasks(path: Path) -> Iterator[ResearchTask | RecordError]:
    def task(record: JsonObject, index: int) -> ResearchTask:
        task_id = require(record, "id", path, index, (int, str))
        prompt = require(record, "prompt", path, index, str)
        language = require(record, "language", path, index, str)
        if language not in LANGUAGES:
            raise RecordError(str(path), index + 1, f"language {language!r} is neither zh nor en", "language")
        return ResearchTask(str(task_id), prompt, language, str(record.get("topic", "")), index + 1)

    return built_records(given_jsonl(path, "DeepResearch Bench's tasks (JSONL)"), task)


def by_prompt(path: Path, field: str, expected: str) -> tuple[JsonObject, list[RecordError]]:
    """prompt -> the line's `field` (the whole record for field ""), the later line winning, and the bad lines;
    `expected`: what the file holds, for the line that refuses it."""
    found: JsonObject = {}
    bad: list[RecordError] = []
    for index, record in given_jsonl(path, expected):
        try:
            if isinstance(record, RecordError):
                raise record
            prompt = require(record, "prompt", path, index, str)
            found[prompt] = require(record, field, path, index) if field else record
        except RecordError as exc:
            bad.append(exc)
    return found, bad

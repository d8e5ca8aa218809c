"""The `deep_research_bench` task: DeepResearch Bench's research tasks (data.py), each example's gold its RACE
criteria and the reference report, scored by the `drb_race` metric (the RACE judge). `--data deep_research_bench=DATA` names the
repository's data/ folder; a folder of reports in its raw_data layout (one `MODEL.jsonl` of `{"id", "prompt",
"article"}` lines) is scored as predictions (`ragbench score --predictions FOLDER`), each report matched to its
task by the prompt, as deepresearch_bench_race.py matches them. Results are sliced by the task's language."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, Document, Example, Prompt, RecordError, Task, TaskPrompting, TaskScoring
from ragbench.api.data import JsonObject

from ..shared.given_data import given_data
from .data import by_prompt, data_files, read_tasks

REPORT_FILES = "*.jsonl"
REPORT_TOKENS = 8192  # ragbench's default token limit of a system's report (the benchmark sets none)
NOT_REPORTS = ("reference.jsonl",)  # the reference reports sit beside the systems' in raw_data/


class ResearchPrompting(TaskPrompting):
    """The task's prompt as DeepResearch Bench gives it to a system; documents a system shows follow it, numbered
    as [n] for the report to cite (the benchmark gives none: its systems search the web themselves)."""

    answer_format = "long"

    def build_prompt(self, example: Example, docs: list[Document] | None = None, **options: Any) -> Prompt:
        prompt = options.get("question") or example.question
        if not docs:
            return str(prompt)
        sources = "\n".join(
            f"[{n}] {doc.title}: {doc.text}" if doc.title else f"[{n}] {doc.text}"
            for n, doc in enumerate(docs, start=1)
        )
        return f"{prompt}\n\nSources:\n{sources}"


class DeepResearchBench(Task):
    """DeepResearch Bench's tasks (Chinese and English), a report per task judged against its reference."""

    name = "deep_research_bench"
    prompting = ResearchPrompting()
    scoring = TaskScoring(
        gold_fields=("race_criteria", "reference_report"), metrics=("drb_race",), slice_fields=("language",)
    )
    own_documents = False

    def system_defaults(self) -> dict[str, object]:
        """A report, not a short answer: a system's token limit (its `max_tokens`) defaults to REPORT_TOKENS."""
        return {"max_tokens": REPORT_TOKENS}

    def _files(self) -> dict[str, Path]:
        where = ", the data/ folder of a clone of github.com/Ayanami0730/deep_research_bench"
        return data_files(given_data(self, "DeepResearch Bench's data", "DATA", where))

    def prepare(self) -> None:
        self.path = self._files()["queries"]

    def examples(self) -> Iterator[Example | RecordError]:
        files = self._files()
        criteria, bad_criteria = by_prompt(files["criteria"], "", "DeepResearch Bench's RACE criteria (JSONL)")
        references, bad_references = by_prompt(files["references"], "article", "the reference reports (JSONL)")
        yield from bad_criteria + bad_references
        index = 0
        for task in read_tasks(files["queries"]):
            if isinstance(task, RecordError):
                yield task
                continue
            missing = [
                what
                for what, found in (("criteria", criteria), ("reference report", references))
                if task.prompt not in found
            ]
            if missing:
                message = f"task {task.id} has no {' and no '.join(missing)} with its prompt (RACE skips it)"
                yield RecordError(str(files["queries"]), task.line, message)
                continue
            gold = {"race_criteria": criteria[task.prompt], "reference_report": references[task.prompt]}
            meta = {"language": task.language, "topic": task.topic}
            yield Example(id=task.id, question=task.prompt, gold=gold, meta=meta, index=index)
            index += 1

    def prediction_records(self, folder: Path) -> Iterator[tuple[int, JsonObject | RecordError | str]]:
        """The folder's one report file as `ragbench score` records: each line's article the output of the task
        whose prompt it holds; a line whose prompt is no task's is a note (RACE leaves it out)."""
        files = sorted(path for path in folder.glob(REPORT_FILES) if path.name not in NOT_REPORTS)
        if len(files) != 1:
            found = ", ".join(path.name for path in files) or "none"
            raise ConfigError(
                f"--predictions {folder}: expected one MODEL.jsonl of reports (DeepResearch Bench's raw_data layout),"
                f" found {found}: give a folder holding one model's reports"
            )
        ids = {example.question: example.id for example in self.examples() if isinstance(example, Example)}
        reports, bad = by_prompt(files[0], "article", "one model's reports, MODEL.jsonl")
        for error in bad:
            yield error.line - 1, error
        for index, (prompt, article) in enumerate(reports.items()):
            if prompt in ids:
                yield index, {"id": ids[prompt], "output": article}
            else:
                yield (
                    index,
                    f"{files[0].name}: a report whose prompt is no task's ({prompt[:60]!r}), left out as RACE does",
                )

"""FreshQA's CSV as the YAML task `freshqa` reads it (prompt style `freshqa`): the rows of one split
(`--task-arg freshqa.split=test|dev`, the `split` column), each example's gold answers the non-empty
`answer_0` ... `answer_9`, as the FreshEval notebooks take them (`[x for x in correct_answers if x]`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from ragbench.api import ConfigError, Example
from ragbench.api.yaml_tasks import RecordPlace, YamlTask

SPLITS = ("test", "dev")
ANSWERS = tuple(f"answer_{i}" for i in range(10))
# the spreadsheet's header in its order, and the columns the task reads of it
HEADER = (
    "id",
    "split",
    "question",
    "effective_year",
    "next_review",
    "false_premise",
    "num_hops",
    "fact_type",
    "source",
    *ANSWERS,
    "note",
)
READ = ("split", "question", *ANSWERS)


def columns_missing(row: Mapping[str, object]) -> list[str]:
    """The columns the task reads that the header lacks, as one row shows them: a row cut short lacks only
    its last columns, so a read column is missing from the header where a column after it is present."""
    last = max((HEADER.index(name) for name in row if name in HEADER), default=-1)
    return [name for name in HEADER[:last] if name in READ and name not in row]


class FreshQaSplit(YamlTask):
    """The rows whose `split` is the task's (in any case); a row of neither split
    is a bad record."""

    def __init__(self, data_path: str | Path | None = None, split: Literal["test", "dev"] = "test") -> None:
        super().__init__(data_path)
        if split not in SPLITS:
            raise ConfigError(f"task {self.name}: split must be one of {', '.join(SPLITS)}, got {split!r}")
        self.split = self.args["split"] = split

    def records(self) -> Iterator[tuple[RecordPlace, Any]]:
        header_checked = False
        for place, record in super().records():
            if isinstance(record, dict):
                if not header_checked and (missing := columns_missing(record)):
                    # the notebooks stop on it (row['answer_0']); read without, every answer in it would be lost
                    header_row = self.spec.data.header_row if self.spec.data is not None else None
                    raise ConfigError(
                        f"{place.source}: the header (data.header_row {header_row}) "
                        f"has no column {', '.join(missing)}; is it FreshQA's spreadsheet, saved as CSV?"
                    )
                header_checked = True
                split = str(record.get("split", "")).strip().lower()
                if split not in SPLITS:
                    yield place, place.error(f"split {record.get('split')!r} is neither TEST nor DEV", "split")
                    continue
                if split != self.split:
                    continue
            yield place, record

    def parse(self, record: Any, place: RecordPlace) -> Example:
        example = super().parse(record, place)
        example.gold["answers"] = [answer for answer in example.gold["answers"] if answer]
        if not example.gold["answers"]:
            raise place.error("no answer: answer_0 ... answer_9 are all empty", "answer_0")
        return example

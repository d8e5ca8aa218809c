"""Where a record is in its data, as the messages about it name it: the file line where the format has lines
(JSON Lines, CSV: a record's last line, as `csv.reader.line_num` counts it), else the record's path in the
JSON document (`Data[3]`, SQuAD's `data[0].paragraphs[2].qas[1]`) or its row in a dataset (`row 3`), both
indexed from 0 as the data is."""

from __future__ import annotations

from dataclasses import dataclass

from .._errors import RecordError


@dataclass(frozen=True)
class RecordPlace:
    source: str  # the file or dataset, as messages name it
    index: int  # the record's position in the data, from 0: the example's index (and its id when it has none)
    line: int  # the file line; where the data has no lines, the record's number (index + 1)
    at: str | None = None  # where the data has no lines: the record's path in the document, or its row

    def error(self, problem: str, field: str | None = None) -> RecordError:
        return RecordError(self.source, self.line, problem, field, at=self.at)

    def __str__(self) -> str:
        return f"{self.source} {self.at}" if self.at else f"{self.source}:{self.line}"

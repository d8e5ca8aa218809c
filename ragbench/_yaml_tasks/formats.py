"""Record formats a benchmark registers for YAML tasks (`data.format: NAME`) through the
`ragbench_record_formats` hook: the layouts of one benchmark's files (FlashRAG's JSONL, SQuAD's nested
JSON), which the core does not know by name. The core reads jsonl, json, csv, parquet and hf itself."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from .._class_defaults import EMPTY
from .places import RecordPlace


class RecordFormat:
    """How the records of one layout are read: `read(path)` yields (where the record is, the record as a
    mapping or a `RecordError`) in data order, as the core's readers do (`jsonl_records`, `json_records`)."""

    # one record per non-blank line of a plain file: the progress bar counts them for its ETA
    counts_lines: ClassVar[bool] = False
    # gold kind -> the record's path, for a task file that maps no gold (FlashRAG's `golden_answers`)
    default_gold: ClassVar[Mapping[str, str]] = EMPTY

    def read(self, path: Path) -> Iterator[tuple[RecordPlace, Any]]:
        raise NotImplementedError

"""Reading CSV and TSV values of any length without changing `csv`'s field limit for the rest of the process:
the limit is one process-wide setting (128 KiB a value by default), raised here for each read and set back
after it, so other code's readers (a user's, a library's) keep theirs. Not for threads reading CSV at once."""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator
from contextlib import contextmanager

LARGE_FIELDS = min(sys.maxsize, 2**31 - 1)  # a record of 10 MB is a record; a runaway quote ends in one bad row


@contextmanager
def large_fields() -> Iterator[None]:
    """Within the block, csv reads values up to `LARGE_FIELDS`; the limit in force before is restored after."""
    before = csv.field_size_limit(LARGE_FIELDS)
    try:
        yield
    finally:
        csv.field_size_limit(before)

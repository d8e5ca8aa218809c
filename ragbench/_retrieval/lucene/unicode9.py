"""Where Lucene 9.9's StandardTokenizer (its grammar generated from Unicode 9.0 and emoji 11.0 data) classes a
character otherwise than the `regex` package's current Unicode data, found by analysing every code point with
Lucene (tests/data/lucene_bm25/record_unicode_sweep.py, which writes the two tables to unicode9_ranges.txt):

- OTHER_RANGES: the characters Lucene's tables class as Other (no term alone, joining nothing), among them those
  added after Unicode 9.0, which `regex` may class as letters or digits;
- PICTOGRAPHIC_RANGES: emoji 11.0's Extended_Pictographic characters that `regex` does not give that property
  (each one an emoji token in Lucene);
- the few whose word-break property changed since 9.0, listed by hand below.
"""

from __future__ import annotations

from importlib import resources

# Prepended_Concatenation_Mark characters: WB=Format in 9.0 (Numeric since)
FORMAT = (0x0600, 0x0601, 0x0602, 0x0603, 0x0604, 0x0605, 0x06DD, 0x070F, 0x08E2, 0x110BD, 0x110CD)
MID_NUMERIC = (0xFE10, 0xFE14)  # vertical comma and semicolon: MidNum in 9.0 (Other since)
SOUTH_EAST_ASIAN = (0x19DA,)  # NEW TAI LUE THAM DIGIT ONE: Line_Break=Complex_Context in 9.0 (Numeric since)
# SEGMENTED DIGIT ZERO..NINE (Unicode 13.0): reserved Extended_Pictographic code points in emoji 11.0, Nd since
PICTOGRAPHIC = tuple(range(0x1FBF0, 0x1FBFA))


RETYPED = (*FORMAT, *MID_NUMERIC, *SOUTH_EAST_ASIAN, *PICTOGRAPHIC)  # out of regex's classes, into Lucene's


def hex_ranges(text: str) -> dict[str, tuple[tuple[int, int], ...]]:
    """Each table of `text` by its name: a line `name:`, then its code point ranges written "FIRST-LAST" in
    hexadecimal, separated by white space (`#` lines are comments)."""
    tables: dict[str, list[str]] = {}
    spans: list[str] = []
    for line in text.splitlines():
        if line.endswith(":"):
            spans = tables.setdefault(line[:-1], [])
        elif not line.startswith("#"):
            spans.extend(line.split())
    return {
        name: tuple((int(first, 16), int(last, 16)) for first, last in (span.split("-") for span in found))
        for name, found in tables.items()
    }


_TABLES = hex_ranges(resources.files(__package__).joinpath("unicode9_ranges.txt").read_text(encoding="utf-8"))
OTHER_RANGES, PICTOGRAPHIC_RANGES = _TABLES["other"], _TABLES["pictographic"]

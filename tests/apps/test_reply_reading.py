"""What ragbench reads of an application's reply and spans is read without more work than it keeps: a reply's
summary (`value_summary`) stops making the repr once the summary is full, and is the whole repr's first
`SUMMARY_CHARS` characters; an indexed attribute's items (`indexed`) are those the OTel pattern
`prefix.N.rest` names."""

from __future__ import annotations

import re
import reprlib

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._apps.conventions import indexed
from ragbench._apps.exchange import SUMMARY_CHARS, value_summary

TEXT = st.text(st.sampled_from("ab \n\t'\"\\.0123é"), max_size=300)
LEAVES = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT
VALUES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=9)
        | st.dictionaries(TEXT, inner, max_size=9)
        | st.tuples(inner, inner)
        | st.frozensets(st.integers(), max_size=9)
    ),
    max_leaves=60,
)


def whole_summary(value: object) -> str:
    """The summary made from the whole short repr (reprlib's, with the summary's limits)."""
    shown = reprlib.Repr()
    shown.maxstring, shown.maxother, shown.maxlist, shown.maxdict = 120, 120, 6, 6
    return " ".join(f"{type(value).__name__}: {shown.repr(value)}".split())[:SUMMARY_CHARS]


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_a_replys_summary_is_the_whole_reprs_first_characters(value):
    assert value_summary(value) == whole_summary(value)


def test_a_long_replys_summary_is_cut_where_the_whole_reprs_is():
    passage = "Varn is an island in the northern sea whose capital is Olm,   founded by Ansgar Pell in 1802.\n" * 4
    reply = {"answer": "Olm", "passages": [{"id": f"p{n}", "title": "Varn", "text": passage} for n in range(5)]}
    summary = value_summary(reply)
    assert summary == whole_summary(reply) and len(summary) == SUMMARY_CHARS
    assert summary.startswith("dict: {'answer': 'Olm', 'passages': [{'id': 'p0', 'text': 'Varn is an island in the")


KEYS = st.lists(
    st.tuples(
        st.sampled_from(["docs", "docs.x", "doc", "other"]),
        st.text(st.sampled_from("0123456789a"), max_size=3),
        st.text(st.sampled_from("ab.c"), max_size=4),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(KEYS)
def test_an_indexed_attributes_items_are_those_the_pattern_names(parts):
    attributes = {f"{head}.{index}.{rest}": n for n, (head, index, rest) in enumerate(parts)}
    attributes.update({f"{head}.{index}": -1 for head, index, _ in parts})  # no rest: not an item
    pattern = re.compile(r"^docs\.(\d+)\.(.+)$")
    expected: dict[int, dict[str, object]] = {}
    for key, value in attributes.items():
        found = pattern.match(key)
        if found:
            expected.setdefault(int(found.group(1)), {})[found.group(2)] = value
    assert indexed(attributes, "docs") == [expected[index] for index in sorted(expected)]

"""The read-only values a run hands its plugins (ragbench._read_only), units with no public face: they equal,
serialise and copy as the values they wrap, their copies are mutable, a record made sealed is the copied one
(tests/storage/test_read_only_inputs.py tests what a plugin that changes its inputs meets in a run)."""

from __future__ import annotations

import copy
import json
import pickle
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._read_only import ReadOnlyDict, ReadOnlyError, ReadOnlyList, read_only
from ragbench.api import Document, Example, SampleRecord, Step

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3) | st.tuples(inner, inner)
    ),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(value=JSON)
def test_a_read_only_value_equals_serialises_and_copies_as_the_value_and_copies_are_mutable(value):
    frozen = read_only(value)
    assert frozen == value or value != value  # NaN inside is unequal to itself
    assert json.dumps(frozen, default=repr) == json.dumps(value, default=repr)
    for copied in (copy.copy(frozen), copy.deepcopy(frozen), pickle.loads(pickle.dumps(frozen))):
        assert type(copied) in (dict, list, tuple) or not isinstance(copied, (ReadOnlyDict, ReadOnlyList))
    assert not any(isinstance(part, (ReadOnlyDict, ReadOnlyList)) for part in _parts(copy.deepcopy(frozen)))


def _parts(value):
    yield value
    for item in value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ():
        yield from _parts(item)


def test_a_read_only_record_copies_into_a_mutable_one_and_leaves_its_source_alone():
    source = Example(id="1", question="q", gold={"answers": ["a"]}, docs=[Document(id="d", title="", text="t")])
    frozen = source.read_only()
    assert frozen == source and frozen.read_only() is frozen
    source.gold["answers"].append("b")  # the source stays the caller's, mutable
    assert frozen.gold == {"answers": ["a"]}
    for mutable in (
        replace(frozen, question="other"),
        copy.copy(frozen),
        copy.deepcopy(frozen),
        pickle.loads(pickle.dumps(frozen)),
    ):
        mutable.question = "changed"
    copy.deepcopy(frozen).gold["answers"].append("c")
    with pytest.raises(ReadOnlyError, match=r"Document is read-only \(setting 'text'\)"):
        frozen.docs[0].text = "x"
    assert Document(**vars(frozen.docs[0])) == frozen.docs[0]
    step = Step(kind="llm", name="x", request={"prompt": "p"}).read_only()
    assert step.to_dict()["request"] == {"prompt": "p"}


@settings(max_examples=100, deadline=None)
@given(
    gold=st.dictionaries(st.text(max_size=5), JSON, max_size=3),
    request=st.dictionaries(st.text(max_size=5), JSON, max_size=3),
)
def test_a_record_made_sealed_equals_the_copied_one_holds_none_of_its_values_and_is_read_only_all_the_way(
    gold, request
):
    """`ReadOnly.sealed` (the one copy a record read in bulk costs) gives what `read_only()` of the record gives."""
    step = Step.sealed(kind="llm", name="x", request=request, group=[])
    assert step == Step(kind="llm", name="x", request=copy.deepcopy(request), group=[]).read_only()
    record = SampleRecord.sealed(id="1", gold=gold, trace=[step])
    assert record == SampleRecord(id="1", gold=copy.deepcopy(gold), trace=[step]).read_only()
    assert record.gold is not gold and step.request is not request and record.scores == {}
    assert all(
        not isinstance(part, (dict, list)) or isinstance(part, (ReadOnlyDict, ReadOnlyList))
        for part in [*_parts(record.gold), *_parts(record.trace[0].request), record.trace]
    )
    with pytest.raises(ReadOnlyError):
        record.trace[0].name = "y"


def test_a_record_read_from_a_line_keeps_nothing_of_the_line():
    line = {
        "index": 0,
        "id": "1",
        "gold": {"answers": ["a"]},
        "trace": [{"kind": "llm", "name": "x", "request": {"prompt": "p"}}],
    }
    record = SampleRecord.from_dict(line)
    line["gold"]["answers"].append("b")
    line["trace"][0]["request"]["prompt"] = "changed"
    assert record.gold == {"answers": ["a"]} and record.trace[0].request == {"prompt": "p"}

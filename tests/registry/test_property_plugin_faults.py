"""Property: whatever a system plugin returns (any value: JSON or not, nested, cyclic, huge integers, in a
Prediction's fields or in place of one) or raises (any exception class, BaseException subclasses and
exceptions whose `__str__` raises included), the run completes in-process: every example is written and
counted (scored or failed), the samples read back as written, results.json exists, and --resume ends
with the same counts."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_plugin_faults import system_that

from ragbench._storage.jsonl import dumps, parse_json, plain_dumps
from ragbench._storage.sample_files import iter_samples
from ragbench._values import json_values
from ragbench._values.json_values import json_problem, nested_deeper, plainly_json
from ragbench.api import Document, Prediction
from ragbench.testing import run_eval

EXAMPLES = 2
TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=8)  # lone surrogates too
HUGE_INTEGERS = st.sampled_from([20, 5000]).map(lambda digits: -(10**digits))  # over 64 bits; over 4,300 digits
NOT_JSON = st.sampled_from([{1, 2}, frozenset(), object(), Document("d", "t", "x")])
SCALARS = (
    st.none() | st.booleans() | st.integers() | HUGE_INTEGERS | st.floats() | TEXT | st.binary(max_size=4) | NOT_JSON
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(TEXT | st.integers() | st.sampled_from([(1, 2), None]), inner, max_size=3)
    ),
    max_leaves=10,
)


def cyclic(value):
    loop = [value]
    loop.append(loop)
    return loop


PREDICTIONS = st.one_of(
    VALUES,  # returned in place of a Prediction
    VALUES.map(lambda v: lambda e: Prediction(e.id, answer=v)),
    VALUES.map(lambda v: lambda e: Prediction(e.id, answer="a", extras={"x": v})),
    VALUES.map(lambda v: lambda e: Prediction(e.id, answer="a", extras={"x": cyclic(v)})),
    VALUES.map(lambda v: lambda e: Prediction(e.id, answer="a", citations=v)),
    VALUES.map(lambda v: lambda e: Prediction(e.id, answer="a", docs=[Document("d", "t", "x", metadata={"m": v})])),
    VALUES.map(lambda v: lambda e: Prediction(e.id, answer="a", raw_output=v)),
)


class OwnBase(BaseException):
    """A plugin's exception class that derives from BaseException, not Exception."""


def unreadable(base):
    """A subclass of `base` whose message cannot be made (its __str__ raises)."""

    def __str__(self):
        raise RuntimeError("no message")

    return type(f"Unreadable{base.__name__}", (base,), {"__str__": __str__})


BASES = [
    ValueError,
    RuntimeError,
    MemoryError,
    RecursionError,
    StopIteration,
    OSError,
    ArithmeticError,
    SystemExit,
    GeneratorExit,
    KeyboardInterrupt,
    BaseException,
    OwnBase,
    asyncio.CancelledError,
    asyncio.TimeoutError,
    NotImplementedError,
]
EXCEPTIONS = (
    st.sampled_from(BASES)
    .flatmap(lambda base: st.sampled_from([base, unreadable(base)]))
    .flatmap(lambda kind: st.one_of(st.just(()), st.tuples(VALUES)).map(lambda args: kind(*args)))
)


def assert_every_example_written_and_counted(behaviour):
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "run"
        run = run_eval("demo", system_that(behaviour), limit=EXAMPLES, output=folder)
        counts = run.results["counts"]["demo"]
        assert counts["records"] == EXAMPLES == counts["scored"] + counts["failed"] and counts["missing"] == 0
        assert run.complete == (counts["failed"] == 0)
        unreadable_lines = []
        assert len(list(iter_samples(folder / "samples" / "demo.jsonl", unreadable_lines))) == EXAMPLES
        assert not unreadable_lines and "checkpoint_repairs" not in run.results
        assert json.loads((folder / "results.json").read_text(encoding="utf-8"))["counts"] == run.results["counts"]
        resumed = run_eval("demo", system_that(behaviour), limit=EXAMPLES, output=folder, resume=True)
        assert resumed.results["counts"] == run.results["counts"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(returned=PREDICTIONS)
def test_whatever_a_system_returns_every_example_is_written_and_counted(returned):
    assert_every_example_written_and_counted(returned if callable(returned) else lambda example: returned)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exc=EXCEPTIONS)
def test_whatever_a_system_raises_every_example_is_written_and_counted(exc):
    def behave(example):
        raise exc

    assert_every_example_written_and_counted(behave)


@settings(max_examples=200, deadline=None)
@given(value=VALUES)
def test_a_value_the_json_rule_accepts_is_written_as_plain_json_and_read_back(value):
    """Nothing accepted is written as its `str` (plain json.dumps, without a fallback, takes it), and
    ragbench's reader reads the line back as JSON's reading of it."""
    if json_problem(value, "value") is None:
        plain = json.loads(json.dumps(value))
        assert dumps(parse_json(dumps(value))) == dumps(plain)


EMPTY = st.sampled_from([[], {}, (), ""])  # a few bytes written, more counted by the walk
NESTED = st.integers(0, 3).flatmap(
    lambda kind: st.integers(95, 105).map(lambda levels: nested(levels, ([], {}, (), [0])[kind]))
)


def nested(levels, inner):
    value = inner
    for level in range(levels - 1):
        value = [value] if level % 2 else {"k": value}
    return value


@settings(max_examples=300, deadline=None)
@given(value=VALUES | NESTED | st.lists(SCALARS | EMPTY, min_size=50, max_size=400), bytes_bound=st.integers(12, 3000))
def test_the_quick_check_of_a_value_s_json_text_never_passes_what_the_walk_refuses(value, bytes_bound):
    """A sample's line is checked from its JSON text where it plainly is JSON (`plainly_json`, the quick path of
    every example): whatever the value and the bounds on a sample's size (lowered here, so that values reach
    them), what it passes the walk (`json_problem`) passes too, and the text is the one the writer writes. A small
    value the walk accepts takes the quick path."""
    walked = json_problem(value, "value")
    text = plain_dumps(value)
    if text is not None and plainly_json(text):
        assert walked is None and text == dumps(value)
    elif walked is None and len(dumps(value)) < 10_000 and not nested_deeper(dumps(value), json_values.MAX_DEPTH):
        raise AssertionError(f"a small value the walk accepts missed the quick path: {dumps(value)[:200]}")
    saved = json_values.MAX_BYTES, json_values.MAX_VALUES
    try:  # the size bounds lowered to where the value's own size meets them
        json_values.MAX_BYTES, json_values.MAX_VALUES = bytes_bound, bytes_bound // 3 or 1
        if text is not None and plainly_json(text):
            assert json_problem(value, "value") is None
        json_values.MAX_VALUES = bytes_bound
        if text is not None and plainly_json(text):
            assert json_problem(value, "value") is None
    finally:
        json_values.MAX_BYTES, json_values.MAX_VALUES = saved

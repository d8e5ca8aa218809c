"""pytest fixtures of ragbench, loaded by a test suite's conftest.py: `pytest_plugins = ["ragbench.testing.fixtures"]`.

`ragbench_gate(run, baseline, **options)` gates a run folder against its baseline as `ragbench gate` does
(ragbench.testing.gate.assert_no_regression) and fails the test, naming each significant regression, where the
candidate regressed; it returns the gate's report otherwise."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .gate import assert_no_regression


@pytest.fixture
def ragbench_gate() -> Callable[..., object]:
    return assert_no_regression

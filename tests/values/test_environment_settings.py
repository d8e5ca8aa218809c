"""ragbench's settings in the environment ($RAGBENCH_FSYNC, $RAGBENCH_WORKERS, $RAGBENCH_WORKERS_NICE): a value
ragbench cannot read is refused before any work, in one line naming the variable and its value, by every command
and by the pre-flight of `run_eval`; never read as the default (a typo of `off` kept flushing, unannounced)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._errors import ConfigError
from ragbench._values.environment import environment_problems, seconds_in_environment
from ragbench.testing import PreflightError, preflight
from support.helpers import cli_here

ACCEPTED = {
    "RAGBENCH_FSYNC": ["on", "off", "OFF", " Off ", ""],
    "RAGBENCH_WORKERS": ["0", "1", "16", " 2 "],
    "RAGBENCH_WORKERS_NICE": ["0", "5", "19", "-20"],
}
REFUSED = {
    "RAGBENCH_FSYNC": ["of", "0", "false", "no", "offf", "of\nf"],
    "RAGBENCH_WORKERS": ["two", "-1", "1.5", "0x2", "1\r\n2"],
    "RAGBENCH_WORKERS_NICE": ["high", "20", "-21", "5.0"],
}


@pytest.mark.parametrize(("variable", "value"), [(v, x) for v, xs in REFUSED.items() for x in xs])
def test_a_value_ragbench_cannot_read_ends_every_command_in_one_line(variable, value, tmp_path):
    for command in (
        ("--tasks", "demo", "--model", "scripted:echo", "--limit", "1", "--output", str(tmp_path / "run")),
        ("cache",),
    ):
        result = cli_here(*command, env={variable: value})
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert lines == [lines[0]] and lines[0].startswith(f"ragbench: error: {variable}=")
        assert repr(value)[1:-1] in lines[0]  # escaped as repr escapes it
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("variable", "value"), [(v, x) for v, xs in ACCEPTED.items() for x in xs])
def test_a_value_ragbench_reads_passes_the_preflight(variable, value, monkeypatch):
    monkeypatch.setenv(variable, value)
    preflight("demo", limit=1)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=8))
def test_fsync_is_on_or_off_or_refused_by_the_preflight(value):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAGBENCH_FSYNC", value.replace("\x00", ""))
        shown = value.replace("\x00", "").strip()
        if shown.lower() in ("", "on", "off"):
            preflight("demo", limit=1)
        else:
            with pytest.raises(PreflightError, match="RAGBENCH_FSYNC="):
                preflight("demo", limit=1)


SETTINGS = ["RAGBENCH_FSYNC", "RAGBENCH_WORKERS", "RAGBENCH_WORKERS_NICE", "RAGBENCH_STORAGE_TIMEOUT"]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(SETTINGS), st.text(st.characters(exclude_characters="\x00"), min_size=1, max_size=12))
def test_every_refusal_of_a_setting_shows_its_value_in_one_line(variable, value):
    """Line breaks and other unprintable characters in a value are escaped: `RAGBENCH_FSYNC=$'of\\nf'` is one line."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(variable, value)
        try:
            refusals = [*environment_problems(), str(seconds_in_environment("RAGBENCH_STORAGE_TIMEOUT", 60))]
        except ConfigError as exc:
            refusals = [str(exc)]
    for line in refusals:
        assert line.isprintable(), line

"""The files a run is given to check and price its judges (`--human-labels`, `--price-table`) and the bounds of
its count options (`--judge-repeats`, `--max-inflight`): whatever is given - a FIFO, /dev/zero, any bytes, a
damaged file, JSON nested past the recursion limit, a CSV value over csv's own limit, an infinite price, a YAML
tag - a command either reads it or ends at once in one line naming the file (and its line) with exit status 2,
never a traceback, a hang or memory run out. Each test has a timeout, so a regression fails instead of hanging."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragbench._config.option_bounds import MAX_INFLIGHT, MAX_JUDGE_REPEATS
from ragbench._config.run_config import RunConfig
from ragbench._cost.prices import read_price_table
from ragbench._reports.judging.human_labels import read_human_labels
from ragbench._run.judges.raters import compares, raters
from ragbench._run.plan.preflight import check_run_options
from ragbench._yaml_tasks.located import SpecError, read_yaml_text
from ragbench.api import ConfigError, Metric, MetricDeclaration, Preflight
from ragbench.testing import installed_registry
from support import paths
from support.helpers import cli_here

pytestmark = pytest.mark.timeout(120, method="thread")  # a hang in any thread fails the session
OPTIONS = ("--human-labels", "--price-table")
MEMORY = 2_000_000_000  # /dev/zero read whole would pass it in a second or two: a MemoryError, not a machine out
DEEP = '{"a": ' * 100_000 + "1" + "}" * 100_000
LONG = "x" * 300_000  # past csv's default limit of 131,072 characters a value


def commands(tmp_path: Path) -> dict[str, list[str]]:
    """Each command that takes --human-labels and --price-table, before those options."""
    return {
        "run": ["--tasks", "demo", "--model", "scripted:echo", "--no-progress", "--output", str(tmp_path / "run")],
        "check": ["check", "--tasks", "demo", "--model", "scripted:echo"],
        "score": [
            "score",
            "--task",
            "demo",
            "--predictions",
            str(tmp_path / "p.jsonl"),
            "--output",
            str(tmp_path / "run"),
        ],
        "rescore": ["rescore", str(tmp_path / "no-run")],
    }


def one_line(result: subprocess.CompletedProcess) -> str:
    """The one line of a command that stopped on a configuration error (exit 2)."""
    lines = result.stderr.splitlines()
    assert result.returncode == 2 and len(lines) == 1 and lines[0].startswith("ragbench: error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("command", ["run", "check", "score", "rescore"])
def test_a_fifo_given_as_labels_or_prices_is_refused_at_once(tmp_path, command, option):
    fifo = tmp_path / "labels.jsonl"
    os.mkfifo(fifo)
    line = one_line(cli_here(*commands(tmp_path)[command], option, str(fifo)))
    assert (
        f"{option} {fifo}: a FIFO (named pipe) is there, not a file; ragbench reads only a regular file there: give a "
        in line
    )
    assert not (tmp_path / "run").exists()


def test_dev_zero_given_as_labels_or_prices_is_refused_by_every_command(tmp_path):
    """All eight in one process whose memory is bounded (a regression reads /dev/zero until it is full)."""
    every = [[*args, option, "/dev/zero"] for args in commands(tmp_path).values() for option in OPTIONS]
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); from support.helpers import cli_here; "
        "print(json.dumps([[r.returncode, r.stderr] for r in (cli_here(*a) for a in json.loads(sys.argv[2]))]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(paths.TESTS), json.dumps(every)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY)),
    )
    assert done.returncode == 0, done.stderr
    for args, (code, stderr) in zip(every, json.loads(done.stdout)):
        line = one_line(subprocess.CompletedProcess(args, code, "", stderr))
        assert f"{args[-2]} /dev/zero: a character device is there, not a file" in line


def test_a_labels_line_nested_past_the_recursion_limit_is_one_line_naming_it(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text(f'{{"id": "q1", "metric": "llm_judge", "label": 1}}\n{DEEP}\n')
    line = one_line(cli_here(*commands(tmp_path)["run"], "--human-labels", str(labels)))
    assert f"{labels}:2: not a JSON object (nested too deeply to parse" in line


def test_a_labels_csv_value_over_csvs_limit_is_read_and_a_bad_one_named_in_one_line(tmp_path):
    labels = tmp_path / "labels.csv"
    labels.write_text(f"id,metric,label\n{LONG},llm_judge,1\nq2,llm_judge,0\n")
    assert read_human_labels(labels).for_task("demo") == {"llm_judge": {LONG: 1.0, "q2": 0.0}}
    labels.write_text(f"id,metric,label\nq1,llm_judge,1\n\nq2,llm_judge,{LONG}\n")
    line = one_line(cli_here(*commands(tmp_path)["run"], "--human-labels", str(labels)))
    assert f"{labels}:4: label 'xxxxxxxxxxxx...xxxxxxxxxxxxx' is not a number" in line and len(line) < 400


@pytest.mark.parametrize(
    "name, text",
    [
        ("p.yaml", "m: {prompt: .inf, completion: 1}"),
        ("p.yaml", "m: {prompt: .nan, completion: 1}"),
        ("p.yaml", "m: {prompt: 1.0e+400, completion: 1}"),
        ("p.yaml", "m: {prompt: -0.5, completion: 1}"),
        ("p.json", '{"m": {"prompt": 1e400, "completion": 1}}'),
        ("p.json", '{"m": {"prompt": Infinity, "completion": 1}}'),
        ("p.json", '{"m": {"prompt": NaN, "completion": 1}}'),
        ("p.json", '{"m": {"prompt": 1' + "0" * 400 + ', "completion": 1}}'),
        ("p.json", '{"m": {"prompt": true, "completion": 1}}'),
    ],
)
def test_a_price_that_is_not_finite_and_at_least_zero_is_refused(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    line = one_line(cli_here(*commands(tmp_path)["run"], "--price-table", str(tmp_path / name)))
    assert f"--price-table {tmp_path / name}: entry 'm' is not {{prompt: USD, completion: USD}}" in line


@pytest.mark.parametrize(
    "text, problem",
    [
        ("m: {prompt: 1, completion: 2\n", ":2: not valid YAML (while parsing a flow mapping did not find expected"),
        ("m:\n  prompt: 1\n completion: 2\n", ":3: not valid YAML ("),
        (
            "m: !!python/object/apply:os.system [echo]\n",
            ":1: the tag 'tag:yaml.org,2002:python/object/apply:os.system'",
        ),
        ("m: !!python/name:os.system\n", ":1: the tag 'tag:yaml.org,2002:python/name:os.system' is not allowed"),
        ("m: {prompt: !!int 0b2, completion: 1}\n", ":1: a value YAML cannot read (invalid literal for int()"),
        ("[" * 5000 + "]" * 5000, ":1: not valid YAML ("),
    ],
)
def test_a_price_table_that_is_no_yaml_or_has_a_tag_is_one_line_naming_its_line(tmp_path, text, problem):
    prices = tmp_path / "prices.yaml"
    prices.write_text(text)
    line = one_line(cli_here(*commands(tmp_path)["rescore"], "--price-table", str(prices)))
    assert f"--price-table {prices}{problem}" in line


@pytest.mark.parametrize(
    "text, problem",
    [
        ("task: t\nx: \x00\n", "t.yaml:2: not valid YAML (character #x0000 at column 4: control characters"),
        ("task: !!int 0b2\n", "t.yaml:1: a value YAML cannot read (invalid literal for int()"),
        ("task: t\nx: " + "[" * 990 + "]" * 990 + "\n", "t.yaml:1: nested too deeply to read"),
    ],
)
def test_a_yaml_task_file_reads_the_same_way_in_one_line(text, problem):
    """The reader the price table shares with YAML task files: their errors are one line too."""
    with pytest.raises(SpecError) as refused:
        read_yaml_text(text, "t.yaml")
    assert str(refused.value).startswith(problem) and len(str(refused.value).splitlines()) == 1


@pytest.mark.parametrize(
    "text, problem",
    [
        (
            "gpt-4o: {prompt: 2.5, completion: 10}\ngpt-4o: {prompt: 0.01, completion: 0.01}\n",
            ":2: key 'gpt-4o' is given twice",
        ),
        ("m: {prompt: 1, completion: 2, prompt: 0}\n", ":1: key 'prompt' is given twice"),
        ("1: {prompt: 1, completion: 2}\n'1': {prompt: 0, completion: 0}\n", ": '1' is priced twice"),
    ],
)
def test_a_model_priced_twice_in_a_price_table_is_refused_not_priced_at_the_last(tmp_path, text, problem):
    """YAML keeps a key's last value silently: a hand-edited table pricing a model twice would price it at
    whichever came last."""
    prices = tmp_path / "prices.yaml"
    prices.write_text(text)
    line = one_line(cli_here(*commands(tmp_path)["rescore"], "--price-table", str(prices)))
    assert f"--price-table {prices}{problem}" in line


def test_a_price_table_may_share_an_entry_through_a_yaml_alias(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("gpt-4o: &same {prompt: 2.5, completion: 10}\ngpt-4o-2024-08-06: *same\n")
    assert read_price_table(prices) == {m: {"prompt": 2.5, "completion": 10.0} for m in ("gpt-4o", "gpt-4o-2024-08-06")}
    prices.write_text("gpt-4o: &same {prompt: 2.5, completion: 10}\nmini: {<<: *same, prompt: 0.15}\n")  # a key merged
    assert read_price_table(prices)["mini"] == {"prompt": 0.15, "completion": 10.0}  # and given again: no twice


# --- any bytes, any damage --------------------------------------------------------------------------------
VALID = {
    "labels.jsonl": b'{"id": "q1", "metric": "llm_judge", "label": 1}\n{"id": 2, "metric": "m", "label": "0.5"}\n',
    "labels.csv": b'id,metric,label,task\nq1,llm_judge,1,\n"q,2",m,0.5,demo\n',
    "prices.yaml": b"gpt-4o: {prompt: 2.5, completion: 10}\nlocal:\n  prompt: 0\n  completion: 1.0e-3\n",
    "prices.json": b'{"gpt-4o": {"prompt": 2.5, "completion": 10}, "x": {"prompt": 0, "completion": 1}}',
}
READERS = {"labels": read_human_labels, "prices": read_price_table}


@st.composite
def damaged(draw: st.DrawFn, valid: bytes) -> bytes:
    """`valid` cut short, with bytes put in, or bytes taken out, somewhere."""
    at = draw(st.integers(0, len(valid)))
    kind = draw(st.sampled_from(["cut", "insert", "remove"]))
    if kind == "cut":
        return valid[:at]
    if kind == "insert":
        return valid[:at] + draw(st.binary(min_size=1, max_size=8) | st.sampled_from([b"\x00", b"\xff", b"[" * 2000]))
    return valid[:at] + valid[at + draw(st.integers(1, 8)) :]


def read_or_one_line(tmp_path: Path, name: str, content: bytes) -> None:
    """`content` as the file `name` is read, or refused in a ConfigError of one line naming the file."""
    path = tmp_path / name
    path.write_bytes(content)
    try:
        READERS[name.partition(".")[0]](path)
    except ConfigError as exc:
        assert len(str(exc).splitlines()) == 1 and str(path) in str(exc), str(exc)


@pytest.mark.parametrize("name", list(VALID))
def test_the_undamaged_files_are_read(tmp_path, name):
    (tmp_path / name).write_bytes(VALID[name])
    assert READERS[name.partition(".")[0]](tmp_path / name)


@pytest.mark.parametrize("name", list(VALID))
@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])  # one file, rewritten
@given(data=st.data())
def test_any_bytes_or_damage_is_read_or_refused_in_one_line(tmp_path, name, data):
    read_or_one_line(tmp_path, name, data.draw(st.binary(max_size=200) | damaged(VALID[name])))


@settings(max_examples=12)
@given(name=st.sampled_from(list(VALID)), data=st.data())
def test_a_command_given_any_damaged_file_ends_in_one_line(tmp_path_factory, name, data):
    tmp_path = tmp_path_factory.mktemp("given")
    path = tmp_path / name
    path.write_bytes(data.draw(damaged(VALID[name])))
    option = "--human-labels" if name.startswith("labels") else "--price-table"
    result = cli_here(*commands(tmp_path)["rescore"], option, str(path))
    assert "Traceback" not in result.stderr
    one_line(result)  # the file's problem, or (a file that reads) the missing run folder's


# --- the count options' bounds ------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["run", "rescore"])
def test_judge_repeats_over_the_bound_is_refused_as_the_command_line_is_read(tmp_path, command):
    line = one_line(cli_here(*commands(tmp_path)[command], "--judge-repeats", "100000000"))
    assert f"--judge-repeats 100000000: at most {MAX_JUDGE_REPEATS} scorings per judge (each is one more judge" in line
    assert "3 to 10" in line  # why the bound is enough


def test_max_inflight_over_the_bound_is_refused_before_a_run_or_rescore_starts(tmp_path):
    line = one_line(cli_here(*commands(tmp_path)["run"], "--max-inflight", "100000000"))
    assert f"--max-inflight 100000000: at most {MAX_INFLIGHT:,} examples at once" in line
    done = cli_here(*commands(tmp_path)["run"], "--limit", "2", "--bootstrap-iters", "10")
    assert done.returncode == 0, done.stderr
    line = one_line(cli_here("rescore", str(tmp_path / "run"), "--max-inflight", "100000000"))
    assert f"--max-inflight 100000000: at most {MAX_INFLIGHT:,} examples at once" in line
    assert not (tmp_path / "run__rescored").exists()


def test_a_config_over_the_bounds_is_a_preflight_problem_each():
    check = Preflight()
    config = RunConfig.of(tasks=["demo"], judge_repeats=10**8, max_inflight=10**8)
    check_run_options(config, check, installed_registry())
    assert [p.split(":")[0] for p in check.problems] == ["--judge-repeats 100000000", "--max-inflight 100000000"]
    check = Preflight()
    config = RunConfig.of(tasks=["demo"], judge_repeats=MAX_JUDGE_REPEATS, max_inflight=MAX_INFLIGHT)
    check_run_options(config, check, installed_registry())
    assert check.problems == []


class Interchangeable(Metric):
    name, declares = "interchangeable", MetricDeclaration(needs=("judge",))


class Roles(Metric):
    name, declares = "roles", MetricDeclaration(needs=("judge",), judge_roles=("extractor", "checker"))


class Unjudged(Metric):
    name = "unjudged"


@given(
    metric=st.sampled_from([Interchangeable(), Roles(), Unjudged()]),
    judges=st.integers(0, 4),
    repeats=st.none() | st.integers(1, 6),
)
def test_whether_a_metric_has_raters_is_known_without_making_one_per_repeat(metric, judges, repeats):
    assert compares(metric, judges, repeats) == bool(raters(metric, judges, repeats))
    judged = "judge" in metric.declares.needs and judges >= 1
    assert compares(metric, judges, 10**12) == judged  # at once: no rater is made

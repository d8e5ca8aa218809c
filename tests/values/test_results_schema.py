"""results.json is a typed `Results` (ragbench._reports.results.schema) with a `schema_version`, written by one
function and read by one (`read_results`) in `compare`, `rescore`, `reproduce`, `--resume` and the viewer: a
file written before the version was recorded reads as version 1, a later version is refused in one line naming
the file and the fix, and the JSON schema in docs/outputs.md is the one the dataclasses make."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_reproduce import registry_with_demo_row, reproduce  # noqa: F401 (a fixture)  # noqa: F401 (a fixture)

import ragbench.tasks.selfrag
from ragbench._reports.results.file import NewerResults, read_results, results_text
from ragbench._reports.results.schema import SCHEMA_VERSION, Results, json_schema
from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench._run.rescore.rescore_run import rescore_run
from ragbench.api import ConfigError
from ragbench.api.data import parse_json
from ragbench.testing import installed_registry
from support import paths
from support.helpers import cli_here, cli_run_args

DEMO = Path(ragbench.tasks.selfrag.__file__).parent / "data" / "demo_qa.jsonl"
DOCS = paths.REPO / "docs" / "outputs.md"


def run_config(folder: Path, **changes) -> RunConfig:
    return RunConfig.of(
        **{
            "tasks": ["demo"],
            "system": "closed_book",
            "model": "scripted:echo",
            "metrics": ["match", "f1"],
            "limit": 4,
            "output": str(folder),
            "progress": False,
            "bootstrap_iters": 20,
            **changes,
        }
    )


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("schema") / "run"
    Evaluator(run_config(folder), registry=installed_registry()).run()
    return folder


def copy_with(finished: Path, target: Path, **changes) -> Path:
    """A copy of the finished run whose results.json has `changes` (a value None: the key removed)."""
    shutil.copytree(finished, target)
    results = json.loads((target / "results.json").read_text())
    results.update(changes)
    (target / "results.json").write_text(json.dumps({k: v for k, v in results.items() if v is not None}))
    return target


def test_a_run_writes_the_schema_version_and_its_results_read_back_as_written(finished):
    written = json.loads((finished / "results.json").read_text())
    assert written["schema_version"] == SCHEMA_VERSION
    read = read_results(finished / "results.json", "compare")
    assert read.schema_version == SCHEMA_VERSION and read.to_dict() == written
    assert results_text(read) == (finished / "results.json").read_text()


def test_a_results_json_written_before_the_version_reads_as_version_1(finished, tmp_path):
    older = copy_with(finished, tmp_path / "older", schema_version=None)  # the shape written before the key
    read = read_results(older / "results.json", "rescore")
    assert read.schema_version == 1
    assert {**read.to_dict(), "schema_version": SCHEMA_VERSION} == json.loads((finished / "results.json").read_text())
    done = cli_here("rescore", str(older), "--output", str(tmp_path / "again"))
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "again" / "results.json").read_text())["schema_version"] == SCHEMA_VERSION
    compared = cli_here("compare", str(older), str(finished))
    assert compared.returncode == 0, compared.stderr


def one_line_refusal(done, path: Path) -> str:
    message = done.stderr.strip()
    assert done.returncode == 2 and len(message.splitlines()) == 1 and "Traceback" not in message, done.stderr
    assert str(path / "results.json") in message
    return message


def test_a_later_version_is_refused_in_one_line_by_compare_rescore_view_and_resume(finished, tmp_path):
    later = copy_with(finished, tmp_path / "later", schema_version=SCHEMA_VERSION + 1)
    for done in (
        cli_here("compare", str(finished), str(later)),
        cli_here("rescore", str(later), "--output", str(tmp_path / "rescored")),
        cli_here("view", str(later), "--export", str(tmp_path / "site")),
        cli_here(
            *cli_run_args("scripted:echo"),
            "--metrics",
            "match,f1",
            "--limit",
            "4",
            "--bootstrap-iters",
            "20",
            "--output",
            str(later),
            "--resume",
        ),
    ):
        message = one_line_refusal(done, later)
        assert f"schema_version {SCHEMA_VERSION + 1}" in message and "upgrade ragbench" in message
    assert not (tmp_path / "rescored").exists() and not (tmp_path / "site").exists()
    with pytest.raises(NewerResults, match="reproduce: .* upgrade ragbench"):  # what `reproduce` reads after its run
        read_results(later / "results.json", "reproduce")


@pytest.mark.parametrize("version", [None, "2", True, 0, 1.5, [2]], ids=repr)
def test_a_schema_version_no_ragbench_writes_is_refused_as_a_changed_file(finished, tmp_path, version):
    results = json.loads((finished / "results.json").read_text())
    (tmp_path / "results.json").write_text(json.dumps({**results, "schema_version": version}))
    with pytest.raises(ConfigError) as refused:
        read_results(tmp_path / "results.json", "compare")
    assert not isinstance(refused.value, NewerResults) and "the file was changed" in str(refused.value)
    assert len(str(refused.value).splitlines()) == 1


METRIC_VALUES = st.one_of(
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(2**1100), 2**1100),
    st.sampled_from([1.7976931348623157e308, -0.0, 5e-324]),
)
NAMES = st.text(st.characters(codec="utf-8"), min_size=1, max_size=8)
# a task's name is its samples file's stem (results.json's writer refuses another, as its reader does)
TASK_NAMES = NAMES.filter(lambda name: name.isprintable() and not {"/", "\\"} & set(name) and name not in (".", ".."))


@st.composite
def results_objects(draw) -> Results:
    tasks = draw(st.lists(TASK_NAMES, min_size=1, max_size=3, unique=True))
    keys = {task: draw(st.dictionaries(NAMES, METRIC_VALUES, max_size=3)) for task in tasks}
    details = {
        task: {
            key: {
                "value": value,
                "ci95": draw(
                    st.none() | st.lists(METRIC_VALUES.filter(lambda v: v is not None), min_size=2, max_size=2)
                ),
                "n": draw(st.integers(0, 10**6)),
                "n_none": 0,
                "n_errors": draw(st.integers(0, 9)),
                "higher_is_better": draw(st.sampled_from([True, False, None])),
            }
            for key, value in keys[task].items()
        }
        for task in tasks
    }
    counts = {
        task: dict.fromkeys(
            ("records", "scored", "failed", "bad_records", "missing", "metric_failures"), draw(st.integers(0, 10**9))
        )
        for task in tasks
    }
    return Results(
        results=keys,
        details=details,
        counts=counts,
        complete=draw(st.booleans()),
        cost={"examples": draw(st.integers(0, 10**9)), "wall_seconds": draw(METRIC_VALUES)},
        config={"tasks": tasks},
        versions={"ragbench": "0"},
        data_sha256=draw(st.none() | st.just({task: "0" * 64 for task in tasks})),
        system_stats=draw(st.none() | st.just({tasks[0]: {"docs": draw(METRIC_VALUES)}})),
        date=draw(st.none() | st.text(max_size=5)),
        other=draw(st.dictionaries(st.sampled_from(["notes", "extra"]), st.text(max_size=5), max_size=2)),
    )


@settings(max_examples=50)
@given(results=results_objects())
def test_results_written_and_read_back_are_equal(results):
    assert Results.from_dict(parse_json(results_text(results))) == results


def documented_schema() -> dict:
    text = DOCS.read_text(encoding="utf-8")
    block = re.search(r"<!-- results-schema -->\n```json\n(.*?)\n```", text, re.S)
    assert block, "docs/outputs.md holds the JSON schema after <!-- results-schema -->"
    return json.loads(block.group(1))


def test_the_schema_in_the_docs_is_the_one_the_dataclasses_make():
    assert documented_schema() == json_schema(), "regenerate: python -m ragbench._reports.results.schema"


def test_a_written_results_json_follows_the_schema(finished, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    rescore_run(finished, {"output": str(tmp_path / "rescored")}, installed_registry())
    for run in (finished, tmp_path / "rescored"):
        jsonschema.validate(json.loads((run / "results.json").read_text()), json_schema())


def test_reproduce_writes_the_version_and_refuses_a_later_one_in_one_line(registry_with_demo_row, tmp_path):
    done = reproduce("demo.closed-book", "--output", str(tmp_path / "run"), "--no-progress")
    assert done.exit_code == 0, done.output
    path = tmp_path / "run" / "results.json"
    results = json.loads(path.read_text())
    assert results["schema_version"] == SCHEMA_VERSION and results["reproduction"]["name"] == "demo.closed-book"
    path.write_text(json.dumps({**results, "schema_version": SCHEMA_VERSION + 1}))
    again = reproduce("demo.closed-book", "--output", str(tmp_path / "run"), "--no-progress", "--resume")
    message = again.output.strip()
    assert again.exit_code == 2 and len(message.splitlines()) == 1, again.output
    assert str(path) in message and "upgrade ragbench" in message

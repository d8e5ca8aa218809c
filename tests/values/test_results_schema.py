"""results.json has a `schema_version` and is read by one reader in `compare`, `rescore`, `reproduce`, `--resume`
and the viewer (`ragbench.api.run.finished_run` reads a run folder as they do): a file written before the version
was recorded reads as version 1, a later version is refused in one line naming the file and the fix, and a run's
results.json follows the JSON schema docs/outputs.md documents. The writer and the documented schema against the
dataclasses: test_results_text.py."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from test_reproduce import registry_with_demo_row, reproduce  # noqa: F401 (a fixture)

import ragbench.tasks.selfrag
from ragbench.api import ConfigError
from ragbench.api.run import finished_run
from ragbench.testing import run_eval
from support import paths
from support.helpers import cli_here, cli_run_args

DEMO = Path(ragbench.tasks.selfrag.__file__).parent / "data" / "demo_qa.jsonl"
DOCS = paths.REPO / "docs" / "outputs.md"


def documented_schema() -> dict:
    text = DOCS.read_text(encoding="utf-8")
    block = re.search(r"<!-- results-schema -->\n```json\n(.*?)\n```", text, re.S)
    assert block, "docs/outputs.md holds the JSON schema after <!-- results-schema -->"
    return json.loads(block.group(1))


SCHEMA_VERSION = max(documented_schema()["properties"]["schema_version"]["enum"])  # the version a run writes now


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("schema") / "run"
    run_eval(
        "demo", "closed_book", "scripted:echo", metrics=["match", "f1"], limit=4, output=folder, bootstrap_iters=20
    )
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
    read = finished_run(finished, "compare").results
    assert read.schema_version == SCHEMA_VERSION and read.to_dict() == written


def test_a_results_json_written_before_the_version_reads_as_version_1(finished, tmp_path):
    older = copy_with(finished, tmp_path / "older", schema_version=None)  # the shape written before the key
    read = finished_run(older, "rescore").results
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
    with pytest.raises(ConfigError, match="reproduce: .* upgrade ragbench"):  # what `reproduce` reads after its run
        finished_run(later, "reproduce")


@pytest.mark.parametrize("version", [None, "2", True, 0, 1.5, [2]], ids=repr)
def test_a_schema_version_no_ragbench_writes_is_refused_as_a_changed_file(finished, tmp_path, version):
    results = json.loads((finished / "results.json").read_text())
    (tmp_path / "results.json").write_text(json.dumps({**results, "schema_version": version}))
    with pytest.raises(ConfigError) as refused:
        finished_run(tmp_path, "compare")
    assert "the file was changed" in str(refused.value) and "upgrade ragbench" not in str(refused.value)
    assert len(str(refused.value).splitlines()) == 1 and str(tmp_path / "results.json") in str(refused.value)


def test_a_written_results_json_follows_the_schema(finished, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    done = cli_here("rescore", str(finished), "--output", str(tmp_path / "rescored"))
    assert done.returncode == 0, done.stderr
    for run in (finished, tmp_path / "rescored"):
        jsonschema.validate(json.loads((run / "results.json").read_text()), documented_schema())


def test_reproduce_writes_the_version_and_refuses_a_later_one_in_one_line(reproduce, tmp_path):
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

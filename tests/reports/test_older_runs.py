"""Run folders an older ragbench wrote, or whose results.json was edited or damaged, are read by one reader in
`compare`, `rescore`, `reproduce` and the viewer (`ragbench.api.run.finished_run` reads a run folder as they do):
the sections and sample fields an older version left out or shaped otherwise are read in today's shape, and a file
that is no run's results is refused in one line naming it, never a traceback. Everything here goes through the
command line (`ragbench compare`, `rescore`, `view --export`) and the public API."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import ragbench.tasks.selfrag
from ragbench.api import ConfigError
from ragbench.api.run import finished_run
from ragbench.testing import run_eval
from support.helpers import cli_here
from support.viewer_pages import exported_page, run_ids

DEMO = Path(ragbench.tasks.selfrag.__file__).parent / "data" / "demo_qa.jsonl"


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished demo run (match, f1; sliced by prop) of a model that echoes its prompt."""
    folder = tmp_path_factory.mktemp("older") / "run"
    run_eval(
        "demo", "closed_book", "scripted:echo", metrics=["match", "f1"], limit=6, output=folder, bootstrap_iters=20
    )
    return folder


def older_copy(finished: Path, target: Path, results: dict | None = None) -> Path:
    """A copy of the run as an older ragbench wrote it: results.json with only results, counts and config
    (no details, n_none, cost, complete), samples whose prediction is a string."""
    shutil.copytree(finished, target)
    current = json.loads((finished / "results.json").read_text())
    older = (
        {
            "results": current["results"],
            "counts": {"demo": {"records": 6, "scored": 6, "failed": 0, "bad_records": 0}},
            "config": current["config"],
        }
        if results is None
        else results
    )
    (target / "results.json").write_text(json.dumps(older))
    path = target / "samples" / "demo.jsonl"
    path.write_text(
        "".join(
            json.dumps({**r, "prediction": r["prediction"]["answer"]}) + "\n"
            for r in map(json.loads, path.read_text().splitlines())
        )
    )
    return target


def test_a_current_results_json_is_read_as_it_was_written(finished):
    results = json.loads((finished / "results.json").read_text())
    assert finished_run(finished, "compare").results.to_dict() == results


def test_rescore_scores_a_run_an_older_ragbench_wrote(finished, tmp_path):
    old = older_copy(finished, tmp_path / "old")
    done = cli_here("rescore", str(old), "--output", str(tmp_path / "again"))
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "again" / "results.json").read_text())
    assert results["counts"]["demo"]["scored"] == 6 and results["details"]["demo"]["match"]["n"] == 6


def view(runs: Path, out: Path) -> subprocess.CompletedProcess:
    """`ragbench view RUNS --export OUT`, in this process."""
    return cli_here("view", str(runs), "--export", str(out))


def every_page(out: Path) -> list:
    """The Runs page, each run's page, first rows and first example, and the task's Compare page, as exported."""
    pages = [exported_page(out, "runs")]
    for rid in run_ids(out):
        pages += [exported_page(out, f"{kind}/{rid}{where}") for kind, where in PAGES]
    pages.append(exported_page(out, "compare/demo"))
    return pages


PAGES = [("run", ""), ("rows", "/demo/0"), ("example", "/demo/0")]


def test_the_viewer_shows_a_run_an_older_ragbench_wrote_beside_a_current_one(finished, tmp_path):
    older_copy(finished, tmp_path / "runs" / "old")
    shutil.copytree(finished, tmp_path / "runs" / "new")
    done = view(tmp_path / "runs", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    pages = every_page(tmp_path / "site")
    assert len(pages) == 1 + 2 * len(PAGES) + 1
    old = next(run for run in pages[0]["runs"] if run["rid"].startswith("old"))
    assert old["tasks"]["demo"]["metrics"]["match"]["value"] == 0.0 and old["complete"] is True
    example = next(page for page in pages if "outline" in page)
    assert example is not None


def test_a_value_an_older_ragbench_wrote_as_nan_is_no_value_and_says_so(finished, tmp_path):
    current = json.loads((finished / "results.json").read_text())
    current["details"]["demo"]["match"]["ci95"] = [float("nan"), float("nan")]
    current["details"]["demo"]["f1"]["value"] = float("inf")
    (tmp_path / "results.json").write_text(json.dumps(current))  # NaN and Infinity, as json.dumps writes them
    read = finished_run(tmp_path, "compare").results.to_dict()
    assert read["details"]["demo"]["match"]["ci95"] is None and read["details"]["demo"]["f1"]["value"] is None
    assert "not a finite number" in read["details"]["demo"]["f1"]["error"]
    assert read["results"]["demo"]["f1"] is None


def refuse(constant: str):
    raise AssertionError(f"{constant} is not JSON")


def no_non_finite(value) -> None:
    """No NaN nor infinity in an exported page, not even as the string its writer would make of one."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        for inner in value:
            no_non_finite(inner)
    assert value not in ("NaN", "Infinity", "-Infinity"), "a non-finite number reached the page"


def test_the_viewers_pages_of_a_results_json_holding_nan_are_strict_json(finished, tmp_path):
    folder = tmp_path / "runs" / "nan"
    shutil.copytree(finished, folder)
    current = json.loads((finished / "results.json").read_text())
    current["details"]["demo"]["match"]["ci95"] = [float("nan"), float("inf")]
    (folder / "results.json").write_text(json.dumps(current))
    done = view(tmp_path / "runs", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    [rid] = run_ids(tmp_path / "site")
    for key in ("runs", f"run/{rid}"):
        text = (tmp_path / "site" / "data" / f"{key}.js").read_text()
        json.loads(text[text.index(", ") + 2 : text.rindex(");")], parse_constant=refuse)
        no_non_finite(exported_page(tmp_path / "site", key))  # none left for the writer to turn into a string


# --- damaged results.json: one line or a result ---------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def damaged(draw, results: dict) -> dict:
    """`results` with some keys dropped and some values replaced by other JSON, at any depth."""

    def damage(value, depth):
        if isinstance(value, dict):
            out = {}
            for key, inner in value.items():
                choice = draw(st.integers(0, 9))
                if choice == 0:
                    continue  # dropped
                out[key] = draw(JSON_VALUES) if choice == 1 else damage(inner, depth + 1) if depth < 6 else inner
            return out
        if isinstance(value, list) and value and draw(st.booleans()):
            return [damage(v, depth + 1) for v in value]
        return value

    return damage(results, 0)


@pytest.fixture(scope="module")
def current_results(finished) -> dict:
    return json.loads((finished / "results.json").read_text())


@pytest.fixture(scope="module")
def damaged_folder(finished, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("damaged") / "run"
    shutil.copytree(finished, folder)
    return folder


@settings(max_examples=40)
@given(data=st.data())
def test_a_damaged_results_json_is_read_or_refused_in_one_line_by_compare_rescore_and_the_viewer(
    data, current_results, damaged_folder
):
    results = data.draw(damaged(current_results))
    path = damaged_folder / "results.json"
    path.write_text(json.dumps(results))
    try:
        read = finished_run(damaged_folder, "compare").results.to_dict()
    except ConfigError as exc:
        event("refused")
        assert len(str(exc).splitlines()) == 1 and str(path) in str(exc)
    else:
        event("read")
        assert all(isinstance(read[section], dict) for section in ("results", "details", "counts", "cost", "config"))
        json.dumps({section: read[section] for section in ("results", "details", "counts")}, allow_nan=False)
        compared = cli_here("compare", str(damaged_folder), str(damaged_folder), "--bootstrap-iters", "10")
        assert compared.returncode == 0 or one_line(compared)  # refused: nothing left to compare
    with tempfile.TemporaryDirectory() as scratch:
        viewed = view(damaged_folder, Path(scratch) / "site")
        if viewed.returncode == 0:
            for rid in run_ids(Path(scratch) / "site"):  # every page written is JSON; none of a task dropped
                for kind, where in PAGES:
                    page = Path(scratch, "site", "data", kind, rid, *where.strip("/").split("/")).with_suffix(".js")
                    if page.is_file() or kind == "run":
                        json.loads((text := page.read_text())[text.index(", ") + 2 : text.rindex(");")])
        else:  # refused only for a schema_version past this ragbench's: one line naming the file
            assert one_line(viewed) and str(path) in viewed.stderr and "upgrade ragbench" in viewed.stderr


def one_line(done: subprocess.CompletedProcess) -> bool:
    """A command refused in one line (exit 2), no traceback."""
    return done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def results_with_every_section(current_results) -> dict:
    """The run's results with the sections a run writes only where it has something to say."""
    return {
        **current_results,
        "format_adherence": {"demo": [{"format": "x", "of": 6, "followed": 5, "fix": "y"}]},
        "system_reports": {"demo": {"errors": ["bad line 3"]}},
        "system_stats": {"demo": {"docs": 1.5}},
        "checkpoint_repairs": {"demo": ["samples/demo.jsonl:4: line cut short"]},
        "failures": {"demo": [{"cause": "RuntimeError", "count": 1, "ids": ["9000"], "example": "RuntimeError: x"}]},
        "infrastructure_failures": {"demo": {"examples": 1, "calls": 2, "causes": [{"cause": "503", "count": 2}]}},
        "token_limit": {"demo": {"examples": 1, "calls": 1, "steps": {"generate": 1}}},
        "counted": {"demo": {"m": {"unparsed": {"count": 1, "examples": 1, "meaning": "replies unparsed"}}}},
    }


@settings(max_examples=25)
@given(data=st.data())
def test_rescore_of_a_damaged_results_json_writes_its_run_or_refuses_in_one_line(
    data, results_with_every_section, damaged_folder, tmp_path_factory
):
    results = data.draw(damaged(results_with_every_section))
    (damaged_folder / "results.json").write_text(json.dumps(results))
    output = tmp_path_factory.mktemp("rescored") / "out"
    done = cli_here("rescore", str(damaged_folder), "--output", str(output))
    if done.returncode == 2:
        event("refused")
        assert one_line(done)
    else:
        event("rescored")
        assert done.returncode in (0, 1), done.stderr  # 1: the rescored run is incomplete
        assert (output / "report.md").is_file()
        json.loads((output / "results.json").read_text(), parse_constant=refuse)  # no NaN in it

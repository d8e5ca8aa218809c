"""Run folders an older ragbench wrote, or whose results.json was edited or damaged, are read by one reader
(ragbench._reports.results.file) in `compare`, `rescore`, `reproduce` and the viewer: the sections and
sample fields an older version left out or shaped otherwise are read in today's shape, and a file that is
no run's results is refused in one line naming it, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import ragbench.tasks.selfrag
from ragbench._reports.compare.comparison import compare_runs, load_run
from ragbench._reports.results.file import NewerResults, normalized_results, read_results
from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench._run.rescore.rescore_run import rescore_run
from ragbench._storage.jsonl import strict_json
from ragbench._view.catalog import RunCatalog
from ragbench._view.site import NotFound, Site
from ragbench.api import ConfigError
from ragbench.testing import installed_registry
from support.helpers import cli_here

DEMO = Path(ragbench.tasks.selfrag.__file__).parent / "data" / "demo_qa.jsonl"


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished demo run (match, f1; sliced by prop) of a model that echoes its prompt."""
    folder = tmp_path_factory.mktemp("older") / "run"
    Evaluator(
        RunConfig.of(
            tasks=["demo"],
            system="closed_book",
            model="scripted:echo",
            metrics=["match", "f1"],
            limit=6,
            output=str(folder),
            progress=False,
            bootstrap_iters=20,
        ),
        registry=installed_registry(),
    ).run()
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
    assert normalized_results(results) == results


def test_rescore_scores_a_run_an_older_ragbench_wrote(finished, tmp_path):
    old = older_copy(finished, tmp_path / "old")
    done = cli_here("rescore", str(old), "--output", str(tmp_path / "again"))
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "again" / "results.json").read_text())
    assert results["counts"]["demo"]["scored"] == 6 and results["details"]["demo"]["match"]["n"] == 6


def every_page(site: Site) -> list:
    pages = [site.data("runs")]
    for run in site.runs:
        pages += [
            site.data(f"run/{run.rid}"),
            site.data(f"rows/{run.rid}/demo/0"),
            site.data(f"example/{run.rid}/demo/0"),
        ]
    pages.append(site.data("compare/demo"))
    return pages


def test_the_viewer_shows_a_run_an_older_ragbench_wrote_beside_a_current_one(finished, tmp_path):
    older_copy(finished, tmp_path / "runs" / "old")
    shutil.copytree(finished, tmp_path / "runs" / "new")
    site = Site(RunCatalog([str(tmp_path / "runs")]), registry=installed_registry())
    pages = every_page(site)
    old = next(run for run in pages[0]["runs"] if run["rid"].startswith("old"))
    assert old["tasks"]["demo"]["metrics"]["match"]["value"] == 0.0 and old["complete"] is True
    example = next(page for page in pages if "outline" in page)
    assert example is not None


def test_a_value_an_older_ragbench_wrote_as_nan_is_no_value_and_says_so(finished, tmp_path):
    current = json.loads((finished / "results.json").read_text())
    current["details"]["demo"]["match"]["ci95"] = [float("nan"), float("nan")]
    current["details"]["demo"]["f1"]["value"] = float("inf")
    (tmp_path / "results.json").write_text(json.dumps(current))  # NaN and Infinity, as json.dumps writes them
    read = read_results(tmp_path / "results.json", "compare").to_dict()
    assert read["details"]["demo"]["match"]["ci95"] is None and read["details"]["demo"]["f1"]["value"] is None
    assert "not a finite number" in read["details"]["demo"]["f1"]["error"]
    assert read["results"]["demo"]["f1"] is None


def refuse(constant: str):
    raise AssertionError(f"{constant} is not JSON")


def test_the_viewers_pages_of_a_results_json_holding_nan_are_strict_json(finished, tmp_path):
    folder = tmp_path / "runs" / "nan"
    shutil.copytree(finished, folder)
    current = json.loads((finished / "results.json").read_text())
    current["details"]["demo"]["match"]["ci95"] = [float("nan"), float("inf")]
    (folder / "results.json").write_text(json.dumps(current))
    site = Site(RunCatalog([str(tmp_path / "runs")]), registry=installed_registry())
    [run] = site.runs
    for page in (site.data("runs"), site.data(f"run/{run.rid}")):
        json.loads(strict_json(page), parse_constant=refuse)
        json.dumps(page, allow_nan=False)  # no NaN left to turn into a string


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
        read = read_results(path, "compare").to_dict()
    except ConfigError as exc:
        event("refused")
        assert len(str(exc).splitlines()) == 1 and str(path) in str(exc)
    else:
        event("read")
        assert all(isinstance(read[section], dict) for section in ("results", "details", "counts", "cost", "config"))
        json.dumps({section: read[section] for section in ("results", "details", "counts")}, allow_nan=False)
        try:
            compare_runs(load_run(damaged_folder), load_run(damaged_folder), iterations=10)
        except ConfigError as exc:  # nothing left to compare
            assert len(str(exc).splitlines()) == 1
    site = Site(RunCatalog([str(damaged_folder)]), registry=installed_registry())
    try:
        for run in site.runs:
            strict_json(
                [
                    site.data("runs"),
                    site.data(f"run/{run.rid}"),
                    site.data(f"rows/{run.rid}/demo/0"),
                    site.data(f"example/{run.rid}/demo/0"),
                ]
            )
    except NotFound:
        pass  # a page the damaged file no longer names (a task dropped from the config)
    except NewerResults as exc:  # a schema_version past this ragbench's
        assert len(str(exc).splitlines()) == 1 and str(path) in str(exc)


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
    try:
        outcome = rescore_run(damaged_folder, {"output": str(output)}, registry=installed_registry())
    except ConfigError as exc:
        event("refused")
        assert len(str(exc).splitlines()) == 1
    else:
        event("rescored")
        assert (outcome.run_dir / "report.md").is_file()
        json.loads((outcome.run_dir / "results.json").read_text(), parse_constant=refuse)  # no NaN in it

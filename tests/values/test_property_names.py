"""Property: any text given as a name that becomes a path (a YAML task's `task:`, a plugin's component, a task
named in a run folder the viewer exports) is refused up front in one line, or yields paths inside the run (or
export) folder; a file of the user's beside that folder is byte-identical afterwards, and nothing appears
outside the folder."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._storage.sample_files import sample_file
from ragbench._values.names import inside, name_problem, part_problem
from ragbench._view.catalog import RunCatalog
from ragbench._view.export import export
from ragbench._view.site import Site
from ragbench.api import ConfigError, hookimpl
from ragbench.testing import Registry, installed_registry
from support.helpers import run

ANY_CHARACTER = st.characters(codec=None, exclude_categories=())  # lone surrogates too
PATH_LIKE = st.sampled_from(
    [
        "../x",
        "../../x",
        "/abs/path",
        "a/b",
        ".",
        "..",
        "",
        ".hidden",
        "-rf",
        "a\\b",
        "nul\0",
        "x" * 64,
        "x" * 65,
        "run",
        "samples",
        "ok.name-1",
        "a b",
        "é",
    ]
)
NAMES = st.one_of(
    PATH_LIKE,
    st.text(ANY_CHARACTER, max_size=12),
    st.lists(PATH_LIKE | st.text(st.sampled_from("./\\abx"), max_size=4), max_size=4).map("/".join),
)
USERS_FILE = b'{"the user\'s": "own file"}\n'
TASK = """task: {name}
data: {{path: data.jsonl}}
fields: {{gold: {{answers: answers}}}}
metrics: [em]
"""


def everything_under(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


@settings(max_examples=300)
@given(NAMES)
def test_a_name_that_keeps_the_rule_is_one_file_name_and_a_join_never_leaves_its_folder(name):
    folder = Path("/run/samples")
    if name_problem(name) is None:
        assert part_problem(name) is None and sample_file("/run", name).parent == folder
    try:
        joined = inside(folder, f"{name}.jsonl")
    except ConfigError as refused:
        assert "\n" not in str(refused)  # one line, the name shown escaped
    else:
        assert joined.parent == folder and joined.name == f"{name}.jsonl"


class NamingPlugin:
    def __init__(self, name: str) -> None:
        self.name = name

    @hookimpl
    def ragbench_catalog(self):
        system = {"target": "ragbench.plugins.closed_book.system:ClosedBook"}
        return {"systems": {self.name: system, "their_other_system": system}}


@settings(max_examples=50)
@given(NAMES)
def test_a_plugin_component_of_any_name_is_refused_by_name_or_registered_under_a_name_that_keeps_the_rule(name):
    registry = Registry.discover(plugins=[("naming", "ragbench-naming", NamingPlugin(name))])
    refused = [failure.error for failure in registry.failures if failure.plugin == "naming"]
    assert "their_other_system" in registry.entries["systems"] and "closed_book" in registry.entries["systems"]
    if name in registry.entries["systems"]:
        assert name_problem(name) is None and not refused
    else:
        assert len(refused) == 1 and "is not a name ragbench accepts" in refused[0]


@settings(max_examples=15)
@given(NAMES)
def test_a_yaml_task_of_any_name_is_refused_up_front_or_runs_inside_its_run_folder(name):
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "data.jsonl").write_text(json.dumps({"id": "1", "question": "q?", "answers": ["a"]}) + "\n")
        (root / "task.yaml").write_text(TASK.format(name=json.dumps(name)), encoding="utf-8")
        (root / "rules.json").write_text(json.dumps([{"response": "a"}]))
        for place in ("x.jsonl", "abs/path.jsonl", "run.jsonl", ".jsonl"):
            (root / place).parent.mkdir(parents=True, exist_ok=True)
            (root / place).write_bytes(USERS_FILE)
        before = everything_under(root)
        try:
            results = run(
                root,
                tasks=[str(root / "task.yaml")],
                system="closed_book",
                model=f"scripted:{root / 'rules.json'}",
                bootstrap_iters=0,
            )
        except ConfigError as refused:
            assert not (root / "run" / "run.json").exists(), refused  # refused before the run started
        else:
            task = next(iter(results["counts"]))
            assert name_problem(task) is None and results["counts"][task]["scored"] == 1
            assert (root / "run" / "samples" / f"{task}.jsonl").is_file()
        after = everything_under(root)
        assert {
            path: content for path, content in after.items() if not path.startswith("run/") and path != "run"
        } == before


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A finished run of a task named `good` (made once: the examples copy it)."""
    folder = tmp_path_factory.mktemp("names")
    (folder / "data.jsonl").write_text(json.dumps({"id": "1", "question": "q?", "answers": ["a"]}) + "\n")
    (folder / "task.yaml").write_text(TASK.format(name="good"), encoding="utf-8")
    (folder / "rules.json").write_text(json.dumps([{"response": "a"}]))
    run(
        folder,
        tasks=[str(folder / "task.yaml")],
        system="closed_book",
        model=f"scripted:{folder / 'rules.json'}",
        bootstrap_iters=0,
    )
    return folder / "run"


@settings(max_examples=20)
@given(name=NAMES)
def test_view_export_of_a_run_naming_any_task_is_one_line_or_writes_only_inside_the_export(finished_run, name):
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        shutil.copytree(finished_run, root / "runs" / "run")
        meta_path = root / "runs" / "run" / "run.json"
        meta = json.loads(meta_path.read_text())
        meta["config"]["tasks"], meta["finished"] = [name], False  # as a run of an older ragbench may hold
        meta_path.write_text(json.dumps(meta))
        (root / "x.js").write_bytes(USERS_FILE)
        before = everything_under(root)
        try:
            export(Site(RunCatalog([str(root / "runs")]), installed_registry()), str(root / "site" / "out"))
        except ConfigError as refused:
            assert f"names a task {part_problem(name)}" in str(refused)
        else:
            assert part_problem(name) is None
        after = everything_under(root)
        assert {path: content for path, content in after.items() if not path.startswith("site")} == before

"""A name that becomes a path keeps one rule (ragbench._values.names), checked where it enters: a YAML task's
`task:` (and aliases, slice fields), a plugin's catalogue, a task's slice fields, `--system`; a name that breaks
it is one line before anything is written, and the paths built from names stay in their folder (`inside`)
whatever reaches them: a user's file outside is never read as a checkpoint nor replaced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_jsonl
from ragbench._config.run_config import RunConfig
from ragbench._errors import ConfigError, shown_value
from ragbench._storage.rundir import RunDir
from ragbench._values.names import NAME_RULE, checked_name, inside, name_problem
from ragbench._view.catalog import RunCatalog
from ragbench._view.export import export
from ragbench._view.site import Site
from ragbench.api import Task, TaskScoring, hookimpl
from ragbench.testing import Registry, installed_registry
from support.helpers import cli_here, cli_run_args, run

TASK = """task: {name}
data: {{path: data.jsonl}}
fields: {{gold: {{answers: answers}}}}
metrics: [em]
"""
USERS_FILE = b'{"the user\'s": "own file"}\n'


def task_folder(folder: Path, name: str, answer: str = "a") -> tuple[Path, str]:
    """A YAML task named `name` (written as a JSON string, so any text is given exactly) and a scripted model."""
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "data.jsonl", [{"id": "1", "question": "q?", "answers": ["a"]}])
    (folder / "task.yaml").write_text(TASK.format(name=json.dumps(name)), encoding="utf-8")
    (folder / "rules.json").write_text(json.dumps([{"response": answer}]), encoding="utf-8")
    return folder / "task.yaml", f"scripted:{folder / 'rules.json'}"


def users_files(tmp_path: Path) -> dict[Path, bytes]:
    """Files of the user's where names like `../../x` and `/abs/path` lead from a run's samples/ (tmp_path/run)."""
    files = {tmp_path / "x.jsonl": USERS_FILE, tmp_path / "abs" / "path.jsonl": USERS_FILE}
    for path, content in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return files


@pytest.mark.parametrize("name", ["../../x", "ABS", "a/b"])
def test_a_yaml_task_named_as_a_path_is_refused_before_the_run_and_no_file_outside_is_touched(tmp_path, name):
    files = users_files(tmp_path)
    name = str(tmp_path / "abs" / "path") if name == "ABS" else name
    task, model = task_folder(tmp_path / "task", name)
    with pytest.raises(ConfigError) as refused:
        run(tmp_path, tasks=[str(task)], system="closed_book", model=model)
    message = str(refused.value)
    shown = shown_value(name, 80)  # a long name is cut in the message: tmp_path's length varies (an xdist worker's)
    assert f"{task}:1: key 'task': {shown!r} is not a name ragbench accepts" in message and NAME_RULE in message
    assert {path: path.read_bytes() for path in files} == files
    assert not (tmp_path / "run" / "run.json").exists()  # refused before the run starts (`a/b` failed after it)


def test_the_command_line_refuses_such_a_task_in_one_line_with_exit_2(tmp_path):
    files = users_files(tmp_path)
    task, model = task_folder(tmp_path / "task", "../../x")
    done = cli_here(
        *cli_run_args(model, task=str(task)),
        "--output",
        str(tmp_path / "run"),
        "--no-progress",
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0 and "key 'task': '../../x' is not a name" in done.stderr
    assert {path: path.read_bytes() for path in files} == files


def test_a_yaml_alias_or_slice_field_that_breaks_the_rule_is_refused_at_its_line(tmp_path):
    task, _ = task_folder(tmp_path, "fine")
    text = task.read_text()
    task.write_text(text + "aliases: [ok, ../up]\n")
    with pytest.raises(ConfigError, match=r"task.yaml:5: key 'aliases': '../up' is not a name"):
        installed_registry().add_task_file(task)
    task.write_text(text.replace("gold: {answers: answers}", "gold: {answers: answers}, slices: {'a/b': kind}"))
    with pytest.raises(ConfigError, match=r"key 'fields.slices.a/b': 'a/b' is not a name"):
        installed_registry().add_task_file(task)


def test_a_name_that_keeps_the_rule_runs_and_writes_its_samples_in_the_run_folder(tmp_path):
    task, model = task_folder(tmp_path / "task", "My-task_2.v1")
    results = run(tmp_path, tasks=[str(task)], system="closed_book", model=model)
    assert results["counts"]["My-task_2.v1"]["scored"] == 1
    assert (tmp_path / "run" / "samples" / "My-task_2.v1.jsonl").is_file()


class MisnamingPlugin:
    """A third party's catalogue with names that would be paths beside good ones."""

    @hookimpl
    def ragbench_catalog(self):
        closed_book = {"target": "ragbench.plugins.closed_book.system:ClosedBook"}
        return {
            "systems": {
                "../../escape": closed_book,
                "their_system": closed_book,
                "aliased": {**closed_book, "aliases": ["a/b"]},
            },
            "tasks": {"/abs/task": {"target": "ragbench.tasks.selfrag.demo:Demo"}},
            "metrics": {"": {"target": "ragbench.metrics.match:Match"}},
        }

    @hookimpl
    def ragbench_metric_families(self):
        return {"../fam": {"target": "ragbench.metrics.match:Match"}}


def test_a_plugin_registering_a_bad_name_is_refused_by_name_and_its_good_names_and_the_others_work(tmp_path):
    registry = Registry.discover(plugins=[("misnaming", "ragbench-misnaming", MisnamingPlugin())])
    refused = [failure.error for failure in registry.failures if failure.plugin == "misnaming"]
    assert len(refused) == 5 and all("is not a name ragbench accepts" in error for error in refused)
    assert any(error.startswith("system: '../../escape'") for error in refused)
    assert any(error.startswith("system: 'a/b'") for error in refused)  # an alias: the entry is not added
    assert any(error.startswith("metric family: '../fam'") for error in refused)
    assert "../../escape" not in registry.entries["systems"] and "aliased" not in registry.entries["systems"]
    assert "/abs/task" not in registry.entries["tasks"] and "" not in registry.entries["metrics"]
    results = run(tmp_path, registry=registry, tasks=["demo"], system="their_system", model="scripted:echo", limit=2)
    assert results["counts"]["demo"]["records"] == 2


def test_a_task_slice_field_that_breaks_the_rule_is_refused_when_the_task_is_defined():
    with pytest.raises(ConfigError, match=r"slice field \(from a task's slice_fields\): '\.\./plots' is not a name"):

        class Sliced(Task):
            scoring = TaskScoring(metrics=("em",), slice_fields=("domain", "../plots"))


def test_a_system_name_that_would_leave_runs_is_refused_where_the_run_folder_is_named():
    with pytest.raises(ConfigError, match=r"--system \(from the command line\): '\.\./x' is not a name"):
        RunConfig.of(tasks=["demo"], system="../x").run_dir()
    assert RunConfig.of(tasks=["demo"], system="vanilla", model="hf:Org/Model").run_dir().parent == Path("runs")


@pytest.mark.parametrize("part", ["", ".", "..", "a/b", "/abs", "..\\up", "nul\0"])
def test_inside_refuses_a_part_that_is_not_one_plain_name(tmp_path, part):
    with pytest.raises(ConfigError, match="is not a plain file name"):
        inside(tmp_path, part)


def test_every_path_built_from_a_task_name_stays_in_its_folder(tmp_path):
    """The second line of defence: a name that reached these points unchecked cannot lead outside."""
    with pytest.raises(ConfigError, match="is not a plain file name"):
        RunDir(tmp_path / "run").sample_path("../../x")
    with pytest.raises(ConfigError, match="is not a plain file name"):
        RunDir(tmp_path / "run").sample_path(str(tmp_path / "abs"))
    from ragbench._reports.results.slice_plots import slice_plot

    with pytest.raises(ConfigError, match="is not a plain file name"):
        slice_plot("t", "../../x", {"em": {"slices": {"../../x": {"a": {"value": 1, "n": 1}}}}}, ["em"], tmp_path)


@pytest.mark.parametrize("file", ["../users.jsonl", "ABS"])
def test_a_yaml_data_file_name_that_would_leave_the_data_folder_is_refused(tmp_path, monkeypatch, file):
    monkeypatch.setenv("RAGBENCH_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    write_jsonl(tmp_path / "users.jsonl", [{"id": "1", "question": "q?", "answers": ["a"]}])  # the user's, not data
    file = str(tmp_path / "users.jsonl") if file == "ABS" else file
    task, model = task_folder(tmp_path / "task", "fine")
    task.write_text(task.read_text().replace("data: {path: data.jsonl}", f"data: {{file: {json.dumps(file)}}}"))
    with pytest.raises(ConfigError, match="task fine: data file: '(..|/)' is not a plain file name"):
        run(tmp_path, tasks=[str(task)], system="closed_book", model=model)


def stopped_run_of_an_older_ragbench(tmp_path: Path, task: str) -> Path:
    """A run folder whose run.json names `task`, as a ragbench before the rule could leave (the run stopped)."""
    task_file, model = task_folder(tmp_path / "task", "good")
    run(tmp_path, tasks=[str(task_file)], system="closed_book", model=model)
    folder = tmp_path / "run"
    meta = json.loads((folder / "run.json").read_text())
    meta["config"]["tasks"], meta["finished"] = [task], False
    (folder / "run.json").write_text(json.dumps(meta))
    return folder


@pytest.mark.parametrize("name", ["a/b", "../../../x"])
def test_view_export_of_a_run_with_a_task_named_as_a_path_is_one_line_and_writes_nothing_outside(tmp_path, name):
    files = users_files(tmp_path)
    folder = stopped_run_of_an_older_ragbench(tmp_path, name)
    with pytest.raises(ConfigError, match=f"view: run {folder} names a task '{name}' is not a plain file name"):
        export(Site(RunCatalog([str(folder)]), installed_registry()), str(tmp_path / "site"))
    assert {path: path.read_bytes() for path in files} == files


def test_view_export_on_the_command_line_ends_in_one_line_not_a_traceback(tmp_path):
    folder = stopped_run_of_an_older_ragbench(tmp_path, "a/b")
    done = cli_here("view", str(folder), "--export", str(tmp_path / "site"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "names a task 'a/b' is not a plain file name" in done.stderr


def test_the_rule_accepts_every_name_ragbench_ships():
    registry = installed_registry()
    names = [
        name for kind in registry.entries.values() for entry in kind.values() for name in (entry.name, *entry.aliases)
    ]
    assert len(names) > 100 and [name for name in names if name_problem(name)] == []
    assert checked_name("crag_t3", "task", "here") == "crag_t3"

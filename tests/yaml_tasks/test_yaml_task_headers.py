"""A YAML task file is read for its header (name, description, aliases, groups, system_args) when tasks are
listed or looked up, and whole only when its task is used; the header read agrees with the full read."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._yaml_tasks import header as header_module
from ragbench._yaml_tasks.header import read_header
from ragbench._yaml_tasks.located import Section, read_yaml
from ragbench._yaml_tasks.spec import header_fields
from ragbench.api import ConfigError, hookimpl
from ragbench.testing import Registry

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)
TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)
SCALARS = st.one_of(st.integers(-5, 5), st.booleans(), TEXT, st.none())
BODY = {
    "data": {"path": "d.jsonl"},
    "fields": {"gold": {"answers": "a"}},
    "prompt": {"template": "Q: {{ question }}"},
    "metrics": ["em"],
    "answer_format": "short",
}


@st.composite
def task_files(draw: st.DrawFn) -> str:
    """A task file's text: header keys among the body's, in any order, in any of PyYAML's styles."""
    top: dict = {"task": draw(NAMES)}
    if draw(st.booleans()):
        top["description"] = draw(TEXT)
    if draw(st.booleans()):
        top["aliases"] = draw(st.lists(NAMES, max_size=3))
    if draw(st.booleans()):
        top["groups"] = draw(st.one_of(NAMES, st.lists(NAMES, max_size=3)))
    if draw(st.booleans()):
        top["system_args"] = draw(st.dictionaries(NAMES, SCALARS, max_size=3))
    top.update({key: value for key, value in BODY.items() if draw(st.booleans())})
    keys = draw(st.permutations(list(top)))
    return yaml.safe_dump(
        {key: top[key] for key in keys},
        sort_keys=False,
        allow_unicode=draw(st.booleans()),
        default_flow_style=draw(st.sampled_from([False, None, True])),
        explicit_start=draw(st.booleans()),
        indent=draw(st.sampled_from([2, 4])),
        width=draw(st.sampled_from([20, 80])),
    )


@settings(max_examples=200, deadline=None)
@given(task_files())
def test_the_header_read_is_the_full_read_of_the_header_keys(text):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "task.yaml"
        path.write_text(text, encoding="utf-8")
        read = read_header(path)
        assert read is not None
        full = header_fields(Section(str(path), read_yaml(path, str(path)), "", 1))
        assert {key: getattr(read, key) for key in full} == full


def test_a_header_problem_names_its_line_and_the_body_is_not_read(tmp_path):
    path = tmp_path / "task.yaml"
    path.write_text("fields: {gold: [unclosed\nprompt: !function x\ntask: t\naliases: [ok, 'Not A Name']\n")
    with pytest.raises(ConfigError, match=r"task\.yaml:4: key 'aliases'"):
        read_header(path)
    path.write_text("fields: {gold: [unclosed\ntask: t\n")
    header = read_header(path)
    assert header is not None and header.name == "t"
    with pytest.raises(ConfigError, match=r"task\.yaml:2: not valid YAML"):
        header.spec()


def test_a_yaml_file_that_declares_no_task_is_no_task(tmp_path):
    path = tmp_path / "settings.yaml"
    path.write_text("settings: {not: a task}\n")
    assert read_header(path) is None


def test_a_file_changed_since_it_was_listed_is_refused_when_loaded(tmp_path):
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump({"task": "t", "description": "before", **BODY}))
    header = read_header(path)
    path.write_text(yaml.safe_dump({"task": "t", "description": "after", **BODY}))
    with pytest.raises(ConfigError, match="changed meanwhile"):
        header.spec()


def _catalogue(folder: Path) -> Registry:
    """A registry with a plugin whose catalogue names two YAML tasks: `good`, and `broken` (its body fails)."""
    (folder / "d.jsonl").write_text('{"question": "q", "a": "x"}\n')
    (folder / "good.yaml").write_text(yaml.safe_dump({"task": "good", "groups": ["both"], **BODY}))
    (folder / "broken.yaml").write_text("task: broken\ngroups: [both]\nfields: {gold: {answerz: a}}\n")
    package = folder.name

    class Plugin:
        @hookimpl
        def ragbench_catalog(self) -> dict:
            return {"tasks": {name: {"yaml": f"{package}:{name}.yaml"} for name in ("good", "broken")}}

    return Registry.discover(plugins=[("two_files", "two-files", Plugin())])


def test_lookups_and_groups_read_no_task_file_whole_and_a_run_reads_only_its_own(tmp_path, monkeypatch):
    package = tmp_path / "yaml_headers_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    read_whole: list[str] = []
    load_spec = header_module.load_spec
    monkeypatch.setattr(
        header_module, "load_spec", lambda path, source: read_whole.append(source) or load_spec(path, source)
    )
    registry = _catalogue(package)
    assert registry.failures == []
    assert registry.expand_tasks(["both"]) == ["good", "broken"] and read_whole == []
    assert registry.load("tasks", "good").name == "good"
    assert read_whole == ["yaml_headers_pkg:good.yaml"]
    with pytest.raises(ConfigError, match=r"broken\.yaml:3: key 'fields\.gold\.answerz': unknown key"):
        registry.load("tasks", "broken")


def test_listing_reports_a_task_file_no_run_reads(tmp_path, monkeypatch):
    package = tmp_path / "yaml_listing_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = _catalogue(package)
    registry.check_task_files()
    assert [(f.plugin, f.provider) for f in registry.failures] == [("two_files", "two-files")]
    assert "broken.yaml:3: key 'fields.gold.answerz': unknown key" in registry.failures[0].error


def test_a_packaged_task_file_is_read_again_by_the_next_registry_once_it_changed(tmp_path, monkeypatch):
    """Every registry reads the header of every task file the installed packages ship, kept from one registry to
    the next while the file is unchanged: a file rewritten since (longer, or of the same size and a later
    modification time) is read again, and each registry has its own system_args."""
    package = tmp_path / "yaml_changed_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "d.jsonl").write_text('{"question": "q", "a": "x"}\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    path = package / "kept.yaml"

    class Plugin:
        @hookimpl
        def ragbench_catalog(self) -> dict:
            return {"tasks": {"kept": {"yaml": "yaml_changed_pkg:kept.yaml"}}}

    def entry(description: str | None = None, ahead_ns: int = 0):
        if description is not None:
            before = path.stat().st_mtime_ns if path.exists() else 0
            path.write_text(yaml.safe_dump({"task": "kept", "description": description, "system_args": {"k": 5}}))
            if ahead_ns:
                os.utime(path, ns=(before + ahead_ns, before + ahead_ns))
        registry = Registry.discover(plugins=[("changed", "changed", Plugin())])
        assert registry.failures == []
        return registry.entry("tasks", "kept")

    first = entry("before")
    first.defaults["system_args"]["k"] = 99
    assert (entry().description, entry().defaults["system_args"]) == ("before", {"k": 5})
    assert entry("after, longer").description == "after, longer"
    assert entry("after, LONGER", ahead_ns=10**9).description == "after, LONGER"

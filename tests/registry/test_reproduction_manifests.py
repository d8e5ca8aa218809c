"""The catalogues' reproduction manifests are read the first time they are asked for (`Registry.reproductions`:
`ragbench reproduce`, `ragbench list`), not at every command's start; a name two providers give is reported then,
with the same line as before."""

from __future__ import annotations

from click.testing import CliRunner

from ragbench.api.data import PackagedSection
from ragbench.testing import Registry, installed_registry
from ragbench.testing import cli as main


def test_a_start_does_not_parse_the_manifests_until_they_are_read(monkeypatch):
    read = []
    real = PackagedSection._data

    def recording(section):
        read.append(section)
        return real(section)

    monkeypatch.setattr(PackagedSection, "_data", recording)  # what parses a section, on its first read
    registry = installed_registry()
    assert not read and registry.names("tasks")
    row = registry.reproductions["crag.llm-only.llama-3-8b-instruct"]
    assert read and row["provider"] == "ragbench" and row["run"]["tasks"]


def clashing() -> Registry:
    registry = Registry()
    registry.add_catalog({"reproductions": {"row": {"title": "first's"}}}, "first", "first_hooks")
    registry.add_catalog({"reproductions": {"row": {"title": "second's"}, "other": {"title": "o"}}}, "second")
    return registry


def test_a_name_two_providers_give_is_reported_when_the_manifests_are_read():
    registry = clashing()
    assert registry.failures == []
    assert registry.reproductions == {
        "row": {"title": "first's", "provider": "first"},
        "other": {"title": "o", "provider": "second"},
    }
    assert [(failure.plugin, failure.provider, failure.error) for failure in registry.failures] == [
        ("row", "second", "reproduction 'row' is already provided by first; this one is ignored")
    ]
    registry.reproductions  # noqa: B018 - a second read reports nothing twice
    assert len(registry.failures) == 1


def test_ragbench_list_still_reports_the_clash():
    result = CliRunner().invoke(main, ["list", "groups"], obj=clashing())
    assert result.exit_code == 0
    assert (
        "ragbench: plugin 'row' from second failed to load: reproduction 'row' is already provided by first; "
        "this one is ignored"
    ) in result.stderr


def test_manifests_that_do_not_read_are_their_plugins_failure_when_read():
    registry = clashing()
    registry.add_catalog({"reproductions": ["not", "a mapping"]}, "third", "third_hooks")
    assert set(registry.reproductions) == {"row", "other"}
    assert (registry.failures[-1].plugin, registry.failures[-1].error) == (
        "third_hooks",
        "AttributeError: 'list' object has no attribute 'items'",
    )

"""The plugin hooks (ragbench._hookspecs) and the run's own registry: a test plugin adds an engine, a
retriever, a metric family and CLI commands; a run given that registry uses them everywhere (the installed
plugins' registry knows none of them); components of the wrong kind and broken hooks are reported in one
line naming their provider. How the plugins' commands merge into a command group, a unit:
test_plugin_command_merge.py."""

from __future__ import annotations

import click
import pytest

from ragbench.api import ConfigError, Document, Metric, hookimpl
from ragbench.api.engines import Engine, Request, Response
from ragbench.api.retrieval import Retriever
from ragbench.testing import Registry, installed_registry, run_eval

PROVIDER, PLUGIN = "ragbench-test-plugin", "test_plugin"


class AnswerEngine(Engine):
    """An engine whose model name is its one answer (`answer:Paris`), written as a plugin writes one."""

    starts_processes = False

    def generate(self, requests: list[Request]) -> list[Response]:
        return [Response(texts=[self.model]) for _ in requests]


class OneDocRetriever(Retriever):
    name = "one_doc"

    def search(self, queries, k):
        return [[Document(id="d1", title="Only", text=f"About {query}")] for query in queries]


def word_count_family(name: str) -> type[Metric]:
    """`words:N`: 1 when the answer has N words, else 0."""
    wanted = int(name.partition(":")[2])

    class WordCount(Metric):
        def score(self, example, prediction, ctx=None):
            return float(len(prediction.answer.split()) == wanted)

    WordCount.name = name
    return WordCount


@click.command("hello")
def hello() -> None:
    click.echo("hello from a plugin")


@click.group("index")
def index_additions() -> None:
    """Merged into `ragbench index`."""


@index_additions.command("toy-corpus")
def toy_corpus() -> None:
    click.echo("toy corpus built")


@click.command("list")
def clashing_list() -> None:
    """Taken by the built-in `ragbench list`: reported and skipped."""


class TestPlugin:
    @hookimpl
    def ragbench_catalog(self):
        return {
            "engines": {
                "answer": {"target": f"{__name__}:AnswerEngine"},
                "task_as_engine": {"target": "ragbench.tasks.selfrag.demo:Demo"},
            },
            "retrievers": {"one_doc": {"target": f"{__name__}:OneDocRetriever"}},
        }

    @hookimpl
    def ragbench_metric_families(self):
        return {
            "words": {"target": f"{__name__}:word_count_family", "description": "answers of N words"},
            "broken": {"target": f"{__name__}:not_a_metric_family"},
        }

    @hookimpl
    def ragbench_cli_commands(self):
        return [hello, index_additions, clashing_list]


class BrokenPlugin:
    @hookimpl
    def ragbench_catalog(self):
        raise RuntimeError("catalogue file missing")

    @hookimpl
    def ragbench_cli_commands(self):
        return [hello]  # its other hook still counts


def not_a_metric_family(name: str):
    return "not a class"


@pytest.fixture
def registry() -> Registry:
    return Registry.discover(
        plugins=[(PLUGIN, PROVIDER, TestPlugin()), ("broken_plugin", "ragbench-broken", BrokenPlugin())]
    )


def test_hooks_are_collected_per_provider_and_a_broken_hook_hides_nothing(registry):
    assert registry.entry("engines", "answer").provider == PROVIDER
    assert registry.entry("tasks", "demo").provider == "ragbench"  # the installed plugins as well
    assert registry.metric_families["words"].provider == PROVIDER
    assert registry.metric_families["hf"].provider == "ragbench"
    assert [(c.name, p) for c, p in registry.cli_commands if p != "ragbench"] == [
        ("hello", PROVIDER),
        ("index", PROVIDER),
        ("list", PROVIDER),
        ("hello", "ragbench-broken"),
    ]
    assert [(f.plugin, f.provider, f.error) for f in registry.failures] == [
        ("broken_plugin", "ragbench-broken", "RuntimeError: catalogue file missing")
    ]


def test_a_run_uses_its_own_registry_for_engines_retrievers_and_metrics(registry, tmp_path):
    for kind, name in (("engines", "answer"), ("retrievers", "one_doc")):
        with pytest.raises(ConfigError, match="unknown"):
            installed_registry().entry(kind, name)  # the installed plugins' registry does not know them
    results = run_eval(
        "demo",
        "vanilla",
        "answer:Paris",
        retriever="one_doc",
        metrics=["+words:1", "+words:2"],
        limit=2,
        output=tmp_path / "run",
        registry=registry,
    ).results
    assert results["complete"]
    # demo's first two questions: the capitals of France and Japan; the engine answers "Paris" to both
    assert results["results"]["demo"]["match"] == 0.5
    assert results["results"]["demo"]["words:1"] == 1.0 and results["results"]["demo"]["words:2"] == 0.0
    assert results["config"]["retriever_metadata"] == {"retriever": "one_doc"}


def test_a_component_of_the_wrong_kind_is_one_line_naming_its_provider(registry):
    with pytest.raises(ConfigError) as error:
        registry.load("engines", "task_as_engine")
    assert str(error.value) == (
        "engine 'task_as_engine' (ragbench.tasks.selfrag.demo:Demo) (from ragbench-test-plugin, entry point "
        "test_plugin) is class ragbench.tasks.selfrag.demo.Demo, not a subclass of Engine: the plugin registers "
        "the wrong kind of component; fix its entry or ask its provider"
    )
    with pytest.raises(
        ConfigError,
        match=r"metric 'broken:x' .*\(from ragbench-test-plugin, entry point "
        r"test_plugin\) is a str, not a subclass of Metric",
    ):
        registry.metric_class("broken:x")


def test_builtin_benchmark_commands_come_through_the_hook():
    from ragbench.testing import cli

    names = {c.name: p for c, p in installed_registry().cli_commands}
    assert names == {"serve": "ragbench", "index": "ragbench", "export": "ragbench"}
    ctx = click.Context(cli)
    assert cli.get_command(ctx, "serve").commands.keys() == {"crag-kg"}
    assert {"build", "omnieval-corpus"} <= set(cli.get_command(ctx, "index").commands)
    assert cli.get_command(ctx, "export").commands.keys() == {
        "trec",
        "browsecomp-plus",
        "trec-rag",
        "trec-rag-agreement",
        "umbrela-qrels",
        "dragun",
        "dragun-human-labels",
    }  # tasks' and metrics' join the core's

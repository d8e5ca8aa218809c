"""The registry's catalogue entries: what a plugin registers under a name, by kind (a task, a system, a metric,
an engine, ...), imported and checked against its kind's base class the first time it is used; metric families
(`prefix:NAME`), the reproduction manifests and the plugins that failed to load."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._errors import ConfigError
from ._imports import import_target
from ._values.json_values import JsonObject

KINDS = ("tasks", "systems", "metrics", "engines", "retrievers", "rerankers", "refiners")
SINGULAR = {
    "tasks": "task",
    "systems": "system",
    "metrics": "metric",
    "engines": "engine",
    "retrievers": "retriever",
    "rerankers": "reranker",
    "refiners": "refiner",
    "query_styles": "query style",
    "prompt_styles": "prompt style",
    "record_formats": "record format",
    "gold_kinds": "gold kind",
}
# The base class each kind's targets must subclass (imported when a component is first loaded).
BASES = {
    "tasks": "ragbench._task:Task",
    "systems": "ragbench._system:System",
    "metrics": "ragbench._metric:Metric",
    "engines": "ragbench._engines.base:Engine",
    "retrievers": "ragbench._retrieval.base:Retriever",
    "rerankers": "ragbench._components.base:Reranker",
    "refiners": "ragbench._components.base:Refiner",
    "query_styles": "ragbench._retrieval.query_style:QueryStyle",
    "prompt_styles": "ragbench._yaml_tasks.task:YamlTask",
    "record_formats": "ragbench._yaml_tasks.formats:RecordFormat",
    "gold_kinds": "ragbench._yaml_tasks.gold_kinds:GoldKind",
}
TASK_FILE = "a YAML task file"  # the `plugin` of tasks given as files (--tasks FILE.yaml, --include-path)


def source(provider: str, plugin: str) -> str:
    """Who provides a component: the distribution, and the entry point when known."""
    return provider if plugin == "?" else f"{provider}, entry point {plugin}"


def check_kind(obj: Any, kind: str, what: str, where: str) -> type[Any]:
    """`obj` when it is a subclass of `kind`'s base class, else a one-line ConfigError naming `where`."""
    base = import_target(BASES[kind])
    if isinstance(obj, type) and issubclass(obj, base):
        return obj
    found = f"class {obj.__module__}.{obj.__qualname__}" if isinstance(obj, type) else f"a {type(obj).__name__}"
    raise ConfigError(
        f"{what} (from {where}) is {found}, not a subclass of {base.__name__}: the plugin "
        "registers the wrong kind of component; fix its entry or ask its provider"
    )


@dataclass
class Entry:
    kind: str
    name: str
    target: str  # "module:attr"
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    defaults: dict[str, Any] = field(default_factory=dict)
    provider: str = "?"  # the installed distribution that provides it
    plugin: str = "?"  # its entry point (the hook module's name in the `ragbench` group)
    build: Callable[[], Any] | None = None  # makes the component instead of importing `target` (a YAML task)
    check: Callable[[], Any] | None = None  # reads all it is made of without making it (a YAML task's whole file)
    shards: str | None = None  # a retriever's "module:attr" of its `ShardedKind` (sharded build and search)
    _loaded: type[Any] | None = None

    @property
    def source(self) -> str:
        return source(self.provider, self.plugin)

    def load(self) -> type[Any]:
        if self._loaded is None:
            what = f"{SINGULAR[self.kind]} '{self.name}'"
            try:
                obj = self.build() if self.build is not None else import_target(self.target)
            except ConfigError:
                raise
            except Exception as exc:
                raise ConfigError(
                    f"{what} (from {self.source}) failed to load {self.target}: {type(exc).__name__}: {exc}"
                ) from exc
            self._loaded = check_kind(obj, self.kind, f"{what} ({self.target})", self.source)
        return self._loaded


@dataclass
class MetricFamily:
    """Metrics named `prefix:NAME`, built by a factory (e.g. `hf:bleu`, Hugging Face `evaluate`)."""

    prefix: str
    target: str  # "module:factory", factory("prefix:NAME") -> a Metric subclass
    description: str = ""
    provider: str = "?"
    plugin: str = "?"

    def metric_class(self, name: str) -> type[Any]:  # a Metric subclass (check_kind)
        where = source(self.provider, self.plugin)
        try:
            metric = import_target(self.target)(name)
        except ConfigError:
            raise
        except Exception as exc:
            raise ConfigError(
                f"metric '{name}' (from {where}): {self.target} failed: {type(exc).__name__}: {exc}"
            ) from exc
        return check_kind(metric, "metrics", f"metric '{name}' ({self.target})", where)


@dataclass
class PluginFailure:
    plugin: str
    provider: str
    error: str


@dataclass
class Reproductions:
    """The catalogues' reproduction manifests (`ragbench reproduce`), kept unread as the catalogues give them (a
    `PackagedSection` is parsed at its first read) and merged, in the catalogues' order, when first asked for."""

    unread: list[tuple[Any, str, str]] = field(default_factory=list)  # (manifests, provider, plugin)
    read: dict[str, JsonObject] = field(default_factory=dict)  # name -> manifest, with its provider

    def merged(self, failures: list[PluginFailure]) -> dict[str, JsonObject]:
        """Every manifest by name; a name another provider gave first, or manifests that do not read, are added
        to `failures` (the first provider's manifest kept)."""
        while self.unread:
            manifests, provider, plugin = self.unread.pop(0)
            try:
                for name, manifest in manifests.items():
                    provided = self.read.get(name)
                    if provided is not None and provided["provider"] != provider:
                        failures.append(
                            PluginFailure(
                                name,
                                provider,
                                f"reproduction '{name}' is already provided by {provided['provider']}; "
                                "this one is ignored",
                            )
                        )
                        continue
                    self.read[name] = {**manifest, "provider": provider}
            except Exception as exc:
                failures.append(PluginFailure(plugin, provider, f"{type(exc).__name__}: {exc}"))
        return self.read

"""Lazy registry of tasks, systems, metrics, engines, retrievers, rerankers and refiners, discovered through pluggy.

Every distribution (ragbench itself included) lists modules in the entry-point group
`ragbench`; each module implements some of the hooks of `hookspecs` (the catalogue, metric
families, CLI commands). Loading a catalogue imports only that light module; a component's own
module is imported the first time the component is used, and checked against its kind's base
class. A plugin that fails to import is recorded with its error and the others keep working.

A run uses one registry, given to everything that loads a component (planning, engines,
retrievers, index builds, the viewer's pages): the command line makes it once per command
(ragbench._cli.registry) and passes it down; nothing below keeps one. `installed_registry()` makes a
new one of the installed plugins each call, for the command line and for callers of the public API
(ragbench.testing) that give none.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import pluggy

from ._catalog import BASES, KINDS, SINGULAR, TASK_FILE, Entry, MetricFamily, PluginFailure, Reproductions
from ._errors import ConfigError, did_you_mean
from ._hookspecs import PROJECT, NamedTarget, RagbenchHooks
from ._imports import import_target
from ._values.json_values import JsonObject
from ._values.names import name_problem
from ._yaml_tasks.discovery import file_header, given_file, is_task_file, packaged_header
from ._yaml_tasks.header import TaskHeader


class Registry:
    """The components of the plugins by kind and name: `load(kind, name)` (the class), `names(kind)`,
    `entry(kind, name)`; `Registry.discover(plugins=...)` finds the installed plugins and the hook modules given."""

    def __init__(self) -> None:
        self.entries: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
        self.aliases: dict[str, dict[str, str]] = {kind: {} for kind in KINDS}
        self.groups: dict[str, list[str]] = {}
        self._reproductions = Reproductions()  # the catalogues' manifests (ragbench reproduce), merged when read
        self.metric_families: dict[str, MetricFamily] = {}
        self.query_styles: dict[str, Entry] = {}  # dense query styles (`query_style=NAME`), kind "query_styles"
        self.prompt_styles: dict[str, Entry] = {}  # YAML tasks' named prompt styles (`prompt.style`)
        self.record_formats: dict[str, Entry] = {}  # YAML tasks' formats a benchmark registers (`data.format`)
        self.gold_kinds: dict[str, Entry] = {}  # YAML tasks' gold kinds a benchmark registers (`fields.gold`)
        self.task_files: dict[Path, str] = {}  # resolved path of a task file given by path -> its task's name
        self.unread_task_files: dict[str, str] = {}  # a task file given (add_task_files) -> why it did not register
        self._command_hooks: list[tuple[pluggy.PluginManager, dict[str, str]]] = []
        self._cli_commands: list[tuple[Any, str]] | None = None
        self.failures: list[PluginFailure] = []

    @classmethod
    def discover(cls, group: str = PROJECT, plugins: Iterable[tuple[str, str, Any]] = ()) -> Registry:
        """The registry of the plugins installed in `group`, then of `plugins` given as
        (entry point name, provider, module or object with hook implementations)."""
        registry = cls()
        loaded: list[tuple[str, str, Any]] = []
        for entry_point, provider in _by_provider(metadata.entry_points(group=group)):
            try:
                loaded.append((entry_point.name, provider, entry_point.load()))
            except Exception as exc:
                registry.failures.append(PluginFailure(entry_point.name, provider, f"{type(exc).__name__}: {exc}"))
        registry.add_plugins([*loaded, *plugins])
        return registry

    def add_plugins(self, plugins: Iterable[tuple[str, str, Any]]) -> None:
        manager = pluggy.PluginManager(PROJECT)
        manager.add_hookspecs(RagbenchHooks)
        providers: dict[str, str] = {}
        for name, provider, plugin in plugins:
            try:
                manager.register(plugin, name=name)
                providers[name] = provider
            except Exception as exc:
                self.failures.append(PluginFailure(name, provider, f"{type(exc).__name__}: {exc}"))
        for hook, add in (
            ("ragbench_catalog", self.add_catalog),
            ("ragbench_metric_families", self.add_metric_families),
            ("ragbench_query_styles", self.add_query_styles),
            ("ragbench_record_formats", self.add_record_formats),
            ("ragbench_gold_kinds", self.add_gold_kinds),
        ):
            for name, result in _each_plugin(manager, hook):
                self._added(name, providers[name], result, add)
        self._command_hooks.append((manager, providers))

    @property
    def cli_commands(self) -> list[tuple[Any, str]]:
        """(click command, provider) from every plugin's `ragbench_cli_commands`, asked the first time the
        command line needs them (a run or a library user never imports a plugin's command modules)."""
        if self._cli_commands is None:
            self._cli_commands = []
            for manager, providers in self._command_hooks:
                for name, result in _each_plugin(manager, "ragbench_cli_commands"):
                    self._added(name, providers[name], result, self._add_commands)
        return self._cli_commands

    def _add_commands(self, commands: Iterable[Any], provider: str, plugin: str) -> None:
        self._cli_commands.extend((command, provider) for command in commands)  # type: ignore[union-attr]

    def _added(self, plugin: str, provider: str, result: Any, add: Any) -> None:
        try:
            if isinstance(result, BaseException):
                raise result
            if result is not None:
                add(result, provider, plugin)
        except Exception as exc:
            self.failures.append(PluginFailure(plugin, provider, f"{type(exc).__name__}: {exc}"))

    def _misnamed(self, what: str, names: Iterable[Any], provider: str, plugin: str) -> bool:
        """Whether a name of `what` breaks the rule (ragbench._values.names): then it is reported and ignored."""
        problem = next(filter(None, map(name_problem, names)), None)
        if problem is not None:
            self.failures.append(PluginFailure(plugin, provider, f"{what}: {problem}; it is ignored"))
        return problem is not None

    def _taken(self, existing: Any, what: str, provider: str, plugin: str) -> bool:
        """Whether another provider already provides `what` (then this one is reported and ignored)."""
        if existing is None or existing.provider == provider:
            return False
        self.failures.append(
            PluginFailure(plugin, provider, f"{what} is already provided by {existing.provider}; this one is ignored")
        )
        return True

    def add_metric_families(self, families: Mapping[str, NamedTarget], provider: str, plugin: str = "?") -> None:
        for prefix, spec in families.items():
            if not self._misnamed("metric family", [prefix], provider, plugin) and not self._taken(
                self.metric_families.get(prefix), f"metric family '{prefix}:'", provider, plugin
            ):
                self.metric_families[prefix] = MetricFamily(
                    prefix, spec["target"], spec.get("description", ""), provider, plugin
                )

    def add_query_styles(self, styles: Mapping[str, NamedTarget], provider: str, plugin: str = "?") -> None:
        self._add_named("query_styles", self.query_styles, styles, provider, plugin)

    def _add_named(
        self, kind: str, table: dict[str, Entry], specs: Mapping[str, NamedTarget], provider: str, plugin: str
    ) -> None:
        """Targets of one kind by name (query styles, record formats); a name another provider has is reported."""
        for name, spec in specs.items():
            if not self._taken(table.get(name), f"{SINGULAR[kind]} '{name}'", provider, plugin):
                table[name] = Entry(
                    kind, name, spec["target"], spec.get("description", ""), provider=provider, plugin=plugin
                )

    def query_style(self, name: str) -> type:
        """The QueryStyle subclass a plugin registered as `name` (`--build-arg`/`--retriever-arg query_style=`)."""
        entry = self.query_styles.get(name)
        if entry is None:
            raise ConfigError(
                f"dense query_style '{name}' is not installed; the installed styles are "
                f"{', '.join(sorted(self.query_styles)) or 'none'} (`ragbench list retrievers`; a plugin adds "
                "one through the ragbench_query_styles hook)"
            )
        return entry.load()

    def add_record_formats(self, formats: Mapping[str, NamedTarget], provider: str, plugin: str = "?") -> None:
        self._add_named("record_formats", self.record_formats, formats, provider, plugin)

    def add_gold_kinds(self, kinds: Mapping[str, NamedTarget], provider: str, plugin: str = "?") -> None:
        self._add_named("gold_kinds", self.gold_kinds, kinds, provider, plugin)

    def record_format(self, name: str) -> Any:
        """A RecordFormat of the class a plugin registered as `name` (a YAML task's `data.format`)."""
        return self._installed("record_formats", self.record_formats, name)()

    def gold_kind(self, name: str) -> Any:
        """A GoldKind of the class a plugin registered as `name` (a YAML task's `fields.gold.NAME`)."""
        return self._installed("gold_kinds", self.gold_kinds, name)()

    def _installed(self, kind: str, table: dict[str, Entry], name: str) -> type[Any]:
        entry = table.get(name)
        if entry is None:
            raise ConfigError(
                f"{SINGULAR[kind]} '{name}' is not installed; the installed ones are "
                f"{', '.join(sorted(table)) or 'none'} (a plugin adds one through the "
                f"ragbench_{kind} hook)"
            )
        return entry.load()

    def prompt_style(self, name: str) -> type:
        """The YamlTask subclass registered as prompt style `name` (`template`: YamlTask itself)."""
        if name == "template":
            template: type = import_target(BASES["prompt_styles"])  # YamlTask
            return template
        entry = self.prompt_styles.get(name)
        if entry is None:
            raise ConfigError(
                unknown_name_message("prompt style", name, ["template", *self.prompt_styles], "ragbench list tasks")
            )
        return entry.load()

    def add_catalog(self, catalog: dict[str, Any], provider: str, plugin: str = "?") -> None:
        for kind in KINDS:
            for name, spec in (catalog.get(kind) or {}).items():
                existing = self.entries[kind].get(name)
                if self._misnamed(SINGULAR[kind], [name, *spec.get("aliases", [])], provider, plugin):
                    continue
                if existing is not None and existing.provider != provider:
                    self.failures.append(
                        PluginFailure(
                            name,
                            provider,
                            f"{SINGULAR[kind]} '{name}' is already provided by "
                            f"{existing.provider}; this one is ignored",
                        )
                    )
                    continue
                if kind == "tasks" and "yaml" in spec:
                    self._add_yaml_entry(name, spec["yaml"], provider, plugin)
                    continue
                self._add_entry(
                    Entry(
                        kind=kind,
                        name=name,
                        target=spec["target"],
                        description=spec.get("description", ""),
                        aliases=list(spec.get("aliases", [])),
                        defaults=dict(spec.get("defaults", {})),
                        provider=provider,
                        plugin=plugin,
                        shards=spec.get("shards"),
                    )
                )
        for name, spec in (catalog.get("prompt_styles") or {}).items():
            if not self._taken(self.prompt_styles.get(name), f"prompt style '{name}'", provider, plugin):
                self.prompt_styles[name] = Entry(
                    "prompt_styles", name, spec["target"], spec.get("description", ""), provider=provider, plugin=plugin
                )
        for group, members in (catalog.get("groups") or {}).items():
            self.groups[group] = list(members)
        if catalog.get("reproductions") is not None:  # not its truth: that would read a lazy one (PackagedSection)
            self._reproductions.unread.append((catalog["reproductions"], provider, plugin))

    @property
    def reproductions(self) -> dict[str, JsonObject]:
        """The catalogues' reproduction manifests by name, each with its `provider`: read (and a name two providers
        give reported among `failures`) the first time they are asked for, not at every command's start."""
        return self._reproductions.merged(self.failures)

    def every_failure(self) -> list[PluginFailure]:
        """`failures`, the reproduction manifests read first (a name two plugins give is one): `ragbench list`'s."""
        self._reproductions.merged(self.failures)
        return self.failures

    def _add_entry(self, entry: Entry) -> None:
        self.entries[entry.kind][entry.name] = entry
        for alias in entry.aliases:
            self.aliases[entry.kind][alias] = entry.name

    def _add_yaml_entry(self, name: str, resource: str, provider: str, plugin: str) -> None:
        """A catalogue's YAML task (`{"yaml": "package:path.yaml"}`), its header read now (a broken one is a failure)."""
        try:
            self._add_header(packaged_header(resource, name), provider, plugin)
        except (ConfigError, ImportError, OSError) as exc:
            self.failures.append(PluginFailure(plugin, provider, f"{type(exc).__name__}: {exc}"))

    def _add_header(self, header: TaskHeader, provider: str, plugin: str = "?") -> None:
        def build() -> type:  # the Task class, made on first use (the full spec is read, Jinja2 loads with it)
            from ._yaml_tasks.task import task_class

            return task_class(header.spec(), self.prompt_style, self.record_format, self.gold_kind)

        self._add_entry(
            Entry(
                kind="tasks",
                name=header.name,
                target=header.source,
                description=header.description,
                aliases=list(header.aliases),
                defaults={"system_args": dict(header.system_args)},
                provider=provider,
                plugin=plugin,
                build=build,
                check=header.spec,
            )
        )
        for group in header.groups:
            members = self.groups.setdefault(group, [])
            if header.name not in members:
                members.append(header.name)

    def add_task_file(self, path: str | Path) -> str:
        """The name of the YAML task at `path` (`--tasks FILE.yaml`, `--include-path`), registered if needed."""
        header = file_header(path)
        existing = self.entries["tasks"].get(self.aliases["tasks"].get(header.name, header.name))
        if existing is not None and existing.plugin != TASK_FILE:  # (a file given before is replaced)
            raise ConfigError(
                f"{header.source}: task '{header.name}' is already provided by {existing.provider} "
                f"({existing.target}); give the file's task another name"
            )
        self._add_header(header, str(path), TASK_FILE)
        self.entries["tasks"][header.name].load()  # a file given is a task used: read whole now
        self.task_files[Path(path).resolve()] = header.name
        return header.name

    def add_task_files(self, names: Iterable[str]) -> None:
        """Registers the task files among `names` (a run's --tasks and --data keys: `run_registry`) for lookups by
        path; one that does not register is kept with its problem, raised where it is looked up (the pre-flight)."""
        for name in filter(is_task_file, names):
            try:
                self.add_task_file(name)
                self.unread_task_files.pop(name, None)
            except ConfigError as exc:
                self.unread_task_files[name] = str(exc)

    def check_task_files(self) -> None:
        """Read every catalogue's YAML task file whole (`ragbench list`): one that does not read is reported as its
        plugin's failure, as at discovery; a run reads only the files of the tasks it uses."""
        for entry in [e for e in self.entries["tasks"].values() if e.check is not None and e.plugin != TASK_FILE]:
            self._added(entry.plugin, entry.provider, entry.check, lambda check, *_: check())

    def names(self, kind: str) -> list[str]:
        return sorted(self.entries[kind])

    def entry(self, kind: str, name: str) -> Entry:
        """The entry of `name` (an alias resolved; a task file by the name it declares, once registered by
        `add_task_file`); a lookup only: the registry is left as it was."""
        if kind == "tasks" and is_task_file(name):
            name = self._task_file_name(name)
        name = self.aliases[kind].get(name, name)
        if name in self.entries[kind]:
            return self.entries[kind][name]
        known = list(self.entries[kind]) + list(self.aliases[kind])
        if kind == "tasks":
            known += list(self.groups)
        raise ConfigError(unknown_name_message(SINGULAR[kind], name, known, f"ragbench list {kind}"))

    def _task_file_name(self, path: str) -> str:
        try:  # a file given that did not register (`add_task_files`) is said as registering it said
            name = None if path in self.unread_task_files else self.task_files.get(Path(path).resolve())
        except (OSError, ValueError):  # a path no file can have (a NUL byte) or a symlink loop: never registered
            name = None
        if name is None:
            given_file(path)  # a file that is not there is said so, as registering it says
            raise ConfigError(
                self.unread_task_files.get(path)
                or f"task file {path} is not registered: register it before looking it up "
                "(Registry.add_task_file; a run's: ragbench._run.plan.planning.run_registry, before the run)"
            )
        return name

    def load(self, kind: str, name: str) -> Any:
        return self.entry(kind, name).load()

    def metric_family(self, name: str) -> MetricFamily | None:
        """The family of a `prefix:NAME` metric name, if a plugin provides that prefix."""
        prefix, sep, _ = name.partition(":")
        return self.metric_families.get(prefix) if sep else None

    def metric_class(self, name: str) -> type[Any]:  # a Metric subclass (check_kind)
        """A catalogue metric, or a `prefix:NAME` metric built by its family's factory."""
        family = self.metric_family(name)
        return family.metric_class(name) if family is not None else self.load("metrics", name)

    def metric_name(self, name: str) -> str:
        """A metric's canonical name: aliases resolved (`judge` is `llm_judge`), family names as given."""
        return name if self.metric_family(name) is not None else self.entry("metrics", name).name

    def expand_tasks(self, names: Sequence[str]) -> list[str]:
        """Task names with groups expanded and aliases resolved, in order, without repeats; two YAML files
        declaring the same task name are refused (the later would replace the earlier)."""
        for unread in (self.unread_task_files[n] for n in names if n in self.unread_task_files):
            raise ConfigError(unread)  # a given file that did not register: said before any name is looked up
        out: list[str] = []
        files: dict[str, str] = {}  # task name -> the file that declared it
        for name in names:
            members = self.groups.get(name)
            for member in members if members is not None else [name]:
                resolved = self.entry("tasks", member).name
                if is_task_file(member):
                    earlier = files.setdefault(resolved, member)
                    if Path(earlier).resolve() != Path(member).resolve():
                        raise ConfigError(
                            f"--tasks {member}: declares task '{resolved}', as {earlier} does; "
                            "give one of them another `task:` name"
                        )
                if resolved not in out:
                    out.append(resolved)
        return out


def _each_plugin(manager: pluggy.PluginManager, hook: str) -> Iterable[tuple[str, Any]]:
    """(plugin name, its result or the exception it raised) for every plugin implementing `hook`,
    called through pluggy one plugin at a time so a result is credited to its provider and one
    broken plugin cannot hide the others."""
    plugins = manager.list_name_plugin()
    for impl in getattr(manager.hook, hook).get_hookimpls():
        others = [plugin for name, plugin in plugins if name != impl.plugin_name]
        try:
            results = manager.subset_hook_caller(hook, remove_plugins=others)()
        except Exception as exc:
            yield impl.plugin_name, exc
            continue
        yield impl.plugin_name, results[0] if results else None


def _by_provider(entry_points: Iterable[metadata.EntryPoint]) -> list[tuple[metadata.EntryPoint, str]]:
    """Each entry point with its distribution's name ("?" where unknown), ragbench's first, then by provider and
    name. Each distribution's metadata is parsed once (`Distribution.name` parses it at every read)."""
    name = functools.cache(lambda dist: str(dist.name))  # a distribution's entry points share its object
    named = [(entry_point, name(entry_point.dist) if entry_point.dist else "?") for entry_point in entry_points]
    return sorted(named, key=lambda pair: (pair[1] != PROJECT, pair[1], pair[0].name))


def unknown_name_message(what: str, name: str, known: Iterable[str], listing: str) -> str:
    return f"unknown {what} '{name}'{did_you_mean(name, known, most=3, cutoff=0.5)} (`{listing}` shows them all)"


def installed_registry() -> Registry:
    """A new registry of the installed plugins (their entry points and catalogues; cheap once they are
    imported, dearer the first time), of its caller's alone: what one adds to it no other registry sees."""
    return Registry.discover()

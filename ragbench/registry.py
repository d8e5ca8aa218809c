"""Lazy registry of tasks, systems, metrics, engines and retrievers, discovered through pluggy.

Every distribution (ragbench itself included) lists modules in the entry-point group
`ragbench`; each module implements the `ragbench_catalog` hook (see `hookspecs`). Loading a
catalogue imports only that light module; a component's own module is imported the first
time the component is used. A plugin that fails to import is recorded with its error and
the others keep working.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Iterable

import pluggy

from .errors import ConfigError
from .hookspecs import PROJECT, RagbenchHooks
from .imports import import_target

KINDS = ("tasks", "systems", "metrics", "engines", "retrievers")
SINGULAR = {"tasks": "task", "systems": "system", "metrics": "metric", "engines": "engine",
            "retrievers": "retriever"}


@dataclass
class Entry:
    kind: str
    name: str
    target: str  # "module:attr"
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    defaults: dict[str, Any] = field(default_factory=dict)
    provider: str = "?"  # the installed distribution that provides it
    _loaded: Any = None

    def load(self) -> Any:
        if self._loaded is None:
            try:
                obj = import_target(self.target)
            except Exception as exc:
                raise ConfigError(
                    f"{SINGULAR[self.kind]} '{self.name}' (from {self.provider}) failed to load "
                    f"{self.target}: {type(exc).__name__}: {exc}"
                ) from exc
            self._loaded = obj
        return self._loaded


@dataclass
class PluginFailure:
    plugin: str
    provider: str
    error: str


class Registry:
    def __init__(self) -> None:
        self.entries: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
        self.aliases: dict[str, dict[str, str]] = {kind: {} for kind in KINDS}
        self.groups: dict[str, list[str]] = {}
        self.reproductions: dict[str, dict[str, Any]] = {}  # name -> manifest (ragbench reproduce), with provider
        self.failures: list[PluginFailure] = []

    @classmethod
    def discover(cls, group: str = PROJECT) -> "Registry":
        registry = cls()
        manager = pluggy.PluginManager(PROJECT)
        manager.add_hookspecs(RagbenchHooks)
        providers: dict[str, str] = {}
        entry_points = sorted(metadata.entry_points(group=group),
                              key=lambda ep: (_provider(ep) != PROJECT, _provider(ep), ep.name))
        for entry_point in entry_points:
            provider = _provider(entry_point)
            try:
                manager.register(entry_point.load(), name=entry_point.name)
                providers[entry_point.name] = provider
            except Exception as exc:
                registry.failures.append(
                    PluginFailure(entry_point.name, provider, f"{type(exc).__name__}: {exc}"))
        # Called one implementation at a time so each catalogue is credited to its provider and
        # one broken plugin cannot hide the others.
        for impl in manager.hook.ragbench_catalog.get_hookimpls():
            provider = providers[impl.plugin_name]
            try:
                registry.add_catalog(impl.function(), provider)
            except Exception as exc:
                registry.failures.append(
                    PluginFailure(impl.plugin_name, provider, f"{type(exc).__name__}: {exc}"))
        return registry

    def add_catalog(self, catalog: dict[str, Any], provider: str) -> None:
        for kind in KINDS:
            for name, spec in (catalog.get(kind) or {}).items():
                existing = self.entries[kind].get(name)
                if existing is not None and existing.provider != provider:
                    self.failures.append(PluginFailure(
                        name, provider, f"{SINGULAR[kind]} '{name}' is already provided by "
                                        f"{existing.provider}; this one is ignored"))
                    continue
                entry = Entry(kind=kind, name=name, target=spec["target"],
                              description=spec.get("description", ""),
                              aliases=list(spec.get("aliases", [])),
                              defaults=dict(spec.get("defaults", {})), provider=provider)
                self.entries[kind][name] = entry
                for alias in entry.aliases:
                    self.aliases[kind][alias] = name
        for group, members in (catalog.get("groups") or {}).items():
            self.groups[group] = list(members)
        for name, manifest in (catalog.get("reproductions") or {}).items():
            existing = self.reproductions.get(name)
            if existing is not None and existing["provider"] != provider:
                self.failures.append(PluginFailure(name, provider, f"reproduction '{name}' is already provided by "
                                                                   f"{existing['provider']}; this one is ignored"))
                continue
            self.reproductions[name] = {**manifest, "provider": provider}

    def names(self, kind: str) -> list[str]:
        return sorted(self.entries[kind])

    def entry(self, kind: str, name: str) -> Entry:
        name = self.aliases[kind].get(name, name)
        if name in self.entries[kind]:
            return self.entries[kind][name]
        known = list(self.entries[kind]) + list(self.aliases[kind])
        if kind == "tasks":
            known += list(self.groups)
        raise ConfigError(unknown_name_message(SINGULAR[kind], name, known, f"ragbench list {kind}"))

    def load(self, kind: str, name: str) -> Any:
        return self.entry(kind, name).load()

    def expand_tasks(self, names: Iterable[str]) -> list[str]:
        """Task names with groups expanded and aliases resolved, in order, without repeats."""
        out: list[str] = []
        for name in names:
            members = self.groups.get(name)
            for member in members if members is not None else [name]:
                resolved = self.entry("tasks", member).name
                if resolved not in out:
                    out.append(resolved)
        return out


def _provider(entry_point: metadata.EntryPoint) -> str:
    return entry_point.dist.name if entry_point.dist else "?"


def unknown_name_message(what: str, name: str, known: Iterable[str], listing: str) -> str:
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown {what} '{name}'{hint} (`{listing}` shows them all)"


_registry: Registry | None = None


def get_registry() -> Registry:
    global _registry
    if _registry is None:
        _registry = Registry.discover()
    return _registry

"""The plugin hooks. A plugin is any module listed in the `ragbench` entry-point group that implements
some of them (decorated with `hookimpl`); ragbench's own tasks, systems, metrics, engines and retrievers
are plugins of exactly this kind. The registry calls each hook through pluggy, one plugin at a time, so
every result is credited to its provider and one broken plugin cannot hide the others.

`ragbench_catalog()` returns data in the schema of `registry.yaml`:

    {"tasks":   {name: {"target": "pkg.module:Attr", "description": "...", "aliases": [...],
                        "defaults": {...}},
                 name: {"yaml": "pkg:path/inside/pkg.yaml"}},
     "systems": {...}, "metrics": {...}, "engines": {...}, "retrievers": {...},
     "rerankers": {...}, "refiners": {...},
     "prompt_styles": {name: {"target": "pkg.module:YamlTaskSubclass", "description": "..."}},
     "groups":  {group_name: [task names]}, "reproductions": {name: manifest}}

A task given as `yaml` is a YAML task file the package ships (docs/yaml-tasks.md); its description,
aliases, groups and system defaults come from the file, whose `task:` must equal `name`. A prompt style is
the Python a YAML task names in `prompt.style` when a template cannot hold its prompting logic.
A retriever's `shards: "pkg.module:KIND"` names its `ShardedKind` (`ragbench.api.retrieval`): how an index of
it is built in shards and searched on them (`--ray --shards S`, `--retriever-arg shards=S`).

Targets are imported only when used, so `ragbench list` never imports torch, vLLM or bm25s; a loaded
target must be a subclass of the kind's base class (Task, System, Metric, Engine, Retriever, Reranker, Refiner).

`ragbench_metric_families()` returns `{prefix: {"target": "pkg.module:factory", "description": "..."}}`:
a metric named `prefix:NAME` (e.g. `hf:bleu`) is built by `factory("prefix:NAME")`, which returns a Metric
subclass (imported only when such a metric is asked for).

`ragbench_query_styles()` returns `{name: {"target": "pkg.module:Class", "description": "..."}}`: a dense
query style, chosen with `--build-arg`/`--retriever-arg query_style=NAME`, is a subclass of
`ragbench._retrieval.query_style.QueryStyle` saying how queries (and passages) become the texts the
encoder encodes (imported only when an encoder uses it). The core provides only `default`.

`ragbench_record_formats()` returns `{name: {"target": "pkg.module:Class", "description": "..."}}`: a
layout of data files a YAML task names in `data.format` (a benchmark's own: FlashRAG's JSONL, SQuAD's
JSON), a subclass of `ragbench._yaml_tasks.formats.RecordFormat` (imported when a task reads it).

`ragbench_gold_kinds()` returns `{name: {"target": "pkg.module:Class", "description": "..."}}`: a kind
of gold a YAML task maps under `fields.gold.NAME` (a benchmark's own: CRAG's answer and alternatives), a
subclass of `ragbench._yaml_tasks.gold_kinds.GoldKind` (imported when a task maps it).

`ragbench_cli_commands()` returns a list of click commands added to the `ragbench` command line. A
click group named like an existing group (`index`, or one another plugin added) adds its commands to
that group; a name already taken by a command is reported and skipped. Keep the module that defines
the commands light: import heavy libraries inside the command functions.
"""

from __future__ import annotations

from typing import Any, TypedDict

import pluggy

PROJECT = "ragbench"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class _Target(TypedDict):
    target: str  # "pkg.module:Attr", imported when it is used


class NamedTarget(_Target, total=False):
    """What a plugin registers under a name (a metric family's prefix, a query style, a record format, a gold
    kind): its target, and a line describing it."""

    description: str


class RagbenchHooks:
    @hookspec
    def ragbench_catalog(self) -> dict[str, object]:
        """Return this plugin's catalogue (schema above)."""

    @hookspec
    def ragbench_metric_families(self) -> dict[str, NamedTarget]:
        """Return {prefix: {"target": "module:factory", "description": ...}} for `prefix:NAME` metrics."""

    @hookspec
    def ragbench_query_styles(self) -> dict[str, NamedTarget]:
        """Return {name: {"target": "module:QueryStyleSubclass", "description": ...}} for dense query styles."""

    @hookspec
    def ragbench_cli_commands(self) -> list[Any]:
        """Return click commands (or groups) to add to the `ragbench` command line."""

    @hookspec
    def ragbench_record_formats(self) -> dict[str, NamedTarget]:
        """Return {name: {"target": "module:RecordFormatSubclass", "description": ...}} for YAML tasks' data.format."""

    @hookspec
    def ragbench_gold_kinds(self) -> dict[str, NamedTarget]:
        """Return {name: {"target": "module:GoldKindSubclass", "description": ...}} for YAML tasks' fields.gold."""

"""Options of `ragbench index build` whose help names the retriever kinds they take, read from the command's
registry when the help is shown (`KindsOption`): every kind the installed plugins register, a plugin's too, never a
list kept by hand."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from ..registry import command_registry

if TYPE_CHECKING:
    from ..._registry import Registry


class KindsOption(click.Option):
    """An option whose help is a template over {kinds}: the names `kinds` finds in the command's registry."""

    def __init__(self, *args: Any, kinds: Callable[[Registry], list[str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kinds, self.template = kinds, self.help or ""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = self.template.format(kinds=", ".join(self.kinds(command_registry(ctx))))
        return super().get_help_record(ctx)


def built_kinds(registry: Registry) -> list[str]:
    """The retrievers with an index to build (their class names a `builder`, or indexes pages); one whose plugin
    fails to load is left out here and named when it is asked for."""
    from ..._retrieval.pages.build import is_page_kind

    names = []
    for name, entry in registry.entries["retrievers"].items():
        try:
            builder = getattr(entry.load(), "builder", None)
        except Exception:  # a broken plugin hides no other kind
            continue
        if builder is not None or is_page_kind(registry, name):
            names.append(name)
    return names


def parallel_kinds(registry: Registry) -> list[str]:
    """The kinds `--ray` builds (their passages analysed by Ray actors: a `ShardedKind` that `BuildsBlocks`)."""
    from ..._retrieval.sharding.kind import BuildsBlocks
    from ..._retrieval.sharding.kind_lookup import sharded_kinds

    return [kind.name for kind in sharded_kinds(registry) if isinstance(kind, BuildsBlocks)]


def shard_kinds(registry: Registry) -> list[str]:
    """The kinds `--ray --shards S` builds in shards (a `ShardedKind` that `BuildsShards`, or a page index)."""
    from ..._retrieval.pages.build import page_kinds
    from ..._retrieval.sharding.kind import BuildsShards
    from ..._retrieval.sharding.kind_lookup import sharded_kinds

    return [kind.name for kind in sharded_kinds(registry) if isinstance(kind, BuildsShards)] + page_kinds(registry)

"""The retriever kinds that can be sharded, found through the run's registry: a retriever's catalogue entry names
its `ShardedKind` (`shards: "pkg.module:KIND"`), a built-in kind's or a plugin's alike; and whether an index was
built in shards (`layout.built_in_shards`), whose front is then its kind's build's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._errors import ConfigError
from ..._imports import import_target
from .fronts import Front
from .kind import BuildsShards, ShardedKind
from .layout import built_in_shards

if TYPE_CHECKING:
    from ..._registry import Registry


def sharded_kind(registry: Registry, name: str) -> ShardedKind | None:
    """The parts of the retriever `name` (or alias), or None: no plugin provides it, or its entry names none (it
    cannot be sharded). A target that does not load, or is no `ShardedKind` of that retriever, is a ConfigError
    naming the plugin."""
    entry = registry.entries["retrievers"].get(registry.aliases["retrievers"].get(name, name))
    if entry is None or entry.shards is None:
        return None
    what = f"retriever '{entry.name}' (from {entry.source}): its shards: {entry.shards}"
    try:
        kind = import_target(entry.shards)
    except Exception as exc:
        raise ConfigError(f"{what} failed to load: {type(exc).__name__}: {exc}") from exc
    if not isinstance(kind, ShardedKind) or kind.name != entry.name:
        raise ConfigError(f"{what} is not the ShardedKind of {entry.name}: fix its entry or ask its provider")
    return kind


def sharded_kinds(registry: Registry) -> list[ShardedKind]:
    """Every retriever kind of `registry` that can be sharded; one whose entry names no `ShardedKind` of it is left
    out here (a broken plugin hides no other kind) and refused when it is asked for by name."""
    kinds = []
    for name, entry in registry.entries["retrievers"].items():
        try:
            kind = sharded_kind(registry, name) if entry.shards is not None else None
        except ConfigError:
            continue
        if kind is not None:
            kinds.append(kind)
    return kinds


def built_shards_front(kind: ShardedKind, index: object, shards: int) -> type[Front] | None:
    """The front class of `kind`'s index at `index` when it was built in `shards` shards; None for an index split
    from a one-process build."""
    if not built_in_shards(index, shards):
        return None
    if not isinstance(kind, BuildsShards):
        raise ConfigError(f"{index}: its shards-{shards} hold shards built for no kind this ragbench serves")
    return kind.shards_front

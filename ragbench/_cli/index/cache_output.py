"""`ragbench index cache`'s text: the listing of the index cache, and the removals `--prune` and `--remove` make."""

from __future__ import annotations

from pathlib import Path

import click

from ..._errors import ConfigError
from ..._retrieval.index.cache_listing import INDEX_STATES, PRUNED, REMOVABLE, CacheEntry, State
from ..._retrieval.index.removal import FolderBusy, remove_index_folder


def size_text(size: int) -> str:
    """`size` bytes in decimal units, as `pip cache` and `du --si` give them."""
    if size < 1000:
        return f"{size} B"
    value, unit = size / 1000, "kB"
    for larger in ("MB", "GB", "TB"):
        if round(value, 1) < 1000:  # 999.96 kB reads 1.0 MB, never 1000.0 kB
            break
        value, unit = value / 1000, larger
    return f"{value:.1f} {unit}"


def listing_lines(folder: Path, entries: list[CacheEntry]) -> list[str]:
    """The cache's indexes (kind, size, last use, corpus and its state) and total, then what is left alone."""
    indexes = [entry for entry in entries if entry.state in INDEX_STATES]
    ours = [entry for entry in entries if entry.state in (*INDEX_STATES, State.LEFTOVER, State.BUILDING)]
    pruned = [entry for entry in entries if entry.state in PRUNED]
    head = f"index cache {folder}: {len(indexes)} index(es), {size_text(sum(entry.size for entry in ours))}"
    if pruned:
        head += f"; --prune removes {len(pruned)}, {size_text(sum(entry.size for entry in pruned))}"
    lines = [head]
    for entry in entries:
        if entry.state in INDEX_STATES:
            used = entry.last_used or "not recorded"
            corpus = f"{entry.corpus}: " if entry.corpus else ""
            state = f"{entry.state.value} ({entry.damage})" if entry.damage else entry.state.value
            lines.append(f"  {entry.key}  {entry.kind}  {size_text(entry.size)}  last used {used}  {corpus}{state}")
        elif entry.state in (State.LEFTOVER, State.BUILDING):
            lines.append(f"  {entry.key}  {size_text(entry.size)}  {entry.state.value}")
    alone = [entry for entry in entries if entry not in ours]
    if alone:
        lines.append("left alone (ragbench removes only what it made):")
        lines.extend(f"  {entry.key}: {entry.state.value}" for entry in alone)
    return lines


def chosen_entries(folder: Path, entries: list[CacheEntry], prune: bool, keys: tuple[str, ...]) -> list[CacheEntry]:
    """The entries `--prune` and each `--remove KEY` name, in the cache's order; a KEY that is no index or
    leftover of the cache is a ConfigError (nothing is removed)."""
    by_key = {entry.key: entry for entry in entries}
    for key in keys:
        entry = by_key.get(key)
        if entry is None:
            raise ConfigError(
                f"--remove {key}: the index cache {folder} has no {key} (`ragbench index cache` lists it)"
            )
        if entry.state not in REMOVABLE:
            raise ConfigError(
                f"--remove {key}: {entry.state.value}, not an index of the cache; ragbench removes only what it made"
            )
    return [entry for entry in entries if entry.key in keys or (prune and entry.state in PRUNED)]


def remove_entries(entries: list[CacheEntry]) -> list[str]:
    """Remove each entry (`index_removal`), a line for each; what could not be removed, a line each."""
    failures, freed = [], 0
    for entry in entries:
        try:
            remove_index_folder(entry.path)
        except FolderBusy:
            failures.append(f"{entry.key}: a ragbench index build is writing it now")
        except OSError as exc:
            failures.append(f"{entry.key}: {exc.strerror or exc} ({exc.filename or entry.path})")
        else:
            freed += entry.size
            click.echo(f"removed {entry.key} ({size_text(entry.size)})")
    click.echo(f"index cache: {len(entries) - len(failures)} removed, {size_text(freed)} freed")
    return failures

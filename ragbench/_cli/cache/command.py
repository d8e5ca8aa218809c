"""`ragbench cache`: every cache ragbench keeps outside run folders (`cache_inventory`), listed, `--prune`
removing what in them is stale, and `--remove NAME` one entry (`cache_removal`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..._retrieval.index.removal import FolderBusy
from ..._storage.cache_root import CACHE_DIR_ENV, cache_root
from ..plugin_commands import config_errors_exit, exit_if_skipped
from ..registry import command_registry

if TYPE_CHECKING:
    from .inventory import Cache
    from .removal import Removal


@click.command("cache")
@click.option("--prune", is_flag=True, help="remove what the listing marks stale, in every cache; nothing else")
@click.option(
    "--remove",
    "names",
    multiple=True,
    metavar="NAME",
    help="remove this entry, named as listed (e.g. smollm2-safetensors) or an index by its KEY",
)
def cache_command(prune: bool, names: tuple[str, ...]) -> None:
    """List every cache ragbench keeps ($RAGBENCH_CACHE_DIR, default ~/.cache/ragbench, and the data, page and
    index caches wherever their own variables put them): where, what it is, its size and last use, and what
    --prune would remove: partial downloads, folders a failed download left empty, unfinished conversions of
    the embedded model and the stale indexes of `ragbench index cache`. --remove NAME removes one entry: a
    converted copy of the embedded model, an index (its key), the batch sizes file. Only what ragbench made is
    ever removed; a link inside the caches is never followed nor removed."""
    from .inventory import caches, unknown_entries
    from .removal import removal

    registry = command_registry()
    found = caches(registry)
    if not prune and not names:
        for line in listing_lines(found, unknown_entries(found)):
            click.echo(line)
        return
    with config_errors_exit():
        chosen = [removal(name, found, registry) for name in dict.fromkeys(names)]
    failures = [failure for item in chosen if (failure := removed(item))]
    done = {item.path for item in chosen}
    stale = [(cache, path) for cache in found for path in cache.stale if path not in done] if prune else []
    if prune:
        failures += pruned(stale)
    exit_if_skipped(failures, "not removed", f"{len(failures)} of {len(chosen) + len(stale)} not removed")


def removed(item: Removal) -> str:
    """Remove one named entry, and say so in a line with the space freed; what kept it, "" when nothing did."""
    from ..index.cache_output import size_text

    try:
        item.remove()
    except FolderBusy:
        return f"{item.name}: {item.busy} now"
    except OSError as exc:
        return f"{item.name}: {exc.strerror or exc}"
    click.echo(f"removed {item.name} ({item.path}): {size_text(item.size)} freed")
    return ""


def pruned(stale: list[tuple[Cache, Path]]) -> list[str]:
    """Remove each stale entry of its cache: a line each, and the total; what could not be removed, a line each."""
    from ..index.cache_output import size_text  # the index cache's modules, loaded for this command alone
    from .inventory import files_size_and_use, remove_stale, walk_files

    failures, removed, freed = [], 0, 0
    for cache, path in stale:
        size = files_size_and_use(walk_files(path))[0]
        try:
            remove_stale(cache, path)
        except FolderBusy:
            failures.append(f"{path}: a ragbench index build is writing it now")
        except OSError as exc:
            failures.append(f"{path}: {exc.strerror or exc}")
        else:
            removed, freed = removed + 1, freed + size
            click.echo(f"removed {path} ({size_text(size)})")
    click.echo(f"caches: {removed} removed, {size_text(freed)} freed")
    return failures


def listing_lines(found: list[Cache], unknown: list[Path]) -> list[str]:
    """A line per cache (size, last use, where, what) and per stale entry, then what is left alone."""
    from ..index.cache_output import size_text

    stale = [path for cache in found for path in cache.stale]
    total = sum(cache.size for cache in found)
    head = f"caches (${CACHE_DIR_ENV}, default ~/.cache/ragbench: {cache_root()}): {size_text(total)}"
    if stale:
        head += f"; --prune removes {len(stale)}, {size_text(sum(cache.stale_size for cache in found))}"
    lines = [head]
    for cache in found:
        if cache.link:
            lines.append(f"  {cache.path}  a symbolic link, not followed  {cache.what}")
            continue
        there = cache.path.exists()
        size = size_text(cache.size) if there else "not there"
        used = f"  last used {cache.last_used}" if cache.last_used else ""
        lines.append(f"  {cache.path}  {size}{used}  {cache.what}")
        lines.extend(f"    stale: {path}" for path in cache.stale)
    if unknown:
        lines.append("left alone (not ragbench's):")
        lines.extend(f"  {path}" for path in unknown)
    return lines

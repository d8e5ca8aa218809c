"""`ragbench index build --retriever colpali|siglip|clip`: a page index built ahead of the runs that read it, the
index the retriever's first run would build (the same folder, manifest and vectors: a run naming the same pages,
model and options reads it), in one process or, with --ray --shards S, encoded in shards (`shards`). An index
--overwrite replaces is built beside it, in OUT.building, and takes its place only once complete: a bad option, a
model that will not load or a kill leaves the old index as it was (and a killed build's shards to resume). A build
holds OUT.lock while it runs: a second build of the same --out is refused at once, not let swap its index over the
first's or remove its staging folders."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._errors import ConfigError
from ..._values.options import construct
from ..index.removal import empty_named, set_aside
from ..index.staging import held_lock
from .index import MANIFEST, index_files, not_the_index
from .page_retriever import PageRetriever
from .shards import PageShards

if TYPE_CHECKING:
    from ..._registry import Registry


@dataclass(frozen=True)
class PagesBuilt:
    kind: str
    pages: int
    seconds: float
    kept: int  # shards a killed build had encoded
    left: tuple[Path, ...] = ()  # what stayed of the replaced index's folder: files come while it was built


def page_kinds(registry: Registry) -> list[str]:
    """The retrievers whose index is one of pages (`is_page_kind`)."""
    return [name for name in registry.entries["retrievers"] if is_page_kind(registry, name)]


def is_page_kind(registry: Registry, name: str) -> bool:
    """Whether the retriever `name` (or alias) indexes pages (a `PageRetriever`); one whose plugin fails
    to load is not (it is named where it is built)."""
    entry = registry.entries["retrievers"].get(registry.aliases["retrievers"].get(name, name))
    try:
        target = entry.load() if entry is not None else None
    except Exception:  # a broken plugin hides no other kind
        return False
    return isinstance(target, type) and issubclass(target, PageRetriever)


def build_page_index(
    kind: str,
    corpus: str,
    out: str,
    options: dict[str, Any],
    *,
    registry: Registry,
    shards: PageShards | None = None,
    overwrite: bool = False,
) -> PagesBuilt:
    """The `kind` index of the pages at `corpus` (a ViDoRe dataset, a folder of page images) built at `out` with the retriever's `options` (module
    docstring); an existing folder is replaced with `overwrite` where it is a page index ragbench built."""
    entry = registry.entry("retrievers", kind)
    label = f"index build --retriever {kind}"
    for option, flag in (("pages", "--corpus"), ("corpus", "--corpus"), ("index", "--out")):
        if option in options:
            raise ConfigError(f"{label}: --build-arg {option}= is given by {flag}; drop it")
    folder = Path(out).expanduser().resolve()
    left: tuple[Path, ...] = ()
    with held_lock(folder.with_name(folder.name + ".lock"), out, "index build"):
        target = _target(folder, out, overwrite)
        started = time.perf_counter()
        retriever: PageRetriever = construct(
            entry.load(),
            {**options, "pages": corpus, "index": str(target)},
            label,
            injected={"registry": registry, "in_shards": shards},
        )
        if target != folder:  # the new index complete: the old one set aside, the new one put in its place
            files = replaced_files(folder, out)  # a file of the user's come meanwhile: the new index waits
            replaced = set_aside(folder)
            os.rename(target, folder)
            left = tuple(replaced / name for name in empty_named(replaced, files))
    kept = shards.kept if shards is not None else 0
    return PagesBuilt(entry.name, len(retriever.corpus.ids), time.perf_counter() - started, kept, left)


def _target(folder: Path, out: str, overwrite: bool) -> Path:
    """Where the index is built: `folder`, or beside the index there that `overwrite` replaces."""
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"--out {out} is a file, not a folder; choose a folder")
    if not folder.is_dir() or not any(folder.iterdir()):
        return folder
    if not overwrite:
        raise ConfigError(f"--out {out} exists and is not empty; pass --overwrite or choose another folder")
    replaced_files(folder, out)
    return folder.with_name(folder.name + ".building")


def replaced_files(folder: Path, out: str) -> tuple[str, ...]:
    """The files of the page index at `folder` that --overwrite removes (its manifest's); a ConfigError where the
    folder is no page index ragbench built, or holds anything else (nothing is removed then)."""
    files = index_files(folder)
    if files is None:
        raise ConfigError(
            f"--out {out} holds no page index ragbench built (no {MANIFEST} with ragbench's mark); --overwrite "
            "replaces only such an index: choose another folder"
        )
    others = not_the_index(folder, files)
    if others:
        more = f" and {len(others) - 1} more" if len(others) > 1 else ""
        raise ConfigError(
            f"--out {out} holds {others[0]}{more}, which is not one of the files the index's {MANIFEST} names "
            "(not ragbench's); "
            f"--overwrite removes only the index's own files ({', '.join(files)}): move it out, or choose another "
            "folder"
        )
    return files

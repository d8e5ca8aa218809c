"""A sharded index in an object store (`--retriever-arg index=s3://bucket/prefix/index`): the run's process brings
its front's few files to this node's cache (`front_copy`: the manifest, the docs store, lucene_bm25's vocabulary
and id ranks; never the postings or vectors), each checked block by block against the digests the split recorded
in shards-S/shards.json (an earlier split's, which has none, is refused: split again), reads shards.json and
checks each shard file's size against the store's listing (`remote_layout`); each shard actor fetches its shards' files into its own node's cache and
checks their sizes and content digests before it loads them (`layout.fetched_shard`). An index built as shards
(`index build --ray --shards S`) has no front files: its shards-S/manifest.json is fetched beside shards.json.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._storage.block_digests import BlockMismatch, recorded_ranges
from ..._storage.locations import fetched_folder, joined, remote_files
from ..index.damage import IndexDamage, read_json_object
from ..index.staging import MANIFEST_FILE
from .layout import FRONT_FIELD, LAYOUT_FILE, Layout, read_layout


def front_copy(kind: str, url: str, files: tuple[str, ...], shards: int) -> Path:
    """The local copy of the index at `url`'s `files` (those its front reads), fetched or already cached, each
    checked block by block against the digests its split's shards-S/shards.json records (`layout.FRONT_FIELD`); a
    ConfigError of one line where one is missing, not what the split recorded, or the store cannot be read."""
    if not files:
        raise ConfigError(
            f"retriever {kind}: --retriever-arg index={url}: an index in an object store is served for bm25 and "
            "lucene_bm25 shards; copy this one to a folder every node sees"
        )
    listed = remote_files(url)
    missing = [name for name in files if name not in listed]
    if missing:
        raise ConfigError(
            f"retriever {kind}: {joined(url, missing[0])} is missing: {url} is not a {kind} index ragbench built "
            f"(upload the whole index folder, its shards-{shards} folder beside its {missing[0]})"
        )
    layout, hint = f"shards-{shards}/{LAYOUT_FILE}", split_hint(url, shards)
    if layout not in listed:
        raise ConfigError(f"retriever {kind}: {url} has no {shards} shards ({joined(url, layout)} missing); {hint}")
    split = fetched_folder(
        joined(url, f"shards-{shards}"), [(LAYOUT_FILE, listed[layout].size, None)], [listed[layout].version]
    )
    local = fetched_folder(url, [(name, listed[name].size, None) for name in files], [listed[n].version for n in files])
    try:
        blocks = read_json_object(split, LAYOUT_FILE).get(FRONT_FIELD)
        if blocks is None:
            raise ConfigError(
                f"retriever {kind}: {joined(url, layout)} records no digests of the index's {', '.join(files)} "
                f"(split by an earlier ragbench): {split_hint(url, shards, ' --overwrite')}"
            )
        for name in files:
            checked_copy(blocks, url, local, name, joined(url, layout))
    except IndexDamage as exc:
        raise ConfigError(f"retriever {kind}: {exc} (damaged); upload the whole index folder again") from None
    return local


def checked_copy(blocks: Any, url: str, local: Path, name: str, record: str) -> None:
    """The cached copy in `local` of the index at `url`'s file `name` is every byte what the split's `blocks`
    record (`layout.FRONT_FIELD` of its shards.json at `record`); else an IndexDamage naming it, the copy removed (fetched again next time)."""
    try:
        recorded_ranges(url, blocks, name).check_copy(local / name)
    except BlockMismatch as exc:
        (local / name).unlink(missing_ok=True)
        raise IndexDamage(exc.url, f"{exc.problem}: not the file the index was split from (written over)") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise IndexDamage(record, f"holds no block digests of {name} ({exc})") from None


def split_hint(url: str, shards: int, again: str = "") -> str:
    """What to do about a missing or damaged split of the index at `url` into `shards` shards (`again`: an option
    the split command adds)."""
    return (
        f"split it where it was built (ragbench index shard --index INDEX --shards {shards}{again}) and upload its "
        f"shards-{shards} folder to {joined(url, f'shards-{shards}')}"
    )


def remote_layout(kind: str, url: str, index: Path | None, shards: int) -> Layout:
    """The checked layout of the index at `url`'s `shards` shards (`index`: its front's local copy, whose manifest
    shards.json names; None: shards built as shards, whose own manifest.json is fetched beside shards.json), or a
    ConfigError naming what is wrong and the fix."""
    folder_url = joined(url, f"shards-{shards}")
    hint = (
        split_hint(url, shards)
        if index is not None
        else f"build it again: ragbench index build --corpus CORPUS --retriever {kind} --out {url} --ray --shards "
        f"{shards} --overwrite (or build it elsewhere and upload its shards-{shards} folder to {folder_url})"
    )
    listed = remote_files(folder_url)
    if LAYOUT_FILE not in listed:
        raise ConfigError(
            f"retriever {kind}: {url} has no {shards} shards ({joined(folder_url, LAYOUT_FILE)} missing); {hint}"
        )
    try:
        front = [LAYOUT_FILE] if index is not None else [LAYOUT_FILE, MANIFEST_FILE]
        if MANIFEST_FILE not in listed and index is None:
            raise IndexDamage(joined(folder_url, MANIFEST_FILE), "is missing")
        files = [(name, listed[name].size, None) for name in front]
        local = fetched_folder(folder_url, files, [listed[name].version for name in front])
        sizes = {name: file.size for name, file in listed.items()}
        layout = read_layout(local, index if index is not None else local, (folder_url, sizes))
        if layout.retriever != kind or len(layout.shards) != shards:
            raise IndexDamage(LAYOUT_FILE, f"holds {len(layout.shards)} {layout.retriever} shards, not {shards} {kind}")
    except IndexDamage as exc:
        raise ConfigError(f"retriever {kind}: {folder_url}: {exc} (damaged); {hint}") from None
    return Layout(layout.folder, layout.retriever, layout.doc_count, layout.shards, fix=hint)

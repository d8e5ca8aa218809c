"""A sharded index in an object store (`--retriever-arg index=s3://bucket/prefix/index`): the run's process brings
its front's few files to this node's cache (`front_copy`: the manifest, the docs store, lucene_bm25's vocabulary
and id ranks; never the postings or vectors), reads shards-S/shards.json and checks each shard file's size against
the store's listing (`remote_layout`); each shard actor fetches its shards' files into its own node's cache and
checks their sizes and content digests before it loads them (`layout.fetched_shard`). An index built as shards
(`index build --ray --shards S`) has no front files: its shards-S/manifest.json is fetched beside shards.json.
"""

from __future__ import annotations

from pathlib import Path

from ..._errors import ConfigError
from ..._storage.locations import fetched_folder, joined, remote_files
from ..index.damage import IndexDamage
from ..index.staging import MANIFEST_FILE
from .layout import LAYOUT_FILE, Layout, read_layout


def front_copy(kind: str, url: str, files: tuple[str, ...]) -> Path:
    """The local copy of the index at `url`'s `files` (those its front reads), fetched or already cached, each of
    its size in the store; a ConfigError of one line where one is missing or the store cannot be read."""
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
            f"(upload the whole index folder, its shards-S folder beside its {missing[0]})"
        )
    return fetched_folder(url, [(name, listed[name].size, None) for name in files], [listed[n].version for n in files])


def remote_layout(kind: str, url: str, index: Path | None, shards: int) -> Layout:
    """The checked layout of the index at `url`'s `shards` shards (`index`: its front's local copy, whose manifest
    shards.json names; None: shards built as shards, whose own manifest.json is fetched beside shards.json), or a
    ConfigError naming what is wrong and the fix."""
    folder_url = joined(url, f"shards-{shards}")
    hint = (
        f"split it where it was built (ragbench index shard --index INDEX --shards {shards}) and upload its "
        f"shards-{shards} folder to {folder_url}"
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

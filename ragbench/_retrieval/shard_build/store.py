"""`index build --ray --shards S --out s3://.../INDEX`: the shards built straight into an object store. Each task
that finishes a shard puts its files in INDEX/shards-S/NNN (`worker.finish_part`); the driver puts the manifest,
then shards.json last (`publish`): a run reads an index in a store only through its shards.json, so one half written
is never seen as whole. The build's state (each part's step-1 files, the records a resumed build keeps, the merged
terms) lives in this node's cache folder of the URL (`state_root`: under $RAGBENCH_CACHE_DIR, which on a cluster
must be a folder every node sees, as a local --out must be), and is removed once the index is published.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from ..._errors import ConfigError
from ..._storage.locations import cached_folder, joined, put_file, remote_files, remove_object
from ..._storage.own_trees import remove_all_but_links
from ..index.staging import MANIFEST_FILE
from ..sharded.layout import LAYOUT_FILE
from ..sharded.remote import remote_layout


def state_root(url: str) -> Path:
    """The local folder standing for --out `url` while its shards are built (module docstring)."""
    return cached_folder(f"shard build\0{url.rstrip('/')}")


@dataclass(frozen=True)
class StoreTarget:
    """The index's folder `url` in an object store, built in `shards` shards."""

    url: str
    shards: int

    @property
    def folder(self) -> str:
        return joined(self.url, f"shards-{self.shards}")

    def shard(self, number: int) -> str:
        return joined(self.folder, f"{number:03d}")

    def check(self, overwrite: bool) -> None:
        """A ConfigError where shards of this count are there already, unless `overwrite`: then their shards.json
        is removed first, so that no run takes them for whole while they are written again."""
        if LAYOUT_FILE not in remote_files(self.folder):
            return
        if not overwrite:
            raise ConfigError(
                f"--out {self.url}: {joined(self.folder, LAYOUT_FILE)} exists; pass --overwrite to build its shards "
                "again"
            )
        remove_object(joined(self.folder, LAYOUT_FILE))

    def publish(self, kind: str, folder: Path, manifest_text: str, layout: Callable[[], str]) -> str:
        """The manifest, then shards.json (`layout()`, which digests the manifest) put in the store beside the
        shards the tasks put there; read back as a run reads them; the local state `folder` then removed."""
        (folder / MANIFEST_FILE).write_text(manifest_text, encoding="utf-8")
        (folder / LAYOUT_FILE).write_text(layout(), encoding="utf-8")
        put_file(folder / MANIFEST_FILE, joined(self.folder, MANIFEST_FILE))
        put_file(folder / LAYOUT_FILE, joined(self.folder, LAYOUT_FILE))
        remote_layout(kind, self.url, None, self.shards)  # every shard file listed there at its size
        remove_all_but_links(folder)
        with suppress(OSError):  # the URL's state folder, when no other build of it is under way
            folder.parent.rmdir()
        return self.folder

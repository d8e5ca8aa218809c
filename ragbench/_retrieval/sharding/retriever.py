"""`--retriever KIND --retriever-arg index=... --retriever-arg shards=S` (KIND: a retriever whose catalogue entry names
its `ShardedKind`, `kinds`: dense, bm25, lucene_bm25, flashrag_bm25, faiss_index, tevatron_dense, a plugin's): the
index searched through its S shards on Ray (`actors`), answering as the unsharded index does (`merge`).

The run's process keeps what is small and per query (its kind's front, `ShardedKind.front`): the docs store or
corpus, the encoder or tokenizer. The shards do the scoring. `ray_address` names a running cluster (`auto`, `ray://host:10001`); none
starts a local Ray of its own (shut down on close), even where another runs on the machine, unless `RAY_ADDRESS`
names one. The shards come from `ragbench index shard --index INDEX --shards S` (INDEX/shards-S, FILE.shards-S
beside a faiss file; tevatron_dense's shard files are served as they are) or from `ragbench index build --ray
--shards S` (INDEX/shards-S with its own manifest: its kind's front, `sharding.build.front`), at a path every node
sees (a shared file system), on the disks of the nodes that serve them (`homes`), or in an object store (`remote`:
index=s3://..., an index split by `ragbench index shard` or built in shards).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._errors import ConfigError
from ..._storage.locations import is_remote
from ..._values.json_values import JsonObject, JsonValue
from ..base import RetrievalError, Retriever
from .actors import ShardPool
from .fronts import Answers, Front
from .kind_lookup import built_shards_front, sharded_kind, sharded_kinds
from .remote import front_copy, remote_layout

if TYPE_CHECKING:
    from ..._registry import Registry


class ShardedRetriever(Retriever):
    """Search `front`'s index through `pool`'s shard actors; the same answers, metadata plus the shards."""

    def __init__(self, front: Front, pool: ShardPool, url: str | None = None) -> None:
        self.front, self.pool, self.url = front, pool, url  # url: the index's in an object store
        self.name = front.name  # type: ignore[misc]  # the retriever it shards: its answers are that one's
        self.max_batch_size = front.max_batch_size

    def search(self, queries: list[str], k: int) -> Answers:
        try:
            answers = self.pool.top_k(self.front.payload(queries), k)
        except RetrievalError as exc:  # a shard lost for good: these searches fail, counted, never a partial answer
            return [exc] * len(queries)
        return self.front.answers(queries, answers, k)

    def metadata(self) -> JsonObject:
        shards: list[JsonValue] = [[shard.start, shard.stop] for shard in self.pool.layout.shards]
        where: JsonObject = {"index": self.url} if self.url else {}  # not its front's copy in the cache
        return {**self.front.metadata(), **where, "shards": len(shards), "shard_passages": shards}

    def contents(self) -> JsonObject:
        return self.front.contents()  # the unsharded index's: its answers are the same

    def close(self) -> None:
        self.pool.close()
        self.front.close()


def sharded_retriever(kind: str, args: dict[str, Any], *, registry: Registry) -> ShardedRetriever:
    """The `kind` retriever of `args` (its options, plus `shards` and `ray_address`) served by shards."""
    from ..._values.options import construct

    args = dict(args)
    shards, address = args.pop("shards"), args.pop("ray_address", None)
    name = registry.entry("retrievers", kind).name  # an alias (browsecomp_plus_dense) its kind
    parts = sharded_kind(registry, name)
    if parts is None:
        served = ", ".join(known.name for known in sharded_kinds(registry))
        raise ConfigError(f"retriever {kind}: --retriever-arg shards=S serves {served} indexes only")
    if not isinstance(shards, int) or isinstance(shards, bool) or shards < 1:
        raise ConfigError(f"retriever {kind}: --retriever-arg shards={shards!r}: a whole number of shards, 1 or more")
    if address is not None and not isinstance(address, str):
        raise ConfigError(f"retriever {kind}: --retriever-arg ray_address={address!r}: auto or ray://host:port")
    given = args.get("index")
    url = given if isinstance(given, str) and is_remote(given) else None
    built = built_shards_front(parts, given, shards)  # built in shards: no merged index (in a store: read there)
    if url is not None and built is None:  # an object store's split: the front reads its local copy (`remote`)
        args["index"] = str(front_copy(kind, url, getattr(parts.front, "front_files", ()), shards))
    if built is not None:
        front = construct(built, {**args, "shards": shards}, f"retriever {kind}", injected={"registry": registry})
    else:
        injected = {"registry": registry, "shards": shards}  # a split's front that serves built shards too takes it
        front = construct(parts.front, args, f"retriever {kind}", injected=injected)
    try:
        layout = remote_layout(name, url, Path(args["index"]), shards) if url and not built else front.layout(shards)
        return ShardedRetriever(front, ShardPool(layout, parts.search, front.shard_options(), address), url)
    except BaseException:
        front.close()
        raise

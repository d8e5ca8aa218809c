"""`--retriever dense|bm25 --retriever-arg index=DIR --retriever-arg shards=S`: the index searched through its S
shards on Ray (`actors`), answering as the unsharded index does (`merge`).

The run's process keeps what is small and per query: the index's manifest and docs store (memory-mapped; hits
read their passages from it), and the query side, the dense encoder (checked against the index as `dense` checks
it) or bm25's tokenizer. It never loads the embeddings or postings (dense reads its first row, to check the
encoder). The shards do the scoring. `ray_address` names a running cluster (`auto`, `ray://host:10001`); none
starts a local Ray of its own (shut down on close), even where another runs on the machine, unless `RAY_ADDRESS`
names one. The shards come from `ragbench index shard --index DIR --shards S`
(DIR/shards-S); every node must see them at the same path (a shared file system, or a copy of each shard's folder
on its node).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._errors import ConfigError
from ..._types import Document
from ..base import RetrievalError, Retriever
from ..bm25 import BM25Retriever, make_stemmer, query_tokens
from ..dense import DenseRetriever
from ..index import IndexedRetriever
from ..index_damage import IndexDamage
from .actors import ShardPool
from .layout import LAYOUT_FILE, Layout, read_layout, shards_folder
from .merge import merge_top_k

if TYPE_CHECKING:
    from ..._registry import Registry


class DenseQueries(DenseRetriever):
    """The dense index's query side: the encoder, the docs store; the shards hold the rows."""

    def payload(self, queries: list[str]) -> Any:
        return self.encoder.encode_queries(queries)

    def shard_options(self) -> dict[str, Any]:
        return {"chunk_rows": self.chunk_rows, "backend": self.backend}


class Bm25Queries(IndexedRetriever):
    """The bm25 index's query side: the manifest's tokenizer, the docs store (its bm25 files are the shards')."""

    name = BM25Retriever.name
    option_types = BM25Retriever.option_types
    required_options = BM25Retriever.required_options

    def __init__(self, index: str | None = None, mmap: bool = True) -> None:
        super().__init__(index)
        self.mmap = bool(mmap)
        self.stopwords = self.manifest.options["stopwords"]
        self.stemmer = make_stemmer(self.manifest.options["stemmer"])
        self.jieba = self.manifest.options.get("tokenizer") == "jieba"

    def payload(self, queries: list[str]) -> Any:
        return query_tokens(queries, self.stopwords, self.stemmer, self.jieba)

    def shard_options(self) -> dict[str, Any]:
        return {"mmap": self.mmap}


FRONTS: dict[str, type[DenseQueries] | type[Bm25Queries]] = {"dense": DenseQueries, "bm25": Bm25Queries}


class ShardedRetriever(Retriever):
    """Search `front`'s index through `pool`'s shard actors; the same answers, metadata plus the shards."""

    def __init__(self, front: DenseQueries | Bm25Queries, pool: ShardPool) -> None:
        self.front, self.pool = front, pool
        self.name = front.name  # type: ignore[misc]  # the retriever it shards: its answers are that one's
        self.max_batch_size = front.max_batch_size

    def search(self, queries: list[str], k: int) -> Sequence[list[Document] | RetrievalError]:
        try:
            answers = self.pool.top_k(self.front.payload(queries), k)
        except RetrievalError as exc:  # a shard lost for good: these searches fail, counted, never a partial answer
            return [exc] * len(queries)
        merged = [merge_top_k([answer[query] for answer in answers], k) for query in range(len(queries))]
        return self.front.hits([ids for _, ids in merged], [scores for scores, _ in merged])

    def metadata(self) -> dict[str, Any]:
        shards = [[shard.start, shard.stop] for shard in self.pool.layout.shards]
        return {**self.front.metadata(), "shards": len(shards), "shard_passages": shards}

    def contents(self) -> dict[str, Any]:
        return self.front.contents()  # the unsharded index's: its answers are the same

    def close(self) -> None:
        self.pool.close()
        self.front.close()


def sharded_retriever(kind: str, args: dict[str, Any], *, registry: Registry) -> ShardedRetriever:
    """The `kind` retriever of `args` (its options, plus `shards` and `ray_address`) served by shards."""
    from ..._values.options import construct

    args = dict(args)
    shards, address = args.pop("shards"), args.pop("ray_address", None)
    if kind not in FRONTS:
        raise ConfigError(f"retriever {kind}: --retriever-arg shards=S serves {' and '.join(FRONTS)} indexes only")
    if not isinstance(shards, int) or isinstance(shards, bool) or shards < 1:
        raise ConfigError(f"retriever {kind}: --retriever-arg shards={shards!r}: a whole number of shards, 1 or more")
    if address is not None and not isinstance(address, str):
        raise ConfigError(f"retriever {kind}: --retriever-arg ray_address={address!r}: auto or ray://host:port")
    front = construct(FRONTS[kind], args, f"retriever {kind}", injected={"registry": registry})
    try:
        return ShardedRetriever(
            front, ShardPool(shard_layout(kind, Path(front.folder), shards), front.shard_options(), address)
        )
    except BaseException:
        front.close()
        raise


def shard_layout(kind: str, index: Path, shards: int) -> Layout:
    """The checked layout of `index`'s `shards` shards, or a ConfigError naming what is wrong and the fix."""
    folder = shards_folder(index, shards)
    hint = f"split it: ragbench index shard --index {index} --shards {shards}"
    if not folder.is_dir():
        raise ConfigError(f"retriever {kind}: {index} has no {shards} shards ({folder} missing); {hint}")
    try:
        layout = read_layout(folder, index)
        if layout.retriever != kind or len(layout.shards) != shards:
            raise IndexDamage(LAYOUT_FILE, f"holds {len(layout.shards)} {layout.retriever} shards, not {shards} {kind}")
    except IndexDamage as exc:
        raise ConfigError(f"retriever {kind}: {folder}: {exc} (damaged); {hint} --overwrite") from None
    return layout

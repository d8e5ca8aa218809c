"""tevatron_dense's sharding (Tevatron's shard files, already shards: served as they are, no split, no build): its
run-side front (`front`), its shard search (`search`)."""

from __future__ import annotations

from ..kind import ShardedKind
from .front import TevatronQueries
from .search import TevatronShardSearch


class TevatronKind(ShardedKind):
    name = "tevatron_dense"
    front = TevatronQueries
    search = TevatronShardSearch


KIND = TevatronKind()

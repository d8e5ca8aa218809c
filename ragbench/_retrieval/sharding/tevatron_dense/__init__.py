"""tevatron_dense (Tevatron's shard files, already shards: served as they are, no split, no build): its run-side
front (`front`), its shard search (`search`)."""

from __future__ import annotations

from ..kind import ShardedKind
from .front import TevatronQueries
from .search import TevatronShardSearch

KIND = ShardedKind("tevatron_dense", TevatronQueries, TevatronShardSearch)

"""Each retriever kind that can be sharded, one folder a kind, owning all it takes (`kind.ShardedKind`).

A kind's folder holds `search.py` (its shard search in an actor: a `sharded.searcher.ShardSearcher` with `load`
and `ranked`), `front.py` (the run's side: payload, shard options, layout, answers; `sharded.fronts.Front`),
`split.py` where a one-process index of it can be split (`ragbench index shard`) and `build.py` where it can be
built in shards (`index build --ray --shards`: a `shard_build.kind.ShardKind`, with its statistics merge and its
built shards' front); its `__init__.py` makes its `KIND` from them, listed in `registry.KINDS`. `sharded/` keeps
what every kind shares: the actors, placement, the layout and the exact merge.
"""

"""The built-in retriever kinds that can be sharded, one folder a kind, owning all it takes (`sharded.kind.ShardedKind`).

A kind's folder holds `search.py` (its shard search in an actor: a `sharded.searcher.ShardSearcher` with `load`
and `ranked`), `front.py` (the run's side: payload, shard options, layout, answers; `sharded.fronts.Front`),
`split.py` where a one-process index of it can be split (`ragbench index shard`), `build.py` where it can be built
in shards (`index build --ray --shards`: a `shard_build.kind.ShardKind`, with its statistics merge and its built
shards' front) and `blocks.py` where its merged build runs on Ray (`index build --ray`: a
`parallel_build.analysis.BlockKind`); its `__init__.py` makes its `KIND` from them, which its retriever's catalogue
entry names (`shards:` in registry.yaml), as a plugin's entry names its own. Nothing below names a kind: `sharded/`
keeps what every kind shares (the actors, placement, the layout, the exact merge) and finds a kind through the run's
registry (`sharded.kinds`).
"""

"""Sharding, one family: an index served by shards (one split into S shard folders, `split`, or built in shards,
`build`), each shard served by a Ray actor (`actors`), queries sent to every shard at once and the shards' top k
merged into the unsharded index's top k (`merge`); and an index built on a pool of Ray actors (`merged_build`).
docs/scale-out.md describes it; `ragbench index shard` splits, `index build --ray [--shards S]` builds,
`--retriever-arg shards=S` searches.

What every kind shares lies here: the actors, placement, the layout, the exact merge, the search's run side
(`retriever`, `fronts`), the shard build (`build/`) and the merged parallel build (`merged_build/`). Each built-in
retriever kind that can be sharded is one folder beside them holding its one class, a `kind.ShardedKind` subclass
(`kind.py`, or `__init__.py` for the small ones), whose typed members are all it takes: `search` (its shard search
in an actor: a `searcher.ShardSearcher` in `search.py`), `front` (the run's side: payload, shard options, layout,
answers; a `fronts.Front` in `front.py`), `split` where a one-process index of it can be split (`split.py`), its
shard build where it can be built in shards (`part_builder`, `merge`, `finish`, `options`, and `shards_front`, its
built shards' front; helpers in `build.py`) and its blocks where its merged build runs on Ray (`fields`, `settings`,
`worker`, `absorb`); its `__init__.py` makes its `KIND`, which its retriever's catalogue entry names (`shards:` in
registry.yaml), as a plugin's entry names its own. Nothing
outside a kind's folder names a kind: the rest finds a kind through the run's registry (`kinds`).
"""

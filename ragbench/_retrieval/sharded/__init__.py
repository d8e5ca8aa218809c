"""Sharded indexes: one index split into S shard folders (`split`), each served by a Ray actor (`actors`),
queries sent to every shard at once and the shards' top k merged into the unsharded index's top k (`merge`).
docs/scale-out.md describes it; `ragbench index shard` splits, `--retriever-arg shards=S` searches."""

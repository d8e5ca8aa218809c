"""Indexes built as shards, each by a worker from its own part of the corpus (`index build --ray --shards S`):
the driver (`driver`), the two steps a worker runs (`worker`), the building folder (`state`), where they run
(`runner`), and one module a retriever kind (`lucene`), its `ShardKind` (`kind`) and its run-side front (`front`)."""

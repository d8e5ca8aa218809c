"""Indexes built as shards, each by a worker from its own part of the corpus (`index build --ray --shards S`):
the driver (`driver`), the two steps a worker runs (`worker`), the building folder (`state`), where they run
(`runner`), what a kind's build steps take and give (`kind`) and the run-side front of built shards (`front`)."""

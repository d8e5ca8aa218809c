"""On-disk indexes: what `ragbench index build` writes and a run opens, the passages beside them, their damage checked,
their staging and removal, and the index cache."""

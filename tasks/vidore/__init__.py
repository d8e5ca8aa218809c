"""ViDoRe (Faysse et al., ICLR 2025, illuin-tech/vidore-benchmark): visual document retrieval, page images as the
passages, as the `vidore` task (task.py) over a dataset kept offline, scored by `vidore_retrieval` (metrics.py) as
vidore-benchmark's evaluators score it (docs/benchmarks/vidore.md)."""
